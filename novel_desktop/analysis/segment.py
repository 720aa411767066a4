"""Word segmentation with jieba, initialised once per process.

jieba is the slow part of the analysis (seconds on a whole novel), so it is used only where words are needed
(sentence shapes and proper nouns) and each chapter is segmented once. Part-of-speech tags come from jieba's
dictionary rather than ``jieba.posseg``: posseg's HMM tagger is two orders of magnitude slower on text with
many unknown words, and a dictionary look-up is enough for the coarse shapes and candidates we need.

jieba never joins words across a line break (a newline is outside its Han block pattern, so each line is cut
on its own), so a text is segmented line by line and each line's words are remembered in a bounded LRU:
re-analysing a chapter after the author changed one paragraph segments that paragraph only.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

_lock = threading.Lock()
_tag_table: dict[str, str] | None = None

#: How many characters of lines the line cache keeps (about 12 MB; a 700,000-字 novel fits whole).
LINE_CACHE_CHARS = 1_000_000
_line_lock = threading.Lock()
_line_words: OrderedDict[str, tuple[str, ...]] = OrderedDict()
_line_chars = 0


@dataclass(frozen=True, slots=True)
class Token:
    """A word at ``[start, end)`` of the text with its dictionary tag ("" for a word jieba guessed)."""

    word: str
    start: int
    end: int
    tag: str


def _jieba() -> Any:
    import jieba as module

    return module


def ensure_ready() -> None:
    """Load jieba's dictionary and tag table once (about a second); later calls return at once."""
    global _tag_table
    if _tag_table is not None:
        return
    with _lock:
        if _tag_table is not None:
            return
        jieba = _jieba()
        # jieba logs its dictionary loading at DEBUG through the root handler; keep the app's log clean.
        jieba.setLogLevel(logging.WARNING)
        jieba.initialize()
        import jieba.posseg as posseg

        _tag_table = dict(posseg.dt.word_tag_tab)


def _cut_line(line: str) -> tuple[str, ...]:
    """jieba's words of one line (with its newline), from the line cache when it was seen before."""
    global _line_chars
    with _line_lock:
        words = _line_words.get(line)
        if words is not None:
            _line_words.move_to_end(line)
            return words
    words = tuple(sys.intern(w) for w in _jieba().cut(line, HMM=True))
    if len(line) <= LINE_CACHE_CHARS // 10:
        with _line_lock:
            if line not in _line_words:
                _line_words[line] = words
                _line_chars += len(line)
                while _line_chars > LINE_CACHE_CHARS and _line_words:
                    old, _ = _line_words.popitem(last=False)
                    _line_chars -= len(old)
    return words


def clear_line_cache() -> None:
    """Forget every remembered line (tests and benchmarks measure cold segmentation with it)."""
    global _line_chars
    with _line_lock:
        _line_words.clear()
        _line_chars = 0


def tokenize(text: str) -> list[Token]:
    """The words of ``text`` with offsets and tags; new words (names the dictionary lacks) come from HMM."""
    ensure_ready()
    assert _tag_table is not None
    table = _tag_table
    tokens: list[Token] = []
    start = 0
    for line in text.splitlines(keepends=True):
        for word in _cut_line(line):
            end = start + len(word)
            tokens.append(Token(word, start, end, table.get(word, "")))
            start = end
    return tokens
