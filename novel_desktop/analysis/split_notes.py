"""The places a manuscript split was unsure of, for the author to look at before anything is written.

:func:`add_notes` marks, per chapter: a heading repeated with only blank or rule lines between the copies
(merged into one), a bare 第X章 joined with its title from the next line, a chapter far shorter or longer than
the book's usual one, and a line inside a chapter that looks like a heading but was not split there.
:func:`encoding_note` marks an encoding that was guessed. Each note is a :class:`SplitNote` in
``SplitResult.notes`` and a line of ``SplitResult.warnings`` (what ``novel import-text`` prints).
"""

from __future__ import annotations

import re
from statistics import median

from novel_desktop.analysis.headings import Heading, classify_line, near_heading
from novel_desktop.domain.manuscript import Manuscript, SplitResult

#: A chapter under this share of the median size (and under SHORT_CHARS) is flagged as very short ...
SHORT_SHARE = 0.2
SHORT_CHARS = 500
#: ... one over LONG_FACTOR times the median (and over LONG_CHARS) as very long.
LONG_FACTOR = 4.0
LONG_CHARS = 12000
#: Encodings guessed below this confidence are flagged.
LOW_CONFIDENCE = 0.8
#: At most this many heading-like lines are listed one by one; the rest are counted.
MAX_LINE_NOTES = 20


def add_notes(
    result: SplitResult, text: str, heads: list[tuple[Heading, int]], merged: list[Heading]
) -> None:
    """Add the notes of a finished split; ``heads`` are the chapter headings with their numbers in the novel,
    ``merged`` the headings that stand for repeated copies."""
    number_of = {id(h): n for h, n in heads}
    for h in merged:
        result.note(
            "merged_heading",
            f"标题「{h.display}」重复出现（中间只有空行或分隔线），已合并为一章"
            " (a repeated heading is one chapter)",
            number_of.get(id(h)),
            h.start,
        )
    for h, number in heads:
        if h.joined:
            result.note(
                "joined_heading",
                f"「{h.label}」与下一行「{h.title}」合为一个标题「{h.display}」"
                "(a heading split over two lines was joined)",
                number,
                h.start,
            )
    _sizes(result)
    _heading_like_lines(result, text)


def _size(text: str) -> int:
    """Characters other than whitespace: close to 字数 for comparing chapters, and counted in C (字数 itself
    is counted only for the chapters flagged)."""
    return len(text) - sum(text.count(c) for c in " \n\t\u3000\r\xa0")


def _sizes(result: SplitResult) -> None:
    chapters = [c for c in result.chapters if c.kind == "chapter" and c.text]
    if len(chapters) < 3:
        return
    sizes = {id(c): _size(c.text) for c in chapters}
    usual = median(sizes.values())
    for c in chapters:
        size = sizes[id(c)]
        if size < usual * SHORT_SHARE and c.chars < SHORT_CHARS:
            result.note(
                "short_chapter",
                f"{c.title} 只有 {c.chars:,} 字，远少于一般章节（约 {usual:,.0f} 字）："
                "可能是正文里的一行被当成了标题 (very short chapter)",
                c.number,
                c.start_offset,
            )
        elif size > usual * LONG_FACTOR and c.chars > LONG_CHARS:
            result.note(
                "long_chapter",
                f"{c.title} 有 {c.chars:,} 字，约为一般章节的 {size / usual:.0f} 倍："
                "可能有章节标题没有识别出来 (very long chapter)",
                c.number,
                c.start_offset,
            )


#: Lines that may be headings (the rest of a chapter's lines are skipped without a closer look).
_CANDIDATE = re.compile(
    # No two whitespace runs touch: a long run of spaces cannot backtrack quadratically.
    r"^[^\S\n]*(?:#{1,6}[^\S\n]*)?(?:正文[^\S\n]*)?(?:[【\[〔（(「][^\S\n]*)?"
    r"(?:第|楔子|序章|序幕|引子|尾声|尾聲|终章|終章|后记|後記|番外).*$",
    re.MULTILINE,
)


def _heading_like_lines(result: SplitResult, text: str) -> None:
    found = 0
    for c in result.chapters:
        offset = c.start_offset
        for match in _CANDIDATE.finditer(c.text):
            line = match.group()
            heading = classify_line(line)
            if heading is not None and heading.kind == "section":
                continue  # 第X节 inside a 第X章 manuscript: subsections, one warning says so
            if heading is None and not near_heading(line):
                continue
            found += 1
            if found > MAX_LINE_NOTES:
                continue
            where = text.find(line, offset)
            offset = max(offset, where)
            result.note(
                "unsplit_heading",
                f"{c.title} 里有一行像标题，但没有在这里分章：「{line.strip()}」"
                "(a heading-like line was left inside the text)",
                c.number,
                where if where >= 0 else c.start_offset,
            )
    if found > MAX_LINE_NOTES:
        result.note(
            "unsplit_heading",
            f"另有 {found - MAX_LINE_NOTES} 行像标题但未分章 (more heading-like lines left inside the text)",
        )


def encoding_note(result: SplitResult, manuscript: Manuscript) -> None:
    """Flag an encoding guessed with low confidence (the file reads as more than one legacy encoding)."""
    if manuscript.encoding_confidence < LOW_CONFIDENCE:
        result.note(
            "encoding",
            f"文件编码是推测的（{manuscript.encoding}），把握不大：如果预览里的标题是乱码，"
            "请把书稿另存为 UTF-8 后再导入 (encoding guessed with low confidence)",
        )
