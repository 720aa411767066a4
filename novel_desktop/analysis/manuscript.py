"""Reading an author's existing manuscript and splitting it into chapters (``novel import-text``, GUI import).

Pure: nothing here touches a ``.novel`` file; :mod:`novel_desktop.storage.manuscript_import` writes a split.

Decisions where real manuscripts leave room (the CLI and the GUI show the outcome before anything is written):

* **Heading lines.** ``SplitChapter.text`` is the body only; the heading line as the source wrote it is
  in ``heading`` and a normalized display heading (``第二章 優勝記略``) in ``title``.
  :meth:`SplitChapter.stored_text` renders what the novel stores: ``# <title>`` then the body, as
  web-novel chapters are kept.
* **Numbers.** ``number`` is the chapter's place in the novel. A numbered heading keeps its own number while
  numbers rise (so 第八十七回 is chapter 87 and a gap stays a gap); a number that restarts (per-volume
  numbering), repeats, or jumps by more than :data:`MAX_GAP` continues the sequence instead. 楔子/序章/引子
  before the first numbered chapter take the numbers just below it (楔子 + 第1章 → 0 and 1); 尾声/番外 and
  the like continue the sequence. ``source_number`` keeps the heading's own number.
* **Repeated headings.** A heading with no body whose heading reappears later is an echo: a table of contents
  at the top falls into the front matter, and a heading repeated directly is one chapter, not two. Two
  chapters that both have a body and the same number stay two chapters and are flagged as duplicates.
* **Kept aside.** Text before the first heading is ``front_matter``. After the last chapter, a Project
  Gutenberg footer and anything after a book-end line (全书完, 全文完, 《…》至此終) is ``trailing``;
  the book-end line itself stays in the last chapter, and so do per-chapter end marks such as （本章完）.
* **Sections.** 第X节 headings split chapters only in a manuscript that has no 第X章/第X回 headings;
  otherwise they are subsections and stay in the chapter text.
* **Sizes** are 字数 (:func:`~novel_desktop.domain.text.count_chars`); a chapter's size includes its heading,
  as the novel counts it once stored.

Nothing is lost: :meth:`SplitResult.pieces` in order equals the input up to whitespace.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Literal

from novel_desktop.domain.text import count_chars, is_fullwidth_punct, is_han

ChapterKind = Literal["chapter", "prologue", "epilogue", "extra"]

SUPPORTED_SUFFIXES = (".txt", ".md", ".markdown", ".docx", ".epub")
#: A rise in chapter numbers larger than this is taken as a typo in a heading, not as missing chapters.
MAX_GAP = 20


class ManuscriptError(Exception):
    """A manuscript that cannot be read; the message is for the author (Chinese, English in parentheses)."""


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


# ====================================================================== reading
def decode_bytes(data: bytes) -> tuple[str, str]:
    """Decode a text manuscript and name the encoding it was in.

    UTF-8 (with or without BOM), UTF-16/UTF-32 with a BOM, UTF-16 without one, GB18030 (and so GBK and
    GB2312) and Big5 are recognised. Line ends become ``\\n``. Raises :class:`ManuscriptError` for bytes that
    are not text in any of them.
    """
    text: str | None = None
    encoding = ""
    boms = (
        (b"\xef\xbb\xbf", "utf-8-sig", "utf-8-sig"),
        (b"\xff\xfe\x00\x00", "utf-32", "utf-32"),
        (b"\x00\x00\xfe\xff", "utf-32", "utf-32"),
        (b"\xff\xfe", "utf-16", "utf-16"),
        (b"\xfe\xff", "utf-16", "utf-16"),
    )
    for bom, codec, name in boms:
        if data.startswith(bom):
            try:
                text, encoding = data.decode(codec), name
            except UnicodeDecodeError as exc:
                raise ManuscriptError(
                    f"文件以 {name} 标记开头，但内容无法按此编码解码 "
                    f"(BOM says {name} but decoding failed): {exc}"
                ) from None
            break
    if text is None and b"\x00" in data:
        # No 8-bit Chinese encoding (nor UTF-8 text) has NUL bytes; UTF-16 without a BOM has them in every
        # ASCII character, line ends included.
        text, encoding = _decode_utf16_without_bom(data)
    if text is None:
        try:
            text, encoding = data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            text, encoding = _decode_legacy(data)
    text = text.removeprefix("\ufeff")
    return text.replace("\r\n", "\n").replace("\r", "\n"), encoding


def _plausible(text: str) -> float:
    """The share of characters a manuscript is made of (Han, CJK punctuation, printable ASCII, whitespace)."""
    if not text:
        return 0.0
    good = sum(1 for c in text if is_han(c) or is_fullwidth_punct(c) or c.isprintable() or c in "\n\t\u3000")
    return good / len(text)


def _decode_utf16_without_bom(data: bytes) -> tuple[str, str]:
    best: tuple[float, str, str] | None = None
    for codec in ("utf-16-le", "utf-16-be"):
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            continue
        score = _plausible(text) - text.count("\x00") / max(len(text), 1)
        if best is None or score > best[0]:
            best = (score, text, codec)
    if best is None or best[0] < 0.95:
        raise ManuscriptError("文件含有二进制内容，不是文本 (the file contains binary data, not text)")
    return best[1], best[2]


def _decode_legacy(data: bytes) -> tuple[str, str]:
    from charset_normalizer import from_bytes

    # Only the encodings Chinese manuscripts come in: a free guess picks Latin code pages for short texts.
    best = from_bytes(data, cp_isolation=["gb18030", "big5"]).best()
    if best is not None:
        name = "big5" if best.encoding.startswith("big5") else "gb18030"
        try:
            return data.decode(name), name
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("gb18030"), "gb18030"
    except UnicodeDecodeError:
        raise ManuscriptError(
            "无法识别文件编码（支持 UTF-8、UTF-16、GB18030/GBK、Big5）"
            "(unknown encoding; UTF-8, UTF-16, GB18030/GBK and Big5 are supported)"
        ) from None


def read_manuscript(path: str | Path) -> Manuscript:
    """Read a ``.txt``/``.md`` (any supported encoding), ``.docx`` or ``.epub`` manuscript.

    Raises :class:`ManuscriptError` with a message for the author when the file is missing, unreadable, or of
    a format that is not supported.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise ManuscriptError(
            f"不支持的文件格式「{p.suffix or '无扩展名'}」，请另存为 .txt、.md、.docx 或 .epub "
            f"(unsupported format; use .txt, .md, .docx or .epub): {p}"
        )
    if not p.is_file():
        raise ManuscriptError(f"找不到文件：{p} (file not found)")
    try:
        if suffix == ".docx":
            return Manuscript(_read_docx(p), "utf-8", "docx")
        if suffix == ".epub":
            return Manuscript(_read_epub(p), "utf-8", "epub")
        text, encoding = decode_bytes(p.read_bytes())
    except ManuscriptError as exc:
        raise ManuscriptError(f"{p.name}: {exc}") from None
    except OSError as exc:
        raise ManuscriptError(f"无法读取文件 {p} (cannot read): {exc.strerror or exc}") from None
    return Manuscript(text, encoding, "md" if suffix in (".md", ".markdown") else "txt")


