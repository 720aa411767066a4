"""A queued run (``run_until_blocked(max_chapters=K)``, the CLI's ``novel run -n K`` and the window's 续写 K
章) pipelines its chapters (issue 18): chapter N+1's writer starts once N's text is final (refined), while N
is summarized and judged, reading the end of N's text in place of N's summary; N+1's summarizer and judge
read N as committed; nothing of N+1 is staged until N commits; a chapter sent back, a stopped run or a
killed process throws the early draft away. Real .novel, real SDK, the fake server."""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from novel_desktop.agents.text_ending import text_in_place_of_summary
from novel_desktop.domain.ledger import ModelCall
from novel_desktop.domain.novel_ask import AnswerSpec
from novel_desktop.domain.novel_ask_answers import build_answer_spec
from novel_desktop.pipeline.events import (
    ChapterCommitted,
    DraftAhead,
    DraftDiscarded,
    TextDelta,
)
from novel_desktop.pipeline.interaction import InteractionRequest
from novel_desktop.pipeline.orchestrator import Orchestrator, OrchestratorEvent, RunSummary
from novel_desktop.session import NovelSession
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore, StoreError
from tests.e2e.replies import judge_json, script_defaults, summarizer_json, writer_text
from tests.fakes.anthropic_server import FakeAnthropicServer, RecordedRequest, Reply, fast_settings
from tests.fakes.queued_server import JudgeWaitsForNextWriter

KEY = "sk-ant-test-queued"
STOP = frozenset({"VOL_REVIEW"})


async def _recommended(request: InteractionRequest) -> AnswerSpec:
    """Every question answered with its recommended option (the author clicking 确定)."""
    answers = {q.id: q.default for q in request.spec.questions if q.default is not None}
    return build_answer_spec(request.spec, answers, answered_by="novel_desktop")


def _run(
    path: Path,
    server: FakeAnthropicServer,
    max_chapters: int,
    *,
    events: list[OrchestratorEvent] | None = None,
    on_event: Callable[[OrchestratorEvent, NovelStore, asyncio.Task[Any]], None] | None = None,
) -> RunSummary | None:
    """One run on the novel at ``path``; None when ``on_event`` cancelled it."""
    seen = events if events is not None else []

    async def main() -> RunSummary:
        task = asyncio.current_task()
        assert task is not None
        with NovelStore.open(path) as store:
            session = NovelSession(
                store, settings=fast_settings(), responder=_recommended, api_key=KEY, base_url=server.base_url
            )
            async with session:

                def emit(event: OrchestratorEvent) -> None:
                    seen.append(event)
                    if on_event is not None:
                        on_event(event, store, task)

                orch = Orchestrator(
                    store, session.agents.planning, session.agents.chapter, session.interaction, emit=emit
                )
                return await orch.run_until_blocked(max_chapters=max_chapters, stop_at=STOP)

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        return None


def _body(request: RecordedRequest) -> str:
    return json.dumps([request.body.get("system"), request.body["messages"]], ensure_ascii=False)


def _novel_after(path: Path) -> dict[str, Any]:
    """What the author would compare: each chapter's text and summary, the state, the checkpoint."""
    with NovelStore.open(path, write=False) as store:
        chapters = [c.number for c in store.list_chapters()]
        return {
            "texts": {n: store.chapter_text(n) for n in chapters},
            "summaries": {n: store.summary(n) for n in chapters},
            "state": store.current_state(),
            "last": store.checkpoint()["last_completed_chapter"],
            "staging": store.list_staging(),
        }


