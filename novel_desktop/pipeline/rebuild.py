"""Rebuild after a manual edit (seed 001 §10.8): re-summarize the edited chapter, replay the state, and
report the later chapters that no longer agree."""

from __future__ import annotations

from novel_desktop.agents.ports import ChapterAgents
from novel_desktop.pipeline.contract_lifecycle import apply_contract_updates
from novel_desktop.storage.aio import db
from novel_desktop.storage.store import NovelStore, RebuildReport, StoreError


async def rebuild_from(store: NovelStore, agents: ChapterAgents, chapter: int) -> RebuildReport:
    """Re-run the Summarizer on chapter ``chapter``'s current text and rebuild the state from it."""
    text = await db(store.chapter_text, chapter)
    if text is None:
        raise StoreError(f"第 {chapter} 章不存在 (chapter {chapter} does not exist)")
    brief = await agents.brief(chapter)
    result = await agents.summarize(brief, text)
    if result.value is None:
        raise StoreError(f"第 {chapter} 章的摘要未能生成，状态未改动，可稍后重试 (the summarizer failed)")
    out = result.value
    line = out.storyline_id or brief.storyline_id
    memory = (line, out.storyline_memory) if (line and out.storyline_memory) else None
    report = await db(
        store.rebuild_state,
        chapter,
        summary_markdown=out.summary_markdown,
        patch=out.patch,
        storyline_memory=memory,
    )
    # The contract updates the chapter's commit applied, once more: nothing changes when they are in place.
    await db(apply_contract_updates, store, chapter)
    return report
