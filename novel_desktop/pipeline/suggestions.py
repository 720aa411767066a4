"""The judge's issues as suggestions the author accepts or rejects one by one (issue 14, item 7).

:func:`chapter_suggestions` asks the fix suggester for concrete edits to a committed or staged chapter,
locates them in its text and keeps them (by the text's hash) so that ``novel suggest N --apply S1 S3`` applies
exactly what was shown, without another model call. :func:`apply_suggestions` applies chosen ones to a
committed chapter as a manual edit: a revision is kept and the chapter and those after it are marked as
needing rebuild, exactly as an edit in the window. The window applies accepted suggestions in the editor
instead, as an edit the author then saves as usual.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from novel_desktop.agents.ports import JudgeAgent
from novel_desktop.domain.ledger import attributed
from novel_desktop.domain.suggestions import (
    ChapterSuggestion,
    SuggestionSet,
    apply_chosen,
    judge_issues,
    locate,
)
from novel_desktop.pipeline.on_demand import OnDemandError
from novel_desktop.storage import layout
from novel_desktop.storage.aio import db
from novel_desktop.storage.store import NovelStore, content_hash


def _meta_key(chapter: int) -> str:
    return f"suggestions_ch_{chapter:04d}"


@dataclass
class ChapterText:
    """What suggestions are made for: the chapter's current text, the judge's findings, whether staged."""

    chapter: int
    text: str
    issues: list[str]
    staged: bool


def chapter_source(store: NovelStore, chapter: int) -> ChapterText:
    """The committed chapter, else the staged draft of that number, with the judge's findings on it."""
    text = store.chapter_text(chapter)
    if text is not None:
        return ChapterText(chapter, text, judge_issues(store.evaluation(chapter)), False)
    staged = store.staging(layout.chapter_path(chapter))
    if staged is None:
        raise OnDemandError(f"第 {chapter} 章不存在 (chapter {chapter} does not exist)")
    raw = store.staging(layout.evaluation_path(chapter))
    evaluation = json.loads(raw) if raw else None
    return ChapterText(chapter, staged, judge_issues(evaluation), True)


def stored_suggestions(store: NovelStore, chapter: int, text: str) -> SuggestionSet | None:
    """The suggestions kept for exactly this text of the chapter, or None."""
    raw = store.meta().get(_meta_key(chapter))
    if not raw:
        return None
    found = SuggestionSet.model_validate_json(raw)
    return found if found.text_hash == content_hash(text) else None


@dataclass
class SuggestionsResult:
    """The suggestions for a chapter, what the call cost (0 when they were kept from an earlier call)."""

    chapter: int
    text: str
    issues: list[str]
    suggestions: list[ChapterSuggestion]
    dropped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    staged: bool = False
    cost_usd: float = 0.0


async def chapter_suggestions(
    store: NovelStore, agent: JudgeAgent, chapter: int, *, fresh: bool = False
) -> SuggestionsResult:
    """Suggestions for the judge's findings on chapter ``chapter`` (committed, or staged).

    Suggestions already made for the same text are reused unless ``fresh``. The call's cost goes into the
    novel's cost ledger as chapter ``chapter``'s. Raises :class:`OnDemandError` when the chapter does not
    exist, the judge found nothing to fix, or the reply could not be parsed.
    """
    source = await db(chapter_source, store, chapter)
    if not source.issues:
        raise OnDemandError(f"第 {chapter} 章的评审没有指出问题，没有可生成的修改建议 (no issues to fix)")
    kept = None if fresh else await db(stored_suggestions, store, chapter, source.text)
    if kept is not None:
        return SuggestionsResult(
            chapter, source.text, source.issues, kept.suggestions, kept.dropped, staged=source.staged
        )
    with attributed("suggest", chapter=chapter):
        result = await agent.suggest(chapter, source.text, source.issues)
    cost = float(sum(c.cost_usd for c in result.calls))
    if result.value is None:
        raise OnDemandError("；".join(result.warnings) or "修改建议未能生成 (the reply could not be parsed)")
    located = locate(source.text, result.value.suggestions)
    found = SuggestionSet(
        chapter=chapter,
        text_hash=content_hash(source.text),
        staged=source.staged,
        suggestions=located.suggestions,
        dropped=located.dropped,
    )
    await db(store.set_meta, _meta_key(chapter), found.model_dump_json())
    return SuggestionsResult(
        chapter,
        source.text,
        source.issues,
        located.suggestions,
        located.dropped,
        list(result.warnings),
        source.staged,
        cost,
    )


@dataclass
class AppliedSuggestions:
    """What applying suggestions changed: their ids, the new text and the chapters marked for rebuild."""

    chapter: int
    applied: list[str]
    text: str
    marked: list[int]


def pick(suggestions: Sequence[ChapterSuggestion], ids: Sequence[str] | None) -> list[ChapterSuggestion]:
    """The suggestions named by ``ids`` (all for None); an unknown id is an :class:`OnDemandError`."""
    if ids is None:
        return list(suggestions)
    by_id = {s.id.upper(): s for s in suggestions}
    unknown = [i for i in ids if i.strip().upper() not in by_id]
    if unknown:
        known = "、".join(by_id) or "无"
        raise OnDemandError(f"没有这些建议：{'、'.join(unknown)}（现有：{known}） (unknown suggestion ids)")
    return [by_id[i.strip().upper()] for i in dict.fromkeys(ids)]


async def apply_suggestions(
    store: NovelStore, agent: JudgeAgent, chapter: int, ids: Sequence[str] | None
) -> AppliedSuggestions:
    """Apply the suggestions ``ids`` (None: all) to committed chapter ``chapter`` as a manual edit.

    The suggestions are those shown for the chapter's current text (made now when none are kept). The edit
    is one transaction: a ``manual`` revision, and the chapter and the later ones marked needs_rebuild.
    """
    found = await chapter_suggestions(store, agent, chapter)
    if found.staged:
        raise OnDemandError(
            f"第 {chapter} 章还在暂存区：请在编辑器里采纳建议，或用 novel draft --replace 替换草稿"
            " (staged chapter)"
        )
    chosen = pick(found.suggestions, ids)
    if not chosen:
        raise OnDemandError(f"第 {chapter} 章没有可采纳的建议 (nothing to apply)")
    try:
        text = apply_chosen(found.text, chosen)
    except ValueError as exc:
        raise OnDemandError(str(exc)) from None
    names = "、".join(s.id for s in chosen)
    marked = await db(store.save_manual_edit, chapter, text, f"采纳评审修改建议 {names}")
    return AppliedSuggestions(chapter, [s.id for s in chosen], text, marked)


__all__ = [
    "AppliedSuggestions",
    "ChapterText",
    "SuggestionsResult",
    "apply_suggestions",
    "chapter_source",
    "chapter_suggestions",
    "pick",
    "stored_suggestions",
]
