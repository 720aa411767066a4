"""Word segmentation with rjieba (Rust jieba-rs bindings): jieba's dictionary, HMM and tags, much faster.

jieba-rs ships jieba's own dictionary (words, frequencies and part-of-speech tags) compiled into its
extension, so there is no dictionary file to load at run time: importing the module builds it once per
process (a few hundred milliseconds, done by :func:`ensure_ready` in the warm-up worker), and segmenting a
7,000-字 chapter with tags takes a few milliseconds. Each chapter is segmented once; the analysis caches what
it derives from the words by the chapter's text hash (:mod:`novel_desktop.analysis.cache`), so an unchanged
chapter is never segmented again, across reopening the novel too.

Words come from ``rjieba.cut`` (the words ``rjieba.tag`` gives, in a third of the time); a known word's tag is
the dictionary's, the same wherever it stands, so each distinct word is tagged once a process (alone, or in a
window of the text where the segmenter made it a word when alone it would be cut apart) and kept in a table.

Tags are the dictionary's; a word the dictionary lacks (a name or compound the HMM built, punctuation, ASCII)
gets the empty tag, as a look-up in jieba's ``word_tag_tab`` gave, so callers can tell an invented word from
a known one. (jieba-rs tags such words with its HMM part-of-speech tagger, as ``jieba.posseg`` does; those
guesses call 森羅殿 or 陽壽 a person, where the callers' own surname and suffix rules do better.)

Tokens are kept in columns (:class:`Tokens`: words, tags, start offsets) rather than one object per word:
a novel has hundreds of thousands of words, and the callers look at few of them.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate, compress, count, filterfalse, repeat
from operator import itemgetter, ne, not_
from types import ModuleType
from typing import overload

_lock = threading.Lock()
_first = itemgetter(0)
_module: ModuleType | None = None


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
    ``tag_of`` gives each distinct word's tag; the ``tags`` column is made from it when first read (the
    analysis reads few tags, by word). Indexing or iterating gives :class:`Token` objects, made on demand.
    """

    __slots__ = ("_tags", "starts", "tag_of", "words")

    def __init__(self, words: list[str], starts: list[int], tag_of: dict[str, str]) -> None:
        self.words = words
        self.starts = starts
        #: Each distinct word → its tag (a word has one tag wherever it stands), in order of first occurrence.
        self.tag_of = tag_of
        self._tags: list[str] | None = None

    @property
    def tags(self) -> list[str]:
        """The tag of each word."""
        if self._tags is None:
            self._tags = list(map(self.tag_of.__getitem__, self.words))
        return self._tags

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


def warm_tagger() -> None:
    """Tag a word with the HMM once: the first such tag builds the tagger's tables (30-50 ms, outside the
    GIL), which the first analysis would pay otherwise (it tags new words in context). For a worker thread
    of the warm-up; later calls cost microseconds."""
    _rjieba().tag("近大", True)


def tokenize(text: str) -> Tokens:
    """The words of ``text`` with offsets and tags; new words (names the dictionary lacks) come from the HMM.

    The words join back to ``text`` exactly (whitespace and line breaks are words of their own: jieba never
    joins a word across a line break).
    """
    rjieba = _rjieba()
    # ``cut`` gives the words ``tag`` gives (jieba-rs tags the words of its own cut) in a third of the time;
    # a word's tag is the dictionary's, the same wherever the word stands, so it is looked up once a process.
    words: list[str] = rjieba.cut(text, True)
    distinct = dict.fromkeys(words)
    table = _TAGS
    new = list(filterfalse(table.__contains__, distinct))
    starts = list(accumulate(map(len, words), initial=0))
    if new:
        if len(table) + len(new) > _MAX_TAGS:
            # A process that analysed many novels: start a new table (a thread still reading the old one
            # keeps it) with this text's words.
            table, new = {}, list(distinct)
            _set_table(table)
        _learn(rjieba, table, new, Tokens(words, starts, {}), text)
    tag_of = dict(zip(distinct, map(table.__getitem__, distinct), strict=True))
    return Tokens(words, starts, tag_of)


