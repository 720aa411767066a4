"""The context inspector's records, as the pipeline keeps them (issue 16 point 7).

While a chapter is in flight its agents' prompt records are staged (``logs/chapter-NNN-context.json``, written
by :mod:`novel_desktop.agents.context_recorder`); the commit copies them into the chapter's pipeline log under
``context`` (:func:`staged_context`, one call in ``ChapterPipeline._commit``), and the staging goes with the
rest of the chapter's. :func:`chapter_context` reads them back for ``novel context`` and the window's panel.
"""

from __future__ import annotations

import json
from typing import Any

from novel_desktop.domain.context_record import ChapterContext, entries_from_json
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore


class ContextUnavailable(Exception):
    """There is no such chapter (never written, not in flight); the message is for the author."""


def _staged(store: NovelStore, n: int) -> list[Any]:
    raw = store.staging(layout.context_path(n))
    if not raw:
        return []
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        return []
    return data if isinstance(data, list) else []


def staged_context(store: NovelStore, n: int) -> list[Any]:
    """The staged records of chapter ``n`` as JSON, for its pipeline log's ``context``."""
    return _staged(store, n)


def _in_flight(store: NovelStore) -> int | None:
    cp = store.checkpoint()
    inflight = cp.get("inflight_chapter")
    if inflight and cp.get("pipeline_stage") not in (None, "committed"):
        return int(inflight)
    return None


def chapter_context(store: NovelStore, n: int) -> ChapterContext:
    """What chapter ``n``'s prompts held: the staged records of the chapter in flight, else the committed
    chapter's. Raises :class:`ContextUnavailable` for a chapter that was never written."""
    if n == _in_flight(store):
        entries = entries_from_json(_staged(store, n))
        note = "" if entries else f"第 {n} 章正在写作，还没有发出任何提示词"
        return ChapterContext(n, entries, in_flight=True, note=note)
    if n not in {c.number for c in store.list_chapters()}:
        raise ContextUnavailable(f"第 {n} 章还没有写，没有上下文记录 (chapter {n} has not been written)")
    log = store.pipeline_log(n) or {}
    entries = entries_from_json(log.get("context"))
    note = (
        ""
        if entries
        else f"第 {n} 章没有上下文记录：它写于本版本之前，或来自导入、手写或外部执行器"
        " (no context record: written before this version, imported, or by an external executor)"
    )
    return ChapterContext(n, entries, note=note)
