"""Export a novel as a book for readers and platforms: plain text, Markdown, EPUB or DOCX.

Chapter text in the store is Markdown-ish web-novel text (an optional ``# 第N章 标题`` heading, then
paragraphs, perhaps already indented with full-width spaces). :func:`load_book` normalises it once into a
:class:`Book` of volumes, chapters and paragraphs; each format renders that model to bytes; the bytes reach
the disk through :func:`write_atomic`, so a failed export never leaves a half file or clobbers the old one.
"""

from __future__ import annotations

import copy
import html
import io
import os
import re
import secrets
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from novel_desktop.domain.text import count_chars
from novel_desktop.storage import layout
from novel_desktop.storage.store import ChapterInfo, NovelStore

FORMATS = ("txt", "md", "epub", "docx")

#: File suffixes that name a format, for ``novel export`` without ``--format``.
SUFFIX_FORMATS = {".txt": "txt", ".md": "md", ".markdown": "md", ".epub": "epub", ".docx": "docx"}

#: Two ideographic spaces: the paragraph indent of Chinese typesetting (段首空两格).
INDENT = "\u3000\u3000"

#: Body and heading fonts for DOCX; Word on a Chinese system knows them by these names.
DOCX_BODY_FONT = "宋体"
DOCX_HEADING_FONT = "黑体"
DOCX_BODY_SIZE_PT = 12

#: CJK-friendly font stack for EPUB: reading systems fall back along it to a font that has the glyphs.
EPUB_CSS = """\
body { font-family: "Songti SC", "Noto Serif CJK SC", "Source Han Serif SC", "SimSun", "宋体", serif;
  line-height: 1.8; }
h1, h2 { font-family: "PingFang SC", "Noto Sans CJK SC", "Source Han Sans SC", "Microsoft YaHei",
  "SimHei", "黑体", sans-serif; text-align: center; font-weight: bold; }
h1 { margin-top: 30%; }
h2 { margin: 1em 0 1.5em; }
p { text-indent: 2em; margin: 0 0 0.4em; text-align: justify; }
"""


class ExportError(Exception):
    """An export the author has to fix something for, with a message for them."""


class ChapterRangeError(ExportError):
    """A malformed chapter range, or a range that selects no chapter of the novel."""


class ExportWriteError(ExportError):
    """The output file could not be written."""


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote: the file, how many chapters and their 字数 (body text, titles not counted)."""

    path: Path
    chapters: int
    chars: int


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
            f"章节范围格式不对：“{spec}”，应写成 5、3-10 或 20-（从第 20 章到最后）"
            " (bad chapter range; use A, A-B or A-)"
        )
    start = int(m.group(1))
    if m.group(2) is None:
        end = start
    elif m.group(3):
        end = int(m.group(3))
    else:
        end = sys.maxsize - 1  # open end: every chapter from A on
    if start < 1:
        raise ChapterRangeError(f"章节号从 1 开始：“{spec}” (chapter numbers start at 1)")
    if end < start:
        raise ChapterRangeError(
            f"章节范围起点大于终点：“{spec}”，应写成 {end}-{start} (range start is after its end)"
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
_HEADING_RE = re.compile(r"^#{1,6}\s*(.*?)\s*#*\s*$")
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


def _clean_line(line: str) -> str:
    """A body line without indentation and Markdown marks, as a reader should see it."""
    text = line.strip()  # str.strip() also removes the ideographic space U+3000
    if _SCENE_BREAK_RE.match(text):
        return SCENE_BREAK
    heading = _HEADING_RE.match(text)
    if heading:
        text = heading.group(1)
    if text.startswith(">"):
        text = text.lstrip("> ").strip()
    return _EMPHASIS_RE.sub(r"\2", text).strip()


def normalise_chapter(info: ChapterInfo, text: str) -> BookChapter:
    """Split stored chapter text into its title line and plain paragraphs.

    The title is the first line when it is a Markdown heading or reads like a chapter title (第N章…);
    otherwise it is made from the chapter number. Paragraphs are the non-empty lines, stripped of any
    indentation (each format adds its own) and of Markdown marks.
    """
    lines = [line for line in _CONTROL_RE.sub("", text).splitlines() if line.strip()]
    title = ""
    if lines:
        first = lines[0].strip()
        heading = _HEADING_RE.match(first)
        if heading and heading.group(1):
            title = _EMPHASIS_RE.sub(r"\2", heading.group(1))
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


def load_book(store: NovelStore, chapters: range | None = None) -> Book:
    """Read the selected chapters (all when ``chapters`` is None) into a :class:`Book`."""
    infos = store.list_chapters()
    if not infos:
        raise ChapterRangeError("这部小说还没有已提交的章节，无法导出 (the novel has no chapters yet)")
    selected = [i for i in infos if chapters is None or i.number in chapters]
    if not selected:
        first, last = infos[0].number, infos[-1].number
        raise ChapterRangeError(
            f"第 {describe_range(chapters or range(0))} 章范围内没有章节，本书现有第 {first}–{last} 章"
            " (no chapters in that range)"
        )
    volumes: dict[int, list[BookChapter]] = {}
    for info in selected:
        text = store.chapter_text(info.number)
        if text is None:  # listed but never given text: nothing a reader could see
            continue
        volumes.setdefault(info.volume, []).append(normalise_chapter(info, text))
    meta = store.meta()
    book_volumes = []
    for number in sorted(volumes):
        name = _volume_name(store, number)
        book_volumes.append(BookVolume(number, _volume_heading(number, name), bool(name), volumes[number]))
    return Book(
        title=meta.get("title", "") or store.path.stem,
        author=meta.get("author", ""),
        identifier=book_identifier(meta),
        volumes=book_volumes,
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


def _md_escape(text: str) -> str:
    # A paragraph that starts like Markdown syntax would render as a list, heading or quote.
    if re.match(r"^(#|>|[-+*]\s|\d+[.)]\s)", text):
        return "\\" + text
    return text


def render_md(book: Book) -> bytes:
    """Markdown: ``# 书名``, ``## 第一卷 …`` when volumes show, chapter headings one level below."""
    out = [f"# {book.title}", ""]
    chapter_level = "###" if book.shows_volumes else "##"
    for volume in book.volumes:
        if book.shows_volumes:
            out += [f"## {volume.heading}", ""]
        for chapter in volume.chapters:
            out += [f"{chapter_level} {chapter.title}", ""]
            for paragraph in chapter.paragraphs:
                out += [_md_escape(paragraph), ""]
    return ("\n".join(out).rstrip("\n") + "\n").encode("utf-8")


