"""What 接续已有书稿 (issue 19 point 1) keeps in the novel, each write one transaction.

- each chapter's reading note under ``adopt/notes/chapter-NNN.json`` (an extra file, exported with the
  novel), keyed by the chapter's content hash, written together with the chapter's summary and with the
  chapter marked as no longer stale: a kill after chapter k leaves chapters 1..k read and k+1.. to read, and
  a chapter edited since its note was written is read again;
- the open foreshadowing and the story state at the last chapter, once the author accepted them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from novel_desktop.domain.common import iso_now
from novel_desktop.domain.state_ops import apply_patch
from novel_desktop.storage import layout
from novel_desktop.storage.repository import StoreError, dumps, prefix_bounds
from novel_desktop.storage.store import NovelStore
from novel_desktop.storage.story_state import latest_state, store_patch_result
from novel_desktop.storage.tables import ChapterRow, DocumentRow, ExtraFileRow, SummaryRow

NOTE_PREFIX = "adopt/notes/"


def note_path(chapter: int) -> str:
    return f"{NOTE_PREFIX}chapter-{layout.num(chapter)}.json"


def chapter_hashes(store: NovelStore) -> dict[int, str]:
    """Every chapter's content hash, in chapter order (one query, no texts)."""
    rows = store._rows("SELECT number, content_hash FROM chapters ORDER BY number")
    return {int(n): str(h) for n, h in rows}


def read_notes(store: NovelStore) -> dict[int, tuple[str, dict[str, Any]]]:
    """The stored notes: chapter → (the content hash it was read from, the note)."""
    lo, hi = prefix_bounds(NOTE_PREFIX)
    out: dict[int, tuple[str, dict[str, Any]]] = {}
    for _path, data in store._rows(
        "SELECT path, data FROM extra_files WHERE path >= ? AND path < ?", (lo, hi)
    ):
        try:
            doc = json.loads(bytes(data).decode("utf-8"))
            out[int(doc["chapter"])] = (str(doc["content_hash"]), dict(doc["note"]))
        except (ValueError, KeyError, TypeError):
            continue  # an unreadable note is read again
    return out


def save_note(
    store: NovelStore,
    chapter: int,
    content_hash: str,
    note: Mapping[str, Any],
    *,
    summary: str,
    storyline_id: str | None = None,
) -> bool:
    """Keep one chapter's note and summary, and mark the chapter's summary as derived from its text, in one
    transaction. False (nothing written) when the chapter's text changed since it was read."""
    now = iso_now()
    with store._write() as s:
        row = s.get(ChapterRow, chapter)
        if row is None:
            raise StoreError(f"第 {chapter} 章不存在 (chapter {chapter} does not exist)")
        if row.content_hash != content_hash:
            return False
        doc = {"chapter": chapter, "content_hash": content_hash, "note": dict(note), "read_at": now}
        s.merge(
            ExtraFileRow(path=note_path(chapter), data=json.dumps(doc, ensure_ascii=False).encode("utf-8"))
        )
        s.merge(SummaryRow(chapter=chapter, content=summary, storyline_id=storyline_id, updated_at=now))
        row.source_hash = row.content_hash
        row.status = "committed"
        if storyline_id and not row.storyline_id:
            row.storyline_id = storyline_id
        s.add(row)
    return True


def store_book_state(
    store: NovelStore,
    chapter: int,
    ops: Sequence[Mapping[str, Any]],
    foreshadowing: Sequence[Mapping[str, Any]],
) -> int:
    """The state after ``chapter`` (``set`` ops on the current state, plus one ``foreshadow`` op per open
    thread) and the open threads in ``foreshadowing/global.json``, in one transaction; returns the new
    state version."""
    with store._write() as s:
        state = latest_state(s)
        threads = [
            {"op": "foreshadow", "path": str(t["id"]), "value": str(t.get("status") or "planted")}
            for t in foreshadowing
        ]
        patch = {
            "chapter": chapter,
            "base_state_version": int(state.get("state_version", 0)),
            "storyline_id": None,
            "ops": [*ops, *threads],
        }
        result = apply_patch(state, patch)
        store_patch_result(s, result, chapter)
        row = s.get(DocumentRow, layout.GLOBAL_FORESHADOWING)
        doc = json.loads(row.content) if row is not None else {"foreshadowing": []}
        by_id = {str(t.get("id")): dict(t) for t in doc.get("foreshadowing") or [] if isinstance(t, dict)}
        for item in foreshadowing:
            by_id[str(item["id"])] = dict(item)
        doc["foreshadowing"] = list(by_id.values())
        s.merge(DocumentRow(path=layout.GLOBAL_FORESHADOWING, content=dumps(doc), updated_at=iso_now()))
        return int(result.state["state_version"])


__all__ = ["NOTE_PREFIX", "chapter_hashes", "note_path", "read_notes", "save_note", "store_book_state"]
