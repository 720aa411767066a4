"""Word segmentation with rjieba (Rust jieba-rs bindings): jieba's dictionary, HMM and tags, much faster.

jieba-rs ships jieba's own dictionary (words, frequencies and part-of-speech tags) compiled into its
extension, so there is no dictionary file to load at run time: importing the module builds it once per
process (a few hundred milliseconds, done by :func:`ensure_ready` in the warm-up worker), and segmenting a
7,000-字 chapter with tags takes a few milliseconds. Each chapter is segmented once; the analysis caches what
it derives from the words by the chapter's text hash (:mod:`novel_desktop.analysis.cache`), so an unchanged
chapter is never segmented again, across reopening the novel too.

Tags are the dictionary's; a word the dictionary lacks (a name or compound the HMM built, punctuation, ASCII)
gets the empty tag, as a look-up in jieba's ``word_tag_tab`` gave, so callers can tell an invented word from
a known one. (jieba-rs tags such words with its HMM part-of-speech tagger, as ``jieba.posseg`` does; those
guesses call 森羅殿 or 陽壽 a person, where the callers' own surname and suffix rules do better.)

Tokens are kept in columns (:class:`Tokens`: words, tags, start offsets) rather than one object per word:
a novel has hundreds of thousands of words, and the callers look at few of them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate, filterfalse
from operator import itemgetter
from types import ModuleType
from typing import overload

_lock = threading.Lock()
_module: ModuleType | None = None

_word = itemgetter(0)
_tag = itemgetter(1)


@dataclass(frozen=True, slots=True)
class Token:
    """A word at ``[start, end)`` of the text with its dictionary tag ("" for a word the dictionary lacks)."""

    word: str
    start: int
    end: int
    tag: str


class Tokens(Sequence[Token]):
    """The words of a text in columns: ``words[i]`` spans ``[starts[i], starts[i + 1])`` with tag ``tags[i]``.

    ``starts`` has one more entry than ``words`` (the text's length), so ends need no column of their own.
    Indexing or iterating gives :class:`Token` objects, made on demand.
    """

    __slots__ = ("starts", "tag_of", "tags", "words")

    def __init__(
        self, words: list[str], tags: list[str], starts: list[int], tag_of: dict[str, str] | None = None
    ) -> None:
        self.words = words
        self.tags = tags
        self.starts = starts
        #: Each distinct word → its tag (a word has one tag wherever it stands), in order of first occurrence.
        self.tag_of = tag_of if tag_of is not None else dict(zip(words, tags, strict=True))

    def __len__(self) -> int:
        return len(self.words)

    @overload
    def __getitem__(self, index: int) -> Token: ...

    @overload
    def __getitem__(self, index: slice) -> list[Token]: ...

    def __getitem__(self, index: int | slice) -> Token | list[Token]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self.words)
        if not 0 <= index < len(self.words):
            raise IndexError(index)
        return Token(self.words[index], self.starts[index], self.starts[index + 1], self.tags[index])

    def __iter__(self) -> Iterator[Token]:
        starts = self.starts
        for i, (word, tag) in enumerate(zip(self.words, self.tags, strict=True)):
            yield Token(word, starts[i], starts[i + 1], tag)


def _rjieba() -> ModuleType:
    global _module
    if _module is None:
        with _lock:
            if _module is None:
                import rjieba

                _module = rjieba
    return _module


def ensure_ready() -> None:
    """Build the dictionary once (importing rjieba, a few hundred ms); later calls return at once."""
    _rjieba()


def tokenize(text: str) -> Tokens:
    """The words of ``text`` with offsets and tags; new words (names the dictionary lacks) come from the HMM.

    The words join back to ``text`` exactly (whitespace and line breaks are words of their own: jieba never
    joins a word across a line break).
    """
    rjieba = _rjieba()
    pairs: list[tuple[str, str]] = rjieba.tag(text, True)
    words: list[str] = list(map(_word, pairs))
    # A word's dictionary tag is the same wherever it stands, and whether the dictionary has it too: decide
    # once per distinct word (a chapter has a third as many), then read the table for every word.
    tag_of = dict(zip(words, map(_tag, pairs), strict=True))
    for word in list(filterfalse(rjieba.has_word, tag_of)):
        tag_of[word] = ""
    tags = list(map(tag_of.__getitem__, words))
    starts = list(accumulate(map(len, words), initial=0))
    return Tokens(words, tags, starts, tag_of)
