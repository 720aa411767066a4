"""The proper nouns the segmenter detected, totalled over a whole novel and kept up to date per chapter.

:class:`DetectedNames` remembers the last totals; when the next pass differs from it in a few chapters (the
author edited one), only those chapters' nouns are subtracted and added again instead of re-combining every
chapter's: after a one-chapter edit of a 100-chapter novel that is a few thousand dict operations instead of
a hundred thousand, and far fewer short-lived objects (so fewer garbage collections land in the pass).
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Mapping, Sequence
from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from novel_desktop.analysis.continuity import EntityAppearance
    from novel_desktop.analysis.entities import Entity

#: Past this many changed chapters a pass re-combines everything (as cheap as patching by then).
MAX_PATCHED_CHAPTERS = 8


class _Scan(Protocol):
    @property
    def number(self) -> int: ...
    @property
    def proper_nouns(self) -> Mapping[str, tuple[str, int, int]]: ...


class DetectedNames:
    """Every detected word's total count, kind and first place (chapter, offset) over the chapters of the
    last pass, names of the records included (:meth:`totals` leaves those out)."""

    def __init__(self) -> None:
        self._numbers: list[int] = []
        self._nouns: list[Mapping[str, tuple[str, int, int]]] = []
        self._counts: dict[str, int] = {}
        self._kind: dict[str, str] = {}
        self._first: dict[str, tuple[int, int]] = {}
        #: Every word, in the order of its first place.
        self._order: list[str] = []
        #: The index's detected entities and entities' appearances of earlier passes, by key, to reuse.
        self.reused: dict[str, Entity] = {}
        self.appeared: dict[str, EntityAppearance] = {}

    def update(self, ordered: Sequence[_Scan]) -> None:
        """Bring the totals to ``ordered`` (the chapters sorted by number)."""
        numbers = [scan.number for scan in ordered]
        nouns = [scan.proper_nouns for scan in ordered]
        changed = (
            [
                i
                for i, (old, new) in enumerate(zip(self._nouns, nouns, strict=True))
                if old is not new and old != new
            ]
            if numbers == self._numbers and len(set(numbers)) == len(numbers)
            else None
        )
        if changed is None or len(changed) > MAX_PATCHED_CHAPTERS:
            self._rebuild(numbers, nouns)
            return
        old_nouns = self._nouns
        self._nouns = nouns
        for i in changed:
            self._patch(i, old_nouns[i], nouns[i])

    def totals(
        self, known_names: set[str]
    ) -> tuple[dict[str, int], dict[str, str], dict[str, tuple[int, int]]]:
        """Total count, kind and first place of each word that is not in ``known_names``, the totals in the
        order the words first occur."""
        counts = self._counts
        totals = {word: counts[word] for word in self._order if word not in known_names}
        kind = dict(self._kind)
        first = dict(self._first)
        for word in known_names.intersection(first):
            del kind[word], first[word]
        return totals, kind, first

    def _rebuild(self, numbers: list[int], nouns: list[Mapping[str, tuple[str, int, int]]]) -> None:
        kind: dict[str, str] = {}
        first: dict[str, tuple[int, int]] = {}
        counts: dict[str, int] = {}
        for number, chapter in zip(reversed(numbers), reversed(nouns), strict=True):
            # Later chapters first, so that the earliest chapter's kind and place stay.
            values = list(chapter.values())
            kind.update(zip(chapter, map(itemgetter(0), values), strict=True))
            first.update(
                zip(chapter, zip(repeat(number), map(itemgetter(2), values), strict=False), strict=True)
            )
        for chapter in nouns:
            for word, (_, count, _) in chapter.items():
                counts[word] = counts.get(word, 0) + count
        self._numbers, self._nouns = numbers, nouns
        self._counts, self._kind, self._first = counts, kind, first
        self._order = sorted(first, key=first.__getitem__)

    def _patch(
        self, index: int, old: Mapping[str, tuple[str, int, int]], new: Mapping[str, tuple[str, int, int]]
    ) -> None:
        number = self._numbers[index]
        counts, kind, first = self._counts, self._kind, self._first
        moved: set[str] = set()
        for word, (_, count, _) in old.items():
            left = counts[word] - count
            if left:
                counts[word] = left
            else:
                del counts[word]
        for word, (tag, count, offset) in new.items():
            counts[word] = counts.get(word, 0) + count
            place = first.get(word)
            if place is None or place[0] >= number:
                if place != (number, offset):
                    moved.add(word)
                first[word] = (number, offset)
                kind[word] = tag
        for word in old.keys() - new.keys():
            if first[word][0] != number:
                continue
            moved.add(word)
            later = next((i for i in range(index + 1, len(self._nouns)) if word in self._nouns[i]), None)
            if later is None:
                del first[word], kind[word]
            else:
                tag, _, offset = self._nouns[later][word]
                first[word], kind[word] = (self._numbers[later], offset), tag
        if moved:
            self._order = [word for word in self._order if word not in moved]
            for word in moved:
                if word in first:
                    insort(self._order, word, key=first.__getitem__)
