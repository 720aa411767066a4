"""手动改 end to end in the pipeline (issue 14, item 1): read the staged draft, replace it, re-judge, commit."""

from __future__ import annotations

import asyncio

import pytest

from novel_desktop.pipeline.chapter import ChapterPipeline
from novel_desktop.pipeline.draft import DraftError, commit_as_is, replace_staged_text, staged_draft
from novel_desktop.pipeline.executor_steps import next_step
from novel_desktop.pipeline.interaction import AnswersFileResponder, InteractionManager
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore
from tests.pipeline.scripted_agents import ScriptedAgents

MANUAL = {"low_score_action": "手动改"}
EDIT = "# 第1章 山门\n\n　　林风推开山门，院里站着师父。“回来了？”师父问。\n\n　　他点头，没有说话。\n"


def run(store: NovelStore, agents: ScriptedAgents, answers: dict | None = None):
    pipeline = ChapterPipeline(store, agents, InteractionManager(AnswersFileResponder(answers or {})))
    return asyncio.run(pipeline.run_chapter())


def paused(store: NovelStore) -> ScriptedAgents:
    agents = ScriptedAgents(scores=[2.4])
    outcome = run(store, agents, {"chapter 1 low score": MANUAL})
    assert outcome.status == "awaiting_author"
    return agents


def test_nothing_staged_reads_as_none_and_refuses_edits(store: NovelStore) -> None:
    assert staged_draft(store) is None
    with pytest.raises(DraftError, match="不在暂存区"):
        replace_staged_text(store, 1, EDIT)
    with pytest.raises(DraftError, match="不在暂存区"):
        commit_as_is(store, 1)


def test_the_paused_draft_shows_its_text_and_the_judges_issues(store: NovelStore) -> None:
    paused(store)
    draft = staged_draft(store)
    assert draft is not None
    assert draft.chapter == 1
    assert draft.text == store.staging(layout.chapter_path(1))
    assert draft.awaiting_author
    assert draft.score == 2.4
    assert draft.issues == ["节奏拖沓"]
    assert draft.required_fixes == ["第3段：删去越级法术"]


def test_an_unchanged_draft_is_not_asked_about_again(store: NovelStore) -> None:
    paused(store)
    again = ScriptedAgents(scores=[2.4])
    # No answers at all: a question would raise AnswersNeeded.
    outcome = run(store, again, {})
    assert outcome.status == "awaiting_author"
    assert "在等你修改" in outcome.message and "novel draft" in outcome.message
    assert again.calls == []
    assert next_step(store) == "chapter:001:judge"  # the executor does not ask the commit question either


def test_replace_then_continue_rejudges_without_writer_or_refiner(store: NovelStore) -> None:
    paused(store)
    before = store.staging(layout.chapter_path(1))
    draft = replace_staged_text(store, 1, EDIT)
    assert draft.text == EDIT and draft.author_edited and not draft.awaiting_author
    assert draft.judged_text_changed and draft.issues == ["节奏拖沓"]  # the old verdict, marked as such
    assert store.staging(layout.summary_path(1)) is None
    assert store.staging(layout.evaluation_path(1)) is None
    assert store.checkpoint()["pipeline_stage"] == "drafted"
    assert next_step(store) == "chapter:001:summarize"

    agents = ScriptedAgents(scores=[4.3])
    outcome = run(store, agents)
    assert outcome.status == "committed"
    assert agents.calls == ["summarize", "judge"]
    assert store.chapter_text(1) == EDIT
    kinds = [r.kind for r in store.revisions(1)]
    assert kinds[-1] == "manual"
    texts = [store.revision_text(r.id) for r in store.revisions(1)]
    assert before in texts  # the judged text the author replaced is kept in the history
    assert store.summary(1) == "第1章：林风回到山门。"


def test_a_new_low_score_after_the_edit_is_a_new_question(store: NovelStore) -> None:
    paused(store)
    replace_staged_text(store, 1, EDIT)
    agents = ScriptedAgents(scores=[2.5])
    outcome = run(store, agents, {"chapter 1 low score": {"low_score_action": "接受"}})
    assert outcome.status == "committed" and outcome.flagged
    assert agents.calls == ["summarize", "judge"]
    assert store.chapter_text(1) == EDIT
    first = "staging/novel-ask/chapter-001-low-score-r0-m0.answers.json"
    second = "staging/novel-ask/chapter-001-low-score-r0-m1.answers.json"
    assert '"手动改"' in store.answer(first)
    assert '"接受"' in store.answer(second)  # asked afresh about the new text


def test_the_polish_band_leaves_the_authors_text_alone(store: NovelStore) -> None:
    paused(store)
    replace_staged_text(store, 1, EDIT + "\n　　林风嘴角勾起一抹冷笑。\n")
    agents = ScriptedAgents(scores=[3.7])
    run(store, agents)
    assert agents.calls == ["summarize", "judge"]
    assert "嘴角勾起一抹冷笑" in store.chapter_text(1)


def test_a_revision_of_the_authors_text_keeps_it_in_the_history(store: NovelStore) -> None:
    paused(store)
    replace_staged_text(store, 1, EDIT)
    agents = ScriptedAgents(scores=[3.2, 4.2])
    run(store, agents)
    assert agents.calls == ["summarize", "judge", "write:revise", "refine", "summarize", "judge"]
    history = store.revisions(1)
    assert "manual" in [r.kind for r in history]
    assert EDIT in [store.revision_text(r.id) for r in history]


def test_bad_replacements_change_nothing(store: NovelStore) -> None:
    paused(store)
    staged = store.list_staging()
    text = store.staging(layout.chapter_path(1))
    for bad, why in (("  \n", "空"), (text, "没有改动"), ("字" * 300_000, "太长")):
        with pytest.raises(DraftError, match=why):
            replace_staged_text(store, 1, bad)
    assert store.list_staging() == staged
    assert store.checkpoint()["pipeline_stage"] == "judged"


def test_commit_as_is_commits_flagged(store: NovelStore) -> None:
    paused(store)
    text = store.staging(layout.chapter_path(1))
    commit_as_is(store, 1)
    assert store.chapter_text(1) == text
    assert store.pipeline_log(1)["gate_decision"] == "force_pass"
    assert store.checkpoint()["last_completed_chapter"] == 1
    assert staged_draft(store) is None
    assert store.list_chapters()[0].status == "committed"


def test_commit_as_is_after_a_replacement_asks_for_a_rebuild(store: NovelStore) -> None:
    paused(store)
    replace_staged_text(store, 1, EDIT)
    commit_as_is(store, 1)
    assert store.chapter_text(1) == EDIT
    assert store.list_chapters()[0].status == "needs_rebuild"  # no summary of the new text yet
    assert store.pipeline_log(1)["author_edited"] is True


def test_an_external_executor_skips_the_refiner_for_the_authors_text(store: NovelStore) -> None:
    paused(store)
    replace_staged_text(store, 1, EDIT)
    assert next_step(store) == "chapter:001:summarize"
    store.put_staging(layout.summary_path(1), "第1章：林风回到山门。", chapter=1)
    assert next_step(store) == "chapter:001:judge"
