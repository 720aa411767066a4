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
  at the top falls into the front matter, and a heading repeated directly — with nothing but blank lines or
  a rule/ornament line (-----, ＊＊＊, ====, ☆☆☆) between the copies — is one chapter, not two, whose
  ``heading`` spans the copies and whose text starts after the last one. Two chapters that both have a body
  and the same number stay two chapters and are flagged as duplicates.
* **Two-line headings.** A bare 第六章 followed (directly or after one blank line) by a short unindented line
  without sentence punctuation (风起) is one heading, 第六章 风起.
* **Unsure places** (merged or joined headings, a chapter far shorter or longer than the book's usual one, a
  heading-like line left in the text, a guessed encoding) are ``SplitResult.notes``
  (:mod:`novel_desktop.analysis.split_notes`); the preview and ``novel import-text`` show them.
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
from pathlib import Path

from novel_desktop.analysis.headings import Heading, is_decoration, scan_headings, trailing_cut
from novel_desktop.analysis.manuscript_files import (
    ManuscriptError,
    ManuscriptTooLarge,
    read_docx,
    read_epub,
    read_text_bytes,
)
from novel_desktop.analysis.split_notes import add_notes, encoding_note
from novel_desktop.domain.manuscript import (
    ChapterKind,
    Manuscript,
    SplitChapter,
    SplitResult,
    SplitVolume,
)
from novel_desktop.domain.text import is_fullwidth_punct, is_han
from novel_desktop.i18n import tr

SUPPORTED_SUFFIXES = (".txt", ".md", ".markdown", ".docx", ".epub")
#: A rise in chapter numbers larger than this is taken as a typo in a heading, not as missing chapters.
MAX_GAP = 20


# ====================================================================== reading
def decode_bytes(data: bytes) -> tuple[str, str]:
    """Decode a text manuscript and name the encoding it was in.

    UTF-8 (with or without BOM), UTF-16/UTF-32 with a BOM, UTF-16 without one, GB18030 (and so GBK and
    GB2312) and Big5 are recognised. Line ends become ``\\n``. Raises :class:`ManuscriptError` for bytes that
    are not text in any of them.
    """
    text, encoding, _ = decode_with_confidence(data)
    return text, encoding


def decode_with_confidence(data: bytes) -> tuple[str, str, float]:
    """:func:`decode_bytes` plus how sure the encoding is (1.0 unless a legacy encoding was guessed)."""
    text: str | None = None
    confidence = 1.0
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
                    tr("文件以 {encoding} 标记开头，但内容无法按此编码解码：{reason}").format(
                        encoding=name, reason=exc
                    )
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
            text, encoding, confidence = _decode_legacy(data)
    text = text.removeprefix("\ufeff")
    return text.replace("\r\n", "\n").replace("\r", "\n"), encoding, confidence


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
        raise ManuscriptError(tr("文件含有二进制内容，不是文本"))
    return best[1], best[2]


def _decode_legacy(data: bytes) -> tuple[str, str, float]:
    """GB18030 or Big5, and how sure the choice is.

    Trying decoders in order cannot tell them apart: GB18030 decodes nearly any byte string, Big5 text
    included. charset_normalizer scores each candidate by how garbled its decoding reads ("chaos"); the
    choice is sure when only one candidate reads cleanly, unsure when both read about as well (a short file).
    """
    from charset_normalizer import from_bytes

    # Only the encodings Chinese manuscripts come in: a free guess picks Latin code pages for short texts.
    matches = list(from_bytes(data, cp_isolation=["gb18030", "big5"]))
    matches.sort(key=lambda m: m.chaos)
    if matches:
        best = matches[0]
        name = "big5" if best.encoding.startswith("big5") else "gb18030"
        margin = matches[1].chaos - best.chaos if len(matches) > 1 else 1.0
        confidence = max(0.0, min(1.0, 1.0 - best.chaos)) * (1.0 if margin >= 0.1 else 0.5 + margin * 4)
        try:
            return data.decode(name), name, round(confidence, 2)
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("gb18030"), "gb18030", 0.3
    except UnicodeDecodeError:
        raise ManuscriptError(tr("无法识别文件编码（支持 UTF-8、UTF-16、GB18030/GBK、Big5）")) from None


