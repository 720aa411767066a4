"""A queued run (``run_until_blocked(max_chapters=K)``, the CLI's ``novel run -n K`` and the window's 续写 K
章) pipelines its chapters (issue 18): chapter N+1's writer starts once N's text is final, while N is judged,
from the novel as it will be after N commits; nothing of N+1 is staged until N commits; a chapter sent back,
a stopped run or a killed process throws the early draft away. Real .novel, real SDK, the fake server."""

from __future__ import annotations

import asyncio
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
from novel_desktop.storage.store import NovelStore
from tests.e2e.replies import judge_json, script_defaults, writer_text
from tests.fakes.anthropic_server import FakeAnthropicServer, RecordedRequest, Reply, fast_settings

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


def _prompt(request: RecordedRequest) -> tuple[Any, Any]:
    return request.body.get("system"), request.body["messages"]


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
    # Chapters 4 and 5 were drafted early, from the novel as chapter 3 and 4 left it: the writer was sent the
    # very prompt (the previous chapter's summary, the state after it) the chapter-by-chapter run sent.
    assert [e.chapter for e in events if isinstance(e, DraftAhead)] == [4, 5]
    assert [e for e in events if isinstance(e, DraftDiscarded)] == []
    assert [_prompt(r) for r in second.requests_for("chapter_writer")] == [
        _prompt(r) for r in first.requests_for("chapter_writer")
    ]
    assert "第3章" in second.requests_for("chapter_writer")[1].user_text
    assert staged_ahead == [[], []]  # nothing of the early chapter was staged while the one before was open
    with NovelStore.open(queued, write=False) as store:
        log = store.pipeline_log(4) or {}
        assert [s["name"] for s in log["stages"]][:2] == ["draft", "summarize"]
        assert "writer" in [entry["agent"] for entry in log["context"]]  # the context inspector's record
        assert [c.role for c in store.model_calls(4)].count("chapter_writer") == 1


class _JudgeWaitsForNextWriter(FakeAnthropicServer):
    """The first judge reply is held until the second writer request has arrived (at most 10 s): a queued
    run gets its reply at once, a sequential one would only after the wait ran out."""

    def __init__(self) -> None:
        super().__init__()
        self.second_writer = threading.Event()
        self.judge_saw_writer: list[bool] = []

    def _next_reply(self, role: str | None, *more: str, panel: str | None = None) -> Reply:
        if role == "chapter_writer" and len(self.requests_for("chapter_writer")) >= 2:
            self.second_writer.set()
        if role == "quality_judge" and not self.judge_saw_writer:
            self.judge_saw_writer.append(self.second_writer.wait(timeout=10))
        return super()._next_reply(role, *more, panel=panel)


def test_the_next_writer_starts_before_the_judge_replies(novel: Path) -> None:
    with _JudgeWaitsForNextWriter() as server:
        script_defaults(server)
        summary = _run(novel, server, 2)
        roles = [r.role for r in server.requests if r.role in ("chapter_writer", "summarizer")]
    assert summary is not None and [c.chapter for c in summary.chapters] == [3, 4]
    assert server.judge_saw_writer and all(server.judge_saw_writer)  # both judge panels may wait
    # Chapter 4's writer waited for chapter 3's summary (it reads it), not for chapter 3's refine or judge.
    assert roles[:3] == ["chapter_writer", "summarizer", "chapter_writer"]


def test_a_chapter_sent_back_discards_the_early_draft(novel: Path) -> None:
    events: list[OrchestratorEvent] = []
    staged_at_discard: list[list[str]] = []

    def watch(event: OrchestratorEvent, store: NovelStore, _task: asyncio.Task[Any]) -> None:
        if isinstance(event, DraftDiscarded):
            staged_at_discard.append(store.list_staging(event.chapter))

    with FakeAnthropicServer() as server:
        script_defaults(server)
        server.script("quality_judge", judge_json(3.2))  # chapter 3's first judgement sends it back
        summary = _run(novel, server, 2, events=events, on_event=watch)
        writers = len(server.requests_for("chapter_writer"))
    assert summary is not None and [c.chapter for c in summary.chapters] == [3, 4]
    assert [c.scores for c in summary.chapters] == [[3.2, 4.2], [4.2]]
    discarded = [e for e in events if isinstance(e, DraftDiscarded)]
    assert [e.chapter for e in discarded] == [4] and "退回修订" in discarded[0].reason
    assert staged_at_discard == [[]]
    # Drafted early twice (the first one thrown away with chapter 3's first text), committed once.
    assert [e.chapter for e in events if isinstance(e, DraftAhead)] == [4, 4]
    assert writers == 3
    with NovelStore.open(novel, write=False) as store:
        log = store.pipeline_log(4) or {}
        assert [s["name"] for s in log["stages"]].count("draft") == 1
        # The ledger keeps what the thrown-away draft cost, as chapter 4's.
        assert [c.role for c in store.model_calls(4)].count("chapter_writer") == 2
        assert store.checkpoint()["last_completed_chapter"] == 4


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
