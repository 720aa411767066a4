"""The novel's past (schema 2): every content each document had, and each chapter's point.

The ``documents`` table's triggers (see ``migrations``) append each change to ``document_history``, so no
write path can forget to record one; an operation that derives the novel from a chapter (commit, rebuild,
rollback) names itself for the length of its transaction (:func:`write_origin`) and leaves a
``chapter_points`` row. With both, the documents as they were when any chapter was written, or right after it,
can be read back (:meth:`HistoryRepository.documents_at`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import func, text
from sqlmodel import Session, col, select

from novel_desktop.domain.common import iso_now
from novel_desktop.domain.records import ChapterPoint
from novel_desktop.storage.checkpoint import get_checkpoint
from novel_desktop.storage.migrations import WRITE_ORIGIN_KEY
from novel_desktop.storage.repository import Repository
from novel_desktop.storage.tables import ChapterPointRow, DocumentHistoryRow, MetaRow


# ---------------------------------------------------------------------- helpers used inside transactions
def history_position(s: Session) -> int:
    """The newest document history position (0 before any document)."""
    return int(s.exec(select(func.max(DocumentHistoryRow.id))).one() or 0)


@contextmanager
def write_origin(s: Session, origin: str) -> Iterator[None]:
    """Tag every document write of the block with ``origin`` (``commit:12``) in the history."""
    s.merge(MetaRow(key=WRITE_ORIGIN_KEY, value=origin))
    s.flush()
    try:
        yield
    finally:
        s.flush()
        row = s.get(MetaRow, WRITE_ORIGIN_KEY)
        if row is not None:
            s.delete(row)
            s.flush()


def record_point(
    s: Session, chapter: int, kind: str, state_version: int, docs_before: int
) -> ChapterPointRow:
    """Record chapter ``chapter``'s point now (after the operation's writes, inside its transaction)."""
    s.flush()
    row = ChapterPointRow(
        chapter=chapter,
        kind=kind,
        state_version=state_version,
        docs_before=docs_before,
        docs_after=history_position(s),
        checkpoint=json.dumps(get_checkpoint(s), ensure_ascii=False),
        created_at=iso_now(),
    )
    s.add(row)
    return row


def point_of(s: Session, chapter: int) -> ChapterPoint | None:
    """Chapter ``chapter``'s newest point, or None (committed before schema 2, never committed, or removed by
    a rollback since)."""
    row = s.exec(
        select(ChapterPointRow)
        .where(ChapterPointRow.chapter == chapter)
        .order_by(col(ChapterPointRow.id).desc())
        .limit(1)
    ).first()
    if row is None or point_removed(rollback_marks(s), row):
        return None
    return _point(row)


# A rollback to chapter r (and a trial reset, a rollback to 0) leaves a ``rollback`` point of chapter r at
# state version V. What was derived for a chapter after r before it (its snapshots, changelog groups and
# points) belongs to a removed chapter: kept for the record, never replayed or read as the chapter's past.
ROLLBACK = "rollback"


def rollback_marks(s: Session) -> list[tuple[int, int, int]]:
    """``(point id, chapter, state_version)`` of every rollback, oldest first."""
    rows = s.exec(
        select(ChapterPointRow.id, ChapterPointRow.chapter, ChapterPointRow.state_version)
        .where(ChapterPointRow.kind == ROLLBACK)
        .order_by(col(ChapterPointRow.id))
    )
    return [(int(i or 0), int(c), int(v)) for i, c, v in rows]


def state_removed(marks: list[tuple[int, int, int]], chapter: int, state_version: int) -> bool:
    """Whether chapter ``chapter``'s state at ``state_version`` (a snapshot, a changelog group) was derived
    before a rollback removed the chapter."""
    return any(chapter > r and state_version < v for _i, r, v in marks)


def point_removed(marks: list[tuple[int, int, int]], row: ChapterPointRow) -> bool:
    """Whether a point was recorded before a rollback removed its chapter."""
    return any(row.chapter > r and int(row.id or 0) < i for i, r, _v in marks)


def documents_at(s: Session, position: int, prefix: str = "") -> dict[str, str]:
    """The documents (path → content) as they were at history ``position``, those under ``prefix``."""
    rows = s.exec(  # type: ignore[call-overload]
        text(
            "SELECT h.path, h.content FROM document_history h JOIN ("
            "  SELECT path, MAX(id) AS id FROM document_history"
            "  WHERE id <= :position AND path LIKE :prefix ESCAPE '\\' GROUP BY path"
            ") newest ON h.id = newest.id WHERE h.content IS NOT NULL ORDER BY h.path"
        ),
        params={"position": position, "prefix": _like_prefix(prefix)},
    )
    return {str(path): str(content) for path, content in rows}


def document_at(s: Session, path: str, position: int) -> str | None:
    """One document as it was at history ``position`` (None: it did not exist then, or was deleted)."""
    return s.exec(
        select(DocumentHistoryRow.content)
        .where(DocumentHistoryRow.path == path, col(DocumentHistoryRow.id) <= position)
        .order_by(col(DocumentHistoryRow.id).desc())
        .limit(1)
    ).first()


def _like_prefix(prefix: str) -> str:
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _point(row: ChapterPointRow) -> ChapterPoint:
    try:
        checkpoint: dict[str, Any] = json.loads(row.checkpoint) if row.checkpoint else {}
    except json.JSONDecodeError:
        checkpoint = {}
    return ChapterPoint(
        row.chapter, row.kind, row.state_version, row.docs_before, row.docs_after, checkpoint, row.created_at
    )


class HistoryRepository(Repository):
    """Reading the novel's past."""

    def history_position(self) -> int:
        with self._read() as s:
            return history_position(s)

    def chapter_point(self, chapter: int) -> ChapterPoint | None:
        """Chapter ``chapter``'s newest point (None for a chapter committed before schema 2)."""
        with self._read() as s:
            return point_of(s, chapter)

    def chapter_points(self) -> dict[int, ChapterPoint]:
        """Every chapter's newest point, by chapter."""
        with self._read() as s:
            marks = rollback_marks(s)
            rows = s.exec(select(ChapterPointRow).order_by(col(ChapterPointRow.id)))
            newest = {row.chapter: row for row in rows}
            return {c: _point(row) for c, row in newest.items() if not point_removed(marks, row)}

    def documents_at(self, position: int, prefix: str = "") -> dict[str, str]:
        """The documents under ``prefix`` as they were at history ``position`` (a point's ``docs_before``:
        what the chapter was written from; ``docs_after``: right after it)."""
        with self._read() as s:
            return documents_at(s, position, prefix)

    def document_at(self, path: str, position: int) -> str | None:
        """One document as it was at history ``position`` (None: it did not exist then)."""
        with self._read() as s:
            return document_at(s, path, position)
