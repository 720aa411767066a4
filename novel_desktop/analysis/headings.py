"""Recognising the heading lines of a Chinese manuscript (第X章, 第X回, 第X卷, 楔子, 番外 …), Chinese
numerals, and where a book's trailing boilerplate begins.

Used by :func:`novel_desktop.analysis.manuscript.split_manuscript`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from novel_desktop.domain.manuscript import ChapterKind

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
class Heading:
    kind: Literal["chapter", "prologue", "epilogue", "extra", "volume", "section"]
    source_number: int | None
    label: str  # 第二章 / 楔子, as written
    title: str  # the words after the label, spaces between Han characters removed
    line: str  # the heading line, stripped
    start: int  # offset of the line
    end: int  # offset just past the line's newline
    body_empty: bool = False
    joined: bool = False  # the title was on the next line (第六章 / 风起)
    merged: bool = False  # the heading stands for a run of copies of itself (``line`` spans them)

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


def _classify(line: str, start: int, end: int) -> Heading | None:
    stripped = line.strip()
    if not stripped or len(stripped) > 80:
        return None
    # The patterns run on the stripped line, at most 80 characters: on the raw line their overlapping
    # whitespace runs backtrack quadratically (a line of a million spaces and one letter took hours).
    m = _NUMBERED_RE.match(stripped)
    if m:
        number = parse_chinese_number(m.group("num").replace(" ", ""))
        if number is None:
            return None
        title = _clean_title(m.group("rest"), bracketed=_is_bracketed(stripped))
        if title is None:
            return None
        marker = m.group("marker")
        kind: Literal["chapter", "volume", "section"] = (
            "volume" if marker == "卷" else "section" if marker in "节節" else "chapter"
        )
        label = "第" + m.group("num").strip() + marker
        return Heading(kind, number, label, title, stripped, start, end)
    m = _SPECIAL_RE.match(stripped)
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
        title = _clean_title(rest, bracketed=_is_bracketed(stripped))
        if title is None:
            return None
        base = keyword[:3] if keyword.startswith("番外篇") else keyword[:2]
        return Heading(_SPECIAL_KIND[base], None, keyword, title, stripped, start, end)
    return None


def classify_line(line: str) -> Heading | None:
    """The heading ``line`` is on its own (offsets 0), or None when it is not one."""
    return _classify(line, 0, 0)


def near_heading(line: str) -> bool:
    """A short line that begins like a numbered heading (第三回里…) but was read as prose: worth a look."""
    stripped = line.strip()
    if len(stripped) > 20 or any(c in "。！？!?；;" for c in stripped):
        return False  # a sentence is prose however it begins
    if _classify(stripped, 0, 0) is not None:
        return False
    m = _NUMBERED_RE.match(stripped)
    return m is not None and m.group("rest").strip(_SEPARATORS + "（）()") not in _END_MARKS


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


def trailing_cut(text: str, start: int, end: int) -> int:
    """Where trailing boilerplate begins inside ``text[start:end]`` (the last chapter), or ``end``."""
    offset = start
    for line in text[start:end].split("\n"):
        line_end = offset + len(line) + 1
        # Matched on the stripped line (a book-end line is short): on the raw line both patterns backtrack
        # quadratically over a long run of spaces.
        stripped = line.strip()
        if _TRAILING_START.match(stripped[:120]):
            return offset
        if len(stripped) <= 80 and _BOOK_END.match(stripped):
            # The end mark is the author's; whatever follows it (afterword, ads, licence) is kept aside.
            rest = text[min(line_end, end) : end]
            return min(line_end, end) if rest.strip() else end
        offset = line_end
    return end


# ====================================================================== splitting
#: Longest title line joined to a bare 第X章 on the line before.
MAX_SPLIT_TITLE = 15


def is_decoration(text: str) -> bool:
    """``text`` holds no words: blank, or only rule and ornament characters (-----, ＊＊＊, ====, ☆☆☆,
    ━━━, ※※※, ……) — no letter, digit or Han character (``str.isalnum``)."""
    return not any(c.isalnum() for c in text)


#: The marks a title on the line after a bare 第X章 may end in.
_TITLE_END = "！!？?"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _title_line(line: str, heading_line: str) -> str | None:
    """The title of a two-line heading when ``line`` can be one: short, not indented further than the
    heading line (that is the first paragraph), no sentence punctuation, not decoration, not a heading."""
    stripped = line.strip()
    if not stripped or len(stripped) > MAX_SPLIT_TITLE or is_decoration(stripped):
        return None
    if _indent(line) > _indent(heading_line):
        return None  # indented as a paragraph (a manuscript that indents every line indents its headings too)
    # A title may end in ！ or ？ (风起！ / 谁在敲门？): only punctuation inside it makes the line prose.
    words = stripped.rstrip(_TITLE_END)
    if not words or any(c in _SENTENCE_PUNCT for c in words) or _classify(stripped, 0, 0) is not None:
        return None
    return _clean_title(" " + stripped, bracketed=False) or None


def scan_headings(text: str) -> list[Heading]:
    """Every heading line of ``text`` in order; a bare 第X章 whose title is on the next line (at most one
    blank line between) becomes one heading spanning both lines, marked ``joined``."""
    found: list[Heading] = []
    lines = text.split("\n")
    starts: list[int] = []
    offset = 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    i = 0
    while i < len(lines):
        line, start = lines[i], starts[i]
        heading = _classify(line, start, min(start + len(line) + 1, len(text)))
        i += 1
        if heading is None:
            continue
        if not heading.title and heading.kind != "section" and heading.source_number is not None:
            j = i + 1 if i < len(lines) and not lines[i].strip() and i + 1 < len(lines) else i
            title = _title_line(lines[j], line) if j < len(lines) else None
            if title:
                heading.title = title
                heading.end = min(starts[j] + len(lines[j]) + 1, len(text))
                heading.line = text[heading.start : heading.end].strip()
                heading.joined = True
                i = j + 1
        found.append(heading)
    return found