def read_manuscript(path: str | Path) -> Manuscript:
    """Read a ``.txt``/``.md`` (any supported encoding), ``.docx`` or ``.epub`` manuscript.

    Raises :class:`ManuscriptError` with a message for the author that names the file when it is missing,
    unreadable, not a regular file or of a format that is not supported, and :class:`ManuscriptTooLarge`
    beyond the reading limits (see :mod:`novel_desktop.analysis.manuscript_files`).
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise ManuscriptError(
            tr("不支持的文件格式「{suffix}」，请另存为 .txt、.md、.docx 或 .epub：{path}").format(
                suffix=p.suffix or tr("无扩展名"), path=p
            )
        )
    if not p.exists():
        raise ManuscriptError(tr("找不到文件：{path}").format(path=p))
    try:
        if suffix == ".docx":
            return Manuscript(read_docx(p), "utf-8", "docx")
        if suffix == ".epub":
            return Manuscript(read_epub(p), "utf-8", "epub")
        text, encoding, confidence = decode_with_confidence(read_text_bytes(p))
    except ManuscriptError as exc:
        if p.name in str(exc):
            raise
        raise type(exc)(f"{p.name}: {exc}") from None
    except OSError as exc:
        raise ManuscriptError(
            tr("无法读取文件 {path}：{reason}").format(path=p, reason=exc.strerror or exc)
        ) from None
    return Manuscript(text, encoding, "md" if suffix in (".md", ".markdown") else "txt", confidence)


def split_for_import(manuscript: Manuscript) -> SplitResult:
    """:func:`split_manuscript` of the manuscript's text, with a note when its encoding was only guessed:
    what the import preview and ``novel import-text`` show."""
    result = split_manuscript(manuscript.text)
    encoding_note(result, manuscript)
    return result


def split_manuscript(text: str) -> SplitResult:
    """Split a manuscript into chapters and volumes; keep front matter and trailing boilerplate aside.

    Never loses text: see :meth:`SplitResult.pieces`. Gaps and duplicates in the numbering are listed (by the
    headings' own numbers) and explained in ``warnings``.
    """
    result = SplitResult()
    heads = scan_headings(text)
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
        h.body_empty = is_decoration(text[h.end : nxt])

    heads, toc_lines, repeated = _drop_echoes(heads, text)
    if toc_lines:
        result.warnings.append(
            f"开头的目录（{toc_lines} 行标题）已归入前置内容 (a table of contents went to the front matter)"
        )
    boundaries = heads
    if not any(h.kind != "volume" for h in boundaries):
        result.front_matter = text.strip()
        result.warnings.append("没有识别到章节标题 (no chapter headings found)")
        return result

    result.front_matter = text[: boundaries[0].start].strip()
    last_chapter = max(i for i, h in enumerate(boundaries) if h.kind != "volume")
    end_of_text = len(text)
    last_end = boundaries[last_chapter + 1].start if last_chapter + 1 < len(boundaries) else end_of_text
    cut = trailing_cut(text, boundaries[last_chapter].end, last_end)
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
    add_notes(result, text, [(h, numbers[id(h)]) for h in chapter_heads], repeated)
    renumbered = [c for c in result.chapters if c.source_number is not None and c.source_number != c.number]
    if renumbered:
        first = renumbered[0]
        result.warnings.append(
            f"{len(renumbered)} 章的序号与标题编号不同（如「{first.title}」存为第 {first.number} 章）"
            "(chapters stored under a number other than their heading's)"
        )
    return result


def _chapter_kind(h: Heading) -> ChapterKind:
    if h.kind in ("prologue", "epilogue", "extra"):
        return h.kind
    return "chapter"


def _tidy(body: str) -> str:
    """Drop blank lines before the body and whitespace after it; paragraph indents (　　) stay."""
    return re.sub(r"^(?:[^\S\n]*\n)+", "", body).rstrip()


def _drop_echoes(heads: list[Heading], text: str) -> tuple[list[Heading], int, list[Heading]]:
    """Remove headings that only echo a later one: a contents list, or a heading line written twice.

    A run of copies of one heading with nothing but blank or rule lines (-----, ＊＊＊) between them becomes
    one heading whose ``line`` spans the copies (so the chapter's text starts after the last copy). Returns
    the remaining headings, how many were dropped as a table of contents, and the merged headings.
    """
    runs: list[Heading] = []
    repeated: list[Heading] = []
    i = 0
    while i < len(heads):
        first = heads[i]
        j = i
        while j + 1 < len(heads) and heads[j].body_empty and heads[j + 1].key == first.key:
            j += 1
        if j > i:
            last = heads[j]
            merged = Heading(
                first.kind,
                first.source_number,
                first.label,
                first.title or last.title,
                text[first.start : last.end].strip(),
                first.start,
                last.end,
                last.body_empty,
                joined=first.joined or last.joined,
                merged=True,
            )
            repeated.append(merged)
            runs.append(merged)
        else:
            runs.append(first)
        i = j + 1
    heads = runs
    last_with_body: dict[tuple[str, object], int] = {}
    last_any: dict[tuple[str, object], int] = {}
    for i, h in enumerate(heads):
        last_any[h.key] = i
        if not h.body_empty:
            last_with_body[h.key] = i
    echoes: set[int] = set()
    for i, h in enumerate(heads):
        if h.kind != "volume" and h.body_empty and last_with_body.get(h.key, -1) > i:
            echoes.add(i)
    # Volume headings have no body of their own, so a contents list shows in their neighbours: a volume
    # heading that reappears later and stands next to a dropped chapter heading, or has no chapter before the
    # next volume heading, is part of the list.
    for i, h in enumerate(heads):
        if h.kind != "volume" or last_any.get(h.key, -1) <= i:
            continue
        next_volume = next((j for j in range(i + 1, len(heads)) if heads[j].kind == "volume"), len(heads))
        has_chapter = any(j not in echoes for j in range(i + 1, next_volume))
        if (i - 1) in echoes or (i + 1) in echoes or not has_chapter:
            echoes.add(i)
    kept = [h for i, h in enumerate(heads) if i not in echoes]
    kept_ids = {id(h) for h in kept}
    return kept, len(echoes), [h for h in repeated if id(h) in kept_ids]


def _number_volumes(volumes: list[Heading]) -> dict[int, int]:
    numbers: dict[int, int] = {}
    prev = 0
    for v in volumes:
        n = v.source_number if v.source_number is not None and v.source_number > prev else prev + 1
        numbers[id(v)] = prev = n
    return numbers


def _number_chapters(chapters: list[Heading]) -> dict[int, int]:
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
    result: SplitResult, chapters: list[Heading], boundaries: list[Heading], repeated: list[Heading]
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
    prev: Heading | None = None
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
    result.gaps = sorted(gaps)
    result.duplicates = sorted(duplicates)


__all__ = [
    "MAX_GAP",
    "SUPPORTED_SUFFIXES",
    "ChapterKind",
    "Manuscript",
    "ManuscriptError",
    "ManuscriptTooLarge",
    "SplitChapter",
    "SplitResult",
    "SplitVolume",
    "decode_bytes",
    "decode_with_confidence",
    "read_manuscript",
    "split_for_import",
    "split_manuscript",
]
