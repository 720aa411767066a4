"""The novel's meta facts, its checkpoint and the pipeline's staging area (outputs not yet committed)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlmodel import Session, col, delete, select

from novel_desktop.domain.common import iso_now
from novel_desktop.storage import layout
from novel_desktop.storage.repository import Repository, default_checkpoint, dumps
from novel_desktop.storage.tables import CheckpointRow, MetaRow, StagingRow

OPS_SKIP_KEY = "ops_skip_count"


def meta_value(s: Session, key: str) -> str | None:
    """One meta fact, inside a transaction."""
    row = s.get(MetaRow, key)
    return row.value if row else None


def get_checkpoint(s: Session) -> dict[str, Any]:
    """The checkpoint, inside a transaction."""
    row = s.get(CheckpointRow, 1)
    data: dict[str, Any] = json.loads(row.content) if row else default_checkpoint()
    return data


def put_checkpoint(s: Session, data: dict[str, Any]) -> None:
    """Replace the checkpoint, inside a transaction."""
    s.merge(CheckpointRow(id=1, content=dumps(data)))


class MetaRepository(Repository):
    """Key/value facts about the file: title, genre, platform, counters."""

    def meta(self) -> dict[str, str]:
        return {str(key): str(value) for key, value in self._rows("SELECT key, value FROM meta")}

    def set_meta(self, key: str, value: str) -> None:
        with self._write() as s:
            s.merge(MetaRow(key=key, value=value))


class CheckpointRepository(Repository):
    """Where the pipeline stands (the checkpoint) and what it produced for the chapter in flight (staging)."""

    def checkpoint(self) -> dict[str, Any]:
        content = self._value("SELECT content FROM checkpoint WHERE id = 1")
        data: dict[str, Any] = json.loads(content) if content is not None else default_checkpoint()
        return data

    def update_checkpoint(self, **changes: Any) -> dict[str, Any]:
        """Change some checkpoint fields (and the time) in one transaction; return the new checkpoint."""
        with self._raw_write() as cur:
            row = cur.execute("SELECT content FROM checkpoint WHERE id = 1").fetchone()
            data: dict[str, Any] = json.loads(row[0]) if row else default_checkpoint()
            data.update(changes)
            data["last_checkpoint_time"] = iso_now()
            cur.execute("INSERT OR REPLACE INTO checkpoint (id, content) VALUES (1, ?)", (dumps(data),))
            return data

    # ------------------------------------------------------------------ staging
    def put_staging(self, path: str, content: str, *, chapter: int | None = None, kind: str = "") -> None:
        """Write one staged pipeline output, keyed like ``state/chapter-048-delta.json``."""
        number = chapter if chapter is not None else layout.staged_chapter(path)
        self.put_stagings(number, {path: content}, kind=kind)

    def put_stagings(self, chapter: int | None, items: dict[str, str], *, kind: str = "") -> None:
        """Write staged outputs (path: content) of chapter ``chapter`` in one transaction: a key
        chapter's two verdicts, or :meth:`put_staging`'s one."""
        now = iso_now()
        with self._raw_write() as cur:
            cur.executemany(
                "INSERT OR REPLACE INTO staging (path, chapter, kind, content, updated_at)"
                " VALUES (?, ?, ?, ?, ?)",
                [(path, chapter, kind, content, now) for path, content in items.items()],
            )

    def staging(self, path: str) -> str | None:
        content: str | None = self._value("SELECT content FROM staging WHERE path = ?", (path,))
        return content

    def list_staging(self, chapter: int | None = None) -> list[str]:
        with self._read() as s:
            stmt = select(StagingRow.path).order_by(col(StagingRow.path))
            if chapter is not None:
                stmt = stmt.where(StagingRow.chapter == chapter)
            return list(s.exec(stmt))

    def replace_staging(
        self,
        chapter: int,
        *,
        put: dict[str, tuple[str, str]],
        delete: Sequence[str] = (),
        checkpoint: dict[str, Any] | None = None,
    ) -> None:
        """Change a chapter's staging in ONE transaction: write ``put`` (path → (content, kind)), drop the
        ``delete`` paths and update the checkpoint fields in ``checkpoint`` (a hand edit of a staged chapter
        replaces its text, keeps the old one as a version and drops what was derived from it, all or nothing).
        """
        now = iso_now()
        with self._write() as s:
            for path in delete:
                row = s.get(StagingRow, path)
                if row is not None:
                    s.delete(row)
            s.flush()
            for path, (content, kind) in put.items():
                s.merge(StagingRow(path=path, chapter=chapter, kind=kind, content=content, updated_at=now))
            if checkpoint:
                data = get_checkpoint(s)
                data.update(checkpoint)
                data["last_checkpoint_time"] = now
                put_checkpoint(s, data)

    def delete_staging(self, path: str) -> None:
        """Drop one staged output (a summary made stale by a revision, …)."""
        with self._raw_write() as cur:
            cur.execute("DELETE FROM staging WHERE path = ?", (path,))

    def clear_staging(self, chapter: int | None = None) -> None:
        """Drop staged outputs (of one chapter, or all)."""
        with self._write() as s:
            stmt = delete(StagingRow)
            if chapter is not None:
                stmt = stmt.where(col(StagingRow.chapter) == chapter)
            s.exec(stmt)
