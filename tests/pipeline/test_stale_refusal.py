"""No writing past stale chapters, in the core (issue 15 point 3): the chapter pipeline, the orchestrator's
writing step and its trial chapters, and the executor's steps refuse with StaleChaptersError before any agent
is called; the orchestrator does not retry it. ChapterInfo says which chapters are stale and why."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from novel_desktop.pipeline.chapter import ChapterPipeline
from novel_desktop.pipeline.executor_steps import next_step
from novel_desktop.pipeline.interaction import InteractionManager, refuse_non_interactive
from novel_desktop.pipeline.orchestrator import Orchestrator, OrchestratorEvent, StepRetrying
from novel_desktop.pipeline.stale import StaleChaptersError, chapter_span
from novel_desktop.pipeline.step_results import advance
from novel_desktop.storage.store import NovelStore
from tests.pipeline.scripted_agents import ScriptedAgents


@pytest.fixture
def edited(novel: Path) -> Iterator[NovelStore]:
    """《青石问道》 (chapters 1-2) with chapter 1 edited by hand: 1 and 2 are stale."""
    store = NovelStore.open(novel, write=True)
    store.save_manual_edit(1, (store.chapter_text(1) or "") + "\n\n　　补一句。")
    yield store
    store.close()


class NoPlanning:
    """Planning agents that must never be reached."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"planning agent {name} called")


def test_the_message_names_the_chapters_and_the_command() -> None:
    error = StaleChaptersError([4, 5, 6])
    assert error.first == 4
    assert error.message("我的小说.novel") == (
        "第 4-6 章的正文改过，摘要和故事状态已过期；请先运行 novel rebuild 我的小说.novel --from-chapter 4"
    )
    assert str(error).endswith("请先运行 novel rebuild --from-chapter 4")
    assert (chapter_span([3]), chapter_span([2, 5])) == ("3", "2、5")


def test_the_chapter_pipeline_refuses_before_any_agent(edited: NovelStore) -> None:
    agents = ScriptedAgents()
    pipeline = ChapterPipeline(edited, agents, InteractionManager(refuse_non_interactive))
    with pytest.raises(StaleChaptersError) as caught:
        asyncio.run(pipeline.run_chapter())
    assert caught.value.chapters == [1, 2]
    assert agents.calls == []
    assert edited.list_staging() == []


def test_the_orchestrator_refuses_once_without_retrying(edited: NovelStore) -> None:
    edited.update_checkpoint(
        orchestrator_state="WRITING", pending_actions=[{"type": "consistency_audit", "window": "1-2"}]
    )
    agents = ScriptedAgents()
    events: list[OrchestratorEvent] = []
    orch = Orchestrator(
        edited,
        NoPlanning(),  # type: ignore[arg-type]
        agents,
        InteractionManager(refuse_non_interactive),
        emit=events.append,
    )
    with pytest.raises(StaleChaptersError):
        asyncio.run(orch.run_until_blocked(max_chapters=3))
    assert not any(isinstance(e, StepRetrying) for e in events)
    assert agents.calls == []
    # Nothing changed: the audit's pending action is still there for when writing goes on.
    assert edited.checkpoint()["pending_actions"] == [{"type": "consistency_audit", "window": "1-2"}]
    # The trial chapters of a quick start refuse too, before the trial plan is prepared.
    with pytest.raises(StaleChaptersError):
        asyncio.run(orch._trial_chapter())
    assert agents.calls == []


def test_the_executor_refuses_next_and_advance(edited: NovelStore) -> None:
    with pytest.raises(StaleChaptersError):
        next_step(edited)
    with pytest.raises(StaleChaptersError):
        advance(edited, "chapter:003:draft")
    assert edited.list_staging() == []


def test_chapter_info_says_which_chapters_are_stale(novel: Path) -> None:
    with NovelStore.open(novel, readonly=True) as store:
        assert [c.status for c in store.list_chapters()] == ["committed", "committed"]
    # Stale by its text alone (its summary came from another text): it and every later chapter say so.
    con = sqlite3.connect(novel)
    con.execute("UPDATE chapters SET source_hash = 'another text' WHERE number = 1")
    con.commit()
    con.close()
    with NovelStore.open(novel, write=True) as store:
        assert store.stale_chapters() == [1, 2]
        assert [c.status for c in store.list_chapters()] == ["stale", "stale"]
        # Marked by the editor's save: the stored status stands.
        store.save_manual_edit(2, (store.chapter_text(2) or "") + "\n\n　　补一句。")
        assert [c.status for c in store.list_chapters()] == ["stale", "needs_rebuild"]
