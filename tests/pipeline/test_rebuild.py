"""Rebuild after a manual edit: re-summarize, replay the later chapters, report disagreements."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest

from novel_desktop.agents.ports import AgentResult, ChapterBrief, SummaryOutput
from novel_desktop.pipeline.chapter import ChapterPipeline
from novel_desktop.pipeline.interaction import InteractionManager, refuse_non_interactive
from novel_desktop.pipeline.rebuild import rebuild_from
from novel_desktop.storage.store import NovelStore
from tests.pipeline.scripted_agents import Crash, ScriptedAgents


@dataclass
class EditedSummarizer(ScriptedAgents):
    """After the author's edit, chapter 2 sends 林风 to 洛阳 and gives him a sword."""

    async def summarize(self, brief: ChapterBrief, text: str) -> AgentResult[SummaryOutput]:
        self._call("summarize")
        if brief.chapter != 2:
            return await super().summarize(brief, text)
        patch = {
            "chapter": 2,
            "base_state_version": 1,
            "ops": [
                {"op": "set", "path": "characters.lin-feng.location", "value": "洛阳"},
                {"op": "add", "path": "characters.lin-feng.inventory", "value": "青锋剑"},
            ],
        }
        return AgentResult(
            SummaryOutput("第2章（改）：林风去了洛阳，得了青锋剑。", patch, "main_arc", "林风在洛阳。")
        )


def _write_chapters(store: NovelStore, count: int) -> None:
    for _ in range(count):
        asyncio.run(
            ChapterPipeline(store, ScriptedAgents(), InteractionManager(refuse_non_interactive)).run_chapter()
        )


def test_rebuild_replays_later_chapters_on_the_new_state(store: NovelStore) -> None:
    _write_chapters(store, 3)
    before = store.state_versions()
    marked = store.save_manual_edit(2, store.chapter_text(2) + "\n\n　　他改道去了洛阳。")
    assert marked == [2, 3]

    report = asyncio.run(rebuild_from(store, EditedSummarizer(), 2))

    assert report.base_version == 1
    assert store.summary(2) == "第2章（改）：林风去了洛阳，得了青锋剑。"
    state = store.current_state()
    # Chapter 3's recorded op (location → 山门3) still applies on top of the rebuilt chapter 2.
    assert state["characters"]["lin-feng"] == {"location": "山门3", "inventory": ["青锋剑"]}
    assert report.state_version == state["state_version"] == before[-1] + 2
    assert set(before) <= set(store.state_versions())  # the old states stay readable
    # The report says, chapter by chapter, what the state after it is now compared with before the edit.
    assert report.changes[2] == ["人物 lin-feng：位置 山门2 → 洛阳；随身物品 无 → 青锋剑"]
    assert report.changes[3] == ["人物 lin-feng：随身物品 无 → 青锋剑"]
    # Chapter 3 moves 林风 on to 山门3 itself and its summary names no place he no longer is: no contradiction.
    assert report.disagreeing == {}
    # After a rebuild no chapter is stale: the author can write on.
    assert {c.number: c.status for c in store.list_chapters()} == {
        1: "committed",
        2: "committed",
        3: "committed",
    }
    assert store.stale_chapters() == []


def test_rebuilding_a_chapter_with_no_later_ones_agrees(store: NovelStore) -> None:
    _write_chapters(store, 2)
    store.save_manual_edit(2, "# 第2章\n\n　　改写后的正文。")
    report = asyncio.run(rebuild_from(store, EditedSummarizer(), 2))
    assert report.disagreeing == {}
    assert store.status().stale_chapters == []
    assert store.current_state()["characters"]["lin-feng"]["location"] == "洛阳"


def test_a_restarted_rebuild_reuses_the_staged_summary_and_leaves_no_staging(
    store: NovelStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_chapters(store, 3)
    store.save_manual_edit(2, store.chapter_text(2) + "\n\n　　他改道去了洛阳。")
    before = store.state_versions()

    def killed(*_args: object, **_kwargs: object) -> None:
        raise Crash("killed before the transaction")

    with monkeypatch.context() as m:
        m.setattr(store, "write_rebuild", killed)
        with pytest.raises(Crash):
            asyncio.run(rebuild_from(store, EditedSummarizer(), 2))
    assert store.state_versions() == before  # nothing of the novel changed
    assert store.stale_chapters() == [2, 3]

    again = EditedSummarizer(crash_at="summarize")  # a second model call would crash
    report = asyncio.run(rebuild_from(store, again, 2))
    assert again.calls == []
    assert report.cost_usd == 0.0
    assert store.summary(2) == "第2章（改）：林风去了洛阳，得了青锋剑。"
    assert [p for p in store.list_staging() if p.startswith("rebuild/")] == []