def _read_docx(path: Path) -> str:
    import docx

    if not zipfile.is_zipfile(path):
        raise ManuscriptError("不是有效的 Word 文档 (not a valid .docx file)")
    try:
        document = docx.Document(str(path))
    except Exception as exc:  # python-docx raises many types (zip, XML, missing parts) for a broken file
        raise ManuscriptError(f"不是有效的 Word 文档 (not a valid .docx file): {exc}") from None
    return "\n".join(str(paragraph.text) for paragraph in document.paragraphs)


class _HtmlText(HTMLParser):
    """Text of an XHTML chapter: block elements become line breaks; head, script and style are skipped."""

    BLOCKS = frozenset(
        {"p", "div", "br", "h1", "h2", "h3", "h4", "h5", "h6", "li", "tr", "section", "article"}
        | {"blockquote", "pre", "hr", "title", "dt", "dd"}
    )
    SKIPPED = frozenset(("head", "script", "style"))

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIPPED:
            self._skip += 1
        elif tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIPPED:
            self._skip = max(0, self._skip - 1)
        elif tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            # Source indentation of the XHTML is not text; a line break inside a paragraph is a space.
            self.parts.append(re.sub(r"[\r\n\t]+", "", data))

    def text(self) -> str:
        # Block elements open and close with a line break: one paragraph is one line, as in a .txt manuscript.
        return re.sub(r"\n[ \t]*(?:\n[ \t]*)+", "\n", "".join(self.parts)).strip("\n")


