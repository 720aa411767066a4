"""What a GUI follows while a chapter is written through the real SDK (stages, tokens and cost so far, the gate
decision), and the last gate branch end to end: two revisions that still fall short commit with a flag."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.pipeline.chapter import ChapterPipeline
from novel_desktop.pipeline.events import (
    ChapterCommitted,
    GateDecided,
    PipelineEvent,
    Stage,
    StageFinished,
    StageStarted,
    TextDelta,
    UsageUpdated,
)
from novel_desktop.pipeline.interaction import refuse_non_interactive
from novel_desktop.session import NovelSession
from novel_desktop.storage.store import NovelStore
from tests.e2e.replies import judge_json, writer_text
from tests.fakes.anthropic_server import FakeAnthropicServer


def _run_one(novel: Path) -> list[PipelineEvent]:
    events: list[PipelineEvent] = []

    async def run() -> None:
        async with NovelSession.open(novel, responder=refuse_non_interactive) as session:
            pipeline = ChapterPipeline(
                session.store, session.agents.chapter, session.interaction, emit=events.append
            )
            await pipeline.run_chapter()

    asyncio.run(run())
    return events


def test_events_carry_the_stages_tokens_and_cost_so_far(novel: Path, fake: FakeAnthropicServer) -> None:
    events = _run_one(novel)

    started = [e.stage for e in events if isinstance(e, StageStarted)]
    assert started == [Stage.DRAFT, Stage.SUMMARIZE, Stage.REFINE, Stage.JUDGE, Stage.COMMIT]
    finished = {e.stage: e for e in events if isinstance(e, StageFinished)}
    assert set(finished) == {Stage.DRAFT, Stage.SUMMARIZE, Stage.REFINE, Stage.JUDGE}
    for stage, event in finished.items():
        assert event.input_tokens > 0 and event.output_tokens > 0 and event.cost_usd > 0, stage
    # The draft streamed in many pieces before it finished.
    deltas = [i for i, e in enumerate(events) if isinstance(e, TextDelta)]
    assert len(deltas) > 10
    assert max(deltas) < events.index(finished[Stage.DRAFT])

    usage = [e for e in events if isinstance(e, UsageUpdated)]
    # Live figures while a stage streams: the draft's input (message_start) shows before its text is done.
    first_text = deltas[0]
    assert any(isinstance(e, UsageUpdated) and e.input_tokens > 0 for e in events[: max(deltas)])
    assert any(i < first_text for i, e in enumerate(events) if isinstance(e, UsageUpdated))
    for before, after in itertools.pairwise(usage):
        assert after.input_tokens >= before.input_tokens  # a prompt once sent stays billed
    # After each finished stage, the chapter's total so far: at least every recorded stage's reported figures.
    # Calls still in flight add their estimates on top (judge panels start while summarizer and refiner run),
    # and an estimate may be corrected down when its call ends, so totals are bounded, not monotonic.
    totals = [events[events.index(e) + 1] for e in finished.values()]
    assert all(isinstance(t, UsageUpdated) for t in totals)
    recorded = sorted(finished.values(), key=events.index)
    for k, total in enumerate(sorted(totals, key=events.index)):
        assert total.input_tokens >= sum(e.input_tokens for e in recorded[: k + 1])
        assert total.output_tokens >= sum(e.output_tokens for e in recorded[: k + 1])
        assert total.cost_usd >= sum(e.cost_usd for e in recorded[: k + 1]) - 1e-5
    totals.sort(key=events.index)
    assert totals[-1].cost_usd > totals[0].cost_usd > 0
    assert totals[-1] == usage[-1]
    assert usage[-1].output_tokens == sum(e.output_tokens for e in finished.values())

    gate = next(e for e in events if isinstance(e, GateDecided))
    assert (gate.chapter, gate.action, gate.overall) == (3, "pass", 4.2)
    committed = events[-1]
    assert isinstance(committed, ChapterCommitted)
    assert committed.cost_usd == pytest.approx(usage[-1].cost_usd, abs=1e-5)  # the log rounds to 6 places
    with NovelStore.open(novel, write=False) as store:
        log = store.pipeline_log(3)
    assert log["total_cost_usd"] == pytest.approx(committed.cost_usd, abs=1e-5)
    assert sum(s["output_tokens"] for s in log["stages"]) == usage[-1].output_tokens


def test_two_revisions_that_fall_short_commit_with_a_flag(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.script("quality_judge", judge_json(3.2), judge_json(3.1), judge_json(3.3))
    fake.script("reviser", writer_text(5), writer_text(4))
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    assert line.startswith("第3章 ")
    assert line.endswith("3.2→修订→3.1→修订→3.3 ⚠️ 已标记")
    assert len(fake.requests_for("reviser")) == 2
    # Each of the three judgings is three panels at once, each asked for its part.
    panels = [r.panel for r in fake.requests_for("quality_judge")]
    assert len(panels) == 9 and all(sorted(panels[i : i + 3]) == ["A", "B", "C"] for i in range(0, 9, 3))
    with NovelStore.open(novel, write=False) as store:
        log = store.pipeline_log(3)
        assert (log["gate_decision"], log["revisions"], log["scores"]) == ("force_pass", 2, [3.2, 3.1, 3.3])
        assert store.status().chapters == 3
        # Every text the pipeline produced is in the chapter's history, in order: what the judge saw each
        # time, what the reviser wrote, and the final text (the current revision).
        history = store.revisions(3)
        assert [r.kind for r in history] == ["draft", "refined", "revision", "refined", "revision", "refined"]
        texts = [store.revision_text(r.id) for r in history]
        assert texts[-1] == store.chapter_text(3)
        assert "嘴角勾起一抹冷笑" in texts[0] and "哼了一声" in texts[1]  # the refiner's edit, then judged
        assert len({texts[1], texts[2], texts[4]}) == 3  # the judged draft and the two revisions differ
        assert store.list_staging() == []
