"""An author's manuscript as read, and split into chapters and volumes: what analysis produces and storage
imports (:mod:`novel_desktop.analysis.manuscript` explains the decisions behind each field).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from novel_desktop.domain.text import count_chars

ChapterKind = Literal["chapter", "prologue", "epilogue", "extra"]
#: The places the splitter was unsure of (:class:`SplitNote`).
NoteKind = Literal[
    "merged_heading",  # a heading repeated (maybe with a rule line between) was taken as one
    "joined_heading",  # 第六章 on one line, its title on the next, joined into one heading
    "short_chapter",  # far shorter than the book's usual chapter: maybe a heading inside the text
    "long_chapter",  # far longer than usual: maybe a heading that was not recognised
    "unsplit_heading",  # a line that looks like a heading but reads as prose, left inside the text
    "encoding",  # the file's encoding was guessed with low confidence
]


@dataclass(frozen=True)
class Manuscript:
    """The text of a manuscript file and how it was read."""

    text: str
    encoding: str
    source_format: str  # "txt", "md", "docx", "epub"
    #: Below 1.0 when the encoding was guessed (a legacy 8-bit file that reads as GB18030 and as Big5).
    encoding_confidence: float = 1.0


@dataclass(frozen=True)
class SplitNote:
    """One place the author should look at before importing: what the splitter was unsure of (``kind``),
    a message (Chinese, English in brackets, as ``SplitResult.warnings``), the number in the novel of the
    chapter it concerns (None: the whole file) and the offset in the text it points at."""

    kind: NoteKind
    message: str
    chapter: int | None = None
    offset: int = 0


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
    #: The places the split was unsure of, each also one line of ``warnings``.
    notes: list[SplitNote] = field(default_factory=list)

    def note(self, kind: NoteKind, message: str, chapter: int | None = None, offset: int = 0) -> None:
        """Record an unsure place (and its line in ``warnings``)."""
        self.notes.append(SplitNote(kind, message, chapter, offset))
        self.warnings.append(message)

    def notes_for(self, chapter: int) -> list[SplitNote]:
        """The notes about one chapter (by its number in the novel)."""
        return [n for n in self.notes if n.chapter == chapter]

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
            "notes": [{"kind": n.kind, "chapter": n.chapter, "message": n.message} for n in self.notes],
        }