def _read_epub(path: Path) -> str:
    import ebooklib
    from ebooklib import epub

    if not zipfile.is_zipfile(path):
        raise ManuscriptError("不是有效的 EPUB 电子书 (not a valid .epub file)")
    try:
        book = epub.read_epub(str(path), options={"ignore_ncx": True})
    except Exception as exc:  # ebooklib raises many types (zip, XML, missing parts) for a broken file
        raise ManuscriptError(f"不是有效的 EPUB 电子书 (not a valid .epub file): {exc}") from None
    texts: list[str] = []
    for entry in book.spine:
        item_id = entry[0] if isinstance(entry, tuple) else entry
        item = book.get_item_with_id(item_id)
        if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT:
            continue
        parser = _HtmlText()
        parser.feed(item.get_content().decode("utf-8", errors="replace"))
        parser.close()
        if chunk := parser.text():
            texts.append(chunk)
    return "\n\n".join(texts)


# ====================================================================== numerals
_DIGITS = {
    **dict.fromkeys("零〇○Ｏ", 0),
    **dict.fromkeys("一壹", 1),
    **dict.fromkeys("二贰貳两兩", 2),
    **dict.fromkeys("三叁參", 3),
    **dict.fromkeys("四肆", 4),
    **dict.fromkeys("五伍", 5),
    **dict.fromkeys("六陆陸", 6),
    **dict.fromkeys("七柒", 7),
    **dict.fromkeys("八捌", 8),
    **dict.fromkeys("九玖", 9),
}
_UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_TENS = {"廿": 20, "念": 20, "卅": 30, "卌": 40}
_NUMERAL_CHARS = "".join(_DIGITS) + "".join(_UNITS) + "".join(_TENS) + "万萬"
_NUM = r"[0-9０-９]+|[零〇○Ｏ一二三四五六七八九十百千万萬两兩壹贰貳叁參肆伍陆陸柒捌玖拾佰仟廿卅卌]+"


def parse_chinese_number(s: str) -> int | None:
    """The value of a chapter number as manuscripts write it, or None if ``s`` is not one.

    Arabic and full-width digits (``12``, ``１２``); Chinese numerals with units (十四, 八十七, 两百,
    一百零五, 廿三); and digit-by-digit numerals (八八, 一○○, 一〇〇, 一二零).
    """
    s = s.strip().translate(str.maketrans("０１２３４５６７８９", "0123456789"))
    if not s:
        return None
    if s.isascii():
        return int(s) if s.isdigit() else None
    if any(c not in _NUMERAL_CHARS for c in s):
        return None
    if not any(c in _UNITS or c in _TENS or c in "万萬" for c in s):
        # Positional: every character is a digit (八八 = 88, 一○○ = 100). 两 is not used this way.
        if "两" in s or "兩" in s:
            return None
        value = 0
        for c in s:
            value = value * 10 + _DIGITS[c]
        return value
    total, section = 0, 0
    digit: int | None = None
    last_unit = 10**9
    for c in s:
        if c in _DIGITS:
            if digit not in (None, 0):
                return None  # two digits in a row inside a unit numeral (一百二三)
            digit = _DIGITS[c]
        elif c in _TENS:
            if digit not in (None, 0):
                return None
            section += _TENS[c]
            digit, last_unit = None, 10
        elif c in _UNITS:
            unit = _UNITS[c]
            if unit >= last_unit:
                return None  # units must fall (一百二十, not 十百)
            section += (digit if digit else 1) * unit
            digit, last_unit = None, unit
        else:  # 万
            section += digit or 0
            if total or section == 0:
                return None
            total, section, digit, last_unit = section * 10000, 0, None, 10**9
    return total + section + (digit or 0)