def render_epub(book: Book) -> bytes:
    """EPUB 3 (with an NCX for older readers): one XHTML per chapter and a table of contents."""
    from ebooklib import epub

    ebook = epub.EpubBook()
    ebook.set_identifier(book.identifier)
    ebook.set_title(book.title)
    ebook.set_language("zh-CN")
    if book.author:
        ebook.add_author(book.author)
    css = epub.EpubItem(uid="style", file_name="style/book.css", media_type="text/css", content=EPUB_CSS)
    ebook.add_item(css)

    def page(uid: str, file_name: str, title: str, body: str) -> Any:
        item = epub.EpubHtml(uid=uid, title=title, file_name=file_name, lang="zh-CN")
        item.content = f"<html><head><title>{html.escape(title)}</title></head><body>{body}</body></html>"
        item.add_item(css)  # both at the top of the package, so the link "style/book.css" resolves
        ebook.add_item(item)
        return item

    # Grouping the contents by volume only helps when there is more than one volume to choose from.
    grouped = len(book.volumes) > 1
    toc: list[Any] = []
    spine: list[Any] = ["nav"]
    for volume in book.volumes:
        entries: list[Any] = []
        if grouped:
            vol_page = page(
                f"vol-{volume.number:02d}",
                f"vol-{volume.number:02d}.xhtml",
                volume.heading,
                f"<h1>{html.escape(volume.heading)}</h1>",
            )
            spine.append(vol_page)
        for chapter in volume.chapters:
            body = f"<h2>{html.escape(chapter.title)}</h2>" + "".join(
                f"<p>{html.escape(p)}</p>" for p in chapter.paragraphs
            )
            item = page(
                f"chapter-{layout.num(chapter.number)}",
                f"chapter-{layout.num(chapter.number)}.xhtml",
                chapter.title,
                body,
            )
            spine.append(item)
            entries.append(item)
        if grouped:
            toc.append((epub.Section(volume.heading, href=vol_page.file_name), entries))
        else:
            toc.extend(entries)
    ebook.toc = toc
    ebook.add_item(epub.EpubNcx())
    ebook.add_item(epub.EpubNav(title="目录"))
    ebook.spine = spine
    buffer = io.BytesIO()
    epub.write_epub(buffer, ebook, {"raise_exceptions": True})
    return buffer.getvalue()


def _set_east_asian_font(element: Any, font: str) -> None:
    """Name the East Asian font on a run or style so Word does not fall back to a Latin font for 汉字.

    A theme attribute (``w:eastAsiaTheme``) would win over the explicit name, so it is removed.
    """
    from docx.oxml.ns import qn

    rpr = element.get_or_add_rPr()
    fonts = rpr.get_or_add_rFonts()
    fonts.set(qn("w:eastAsia"), font)
    fonts.attrib.pop(qn("w:eastAsiaTheme"), None)


