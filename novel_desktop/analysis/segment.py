"""Word segmentation with jieba, initialised once per process.

jieba is the slow part of the analysis (seconds on a whole novel), so it is used only where words are needed
(sentence shapes and proper nouns) and each chapter is segmented once. Part-of-speech tags come from jieba's
dictionary rather than ``jieba.posseg``: posseg's HMM tagger is two orders of magnitude slower on text with
many unknown words, and a dictionary look-up is enough for the coarse shapes and candidates we need.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

_lock = threading.Lock()
_tag_table: dict[str, str] | None = None


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


def tag_of(word: str) -> str:
    """The dictionary part-of-speech tag of ``word`` ("" when the dictionary does not have it)."""
    ensure_ready()
    assert _tag_table is not None
    return _tag_table.get(word, "")


def tokenize(text: str) -> list[Token]:
    """The words of ``text`` with offsets and tags; new words (names the dictionary lacks) come from HMM."""
    ensure_ready()
    assert _tag_table is not None
    table = _tag_table
    return [Token(w, s, e, table.get(w, "")) for w, s, e in _jieba().tokenize(text, HMM=True)]