def _copy(novel: Path, tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copy(novel, target)
    return target


def test_a_queued_run_commits_what_chapter_by_chapter_runs_would(novel: Path, tmp_path: Path) -> None:
    one_by_one, queued = _copy(novel, tmp_path, "a.novel"), _copy(novel, tmp_path, "b.novel")
    with FakeAnthropicServer() as first:
        script_defaults(first)
        for _ in range(3):
            _run(one_by_one, first, 1)
    events: list[OrchestratorEvent] = []
    staged_ahead: list[list[str]] = []

    def watch(event: OrchestratorEvent, store: NovelStore, _task: asyncio.Task[Any]) -> None:
        if isinstance(event, DraftAhead):
            staged_ahead.append(store.list_staging(event.chapter))

    with FakeAnthropicServer() as second:
        script_defaults(second)
        summary = _run(queued, second, 3, events=events, on_event=watch)
    assert summary is not None and [c.chapter for c in summary.chapters] == [3, 4, 5]

    expected, got = _novel_after(one_by_one), _novel_after(queued)
    assert got == expected and got["last"] == 5
    # Chapters 4 and 5 were drafted early, from the end of chapter 3's and 4's final text (their summaries
    # were not made yet), and adopted: what those chapters committed is the very text their writers read.
    assert [e.chapter for e in events if isinstance(e, DraftAhead)] == [4, 5]
    assert [e for e in events if isinstance(e, DraftDiscarded)] == []
    queued_writers = [r.user_text for r in second.requests_for("chapter_writer")]
    sequential_writers = [r.user_text for r in first.requests_for("chapter_writer")]
    assert queued_writers[0] == sequential_writers[0]
    summary = "林枫持残玉上山，守门弟子以年龄拒收"
    for n, prompt in ((4, queued_writers[1]), (5, queued_writers[2])):
        before = n - 1
        assert text_in_place_of_summary(before, got["texts"][before]) in prompt
        assert f"第{before}章：{summary}" not in prompt
        assert f"第{before - 1}章：" in prompt  # the summaries already committed, as usual
    assert f"第3章：{summary}" in sequential_writers[1]
    # Every call after the writer read the novel as committed, as a chapter-by-chapter run does: the same
    # requests, the previous chapter's summary and state included.
    for role in ("summarizer", "style_refiner", "quality_judge"):
        assert sorted(map(_body, second.requests_for(role))) == sorted(map(_body, first.requests_for(role)))
    assert staged_ahead == [[], []]  # nothing of the early chapter was staged while the one before was open
    with NovelStore.open(queued, write=False) as store:
        log = store.pipeline_log(4) or {}
        assert [s["name"] for s in log["stages"]][:2] == ["draft", "summarize"]
        assert "writer" in [entry["agent"] for entry in log["context"]]  # the context inspector's record
        assert [c.role for c in store.model_calls(4)].count("chapter_writer") == 1
        # The adopted early drafts' calls are their chapters' writing in the ledger.
        purposes = {c.purpose for c in store.model_calls() if c.role == "chapter_writer"}
        assert purposes == {"write"}


def test_a_ledger_that_cannot_be_relabelled_does_not_stop_the_run(
    novel: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(self: NovelStore, chapter: int, purpose: str, to: str) -> int:
        raise StoreError("账本写不进去")

    monkeypatch.setattr(NovelStore, "relabel_calls", refused)
    with FakeAnthropicServer() as server:
        script_defaults(server)
        summary = _run(novel, server, 2)
    assert summary is not None and [c.chapter for c in summary.chapters] == [3, 4]
    with NovelStore.open(novel, write=False) as store:  # the adopted draft's rows still say what they were
        assert [c.purpose for c in store.model_calls(4) if c.role == "chapter_writer"] == ["write_ahead"]


def test_the_next_writer_starts_before_the_judge_replies(novel: Path) -> None:
    with JudgeWaitsForNextWriter() as server:
        script_defaults(server)
        summary = _run(novel, server, 2)
        roles = [r.role for r in server.requests if r.role in ("chapter_writer", "style_refiner")]
    assert summary is not None and [c.chapter for c in summary.chapters] == [3, 4]
    assert server.judge_saw_writer and all(server.judge_saw_writer)  # every judge panel may wait
    # Chapter 4's writer waited for chapter 3's refiner (the text is final), not for its judge.
    assert roles[:3] == ["chapter_writer", "style_refiner", "chapter_writer"]


class _SummaryWaitsForNextWriter(FakeAnthropicServer):
    """Chapter 3's summary is held after its first words until chapter 4's writer request has arrived."""

    def __init__(self) -> None:
        super().__init__()
        self.second_writer = threading.Event()

    def _next_reply(self, role: str | None, *more: str, panel: str | None = None) -> Reply:
        if role == "chapter_writer" and len(self.requests_for("chapter_writer")) >= 2:
            self.second_writer.set()
        return super()._next_reply(role, *more, panel=panel)


def test_the_next_writer_does_not_wait_for_the_summary(novel: Path) -> None:
    with _SummaryWaitsForNextWriter() as server:
        script_defaults(server)
        server.script("summarizer", Reply(summarizer_json(), hold_until=server.second_writer))
        summary = _run(novel, server, 2)
        judges = [r.user_text for r in server.requests_for("quality_judge")]
        summarizers = [r.user_text for r in server.requests_for("summarizer")]
    assert summary is not None and [c.chapter for c in summary.chapters] == [3, 4]
    # Chapter 4's writer request reached the server while chapter 3's summary was still being written.
    assert server.held == [True, True]  # both parts of the summary were held
    # Chapter 4's summarizer and judge came after chapter 3 committed and read its summary and its state.
    with NovelStore.open(novel, write=False) as store:
        version_after_3 = store.current_state()["state_version"] - 1
        summary_3 = (store.summary(3) or "").strip()
    chapter_4 = [t for t in judges if "第4章" in t and "第3章：林枫持残玉上山" in t]
    assert len(chapter_4) == 3 and "林枫持残玉上山" in summary_3  # every panel
    assert all(f"patch.base_state_version 必须是 {version_after_3}" in t for t in summarizers[2:])
    assert len(summarizers) == 4


_REVISED_END = "他把考核木牌揣进怀里，转身去找今夜的落脚处。"
_REVISED = writer_text().replace("\n\n```json", f"\n\n{_REVISED_END}\n\n```json", 1)


def test_a_chapter_sent_back_discards_the_early_draft(novel: Path) -> None:
    events: list[OrchestratorEvent] = []
    staged_at_discard: list[list[str]] = []

    def watch(event: OrchestratorEvent, store: NovelStore, _task: asyncio.Task[Any]) -> None:
        if isinstance(event, DraftDiscarded):
            staged_at_discard.append(store.list_staging(event.chapter))

    # Chapter 3's judgement waits for the first early writer's request: the draft it throws away was begun.
    with JudgeWaitsForNextWriter() as server:
        script_defaults(server)
        server.script("quality_judge", judge_json(3.2))  # chapter 3's first judgement sends it back
        server.script("reviser", Reply(_REVISED, chunk_size=40))
        summary = _run(novel, server, 2, events=events, on_event=watch)
        writers = [r.user_text for r in server.requests_for("chapter_writer")]
    assert summary is not None and [c.chapter for c in summary.chapters] == [3, 4]
    assert [c.scores for c in summary.chapters] == [[3.2, 4.2], [4.2]]
    discarded = [e for e in events if isinstance(e, DraftDiscarded)]
    assert [e.chapter for e in discarded] == [4] and "退回修订" in discarded[0].reason
    assert staged_at_discard == [[]]
    # Drafted early twice (the first one thrown away with chapter 3's first text), committed once.
    assert [e.chapter for e in events if isinstance(e, DraftAhead)] == [4, 4]
    assert len(writers) == 3
    # The first early draft read chapter 3's first text; the one redone, chapter 3's revision (committed).
    assert _REVISED_END not in writers[1] and _REVISED_END in writers[2]
    with NovelStore.open(novel, write=False) as store:
        assert _REVISED_END in (store.chapter_text(3) or "")
        log = store.pipeline_log(4) or {}
        assert [s["name"] for s in log["stages"]].count("draft") == 1
        # The ledger keeps what the thrown-away draft cost, as chapter 4's, and names it (novel cost).
        writers = [c for c in store.model_calls(4) if c.role == "chapter_writer"]
        assert [c.purpose for c in writers] == ["discarded_draft", "write"]
        by_purpose = store.cost_report().by_purpose
        assert by_purpose["discarded_draft"].calls == 1 and by_purpose["discarded_draft"].cost_usd > 0
        assert store.checkpoint()["last_completed_chapter"] == 4


def test_an_early_draft_thrown_away_while_its_first_ledger_row_is_written_is_counted_once(
    novel: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Under load the early writer's first ledger row (written in a worker thread when its stream starts) was
    # still being written when chapter 3 was sent back and the draft cancelled: the row's id was lost, and
    # the call's end wrote a second row, so chapter 4 showed three writer calls. Here that interleaving is
    # forced: chapter 3's judgement waits until the row is being written, the row until the draft is dropped.
    writing, dropped = threading.Event(), threading.Event()
    record = NovelStore.record_model_call

    def held(self: NovelStore, call: ModelCall, row_id: int | None = None) -> int:
        early = call.role == "chapter_writer" and call.chapter == 4 and call.status == "interrupted"
        if early and not writing.is_set():
            writing.set()
            dropped.wait(10)
        return record(self, call, row_id)

    def watch(event: OrchestratorEvent, _store: NovelStore, _task: asyncio.Task[Any]) -> None:
        if isinstance(event, DraftDiscarded):
            dropped.set()

    monkeypatch.setattr(NovelStore, "record_model_call", held)
    events: list[OrchestratorEvent] = []
    with JudgeWaitsForNextWriter() as server:
        script_defaults(server)
        server.script("quality_judge", Reply(judge_json(3.2), hold_until=writing))  # sends chapter 3 back
        server.script("reviser", Reply(_REVISED, chunk_size=40))
        summary = _run(novel, server, 2, events=events, on_event=watch)
        assert server.held and all(server.held)  # every panel of the first judgement waited
    assert summary is not None and [c.chapter for c in summary.chapters] == [3, 4]
    assert [e.chapter for e in events if isinstance(e, DraftDiscarded)] == [4]
    with NovelStore.open(novel, write=False) as store:
        writers = [c for c in store.model_calls(4) if c.role == "chapter_writer"]
    # What 费用 shows for chapter 4: the thrown-away draft once (cancelled, its input billed), the one kept.
    assert [c.status for c in writers] == ["cancelled", "ok"]
    assert [c.purpose for c in writers] == ["discarded_draft", "write"]
    assert writers[0].input_tokens > 0


def _slow_writer() -> Reply:
    return Reply(writer_text(), chunk_size=2, delay=0.02)  # a few seconds: long enough to stop it midway


def test_stopping_during_an_early_draft_leaves_the_novel_as_after_the_chapter_before(
    novel: Path,
) -> None:
    events: list[OrchestratorEvent] = []

    def stop_when_chapter_3_is_in(
        event: OrchestratorEvent, _store: NovelStore, task: asyncio.Task[Any]
    ) -> None:
        if isinstance(event, ChapterCommitted) and event.chapter == 3:
            task.cancel()

    with FakeAnthropicServer() as server:
        script_defaults(server)
        server.script("chapter_writer", Reply(writer_text(), chunk_size=40), _slow_writer())
        assert _run(novel, server, 3, events=events, on_event=stop_when_chapter_3_is_in) is None
    after = _novel_after(novel)
    assert after["last"] == 3 and sorted(after["texts"]) == [1, 2, 3]
    assert after["staging"] == []
    assert [e.chapter for e in events if isinstance(e, DraftDiscarded)] == [4]
    with NovelStore.open(novel, write=False) as store:  # the stopped draft's call: billed, named
        stopped = [(c.purpose, c.status) for c in store.model_calls(4)]
    assert stopped == [("discarded_draft", "cancelled")]

    with FakeAnthropicServer() as server:
        script_defaults(server)
        summary = _run(novel, server, 2)
    assert summary is not None and [c.chapter for c in summary.chapters] == [4, 5]


def test_a_kill_during_an_early_draft_keeps_one_chapter_in_flight(novel: Path) -> None:
    def kill_once_chapter_4_streams(
        event: OrchestratorEvent, _store: NovelStore, task: asyncio.Task[Any]
    ) -> None:
        if isinstance(event, TextDelta) and event.chapter == 4:
            task.cancel()

    with FakeAnthropicServer() as server:
        script_defaults(server)
        server.script("chapter_writer", Reply(writer_text(), chunk_size=40), _slow_writer())
        server.script("quality_judge", Reply(judge_json(4.2), chunk_size=2, delay=0.02))
        assert _run(novel, server, 3, on_event=kill_once_chapter_4_streams) is None
    with NovelStore.open(novel, write=False) as store:
        cp = store.checkpoint()
        assert (cp["inflight_chapter"], cp["last_completed_chapter"]) == (3, 2)
        assert cp["pipeline_stage"] in ("drafted", "refined", "judged")
        assert store.list_staging(4) == []
        assert store.staging(layout.chapter_path(3))  # chapter 3 waits where it stopped

    with FakeAnthropicServer() as server:
        script_defaults(server)
        summary = _run(novel, server, 2)
    assert summary is not None and [c.chapter for c in summary.chapters] == [3, 4]
    assert _novel_after(novel)["last"] == 4


def test_the_volume_end_drafts_nothing_into_the_next_volume(novel: Path) -> None:
    events: list[OrchestratorEvent] = []
    with FakeAnthropicServer() as server:
        script_defaults(server)
        summary = _run(novel, server, 5, events=events)  # the queue goes on, volume 1 ends at chapter 5
        writers = len(server.requests_for("chapter_writer"))
    assert summary is not None and [c.chapter for c in summary.chapters] == [3, 4, 5]
    assert summary.state == "VOL_REVIEW"
    assert [e.chapter for e in events if isinstance(e, DraftAhead)] == [4, 5]
    assert writers == 3


def test_a_polished_chapter_drafts_the_next_one_again_from_the_polished_text(novel: Path) -> None:
    events: list[OrchestratorEvent] = []
    with JudgeWaitsForNextWriter() as server:  # the first early draft was begun before the gate
        script_defaults(server)
        server.script("quality_judge", judge_json(3.7))  # chapter 3: a second polish, then the commit
        summary = _run(novel, server, 2, events=events)
        writers = [r.user_text for r in server.requests_for("chapter_writer")]
    assert summary is not None and [c.chapter for c in summary.chapters] == [3, 4]
    discarded = [e for e in events if isinstance(e, DraftDiscarded)]
    assert [e.chapter for e in discarded] == [4] and "正文已改变" in discarded[0].reason
    assert [e.chapter for e in events if isinstance(e, DraftAhead)] == [4, 4]
    with NovelStore.open(novel, write=False) as store:
        polished = store.chapter_text(3) or ""
        assert [r.kind for r in store.revisions(3)][-1] == "refined"
        rows = [c for c in store.model_calls(4) if c.role == "chapter_writer"]
        # The first draft's rows were named thrown away before the second draft wrote any.
        assert [c.purpose for c in rows] == ["discarded_draft", "write"]
    # The draft kept is the one written from the text chapter 3 committed.
    assert len(writers) == 3 and text_in_place_of_summary(3, polished) in writers[2]