# ====================================================================== headings
_LEAD = r"^[\s]*(?:#{1,6}\s*)?(?:正文\s*)?[【\[〔（(「]?\s*"
_NUMBERED_RE = re.compile(_LEAD + rf"第\s*(?P<num>{_NUM})\s*(?P<marker>[章回节節卷])(?P<rest>.*)$")
_SPECIAL_RE = re.compile(
    _LEAD + r"(?P<kw>楔子|序章|序幕|引子|尾声|尾聲|终章|終章|后记|後記|番外篇|番外)(?P<rest>.*)$"
)
_SPECIAL_KIND: dict[str, ChapterKind] = {
    "楔子": "prologue",
    "序章": "prologue",
    "序幕": "prologue",
    "引子": "prologue",
    "尾声": "epilogue",
    "尾聲": "epilogue",
    "终章": "epilogue",
    "終章": "epilogue",
    "后记": "extra",
    "後記": "extra",
    "番外篇": "extra",
    "番外": "extra",
}
_CLOSERS = "】]〕）)」"
_SEPARATORS = " \t\u3000\xa0:：、.．·・-—_|｜"
#: Characters that, right after 第X章 with no space, make the line prose (第三回里那人说过…).
_PROSE_AFTER = set(
    "里裡中的说說时時后後前以已就便也都还還又了上下内內末尾起开開之和与與是在有为為所看讲講写寫"
)
_SENTENCE_PUNCT = set('，,。；;！!？?…“”"「」『』：')
_MAX_TITLE = 40
_END_MARKS = frozenset({"完", "（完）", "(完)", "完结", "完結", "终", "終", "结束", "結束"})


@dataclass
class _Heading:
    kind: Literal["chapter", "prologue", "epilogue", "extra", "volume", "section"]
    source_number: int | None
    label: str  # 第二章 / 楔子, as written
    title: str  # the words after the label, spaces between Han characters removed
    line: str  # the heading line, stripped
    start: int  # offset of the line
    end: int  # offset just past the line's newline
    body_empty: bool = False
    absorbed: bool = False  # a repeated heading merged into the one before it

    @property
    def display(self) -> str:
        return f"{self.label} {self.title}" if self.title else self.label

    @property
    def key(self) -> tuple[str, object]:
        if self.source_number is not None:
            return (self.kind, self.source_number)
        return (self.kind, self.label + self.title)


def _clean_title(rest: str, bracketed: bool) -> str | None:
    """The title after 第X章 (or 楔子…), or None when the line reads as prose rather than a heading."""
    if bracketed:
        rest = re.sub(rf"^\s*[{re.escape(_CLOSERS)}]", " ", rest)
        rest = re.sub(rf"[{re.escape(_CLOSERS)}]\s*$", "", rest)
    separated = not rest or rest[0] in _SEPARATORS
    title = rest.strip(_SEPARATORS)
    tokens = title.split()
    # A title spaced out letter by letter (優　勝　記　略) is one word; the two halves of a couplet title
    # (靈根育孕源流出　心性修持大道生) stay apart, with one space.
    title = "".join(tokens) if len(tokens) > 1 and all(len(t) == 1 for t in tokens) else " ".join(tokens)
    if not title:
        return ""
    if title in _END_MARKS:
        return None  # 第一章完 / 第三章 （完） closes a chapter; it does not open one
    if len(title) > _MAX_TITLE or "。" in title or "；" in title:
        return None
    if title.count("，") + title.count(",") >= 2:
        return None
    # 第一章序 is a heading; 第三回里那人说过… and 第五章的内容 are prose.
    if not separated and (
        title[0] in _PROSE_AFTER or any(c in _SENTENCE_PUNCT for c in title) or len(title) > 20
    ):
        return None
    return title


