"""The import preview's corrections that change a split's chapters (the window's side of
:mod:`novel_desktop.analysis.manuscript_edits`)."""

from __future__ import annotations

from novel_desktop.domain.manuscript import Manuscript, SplitChapter, SplitNote, SplitResult


def split_at_note(split: SplitResult, note: SplitNote, manuscript: Manuscript) -> SplitChapter | None:
    """Split ``split`` (in place) at the heading-like line of ``note`` the author confirmed; the new chapter,
    or None when there is nothing to split."""
    from novel_desktop.analysis.manuscript_edits import split_at_note as split_at

    return split_at(split, note, manuscript.text)


__all__ = ["split_at_note"]
