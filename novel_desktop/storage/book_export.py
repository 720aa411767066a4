"""Export a novel as a book for readers and platforms: plain text, Markdown, EPUB or DOCX.

Chapter text in the store is Markdown-ish web-novel text (an optional ``# 第N章 标题`` heading, then
paragraphs, perhaps already indented with full-width spaces). :func:`load_book` normalises it once into a
:class:`Book` of volumes, chapters and paragraphs; each format renders that model to bytes (EPUB and DOCX in
:mod:`novel_desktop.storage.book_formats`); the bytes reach the disk through
:mod:`novel_desktop.storage.export_file`, which refuses to write over the novel, replaces an existing file
only when asked, and writes atomically, so a failed export never leaves a half file or clobbers the old one.
A chapter whose stored text holds invalid bytes is exported repaired and reported; the others are untouched.
"""

from __future__ import annotations

import html
import re
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sqlalchemy import text as sql
from sqlalchemy.exc import OperationalError

from novel_desktop.domain.text import count_chars
from novel_desktop.i18n import tr
from novel_desktop.storage import layout
from novel_desktop.storage.book_formats import render_docx, render_epub
from novel_desktop.storage.export_file import (
    ChapterRangeError,
    ExportError,
    ExportTargetExists,
    ExportTargetIsNovel,
    ExportTargetReadOnly,
    ExportWriteError,
    check_target,
    write_atomic,
)
from novel_desktop.storage.store import ChapterInfo, NovelStore

FORMATS = ("txt", "md", "epub", "docx")

#: File suffixes that name a format, for ``novel export`` without ``--format``.
SUFFIX_FORMATS = {".txt": "txt", ".md": "md", ".markdown": "md", ".epub": "epub", ".docx": "docx"}

#: Two ideographic spaces: the paragraph indent of Chinese typesetting (段首空两格).
INDENT = "\u3000\u3000"


