"""The project documents of the seed layout, the NOVEL_ASK answers and the extra files an import kept."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from sqlmodel import col, select

from novel_desktop.domain.common import iso_now
from novel_desktop.storage import layout
from novel_desktop.storage.repository import Repository, StoreError, prefix_bounds
from novel_desktop.storage.tables import AnswerRow, DocumentRow, ExtraFileRow


class DocumentRepository(Repository):
    """Documents (brief, world, characters, volumes, …) by their seed path."""

    def document(self, path: str) -> str | None:
        content: str | None = self._value("SELECT content FROM documents WHERE path = ?", (path,))
        return content

    def documents_under(self, prefix: str) -> dict[str, str]:
        """Every document whose path starts with ``prefix``, path → content, in path order, in one query
        (the characters and storyline memories the agents read per chapter)."""
        lo, hi = prefix_bounds(prefix)
        rows = self._rows(
            "SELECT path, content FROM documents WHERE path >= ? AND path < ? ORDER BY path", (lo, hi)
        )
        return {str(path): str(content) for path, content in rows}

    def document_json(self, path: str) -> Any:
        text = self.document(path)
        return json.loads(text) if text is not None else None

    def put_document(self, path: str, content: str) -> None:
        kind, _ = layout.classify(path)
        if kind is not layout.Kind.DOCUMENT:
            raise StoreError(f"{path} 不是项目文档路径 (not a project document path)")
        with self._write() as s:
            s.merge(DocumentRow(path=path, content=content, updated_at=iso_now()))

    def put_documents(self, documents: Mapping[str, str], *, delete: Iterable[str] = ()) -> None:
        """Write several documents (and delete the ``delete`` ones) in one transaction: all of it, or (on any
        error or kill) none."""
        removed = [p for p in delete if p not in documents]
        for path in [*documents, *removed]:
            kind, _ = layout.classify(path)
            if kind is not layout.Kind.DOCUMENT or not layout.is_safe_relpath(path):
                raise StoreError(f"{path} 不是项目文档路径 (not a project document path)")
        now = iso_now()
        with self._write() as s:
            for path, content in documents.items():
                s.merge(DocumentRow(path=path, content=content, updated_at=now))
            for path in removed:
                row = s.get(DocumentRow, path)
                if row:
                    s.delete(row)

    def list_documents(self, prefix: str = "") -> list[str]:
        lo, hi = prefix_bounds(prefix)
        rows = self._rows("SELECT path FROM documents WHERE path >= ? AND path < ? ORDER BY path", (lo, hi))
        return [str(path) for (path,) in rows]

    def delete_document(self, path: str) -> None:
        with self._write() as s:
            row = s.get(DocumentRow, path)
            if row:
                s.delete(row)


class AnswerRepository(Repository):
    """The author's answers to NOVEL_ASK questions, by answer path."""

    def answer(self, answer_path: str) -> str | None:
        with self._read() as s:
            row = s.get(AnswerRow, answer_path)
            return row.content if row else None

    def put_answer(self, answer_path: str, content: str) -> None:
        with self._write() as s:
            s.merge(AnswerRow(answer_path=answer_path, content=content, updated_at=iso_now()))

    def delete_answer(self, answer_path: str) -> None:
        """Forget an answer so that the gate asks again (seed 000: 需要重做 gate 时删除 AnswerSpec)."""
        with self._write() as s:
            row = s.get(AnswerRow, answer_path)
            if row:
                s.delete(row)

    def list_answers(self) -> list[str]:
        with self._read() as s:
            return list(s.exec(select(AnswerRow.answer_path).order_by(col(AnswerRow.answer_path))))


class ExtraFileRepository(Repository):
    """Files the seed layout does not name, kept byte for byte."""

    def put_extra_file(self, path: str, data: bytes) -> None:
        """Keep a file the seed layout does not name (front matter of an imported manuscript, …).

        A name that would leave an exported folder (absolute, ``..``) is refused with :class:`StoreError`.
        """
        if not layout.is_safe_relpath(path):
            raise StoreError(f"{path!r} 不是安全的相对路径 (not a safe relative path)")
        with self._write() as s:
            s.merge(ExtraFileRow(path=path, data=data))

    def extra_file(self, path: str) -> bytes | None:
        with self._read() as s:
            row = s.get(ExtraFileRow, path)
            return row.data if row else None
