"""`novel continue` end to end: the real SDK over HTTP to the fake server, the real novel file."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.llm.settings import load_settings
from novel_desktop.pipeline.chapter import ChapterPipeline
from novel_desktop.pipeline.events import TextDelta, TextReset
from novel_desktop.pipeline.interaction import refuse_non_interactive
from novel_desktop.session import NovelSession
from novel_desktop.storage.store import NovelStore
from tests.e2e.replies import judge_json, writer_text
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply


def test_three_chapters_through_the_whole_pipeline(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["continue", str(novel), "-n", "3", "--non-interactive"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out[:3]] == ["第3章", "第4章", "第5章"]
    assert all(line.endswith("4.2 ✅") for line in out[:3])
    assert out[3].startswith("合计 total: $")

    with NovelStore.open(novel, write=False) as store:
        status = store.status()
        assert (status.chapters, status.last_completed_chapter, status.pipeline_stage) == (5, 5, "committed")
        text = store.chapter_text(3)
        assert text.startswith("# 第3章 开山")  # the heading comes from the outline
        # The refiner's one edit was applied by the program, to the first occurrence only.
        assert text.count("哼了一声") == 1
        assert text.count("嘴角勾起一抹冷笑") == 5
        assert "```json" not in text  # the writer's hints are not part of the chapter
        assert store.current_state()["characters"]["lin-feng"]["location"] == "苍梧宗山门"
        assert "考核木牌" in store.current_state()["characters"]["lin-feng"]["inventory"]
        log = store.pipeline_log(5)
        assert [s["name"] for s in log["stages"]] == [
            "draft",
            "summarize",  # the summarizer's two parts (summary and patch; storyline memory)
            "summarize",
            "refine",
            "judge",  # the ordinary judge's three panels, one call each
            "judge",
            "judge",
            "judge_secondary",
        ]
        assert log["total_cost_usd"] > 0
        assert store.evaluation(3)["overall"] == 4.2

    # Chapter 5 ends volume 1: a key chapter, judged a second time by the stronger model.
    assert len(fake.requests_for("judge_secondary")) == 1
    settings = load_settings().settings
    assert fake.requests_for("judge_secondary")[0].body["model"] == settings.model_for("judge_secondary")
    assert fake.requests_for("chapter_writer")[0].body["model"] == settings.model_for("chapter_writer")
    # The stable system blocks carry cache breakpoints, and the second chapter reads them from cache.
    first, _second = fake.requests_for("chapter_writer")[:2]
    assert any("cache_control" in b for b in first.system_blocks)
    with NovelStore.open(novel, write=False) as store:
        draft4 = store.pipeline_log(4)["stages"][0]
    assert draft4["cache_read_input_tokens"] > 0


def test_revise_branch_reports_both_scores(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.script("quality_judge", judge_json(3.2), judge_json(4.1))
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    assert "第3章" in capsys.readouterr().out
    assert len(fake.requests_for("reviser")) == 1
    assert "守门弟子的态度写得更具体" in fake.requests_for("reviser")[0].body["messages"][0]["content"]
    with NovelStore.open(novel, write=False) as store:
        log = store.pipeline_log(3)
    assert log["scores"] == [3.2, 4.1]
    assert log["revisions"] == 1


def test_a_low_score_stops_non_interactive_runs_and_an_answers_file_resolves_it(
    novel: Path, fake: FakeAnthropicServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.set_default("quality_judge", judge_json(2.5))
    assert main(["continue", str(novel), "--non-interactive"]) == 1
    err = capsys.readouterr().err
    assert "low_score_action" in err
    with NovelStore.open(novel, write=False) as store:
        assert store.status().chapters == 2
        assert store.checkpoint()["pipeline_stage"] == "judged"
    answers = tmp_path / "answers.json"
    answers.write_text(
        json.dumps({"chapter 3 low score": {"low_score_action": "接受"}}, ensure_ascii=False),
        encoding="utf-8",
    )
    writer_calls = len(fake.requests_for("chapter_writer"))
    assert main(["continue", str(novel), "--answers-file", str(answers), "--non-interactive"]) == 0
    assert "第3章" in capsys.readouterr().out
    assert len(fake.requests_for("chapter_writer")) == writer_calls  # resumed from the judged stage
    with NovelStore.open(novel, write=False) as store:
        assert store.status().chapters == 3
        assert store.pipeline_log(3)["gate_decision"] == "force_pass"


def test_a_mid_stream_error_restarts_the_stream(novel: Path, fake: FakeAnthropicServer) -> None:
    fake.script("chapter_writer", Reply.mid_stream_overloaded(), Reply(writer_text(), chunk_size=40))
    events: list = []

    async def run() -> None:
        async with NovelSession.open(novel, responder=refuse_non_interactive) as session:
            pipeline = ChapterPipeline(
                session.store, session.agents.chapter, session.interaction, emit=events.append
            )
            outcome = await pipeline.run_chapter()
        assert outcome.status == "committed"

    asyncio.run(run())
    resets = [i for i, e in enumerate(events) if isinstance(e, TextReset)]
    assert len(resets) == 1
    streamed_after = "".join(e.text for e in events[resets[0] :] if isinstance(e, TextDelta))
    assert streamed_after.startswith(writer_text()[:20])


def test_provider_errors_leave_the_chapter_uncommitted_and_resumable(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    # Three 529s exhaust one attempt's retries; the run tries the step once more (§8.2 ERROR_RETRY, as the
    # window's 续写 does), which fails the same way.
    fake.script("summarizer", *[Reply.http_error(529)] * 6)
    assert main(["continue", str(novel), "--non-interactive"]) == 1
    err = capsys.readouterr().err
    assert "模型服务" in err and "出错，重试一次" in err
    with NovelStore.open(novel, write=False) as store:
        assert store.status().chapters == 2
        assert store.checkpoint()["pipeline_stage"] == "drafted"
    writer_calls = len(fake.requests_for("chapter_writer"))
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    assert len(fake.requests_for("chapter_writer")) == writer_calls


def test_no_api_key_is_a_clear_message(
    novel: Path,
    fake: FakeAnthropicServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setattr("novel_desktop.llm.secrets.get_api_key", lambda _provider: None)
    assert main(["continue", str(novel), "--non-interactive"]) == 1
    err = capsys.readouterr().err
    assert "API Key" in err
    assert "Traceback" not in err


def test_cancel_mid_stream_commits_nothing(novel: Path, fake: FakeAnthropicServer) -> None:
    fake.script("chapter_writer", Reply(writer_text(), chunk_size=10, delay=0.05))
    events: list = []

    async def run() -> None:
        async with NovelSession.open(novel, responder=refuse_non_interactive) as session:
            pipeline = ChapterPipeline(
                session.store, session.agents.chapter, session.interaction, emit=events.append
            )
            task = asyncio.ensure_future(pipeline.run_chapter())
            while not any(isinstance(e, TextDelta) for e in events):
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(run())
    assert fake.client_disconnected.wait(5)
    with NovelStore.open(novel, write=False) as store:
        assert store.status().chapters == 2
    with NovelStore.open(novel, write=True) as again:  # the lock was released
        assert again.checkpoint()["pipeline_stage"] == "drafting"


@pytest.mark.parametrize(
    ("judges", "roles", "decision"),
    [
        ([judge_json(3.7)], {"style_refiner": 2}, "polish"),  # 3.5-3.9: one more polish, then commit
        (
            [judge_json(4.6, violation=True), judge_json(4.4)],
            {"reviser": 1},
            "pass",
        ),  # violation forces revision
        (
            [judge_json(1.5), judge_json(4.0)],
            {"reviser": 1},
            "pass",
        ),  # < 2.0: rewritten by the stronger model
    ],
)
def test_each_gate_branch(
    novel: Path, fake: FakeAnthropicServer, judges: list[str], roles: dict[str, int], decision: str
) -> None:
    fake.script("quality_judge", *judges)
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    for role, count in roles.items():
        assert len(fake.requests_for(role)) == count
    with NovelStore.open(novel, write=False) as store:
        log = store.pipeline_log(3)
    assert log["gate_decision"] == decision
    assert log["revisions"] == (1 if "reviser" in roles else 0)