@dataclass(frozen=True)
class ChapterProblem:
    """A chapter exported with a repair the author should check: its number, title and what was wrong."""

    number: int
    title: str
    message: str


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote: the file, how many chapters and their 字数 (body text, titles not counted),
    and the chapters exported with a repair (invalid bytes replaced), for the author to check."""

    path: Path
    chapters: int
    chars: int
    problems: tuple[ChapterProblem, ...] = field(default=())


@dataclass(frozen=True)
class BookChapter:
    number: int
    title: str
    paragraphs: list[str]


@dataclass(frozen=True)
class BookVolume:
    number: int
    #: "第一卷 风起" when the volume is named, else "第一卷".
    heading: str
    named: bool
    chapters: list[BookChapter]


@dataclass(frozen=True)
class Book:
    """A novel as a reader sees it: title, volumes of chapters, chapters of plain paragraphs."""

    title: str
    author: str
    identifier: str
    volumes: list[BookVolume]
    problems: list[ChapterProblem] = field(default_factory=list)

    @property
    def chapters(self) -> list[BookChapter]:
        return [c for v in self.volumes for c in v.chapters]

    @property
    def shows_volumes(self) -> bool:
        """Volume headings help only when there is more than one volume or a volume has a name."""
        return len(self.volumes) > 1 or any(v.named for v in self.volumes)


# ---------------------------------------------------------------------------------------------- ranges
_RANGE_RE = re.compile(r"^\s*(\d+)\s*(?:([-~～—－–])\s*(\d*)\s*)?$")


def parse_chapter_range(spec: str) -> range:
    """Parse ``"A-B"``, ``"A"`` or ``"A-"`` (from A to the end) into a range of chapter numbers.

    Full-width dashes and tildes are accepted too, as Chinese input methods type them.
    """
    m = _RANGE_RE.match(spec)
    if m is None:
        raise ChapterRangeError(
            tr("章节范围格式不对：“{spec}”，应写成 5、3-10 或 20-（从第 20 章到最后）").format(spec=spec)
        )
    start = int(m.group(1))
    if m.group(2) is None:
        end = start
    elif m.group(3):
        end = int(m.group(3))
    else:
        end = sys.maxsize - 1  # open end: every chapter from A on
    if start < 1:
        raise ChapterRangeError(tr("章节号从 1 开始：“{spec}”").format(spec=spec))
    if end < start:
        raise ChapterRangeError(
            tr("章节范围起点大于终点：“{spec}”，应写成 {end}-{start}").format(spec=spec, end=end, start=start)
        )
    return range(start, end + 1)


def describe_range(chapters: range) -> str:
    """A range as the author typed it: ``3-10``, ``5`` or ``20-``."""
    if len(chapters) == 1:
        return str(chapters.start)
    if chapters.stop >= sys.maxsize:
        return f"{chapters.start}-"
    return f"{chapters.start}-{chapters.stop - 1}"


# ---------------------------------------------------------------------------------------------- normalising
_NUMERALS = "0-9〇零一二三四五六七八九十百千万两"
#: A line that is a chapter title even without a Markdown mark ("第十二章 夜雨", "第3回").
_PLAIN_TITLE_RE = re.compile(rf"^第[{_NUMERALS}]+[章回节](?:\s|$|[：:、.．])")
_VOLUME_TITLE_RE = re.compile(rf"^第[{_NUMERALS}]+[卷部集]")
_SCENE_BREAK_RE = re.compile(r"^(?:[-*_=]\s*){3,}$|^(?:[*＊※]\s*){1,5}$")
_EMPHASIS_RE = re.compile(r"(\*\*|__)(.+?)\1")
SCENE_BREAK = "＊　＊　＊"
#: Characters XML cannot hold (EPUB and DOCX would fail to save) and no reader could see anyway.
_CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")


def chinese_number(n: int) -> str:
    """``12`` → ``十二``, ``105`` → ``一百零五``: how volume numbers are written (第十二卷)."""
    if n <= 0:
        return str(n)
    digits = "零一二三四五六七八九"
    if n < 10:
        return digits[n]
    if n < 20:
        return "十" + (digits[n % 10] if n % 10 else "")
    if n >= 10000:
        return str(n)
    units = ((1000, "千"), (100, "百"), (10, "十"), (1, ""))
    out, zero = "", False
    for value, unit in units:
        d = (n // value) % 10
        if d:
            if zero and out:
                out += "零"
            out += digits[d] + unit
            zero = False
        else:
            zero = True
    return out


def _heading_text(line: str) -> str | None:
    """The words of a Markdown heading line (``## 标题 ##`` → ``标题``), or None for any other line.

    Plain string operations: the regex ``^#{1,6}\\s*(.*?)\\s*#*\\s*$`` took minutes on a line with a long
    run of spaces, and chapter text can come from any imported manuscript.
    """
    text = line.strip()
    if not text.startswith("#"):
        return None
    marks = min(len(text) - len(text.lstrip("#")), 6)
    return text[marks:].strip().rstrip("#").rstrip()


def _clean_line(line: str) -> str:
    """A body line without indentation and Markdown marks, as a reader should see it."""
    text = line.strip()  # str.strip() also removes the ideographic space U+3000
    if _SCENE_BREAK_RE.match(text):
        return SCENE_BREAK
    heading = _heading_text(text)
    if heading is not None:
        text = heading
    if text.startswith(">"):
        text = text.lstrip("> ").strip()
    return _EMPHASIS_RE.sub(r"\2", text).strip()


def normalise_chapter(info: ChapterInfo, text: str) -> BookChapter:
    """Split stored chapter text into its title line and plain paragraphs.

    The title is the first line when it is a Markdown heading or reads like a chapter title (第N章…);
    otherwise it is made from the chapter number. Paragraphs are the non-empty lines, stripped of any
    indentation (each format adds its own) and of Markdown marks.
    """
    lines = [line for line in _plain(text).splitlines() if line.strip()]
    title = ""
    if lines:
        first = lines[0].strip()
        heading = _heading_text(first)
        if heading:
            title = _EMPHASIS_RE.sub(r"\2", heading)
            lines = lines[1:]
        elif _PLAIN_TITLE_RE.match(first):
            title = first
            lines = lines[1:]
    if not title:
        # Without a heading the stored title is the first paragraph's start (title_of), so it is no title.
        stored = info.title.strip()
        is_first_line = bool(lines) and lines[0].strip().startswith(stored)
        title = f"第{info.number}章" + (f" {stored}" if stored and not is_first_line else "")
    paragraphs = [p for p in (_clean_line(line) for line in lines) if p]
    return BookChapter(number=info.number, title=title, paragraphs=paragraphs)


def _volume_heading(number: int, name: str) -> str:
    if not name:
        return f"第{chinese_number(number)}卷"
    if _VOLUME_TITLE_RE.match(name):
        return name  # already "第一卷 风起"
    return f"第{chinese_number(number)}卷 {name}"


def _volume_name(store: NovelStore, number: int) -> str:
    try:
        data = store.document_json(layout.volume_info_path(number))
    except ValueError:  # a broken volume.json must not stop an export; the volume is just unnamed
        return ""
    if isinstance(data, dict) and isinstance(data.get("title"), str):
        return str(data["title"]).strip()
    return ""


def book_identifier(meta: dict[str, str]) -> str:
    """A stable identifier per novel, so a reader app sees a re-export as the same book, updated."""
    for key in ("book_id", "uuid", "identifier"):
        if meta.get(key):
            return meta[key]
    seed = f"novel_desktop:{meta.get('title', '')}:{meta.get('created_at', '')}"
    return f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, seed)}"


_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _plain(text: str) -> str:
    """Text any format can hold: no control characters, a lone surrogate shown as U+FFFD."""
    return _SURROGATE_RE.sub("\ufffd", _CONTROL_RE.sub("", text))


def _raw(store: NovelStore, query: str, **params: object) -> list[tuple[Any, ...]]:
    """Rows read with their text columns cast to bytes (``CAST(… AS BLOB)``): what SQLite holds even when it
    is not valid UTF-8 and so cannot be read as text."""
    with store.engine.connect() as connection:
        return [tuple(row) for row in connection.execute(sql(query), params)]


def _decode(data: object) -> tuple[str, bool]:
    raw = data if isinstance(data, bytes) else str(data or "").encode("utf-8", "surrogatepass")
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace"), True


def _chapter_infos(store: NovelStore) -> tuple[list[ChapterInfo], set[int]]:
    """Every chapter; when a title holds invalid bytes (the list cannot be read as text), the titles are
    read as bytes and repaired, and the numbers of those chapters are returned too."""
    try:
        return store.list_chapters(), set()
    except (OperationalError, UnicodeDecodeError):
        rows = _raw(store, "SELECT number, volume, CAST(title AS BLOB) FROM chapters ORDER BY number")
    infos, damaged = [], set()
    for number, volume, title_bytes in rows:
        title, bad = _decode(title_bytes)
        if bad:
            damaged.add(int(number))
        infos.append(ChapterInfo(int(number), int(volume), title, "", 0, None, "", ""))
    return infos, damaged


def _chapter_text(store: NovelStore, number: int) -> tuple[str | None, bool]:
    """A chapter's current text and whether it had to be repaired (invalid UTF-8 or a lone surrogate)."""
    try:
        text = store.chapter_text(number)
    except (OperationalError, UnicodeDecodeError):
        rows = _raw(
            store,
            "SELECT CAST(r.content AS BLOB) FROM chapters c JOIN chapter_revisions r"
            " ON r.id = c.current_revision_id WHERE c.number = :n",
            n=number,
        )
        if not rows:
            return None, False
        return _decode(rows[0][0])[0], True
    if text is not None and _SURROGATE_RE.search(text):
        return _plain(text), True
    return text, False


def load_book(store: NovelStore, chapters: range | None = None) -> Book:
    """Read the selected chapters (all when ``chapters`` is None) into a :class:`Book`.

    A chapter whose stored text or title holds invalid bytes is read with them replaced by U+FFFD and
    listed in :attr:`Book.problems` (number, title, what was wrong); every other chapter is read as is.
    """
    infos, damaged_titles = _chapter_infos(store)
    if not infos:
        raise ChapterRangeError(tr("这部小说还没有已提交的章节，无法导出"))
    selected = [i for i in infos if chapters is None or i.number in chapters]
    if not selected:
        first, last = infos[0].number, infos[-1].number
        raise ChapterRangeError(
            tr("第 {range} 章范围内没有章节，本书现有第 {first}–{last} 章").format(
                range=describe_range(chapters or range(0)), first=first, last=last
            )
        )
    volumes: dict[int, list[BookChapter]] = {}
    problems: list[ChapterProblem] = []
    for info in selected:
        text, damaged = _chapter_text(store, info.number)
        if text is None:  # listed but never given text: nothing a reader could see
            continue
        chapter = normalise_chapter(replace(info, title=_plain(info.title)), text)
        if damaged or info.number in damaged_titles:
            problems.append(
                ChapterProblem(
                    info.number,
                    chapter.title,
                    tr("第 {number} 章「{title}」存有无效字符，已替换为 \ufffd 后导出，请检查这一章").format(
                        number=info.number, title=chapter.title
                    ),
                )
            )
        volumes.setdefault(info.volume, []).append(chapter)
    meta = store.meta()
    book_volumes = []
    for number in sorted(volumes):
        name = _plain(_volume_name(store, number))
        book_volumes.append(BookVolume(number, _volume_heading(number, name), bool(name), volumes[number]))
    return Book(
        title=_plain(meta.get("title", "") or store.path.stem),
        author=_plain(meta.get("author", "")),
        identifier=_plain(book_identifier(meta)),
        volumes=book_volumes,
        problems=problems,
    )


# ---------------------------------------------------------------------------------------------- formats
def render_txt(book: Book) -> bytes:
    """Plain text for pasting into the 起点/番茄/晋江 chapter editors.

    Those editors make every line break a paragraph and add their own paragraph spacing; 番茄 rejects runs
    of blank lines and 起点/长江-style typesetting re-indents each paragraph. So: the title line alone, a
    blank line, then one paragraph per line with the customary full-width indent and no blank lines between
    paragraphs (a blank line would become an empty paragraph); two blank lines between chapters so a
    chapter is easy to find and select. No Markdown marks are left. UTF-8 without BOM, LF line ends.
    """
    blocks: list[str] = []
    for volume in book.volumes:
        for i, chapter in enumerate(volume.chapters):
            lines = [chapter.title, ""] + [INDENT + p for p in chapter.paragraphs]
            if book.shows_volumes and i == 0:
                lines = [volume.heading, "", *lines]
            blocks.append("\n".join(lines))
    return ("\n\n\n".join(blocks) + "\n").encode("utf-8")


#: Inline Markdown marks: emphasis, code, links, strike-through, and the escape character itself.
_MD_INLINE_RE = re.compile(r"([\\`*_\[\]~])")
#: A line start Markdown would read as a heading, quote, list item, table row or thematic break.
_MD_LEADING_RE = re.compile(r"^([#+\-=|])")
#: "1. " or "1) " at a line start: an ordered list unless the dot is escaped.
_MD_ORDERED_RE = re.compile(r"^(\d+)([.)])(?=\s|$)")


def _md_escape(text: str) -> str:
    """Text that Markdown shows as written: no HTML (``<``, ``>``, ``&`` as entities), no inline marks, and
    no line start that would make it a heading, quote, list or rule."""
    escaped = _MD_INLINE_RE.sub(r"\\\1", html.escape(text, quote=False))
    return _MD_ORDERED_RE.sub(r"\1\\\2", _MD_LEADING_RE.sub(r"\\\1", escaped))


def _md_heading(level: int, title: str) -> str:
    """``## title`` with the title escaped; a trailing ``#`` would be read as a closing sequence."""
    escaped = _md_escape(title)
    if escaped.endswith("#"):
        escaped = escaped[:-1] + "\\#"
    return f"{'#' * level} {escaped}"


def render_md(book: Book) -> bytes:
    """Markdown: ``# 书名``, ``## 第一卷 …`` when volumes show, chapter headings one level below.

    Everything from the novel is escaped: a title or paragraph with ``<script>`` shows as text, not HTML.
    """
    out = [_md_heading(1, book.title), ""]
    chapter_level = 3 if book.shows_volumes else 2
    for volume in book.volumes:
        if book.shows_volumes:
            out += [_md_heading(2, volume.heading), ""]
        for chapter in volume.chapters:
            out += [_md_heading(chapter_level, chapter.title), ""]
            for paragraph in chapter.paragraphs:
                out += [_md_escape(paragraph), ""]
    return ("\n".join(out).rstrip("\n") + "\n").encode("utf-8")


RENDERERS: dict[str, Callable[[Book], bytes]] = {
    "txt": render_txt,
    "md": render_md,
    "epub": render_epub,
    "docx": render_docx,
}


def format_for(path: str | Path) -> str | None:
    """The format an output file name implies by its suffix, if any."""
    return SUFFIX_FORMATS.get(Path(path).suffix.lower())


def export_book(
    store: NovelStore,
    out_path: str | Path,
    fmt: str,
    chapters: range | None = None,
    *,
    force: bool = False,
) -> ExportResult:
    """Export the novel (or the chapters in ``chapters``) to ``out_path`` as ``fmt`` (txt, md, epub, docx).

    OUT is checked before anything is rendered (:func:`~novel_desktop.storage.export_file.check_target`):
    :class:`ExportTargetIsNovel` when it is the novel or its journal/lock, :class:`ExportTargetExists` when
    it exists and ``force`` is false, :class:`ExportTargetReadOnly` when it is read-only, and
    :class:`ExportWriteError` when it cannot be written (an existing OUT is then left as it was). Raises
    :class:`ChapterRangeError` when nothing is selected. Chapters exported with repaired text are listed in
    :attr:`ExportResult.problems`. Every error is an :class:`ExportError` with a message for the author.
    """
    renderer = RENDERERS.get(fmt)
    if renderer is None:
        raise ExportError(
            tr("未知导出格式 {format}，可选：{formats}").format(format=repr(fmt), formats=", ".join(FORMATS))
        )
    out = Path(out_path)
    # Fail before the (possibly long) rendering of a whole novel.
    check_target(out, store.path, force=force)
    book = load_book(store, chapters)
    data = renderer(book)
    check_target(out, store.path, force=force)  # the file may have appeared while the book was rendered
    write_atomic(out, data)
    body_chars = sum(count_chars(p) for c in book.chapters for p in c.paragraphs)
    return ExportResult(
        path=out, chapters=len(book.chapters), chars=body_chars, problems=tuple(book.problems)
    )


__all__ = [
    "FORMATS",
    "SUFFIX_FORMATS",
    "Book",
    "ChapterProblem",
    "ChapterRangeError",
    "ExportError",
    "ExportResult",
    "ExportTargetExists",
    "ExportTargetIsNovel",
    "ExportTargetReadOnly",
    "ExportWriteError",
    "export_book",
    "format_for",
    "load_book",
    "parse_chapter_range",
    "write_atomic",
]