def render_docx(book: Book) -> bytes:
    """Word: a title, volume headings (Heading 1) when volumes show, chapter headings, indented paragraphs.

    Every chapter starts on a new page (the page break sits on the volume heading for a volume's first
    chapter). Paragraphs get a first-line indent of two characters (``w:firstLineChars``, what Word's
    "首行缩进 2 字符" writes, plus the same length in points for programs that ignore it).
    """
    import docx
    import docx.text.paragraph
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn
    from docx.shared import Pt

    document = docx.Document()
    document.core_properties.title = book.title
    document.core_properties.language = "zh-CN"
    if book.author:
        document.core_properties.author = book.author
    normal = document.styles["Normal"]
    normal.font.size = Pt(DOCX_BODY_SIZE_PT)
    _set_east_asian_font(normal.element, DOCX_BODY_FONT)
    # Tells Word to treat the text as Chinese (line breaking, punctuation compression, proofing).
    normal_rpr = normal.element.get_or_add_rPr()
    lang = normal_rpr.find(qn("w:lang"))
    if lang is None:
        lang = normal_rpr.makeelement(qn("w:lang"), {})
        normal_rpr.append(lang)
    lang.set(qn("w:eastAsia"), "zh-CN")
    for name in ("Title", "Heading 1", "Heading 2"):
        _set_east_asian_font(document.styles[name].element, DOCX_HEADING_FONT)

    # python-docx's add_paragraph() searches the whole body for the section properties each time, which
    # is quadratic (minutes for a 300万字 novel). Paragraphs are instead inserted before the sectPr found
    # once, body paragraphs as copies of one fully formatted template.
    body = document.element.body
    sect_pr = body.find(qn("w:sectPr"))  # the default template always ends the body with one
    insert: Callable[[Any], None] = sect_pr.addprevious if sect_pr is not None else body.append

    def add(style: str, text: str, *, page_break: bool = False) -> None:
        paragraph = docx.text.paragraph.Paragraph(OxmlElement("w:p"), document._body)
        insert(paragraph._p)
        paragraph.style = document.styles[style]
        paragraph.paragraph_format.page_break_before = page_break or None
        _set_east_asian_font(paragraph.add_run(text)._r, DOCX_HEADING_FONT)

    template = docx.text.paragraph.Paragraph(OxmlElement("w:p"), document._body)
    template.paragraph_format.first_line_indent = Pt(DOCX_BODY_SIZE_PT * 2)
    template._p.get_or_add_pPr().get_or_add_ind().set(qn("w:firstLineChars"), "200")
    _set_east_asian_font(template.add_run("正文")._r, DOCX_BODY_FONT)
    template_p = template._p
    text_path = f"{qn('w:r')}/{qn('w:t')}"
    template_p.find(text_path).set("{http://www.w3.org/XML/1998/namespace}space", "preserve")

    add("Title", book.title)
    chapter_style = "Heading 2" if book.shows_volumes else "Heading 1"
    for volume in book.volumes:
        if book.shows_volumes:
            add("Heading 1", volume.heading, page_break=True)
        for i, chapter in enumerate(volume.chapters):
            add(chapter_style, chapter.title, page_break=not (book.shows_volumes and i == 0))
            for text in chapter.paragraphs:
                p = copy.deepcopy(template_p)
                p.find(text_path).text = text
                insert(p)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


RENDERERS: dict[str, Callable[[Book], bytes]] = {
    "txt": render_txt,
    "md": render_md,
    "epub": render_epub,
    "docx": render_docx,
}


def format_for(path: str | Path) -> str | None:
    """The format an output file name implies by its suffix, if any."""
    return SUFFIX_FORMATS.get(Path(path).suffix.lower())


# ---------------------------------------------------------------------------------------------- writing
def write_atomic(out_path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file next to ``out_path``, then rename it over ``out_path``.

    An existing file is replaced only after the whole new file is on disk; on any failure the temporary file
    is removed and the old file, if any, is left as it was.
    """
    folder = out_path.parent
    if out_path.is_dir():
        raise ExportWriteError(f"输出路径是一个文件夹：{out_path} (output path is a folder)")
    if not folder.is_dir():
        raise ExportWriteError(f"目录不存在：{folder} (folder does not exist)")
    tmp = folder / f".{out_path.name}.{secrets.token_hex(4)}.tmp"
    try:
        # "x": never reuse a file someone else created; created with the user's umask, unlike mkstemp's 0600.
        with tmp.open("xb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, out_path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        reason = exc.strerror or str(exc)
        raise ExportWriteError(f"无法写入 {out_path}：{reason} (cannot write the output file)") from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def export_book(
    store: NovelStore, out_path: str | Path, fmt: str, chapters: range | None = None
) -> ExportResult:
    """Export the novel (or the chapters in ``chapters``) to ``out_path`` as ``fmt`` (txt, md, epub, docx).

    Raises :class:`ChapterRangeError` when nothing is selected and :class:`ExportWriteError` when the file
    cannot be written; an existing ``out_path`` is replaced only by a complete new file.
    """
    renderer = RENDERERS.get(fmt)
    if renderer is None:
        raise ExportError(f"未知导出格式 {fmt!r}，可选：{', '.join(FORMATS)} (unknown format)")
    out = Path(out_path)
    if not out.parent.is_dir():  # fail before the (possibly long) rendering of a whole novel
        raise ExportWriteError(f"目录不存在：{out.parent} (folder does not exist)")
    book = load_book(store, chapters)
    data = renderer(book)
    write_atomic(out, data)
    body_chars = sum(count_chars(p) for c in book.chapters for p in c.paragraphs)
    return ExportResult(path=out, chapters=len(book.chapters), chars=body_chars)
