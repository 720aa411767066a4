"""The chapter pipeline's stages, gate branches and recovery, with scripted agents (no LLM)."""

from __future__ import annotations

import asyncio

import pytest

from novel_desktop.pipeline.chapter import ChapterPipeline
from novel_desktop.pipeline.events import ChapterCommitted, GateDecided, StageStarted, TextDelta
from novel_desktop.pipeline.interaction import (
    AnswersFileResponder,
    InteractionManager,
    refuse_non_interactive,
)
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore
from tests.pipeline.scripted_agents import Crash, ScriptedAgents


def run(store: NovelStore, agents: ScriptedAgents, answers: dict | None = None, events: list | None = None):
    responder = AnswersFileResponder(answers) if answers is not None else refuse_non_interactive
    pipeline = ChapterPipeline(
        store, agents, InteractionManager(responder), emit=(events.append if events is not None else None)
    )
    return asyncio.run(pipeline.run_chapter())


def test_a_passing_chapter_is_written_refined_judged_and_committed(store: NovelStore) -> None:
    events: list = []
    agents = ScriptedAgents(scores=[4.3])
    outcome = run(store, agents, events=events)

    assert outcome.status == "committed"
    assert outcome.line() == f"第1章 {outcome.chars}字 4.3 ✅"
    # The first refiner pass starts first among the calls on the draft (a queued run's next writer waits for it).
    assert agents.calls == ["write:draft", "refine", "summarize", "judge"]
    text = store.chapter_text(1)
    assert "哼了一声" in text  # the refiner's edit was applied by the program
    assert "嘴角勾起" not in text
    assert [r.kind for r in store.revisions(1)] == ["draft", "refined"]
    assert store.summary(1) == "第1章：林风回到山门。"
    assert store.current_state()["characters"]["lin-feng"]["location"] == "山门1"
    assert store.document(layout.memory_path("main_arc")) == "林风第1章回山。"
    log = store.pipeline_log(1)
    assert [s["name"] for s in log["stages"]] == ["draft", "summarize", "refine", "judge"]
    assert log["gate_decision"] == "pass"
    assert log["refine_edits"][0]["refined"] == "哼了一声"
    assert store.list_staging() == []
    cp = store.checkpoint()
    assert (cp["last_completed_chapter"], cp["pipeline_stage"], cp["inflight_chapter"]) == (
        1,
        "committed",
        None,
    )
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "ChapterStarted"
    assert any(isinstance(e, TextDelta) for e in events)
    assert [e.stage.value for e in events if isinstance(e, StageStarted)] == [
        "draft",
        "summarize",
        "refine",
        "judge",
        "commit",
    ]
    assert isinstance(events[-1], ChapterCommitted)


def test_polish_band_gets_one_more_refine_then_commits(store: NovelStore) -> None:
    agents = ScriptedAgents(scores=[3.7])
    outcome = run(store, agents)
    assert agents.calls == ["write:draft", "refine", "summarize", "judge", "refine"]
    assert store.pipeline_log(1)["gate_decision"] == "polish"
    assert outcome.line().endswith("3.7 ✅")


def test_revise_band_revises_rejudges_and_reports_both_scores(store: NovelStore) -> None:
    agents = ScriptedAgents(scores=[3.2, 4.1])
    outcome = run(store, agents)
    assert agents.calls == [
        "write:draft",
        "refine",
        "summarize",
        "judge",
        "write:revise",
        "refine",
        "summarize",
        "judge",
    ]
    assert outcome.revisions == 1
    assert "3.2→修订→4.1 ✅" in outcome.line()
    assert "删去越级法术" in store.chapter_text(1)  # the judge's required fix reached the reviser
    # The history keeps the judged text the revision replaced and the revision itself.
    history = store.revisions(1)
    assert [r.kind for r in history] == ["draft", "refined", "revision", "refined"]
    assert "删去越级法术" not in store.revision_text(history[1].id)
    assert "删去越级法术" in store.revision_text(history[2].id)
    assert store.pipeline_log(1)["revisions"] == 1


