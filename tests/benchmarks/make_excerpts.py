"""Rebuild the small public-domain excerpts in tests/fixtures/corpus/ from the full texts in ../shared/corpus.

    python -m tests.benchmarks.make_excerpts [--corpus PATH]

The tests read only the excerpts (a bare clone has no ../shared); this script documents, and can repeat, how
each excerpt was cut. Exit status 2 when the corpus is missing.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from tests.benchmarks import require_corpus

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "corpus"
HEADING = re.compile(r"^\s*第[一二三四五六七八九十百○〇零]+[回章]")


def _chapters(lines: list[str]) -> tuple[list[str], list[list[str]]]:
    """The lines before the first heading, and each chapter's lines (its heading first)."""
    starts = [i for i, line in enumerate(lines) if HEADING.match(line)]
    return lines[: starts[0]], [lines[a:b] for a, b in zip(starts, [*starts[1:], len(lines)], strict=True)]


def _opening(chapter: list[str], chars: int) -> list[str]:
    """The heading and the body lines up to the first line that brings the body to ``chars`` characters."""
    kept, count = [chapter[0]], 0
    for line in chapter[1:]:
        kept.append(line)
        count += len(line.strip())
        if count >= chars:
            break
    return kept


def xiyouji(text: str) -> str:
    """西遊記: the opening ~400 字 of each of the 100 回 (every heading, including the irregular ones of
    回 83, 87 and 88), the prose line of 回 18 that starts with 第二, the closing lines of 回 100 and the
    Gutenberg footer."""
    lines = text.split("\n")
    head, chapters = _chapters(lines)
    out = list(head)
    for number, chapter in enumerate(chapters, 1):
        footer: list[str] = []
        if number == len(chapters):
            end = next(i for i, line in enumerate(chapter) if "至此終" in line)
            gutenberg = next(line for line in chapter if line.startswith("End of the Project Gutenberg"))
            footer = ["", "", gutenberg]
            kept = [*_opening(chapter, 400), "", "……", "", *chapter[end - 6 : end + 1]]
        else:
            kept = _opening(chapter, 400)
        if number == 18:
            i = next(i for i, line in enumerate(chapter) if line.startswith("第二的名玉蘭"))
            kept += ["……", *chapter[i - 1 : i + 2]]
        out += [*kept, "", "", "", *footer]
    return "\n".join(out) + "\n"


def ershinian(text: str) -> str:
    """二十年目睹之怪現狀: 回 1-10 whole (about 44,000 字, enough to count as a book when dropped)."""
    lines = text.split("\n")
    head, chapters = _chapters(lines)
    return "\n".join([*head, *[line for chapter in chapters[:10] for line in chapter]]).rstrip("\n") + "\n"


def aq(text: str) -> str:
    """阿Q正傳: its title, the heading and first three paragraphs of each of the nine chapters, and the
    closing paragraph and date of the last."""
    lines = text.split("\n")
    head, chapters = _chapters(lines)
    out = list(head)
    for number, chapter in enumerate(chapters, 1):
        paragraphs = [i for i, line in enumerate(chapter) if i and line.strip()]
        kept = chapter[: paragraphs[2] + 1] if len(paragraphs) > 2 else chapter
        if number == len(chapters):
            kept = [*kept, "", *chapter[paragraphs[-2] :]]
        out += [*kept, ""]
    return "\n".join(out).rstrip("\n") + "\n"


EXCERPTS = {
    "xiyouji_pg23962_full.txt": ("xiyouji_pg23962_excerpt.txt", xiyouji),
    "ershinian_pg24099_ch01-20.txt": ("ershinian_pg24099_ch01-10.txt", ershinian),
    "aq_zhengzhuan_pg25332_story.txt": ("aq_zhengzhuan_pg25332_excerpt.txt", aq),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=None, help="the folder of full texts")
    args = parser.parse_args(argv)
    corpus = require_corpus(args.corpus)
    OUT.mkdir(parents=True, exist_ok=True)
    for source, (target, cut) in EXCERPTS.items():
        text = cut((corpus / source).read_text(encoding="utf-8"))
        (OUT / target).write_text(text, encoding="utf-8")
        print(f"{target}: {len(text):,} 字符, {len(text.encode('utf-8')):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
