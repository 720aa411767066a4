"""Chapters with their revisions, summaries, evaluations and pipeline logs."""

from __future__ import annotations

import json
from typing import Any

from sqlmodel import col, select

from novel_desktop.domain.chapter_heading import body_of
from novel_desktop.domain.common import iso_now
from novel_desktop.domain.records import ChapterInfo, RevisionInfo
from novel_desktop.domain.text import count_chars
from novel_desktop.storage.repository import Repository, StoreError, content_hash, title_of
from novel_desktop.storage.tables import (
    ChapterRevisionRow,
    ChapterRow,
)

REVISION_KINDS = ("draft", "refined", "manual", "revision", "imported")


def new_revision(chapter: int, kind: str, text: str, now: str, note: str = "") -> ChapterRevisionRow:
    """A revision row for ``text`` (not yet added to a session)."""
    return ChapterRevisionRow(
        chapter=chapter, kind=kind, content=text, chars=count_chars(text), created_at=now, note=note
    )


class ChapterRepository(Repository):
    """The committed chapters and everything recorded per chapter."""

    def list_chapters(self) -> list[ChapterInfo]:
        """Every committed chapter. Its status is ``needs_rebuild`` when it was marked so (edited by hand, or
        after one that was), ``stale`` when it is stale only by its text (:func:`store.stale_chapters`: its
        text or an earlier chapter's is not the one the summary and state came from), else as stored."""
        # Plain rows, not ORM objects: the window asks for the list several times while a 500-chapter novel
        # opens (~2 ms a time instead of ~20).
        rows = self._rows(
            "SELECT number, volume, title, status, chars, storyline_id, committed_at, updated_at,"
            " content_hash, source_hash FROM chapters ORDER BY number"
        )
        stale = False
        infos = []
        for number, volume, title, status, chars, storyline, committed, updated, text_hash, source in rows:
            stale = stale or status == "needs_rebuild" or text_hash != source
            shown = "stale" if stale and status == "committed" else status
            infos.append(ChapterInfo(number, volume, title, shown, chars, storyline, committed, updated))
        return infos

    def chapter_volumes(self) -> set[int]:
        """The volumes that have committed chapters (one query)."""
        return {int(v) for (v,) in self._rows("SELECT DISTINCT volume FROM chapters")}

    def chapter_text(self, number: int) -> str | None:
        content: str | None = self._value(
            "SELECT r.content FROM chapters c JOIN chapter_revisions r ON r.id = c.current_revision_id"
            " WHERE c.number = ?",
            (number,),
        )
        return content

    def chapter_texts(self) -> dict[int, str]:
        """The current text of every chapter, in one query (find/replace across the novel)."""
        with self._read() as s:
            rows = s.exec(
                select(ChapterRow.number, ChapterRevisionRow.content)
                .join(ChapterRevisionRow, col(ChapterRevisionRow.id) == col(ChapterRow.current_revision_id))
                .order_by(col(ChapterRow.number))
            )
            return {int(n): str(c) for n, c in rows}

    def revisions(self, number: int) -> list[RevisionInfo]:
        """Every revision of a chapter, oldest first."""
        with self._read() as s:
            rows = s.exec(
                select(ChapterRevisionRow)
                .where(ChapterRevisionRow.chapter == number)
                .order_by(col(ChapterRevisionRow.id))
            )
            return [RevisionInfo(r.id or 0, r.chapter, r.kind, r.chars, r.created_at, r.note) for r in rows]

    def revision_text(self, revision_id: int) -> str | None:
        with self._read() as s:
            rev = s.get(ChapterRevisionRow, revision_id)
            return rev.content if rev else None

    def save_manual_edit(self, number: int, text: str, note: str = "") -> list[int]:
        """Keep the author's edit as a new ``manual`` revision.

        When the text changed, the chapter and every later committed chapter are marked ``needs_rebuild``
        (their summaries and state were derived from the old text); the marked chapter numbers are returned.
        An unchanged text writes nothing and returns ``[]``; so does a change of the heading line alone (a
        renamed chapter is a revision, but its title is not story state: nothing goes stale by it).
        """
        with self._write() as s:
            row = s.get(ChapterRow, number)
            if row is None:
                raise StoreError(f"第 {number} 章不存在 (chapter {number} does not exist)")
            digest = content_hash(text)
            if digest == row.content_hash:
                return []
            old = s.get(ChapterRevisionRow, row.current_revision_id) if row.current_revision_id else None
            title_only = old is not None and body_of(old.content) == body_of(text)
            now = iso_now()
            rev = new_revision(number, "manual", text, now, note)
            s.add(rev)
            s.flush()
            row.current_revision_id = rev.id
            row.chars = rev.chars
            if title_only and row.source_hash == row.content_hash:
                row.source_hash = digest  # the state still follows from this text
            row.content_hash = digest
            row.title = title_of(text) or row.title
            row.updated_at = now
            s.add(row)
            if title_only:
                return []
            marked = list(s.exec(select(ChapterRow.number).where(col(ChapterRow.number) >= number)))
            for later in s.exec(select(ChapterRow).where(col(ChapterRow.number) >= number)):
                later.status = "needs_rebuild"
                s.add(later)
            return sorted(marked)

    # ------------------------------------------------------------------ summaries, evaluations, logs
    def summary(self, number: int) -> str | None:
        content: str | None = self._value("SELECT content FROM summaries WHERE chapter = ?", (number,))
        return content

    def recent_summaries(self, before: int, n: int = 3) -> list[tuple[int, str]]:
        """The ``n`` summaries of the chapters just before ``before``, oldest first."""
        if n <= 0:
            return []
        rows = self._rows(
            "SELECT chapter, content FROM summaries WHERE chapter < ? ORDER BY chapter DESC LIMIT ?",
            (before, n),
        )
        return sorted((int(chapter), str(content)) for chapter, content in rows)

    def evaluation(self, number: int) -> dict[str, Any] | None:
        content = self._value("SELECT content FROM evaluations WHERE chapter = ?", (number,))
        return json.loads(content) if content is not None else None

    def chapter_scores(self) -> dict[int, float]:
        """Every evaluated chapter's overall score, in one query (the tree shows 500 chapters)."""
        rows = self._rows("SELECT chapter, overall FROM evaluations WHERE overall IS NOT NULL")
        return {int(n): float(o) for n, o in rows}

    def pipeline_log(self, number: int) -> dict[str, Any] | None:
        content = self._value("SELECT content FROM pipeline_logs WHERE chapter = ?", (number,))
        return json.loads(content) if content is not None else None