def _classify(line: str, start: int, end: int) -> _Heading | None:
    stripped = line.strip()
    if not stripped or len(stripped) > 80:
        return None
    m = _NUMBERED_RE.match(line)
    if m:
        number = parse_chinese_number(m.group("num").replace(" ", ""))
        if number is None:
            return None
        title = _clean_title(m.group("rest"), bracketed=_is_bracketed(line))
        if title is None:
            return None
        marker = m.group("marker")
        kind: Literal["chapter", "volume", "section"] = (
            "volume" if marker == "卷" else "section" if marker in "节節" else "chapter"
        )
        label = "第" + m.group("num").strip() + marker
        return _Heading(kind, number, label, title, stripped, start, end)
    m = _SPECIAL_RE.match(line)
    if m:
        keyword, rest = m.group("kw"), m.group("rest")
        if keyword.startswith("番外"):
            # 番外一 / 番外2：重逢 — the numeral belongs to the label.
            n = re.match(rf"\s*({_NUM})", rest)
            if n and parse_chinese_number(n.group(1)) is not None:
                keyword += n.group(1)
                rest = rest[n.end() :]
            elif rest.startswith("之"):
                rest = " " + rest[1:]
        title = _clean_title(rest, bracketed=_is_bracketed(line))
        if title is None:
            return None
        base = keyword[:3] if keyword.startswith("番外篇") else keyword[:2]
        return _Heading(_SPECIAL_KIND[base], None, keyword, title, stripped, start, end)
    return None


def _is_bracketed(line: str) -> bool:
    return bool(re.match(r"^\s*(?:#{1,6}\s*)?(?:正文\s*)?[【\[〔（(「]", line))


# ====================================================================== trailing boilerplate
_TRAILING_START = re.compile(
    r"^\s*(?:\*{3}\s*END OF (?:THE|THIS) PROJECT GUTENBERG|End of (?:the |this )?Project Gutenberg"
    r"|END OF (?:THE|THIS) PROJECT GUTENBERG)",
    re.IGNORECASE,
)
_BOOK_END = re.compile(
    r"^\s*[（(【\[]?\s*(?:全书完|全書完|全文完|全书终|全書終|正文完|本书完|本書完|全剧终|全劇終|大结局完|完本)"
    r"\s*[)）】\]]?\s*[。！!]?\s*$"
    r"|^\s*《[^》]{1,30}》\s*(?:至此终|至此終|全书完|全書完|终|終)\s*[。！!]?\s*$"
)


def _trailing_cut(text: str, start: int, end: int) -> int:
    """Where trailing boilerplate begins inside ``text[start:end]`` (the last chapter), or ``end``."""
    offset = start
    for line in text[start:end].split("\n"):
        line_end = offset + len(line) + 1
        if _TRAILING_START.match(line):
            return offset
        if _BOOK_END.match(line):
            # The end mark is the author's; whatever follows it (afterword, ads, licence) is kept aside.
            rest = text[min(line_end, end) : end]
            return min(line_end, end) if rest.strip() else end
        offset = line_end
    return end


# ====================================================================== splitting
def _scan(text: str) -> list[_Heading]:
    found: list[_Heading] = []
    offset = 0
    for line in text.split("\n"):
        end = offset + len(line) + 1
        heading = _classify(line, offset, min(end, len(text)))
        if heading is not None:
            found.append(heading)
        offset = end
    return found


