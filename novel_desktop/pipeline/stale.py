"""No writing past stale chapters (issue 15 point 3).

A chapter whose text is no longer the one its summary and state ops came from is stale, and so is every
chapter after it (:meth:`NovelStore.stale_chapters`). A new chapter written now would be written from facts
the author has since changed, so every path that writes a chapter — the chapter pipeline, the orchestrator's
writing step and trial chapters, the external executor's steps — calls :func:`refuse_stale` first: it raises
:class:`StaleChaptersError` before any model request, and the author is told to rebuild from the first stale
chapter. It is not an error to retry (the orchestrator's ERROR_RETRY does not catch it).
"""

from __future__ import annotations

from collections.abc import Sequence

from novel_desktop.storage.store import NovelStore


def chapter_span(numbers: Sequence[int]) -> str:
    """``4-6`` for a run of chapters, ``4、7`` otherwise."""
    items = list(numbers)
    if not items:
        return ""
    if len(items) > 1 and items == list(range(items[0], items[-1] + 1)):
        return f"{items[0]}-{items[-1]}"
    return "、".join(str(n) for n in items)


class StaleChaptersError(Exception):
    """Chapters are stale: nothing may be written after them until they are rebuilt."""

    def __init__(self, chapters: Sequence[int]) -> None:
        self.chapters = list(chapters)
        super().__init__(self.message())

    @property
    def first(self) -> int:
        """The chapter a rebuild starts from."""
        return self.chapters[0]

    def command(self, novel: str = "") -> str:
        """The exact command that clears it (with the novel's path as the author gave it)."""
        where = f"{novel} " if novel else ""
        return f"novel rebuild {where}--from-chapter {self.first}"

    def message(self, novel: str = "") -> str:
        """The sentence for the author: which chapters, and the command to run."""
        return (
            f"第 {chapter_span(self.chapters)} 章的正文改过，摘要和故事状态已过期；"
            f"请先运行 {self.command(novel)}"
        )


def refuse_stale(store: NovelStore) -> None:
    """Raise :class:`StaleChaptersError` when the novel has stale chapters (one query, no model request)."""
    stale = store.stale_chapters()
    if stale:
        raise StaleChaptersError(stale)


__all__ = ["StaleChaptersError", "chapter_span", "refuse_stale"]
