"""An author's manuscript as read, and split into chapters and volumes: what analysis produces and storage
imports (:mod:`novel_desktop.analysis.manuscript` explains the decisions behind each field).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from novel_desktop.domain.text import count_chars

ChapterKind = Literal["chapter", "prologue", "epilogue", "extra"]


@dataclass(frozen=True)
class Manuscript:
    """The text of a manuscript file and how it was read."""

    text: str
    encoding: str
    source_format: str  # "txt", "md", "docx", "epub"


@dataclass(frozen=True)
class SplitVolume:
    """A 第X卷 heading: its ``number`` in the novel, normalized ``title``, and ``text`` (any words between the
    heading and the volume's first chapter)."""

    number: int
    title: str
    heading: str = ""
    text: str = ""
    source_number: int | None = None
    start_offset: int = 0


@dataclass(frozen=True)
class SplitChapter:
    """One chapter of a split manuscript (see the module docstring for ``number`` and ``text``)."""

    number: int
    title: str
    heading: str
    text: str
    volume: int
    kind: ChapterKind
    start_offset: int
    source_number: int | None = None

    def stored_text(self) -> str:
        """The chapter as the novel stores it: a Markdown heading line, a blank line, the body."""
        return f"# {self.title}\n\n{self.text}\n" if self.text else f"# {self.title}\n"

    @property
    def chars(self) -> int:
        """字数 of the stored chapter (heading included, as ``novel status`` counts it)."""
        return count_chars(self.stored_text())


@dataclass
class SplitResult:
    """A manuscript split into chapters, with what was kept aside and what the author should check."""

    chapters: list[SplitChapter] = field(default_factory=list)
    volumes: list[SplitVolume] = field(default_factory=list)
    front_matter: str = ""
    trailing: str = ""
    warnings: list[str] = field(default_factory=list)
    gaps: list[int] = field(default_factory=list)
    duplicates: list[int] = field(default_factory=list)

    def pieces(self) -> list[str]:
        """Every part of the input in reading order: front matter, volume and chapter headings with their
        text, trailing. Joined, they equal the input up to whitespace."""
        ordered: list[tuple[int, str]] = [(v.start_offset, f"{v.heading}\n{v.text}") for v in self.volumes]
        ordered += [(c.start_offset, f"{c.heading}\n{c.text}") for c in self.chapters]
        ordered.sort(key=lambda item: item[0])
        return [self.front_matter, *(piece for _, piece in ordered), self.trailing]

    def to_json(self, encoding: str) -> dict[str, object]:
        """The ``--dry-run --json`` shape."""
        return {
            "chapters": [{"number": c.number, "title": c.title, "chars": c.chars} for c in self.chapters],
            "volumes": [{"number": v.number, "title": v.title} for v in self.volumes],
            "front_matter_chars": count_chars(self.front_matter),
            "trailing_chars": count_chars(self.trailing),
            "encoding": encoding,
            "warnings": list(self.warnings),
        }