def split_manuscript(text: str) -> SplitResult:
    """Split a manuscript into chapters and volumes; keep front matter and trailing boilerplate aside.

    Never loses text: see :meth:`SplitResult.pieces`. Gaps and duplicates in the numbering are listed (by the
    headings' own numbers) and explained in ``warnings``.
    """
    result = SplitResult()
    heads = _scan(text)
    if any(h.kind == "section" for h in heads):
        if any(h.kind == "chapter" for h in heads):
            result.warnings.append("「第X节」视为章内小节，未单独成章 (sections stay inside their chapters)")
            heads = [h for h in heads if h.kind != "section"]
        else:
            for h in heads:
                if h.kind == "section":
                    h.kind = "chapter"
    for i, h in enumerate(heads):
        nxt = heads[i + 1].start if i + 1 < len(heads) else len(text)
        h.body_empty = not text[h.end : nxt].strip()

    heads, toc_lines, repeated = _drop_echoes(heads)
    if toc_lines:
        result.warnings.append(
            f"开头的目录（{toc_lines} 行标题）已归入前置内容 (a table of contents went to the front matter)"
        )
    boundaries = [h for h in heads if not h.absorbed]
    if not any(h.kind != "volume" for h in boundaries):
        result.front_matter = text.strip()
        result.warnings.append("没有识别到章节标题 (no chapter headings found)")
        return result

    result.front_matter = text[: boundaries[0].start].strip()
    last_chapter = max(i for i, h in enumerate(boundaries) if h.kind != "volume")
    end_of_text = len(text)
    last_end = boundaries[last_chapter + 1].start if last_chapter + 1 < len(boundaries) else end_of_text
    cut = _trailing_cut(text, boundaries[last_chapter].end, last_end)
    if cut < last_end:
        # Everything after the cut — including any heading lines there — is boilerplate.
        result.trailing = text[cut:].strip()
        boundaries = boundaries[: last_chapter + 1]
        end_of_text = cut

    volume_numbers = _number_volumes([h for h in boundaries if h.kind == "volume"])
    chapter_heads = [h for h in boundaries if h.kind != "volume"]
    numbers = _number_chapters(chapter_heads)
    current_volume = 1
    for i, h in enumerate(boundaries):
        stop = boundaries[i + 1].start if i + 1 < len(boundaries) else end_of_text
        body = _tidy(text[h.end : stop])
        if h.kind == "volume":
            current_volume = volume_numbers[id(h)]
            result.volumes.append(
                SplitVolume(current_volume, h.title, h.line, body, h.source_number, h.start)
            )
            if not any(b.kind != "volume" for b in boundaries[i + 1 : i + 2]):
                result.warnings.append(f"{h.display} 下没有章节 (volume has no chapters)")
            continue
        result.chapters.append(
            SplitChapter(
                numbers[id(h)],
                h.display,
                h.line,
                body,
                current_volume,
                _chapter_kind(h),
                h.start,
                h.source_number,
            )
        )
        if not body:
            result.warnings.append(f"{h.display} 没有正文 (chapter has no text)")
    _check_numbering(result, chapter_heads, boundaries, repeated)
    renumbered = [c for c in result.chapters if c.source_number is not None and c.source_number != c.number]
    if renumbered:
        first = renumbered[0]
        result.warnings.append(
            f"{len(renumbered)} 章的序号与标题编号不同（如「{first.title}」存为第 {first.number} 章）"
            "(chapters stored under a number other than their heading's)"
        )
    return result


def _chapter_kind(h: _Heading) -> ChapterKind:
    if h.kind in ("prologue", "epilogue", "extra"):
        return h.kind
    return "chapter"


def _tidy(body: str) -> str:
    """Drop blank lines before the body and whitespace after it; paragraph indents (　　) stay."""
    return re.sub(r"^(?:[^\S\n]*\n)+", "", body).rstrip()


def _drop_echoes(heads: list[_Heading]) -> tuple[list[_Heading], int, list[_Heading]]:
    """Remove headings that only echo a later one: a contents list, or a heading line written twice.

    Returns the remaining headings (the second of a directly repeated pair marked ``absorbed``), how many were
    dropped as a table of contents, and the headings that were repeated directly.
    """
    last_with_body: dict[tuple[str, object], int] = {}
    last_any: dict[tuple[str, object], int] = {}
    for i, h in enumerate(heads):
        last_any[h.key] = i
        if not h.body_empty:
            last_with_body[h.key] = i
    echoes: set[int] = set()
    merged: dict[int, _Heading] = {}  # index of the first of a repeated pair -> the merged heading

    def merge(i: int) -> None:
        first, second = heads[i], heads[i + 1]
        second.absorbed = True
        merged[i] = _Heading(
            first.kind,
            first.source_number,
            first.label,
            first.title,
            first.line,
            first.start,
            first.end,
            second.body_empty,
        )

    def repeated_next(i: int) -> bool:
        return i + 1 < len(heads) and heads[i + 1].key == heads[i].key and not heads[i].absorbed

    for i, h in enumerate(heads):
        if h.kind == "volume" or h.absorbed or not h.body_empty or last_with_body.get(h.key, -1) <= i:
            continue
        if repeated_next(i):
            merge(i)
        else:
            echoes.add(i)
    # Volume headings have no body of their own, so a contents list shows in their neighbours: a volume
    # heading that reappears later and stands next to a dropped chapter heading, or has no chapter before the
    # next volume heading, is part of the list.
    for i, h in enumerate(heads):
        if h.kind != "volume" or h.absorbed or last_any.get(h.key, -1) <= i:
            continue
        if repeated_next(i):
            merge(i)
            continue
        next_volume = next((j for j in range(i + 1, len(heads)) if heads[j].kind == "volume"), len(heads))
        has_chapter = any(j not in echoes for j in range(i + 1, next_volume))
        if (i - 1) in echoes or (i + 1) in echoes or not has_chapter:
            echoes.add(i)
    kept = [merged.get(i, h) for i, h in enumerate(heads) if i not in echoes]
    return kept, len(echoes), list(merged.values())