#: Word → its tag ("" for a word the dictionary lacks), for every word segmented in this process.
_TAGS: dict[str, str] = {}
#: A new table is started when this one would grow past this many words.
_MAX_TAGS = 400_000


def _set_table(table: dict[str, str]) -> None:
    global _TAGS
    _TAGS = table


def _learn(rjieba: ModuleType, table: dict[str, str], new: list[str], cut: Tokens, text: str) -> None:
    """Put the tags of the ``new`` words of ``text`` (segmented as ``cut``, not tagged yet) into ``table``."""
    in_dictionary = list(map(rjieba.has_word, new))
    table.update(dict.fromkeys(compress(new, map(not_, in_dictionary)), ""))
    listed = list(compress(new, in_dictionary))
    multiline = list(map(str.__contains__, listed, repeat("\n")))
    cut_apart = list(compress(listed, multiline))
    known = list(compress(listed, map(not_, multiline)))
    if known:
        # Each known word alone, one per line (jieba segments each line apart): a word that stays whole
        # there gives its dictionary tag.
        pairs: list[tuple[str, str]] = rjieba.tag("\n".join(known), False)
        position, total = 0, len(pairs)
        while known:
            # The pairs are word, line break, word, ... up to a word cut apart: those are taken at once.
            aligned = pairs[position : position + 2 * len(known) : 2]
            whole = next(compress(count(), map(ne, known, map(_first, aligned))), len(aligned))
            table.update(aligned[:whole])
            position += 2 * whole
            if whole == len(known):
                break
            # known[whole] was cut apart: step over its pieces and the line break after them.
            cut_apart.append(known[whole])
            while position < total and pairs[position][0] != "\n":
                position += 1
            position += 1
            known = known[whole + 1 :]
    if cut_apart:
        _learn_in_context(rjieba, table, cut_apart, cut, text)


def _learn_in_context(
    rjieba: ModuleType, table: dict[str, str], cut_apart: list[str], cut: Tokens, text: str
) -> None:
    """Tags of words the segmenter cuts when alone (a rare word made of common ones): read around where
    ``text`` (segmented as ``cut``) first has each, where the segmenter made it a word; from its line when
    a few words around it are cut otherwise (jieba segments each run of 汉字 and letters apart, and a line
    break ends one, so the line is cut as in the text)."""
    words, starts = cut.words, cut.starts
    for word in cut_apart:
        i = _first_place(word, cut, text)
        at = starts[i]
        window = max(0, i - 3)
        piece = text[starts[window] : starts[min(i + 4, len(words))]]
        if _tag_at(rjieba, table, word, piece, at - starts[window]):
            continue
        line_start = text.rfind("\n", 0, at) + 1
        line_end = text.find("\n", at)
        line = text[line_start : line_end if line_end >= 0 else len(text)]
        if not _tag_at(rjieba, table, word, line, at - line_start):
            table[word] = ""


def _first_place(word: str, cut: Tokens, text: str) -> int:
    """The index of ``word``'s first place among the words of ``text`` (segmented as ``cut``): found by
    searching the text, not by comparing every word (they are objects all over memory)."""
    at = text.find(word)
    while at >= 0:
        i = bisect_left(cut.starts, at)
        if i < len(cut.words) and cut.starts[i] == at and cut.words[i] == word:
            return i
        at = text.find(word, at + 1)
    return cut.words.index(word)


def _tag_at(rjieba: ModuleType, table: dict[str, str], word: str, piece: str, at: int) -> bool:
    """Put into ``table`` the tag ``word`` has where tagging ``piece`` makes it a word at offset ``at``;
    whether it did."""
    offset = 0
    for found, tag in rjieba.tag(piece, True):
        if offset == at and found == word:
            table[word] = tag
            return True
        offset += len(found)
    return False