def test_a_violation_forces_revision_and_two_revisions_then_a_flagged_commit(store: NovelStore) -> None:
    agents = ScriptedAgents(scores=[4.6, 4.6, 4.6], violations=[1, 1, 1])
    outcome = run(store, agents)
    assert agents.calls.count("write:revise") == 2
    assert outcome.flagged
    assert "⚠️" in outcome.line()
    assert store.pipeline_log(1)["gate_decision"] == "force_pass"


def test_key_chapters_are_judged_twice_and_the_lower_score_counts(store: NovelStore) -> None:
    agents = ScriptedAgents(scores=[4.5], secondary_scores=[3.6], key_chapter=True)
    outcome = run(store, agents)
    assert "judge2" in agents.calls
    assert outcome.scores == [3.6]
    assert store.pipeline_log(1)["gate_decision"] == "polish"


def test_a_low_score_asks_the_author(store: NovelStore) -> None:
    path = "staging/novel-ask/chapter-001-low-score-r0-m0.answers.json"
    agents = ScriptedAgents(scores=[2.4])
    outcome = run(store, agents, answers={path: {"low_score_action": "接受"}})
    assert outcome.flagged
    assert store.answer(path) is not None  # the answer is kept with the novel


def test_manual_edit_choice_leaves_the_chapter_staged(store: NovelStore) -> None:
    agents = ScriptedAgents(scores=[2.4])
    outcome = run(store, agents, answers={"chapter 1 low score": {"low_score_action": "手动改"}})
    assert outcome.status == "awaiting_author"
    assert store.list_chapters() == []
    assert store.staging(layout.chapter_path(1)) is not None
    assert store.checkpoint()["pipeline_stage"] == "judged"


def test_non_interactive_low_score_stops_with_the_question(store: NovelStore) -> None:
    from novel_desktop.pipeline.interaction import AnswersNeeded

    with pytest.raises(AnswersNeeded, match="low_score_action"):
        run(store, ScriptedAgents(scores=[2.4]))
    assert store.list_chapters() == []


@pytest.mark.parametrize(
    ("crash_at", "stage", "redone"),
    [
        ("write:draft", "drafting", ["write:draft", "refine", "summarize", "judge"]),
        ("summarize", "drafted", ["refine", "summarize", "judge"]),
        ("judge", "refined", ["judge"]),
    ],
)
def test_a_crash_resumes_from_the_last_finished_stage(
    store: NovelStore, crash_at: str, stage: str, redone: list[str]
) -> None:
    with pytest.raises(Crash):
        run(store, ScriptedAgents(scores=[4.2], crash_at=crash_at))
    assert store.checkpoint()["pipeline_stage"] == stage
    assert store.list_chapters() == []
    again = ScriptedAgents(scores=[4.2])
    outcome = run(store, again)
    assert again.calls == redone
    assert outcome.status == "committed"
    assert store.checkpoint()["last_completed_chapter"] == 1
    assert store.current_state()["state_version"] == 1


def test_cancelling_mid_stream_commits_nothing_and_the_next_run_restarts(store: NovelStore) -> None:
    events: list = []

    async def scenario() -> None:
        agents = ScriptedAgents(write_delay=0.5)
        pipeline = ChapterPipeline(
            store, agents, InteractionManager(refuse_non_interactive), emit=events.append
        )
        task = asyncio.ensure_future(pipeline.run_chapter())
        while not any(isinstance(e, TextDelta) for e in events):
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert store.list_chapters() == []
    assert store.checkpoint()["pipeline_stage"] == "drafting"
    outcome = run(store, ScriptedAgents())
    assert outcome.status == "committed"


def test_chapters_follow_each_other(store: NovelStore) -> None:
    for n in (1, 2, 3):
        assert run(store, ScriptedAgents()).chapter == n
    assert store.current_state()["characters"]["lin-feng"]["location"] == "山门3"
    assert store.document(layout.memory_path("main_arc")) == "林风第3章回山。"
    events: list = []
    run(store, ScriptedAgents(scores=[3.2, 4.0]), events=events)
    gates = [e for e in events if isinstance(e, GateDecided)]
    assert [g.action for g in gates] == ["revise", "pass"]