def _number_volumes(volumes: list[_Heading]) -> dict[int, int]:
    numbers: dict[int, int] = {}
    prev = 0
    for v in volumes:
        n = v.source_number if v.source_number is not None and v.source_number > prev else prev + 1
        numbers[id(v)] = prev = n
    return numbers


def _number_chapters(chapters: list[_Heading]) -> dict[int, int]:
    """Chapter numbers in the novel (the rules are in the module docstring)."""
    numbered = [i for i, h in enumerate(chapters) if h.source_number is not None]
    prev = 0
    if numbered:
        leading, first = numbered[0], chapters[numbered[0]].source_number or 0
        if first - leading >= 0:
            prev = first - leading - 1
    numbers: dict[int, int] = {}
    for h in chapters:
        n = h.source_number
        if n is not None and prev < n <= prev + 1 + MAX_GAP:
            prev = n
        else:
            prev += 1
        numbers[id(h)] = prev
    return numbers


def _check_numbering(
    result: SplitResult, chapters: list[_Heading], boundaries: list[_Heading], repeated: list[_Heading]
) -> None:
    """Fill ``gaps`` and ``duplicates`` (headings' own numbers) and explain them in ``warnings``."""
    volume_of: dict[int, int] = {}
    volume_index = 0
    for h in boundaries:
        if h.kind == "volume":
            volume_index += 1
        volume_of[id(h)] = volume_index
    gaps: set[int] = set()
    duplicates: set[int] = set()
    seen: set[int] = set()
    prev: _Heading | None = None
    for h in chapters:
        n = h.source_number
        if n is None or h.kind != "chapter":
            continue
        if prev is not None and prev.source_number is not None:
            p = prev.source_number
            new_volume = volume_of[id(h)] != volume_of[id(prev)]
            if n <= p and new_volume:
                seen = set()  # numbering restarts with the volume
            elif n in seen:
                duplicates.add(n)
                result.warnings.append(f"有两章都编号为 {h.label}（均有正文），按两章导入 (duplicate number)")
            elif n < p:
                result.warnings.append(f"{h.label} 出现在 {prev.label} 之后，编号倒退 (numbering goes back)")
            elif n - p - 1 > MAX_GAP:
                result.warnings.append(
                    f"编号从 {prev.label} 跳到 {h.label}，疑似标题有误，已按顺序编号 (numbering jumps)"
                )
            elif n - p > 1:
                missing = list(range(p + 1, n))
                gaps.update(missing)
                shown = f"{missing[0]}" if len(missing) == 1 else f"{missing[0]}–{missing[-1]}"
                result.warnings.append(
                    f"缺少第 {shown} 章：{prev.label} 之后是 {h.label} (missing chapter numbers)"
                )
        elif n > 1:
            result.warnings.append(f"第一章是 {h.label}，前面的章节不在文件中 (numbering starts at {n})")
        seen.add(n)
        prev = h
    for h in repeated:
        if h.source_number is not None and h.kind != "volume":
            duplicates.add(h.source_number)
        result.warnings.append(
            f"标题「{h.display}」重复出现，已合并为一章 (a repeated heading is one chapter)"
        )
    result.gaps = sorted(gaps)
    result.duplicates = sorted(duplicates)


__all__ = [
    "MAX_GAP",
    "SUPPORTED_SUFFIXES",
    "ChapterKind",
    "Manuscript",
    "ManuscriptError",
    "SplitChapter",
    "SplitResult",
    "SplitVolume",
    "decode_bytes",
    "parse_chinese_number",
    "read_manuscript",
    "split_manuscript",
]
