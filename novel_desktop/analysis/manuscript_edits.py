"""The author's corrections of a split in the import preview that change its chapters (pure).

:func:`split_at_note`: a heading-like line the split left inside a chapter (an ``unsplit_heading`` note) that
the author confirms is a heading: the chapter is split there, the line becomes the new chapter's heading, and
the chapters after it move up by one. Nothing is lost: heading and text still cover the source
(``SplitResult.pieces``).
"""

from __future__ import annotations

import re
from dataclasses import replace

from novel_desktop.analysis.headings import classify_line
from novel_desktop.domain.manuscript import SplitChapter, SplitNote, SplitResult


def _line_at(source: str, offset: int) -> str:
    end = source.find("\n", offset)
    return source[offset : end if end >= 0 else len(source)].strip()


def split_at_note(result: SplitResult, note: SplitNote, source: str) -> SplitChapter | None:
    """Split ``result`` (in place) at the heading-like line ``note`` points at in ``source`` (the manuscript's
    text the split was made from). Returns the new chapter, or None when the note is not such a line or the
    line is no longer in its chapter's text."""
    if note.kind != "unsplit_heading" or note not in result.notes:
        return None
    line = _line_at(source, note.offset)
    index = next((i for i, c in enumerate(result.chapters) if c.number == note.chapter), None)
    if not line or index is None:
        return None
    chapter = result.chapters[index]
    at = _line_start(chapter.text, line)
    if at is None:
        return None
    # The blank lines around the heading go; a paragraph's indent (　　) stays.
    before = chapter.text[:at].rstrip()
    after = re.sub(r"^(?:[^\S\n]*\n)+", "", chapter.text[at + len(line) :]).rstrip()
    heading = classify_line(line)
    new = SplitChapter(
        chapter.number + 1,
        heading.display if heading is not None else line,
        line,
        after,
        chapter.volume,
        "chapter",
        max(note.offset, chapter.start_offset + 1),
        heading.source_number if heading is not None else None,
    )
    # The chapters after it keep their numbers unless the new one takes a number they hold (a gap in the
    # numbering, 第一章 … 第三章, is where a missed 第二章 goes).
    renumbered: dict[int, int] = {}
    moved, previous = [], new.number
    for c in result.chapters[index + 1 :]:
        previous = max(c.number, previous + 1)
        renumbered[c.number] = previous
        moved.append(replace(c, number=previous))
    result.chapters[index:] = [replace(chapter, text=before), new, *moved]
    notes = []
    for n in result.notes:
        if n is note:
            continue
        if n.chapter == chapter.number and n.offset > note.offset:
            n = replace(n, chapter=new.number)
        elif n.chapter is not None and n.chapter in renumbered:
            n = replace(n, chapter=renumbered[n.chapter])
        notes.append(n)
    result.notes[:] = notes
    if note.message in result.warnings:
        result.warnings.remove(note.message)
    return new


def _line_start(text: str, line: str) -> int | None:
    """Where ``line`` (stripped) stands on a line of its own in ``text``."""
    offset = 0
    for row in text.split("\n"):
        if row.strip() == line:
            return offset + row.index(line)
        offset += len(row) + 1
    return None


__all__ = ["split_at_note"]
