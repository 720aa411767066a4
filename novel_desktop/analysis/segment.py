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
    # ``cut`` gives the words ``tag`` gives (jieba-rs tags the words of its own cut) in a third of the time;
    # a word's tag is the dictionary's, the same wherever the word stands, so it is looked up once a process.
    words: list[str] = rjieba.cut(text, True)
    tag_of: dict[str, str] = dict.fromkeys(words, "")
    table = _TAGS
    new = [word for word in tag_of if word not in table]
    if new:
        if len(table) + len(new) > _MAX_TAGS:
            # A process that analysed many novels: start a new table (a thread still reading the old one
            # keeps it) with this text's words.
            table, new = {}, list(tag_of)
            _set_table(table)
        _learn(rjieba, table, new, text, words)
    for word in tag_of:
        tag_of[word] = table[word]
    tags = list(map(tag_of.__getitem__, words))
    starts = list(accumulate(map(len, words), initial=0))
    return Tokens(words, tags, starts, tag_of)


#: Word → its tag ("" for a word the dictionary lacks), for every word segmented in this process.
_TAGS: dict[str, str] = {}
#: A new table is started when this one would grow past this many words.
_MAX_TAGS = 400_000


def _set_table(table: dict[str, str]) -> None:
    global _TAGS
    _TAGS = table


def _learn(rjieba: ModuleType, table: dict[str, str], new: list[str], text: str, words: list[str]) -> None:
    """Put the tags of the ``new`` words of ``text`` into ``table``."""
    has_word = rjieba.has_word
    table.update(dict.fromkeys(filterfalse(has_word, new), ""))
    known = [word for word in filter(has_word, new) if "\n" not in word]
    cut_apart = [word for word in filter(has_word, new) if "\n" in word]
    if known:
        # Each known word alone, one per line (jieba segments each line apart): a word that stays whole
        # there gives its dictionary tag.
        pairs: list[tuple[str, str]] = rjieba.tag("\n".join(known), False)
        position, count = 0, len(pairs)
        for word in known:
            if position < count and pairs[position][0] == word:
                table[word] = pairs[position][1]
                position += 2  # the word and the line break after it
                continue
            cut_apart.append(word)
            while position < count and pairs[position][0] != "\n":
                position += 1
            position += 1
    if cut_apart:
        _learn_in_context(rjieba, table, cut_apart, text, words)


def _learn_in_context(
    rjieba: ModuleType, table: dict[str, str], cut_apart: list[str], text: str, words: list[str]
) -> None:
    """Tags of words the segmenter cuts when alone (a rare word made of common ones): read around where
    ``text`` (segmented as ``words``) has each, where the segmenter made it a word; from the whole text when
    a few words around it are cut otherwise."""
    missing: list[str] = []
    for word in cut_apart:
        i = words.index(word)
        before = words[max(0, i - 3) : i]
        at = sum(map(len, before))
        offset = 0
        for piece, tag in rjieba.tag("".join([*before, *words[i : i + 4]]), True):
            if offset == at and piece == word:
                table[word] = tag
                break
            offset += len(piece)
        else:
            missing.append(word)
    if missing:
        wanted = set(missing)
        for word, tag in rjieba.tag(text, True):
            if word in wanted:
                table[word] = tag
        for word in missing:
            table.setdefault(word, "")
