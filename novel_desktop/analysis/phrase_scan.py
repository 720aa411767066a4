"""Which phrases of a list can occur in a text, found in one pass over the text instead of one per phrase.

Every phrase has *required text* (:func:`required_clauses`): clauses of alternatives, one of which each match
contains — a literal is its own one clause; a regular expression has one clause per run of plain characters
outside groups and repeats, and one per group that is an alternation of plain strings ("(难以置信|不可思议)地"
→ ``(("难以置信", "不可思议"), ("地",))``). A text that lacks every alternative of a clause cannot match the
phrase, so its (slow) expression is not run. A list's :class:`PhrasePlan` finds which of its required strings
a text contains with one regular expression built as a trie (Python's ``re`` does not merge alternatives, so a
flat alternation of 200 strings would try each one at every position), then keeps the phrases whose clauses
all have a present alternative. Exact: the same phrases pass as with one ``in`` test per string.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

Clause = tuple[str, ...]


@lru_cache(maxsize=4096)
def required_clauses(pattern: str, regex: bool) -> tuple[Clause, ...]:
    """Clauses of alternatives every match of the phrase satisfies (each contains one alternative of each).

    ``()`` when nothing is known (an expression that ignores case, or one the parser does not take apart):
    the phrase is then always run.
    """
    if not regex:
        return ((pattern,),) if pattern else ()
    try:
        if re.compile(pattern).flags & re.IGNORECASE:
            return ()
        from re import _constants, _parser  # type: ignore[attr-defined]

        clauses: list[Clause] = []
        rest: list[tuple[Any, Any]] = []
        for op, arg in _parser.parse(pattern):
            if op is _constants.LITERAL:
                rest.append((op, arg))
                continue
            clauses.extend((run,) for run in _literal_runs(rest, _constants))
            rest = []
            # A group with flags of its own ("(?i:…)") is left out.
            if op is _constants.SUBPATTERN and not arg[1]:
                choices = _plain_choices(arg[-1], _constants)
                if choices:
                    clauses.append(choices)
        clauses.extend((run,) for run in _literal_runs(rest, _constants))
        return tuple(clauses)
    except Exception:  # the parser is the standard library's own, but not a public API: never fail on it
        return ()


def _plain_choices(sub: Any, constants: Any) -> Clause:
    """For a group: one required string per alternative (its longest run of plain text), or ``()`` when an
    alternative has none."""
    items = list(sub)
    branch = constants.BRANCH
    alternatives = items[0][1][1] if len(items) == 1 and items[0][0] is branch else [items]
    choices: list[str] = []
    for alternative in alternatives:
        runs = _literal_runs(alternative, constants)
        if not runs:
            return ()
        choices.append(max(runs, key=len))
    return tuple(choices)


def _literal_runs(sequence: Iterable[tuple[Any, Any]], constants: Any) -> list[str]:
    """The runs of plain characters at the top level of a parsed expression."""
    literal = constants.LITERAL
    runs: list[str] = []
    run: list[str] = []
    for op, arg in sequence:
        if op is literal:
            run.append(chr(arg))
            continue
        if run:
            runs.append("".join(run))
            run = []
    if run:
        runs.append("".join(run))
    return runs


def _trie_pattern(words: Iterable[str]) -> str:
    """One expression matching, at a position, the longest of ``words`` that starts there."""
    root: dict[str, dict] = {}  # type: ignore[type-arg]
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def render(node: dict[str, dict]) -> str:  # type: ignore[type-arg]
        branches = [re.escape(char) + render(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
        # A word may end here: the longer ones are tried first (greedy), this one is the fallback.
        return f"(?:{body})?" if "" in node else body

    return render(root)


def _two_chars_ahead(words: Sequence[str]) -> str:
    """A look-ahead that a position passes when its character can start one of ``words`` (each two or more
    characters long) and the next can follow it there: a test of two character sets that rejects most
    positions of a text before the trie is tried (three times faster on a novel than the trie alone)."""
    firsts = "".join(map(re.escape, sorted({word[0] for word in words})))
    seconds = "".join(map(re.escape, sorted({word[1] for word in words})))
    return f"(?=[{firsts}][{seconds}])"


class PhrasePlan:
    """For a list of ``(pattern, regex)`` phrases: which of them can occur in a text."""

    def __init__(self, phrases: Sequence[tuple[str, bool]]) -> None:
        self.clauses = [required_clauses(pattern, regex) for pattern, regex in phrases]
        strings = {alt for clauses in self.clauses for clause in clauses for alt in clause}
        multi = sorted(s for s in strings if len(s) > 1)
        self._chars = sorted(s for s in strings if len(s) == 1)
        self._scanner = re.compile(_two_chars_ahead(multi) + _trie_pattern(multi)) if multi else None
        # The strings that are prefixes of each string (itself included): where the longest string at a
        # position matches, so do these, and no other string starts there. Found by slicing each string
        # (its length in set look-ups) rather than testing every pair (~1,000² startswith: 40 ms a list).
        known = set(multi)
        self._prefixes = {s: tuple(s[:n] for n in range(2, len(s) + 1) if s[:n] in known) for s in multi}

    def present(self, text: str) -> set[str]:
        """The required strings ``text`` contains."""
        found = {char for char in self._chars if char in text}
        scanner = self._scanner
        if scanner is None:
            return found
        search, prefixes = scanner.search, self._prefixes
        m = search(text)
        while m is not None:
            found.update(prefixes[m.group()])
            m = search(text, m.start() + 1)
        return found

    def candidates(self, text: str) -> list[int]:
        """The indexes of the phrases that may match ``text`` (the others cannot), in list order."""
        found = self.present(text)
        return [
            i
            for i, clauses in enumerate(self.clauses)
            if all(not found.isdisjoint(clause) for clause in clauses)
        ]


@lru_cache(maxsize=16)
def plan_for(phrases: tuple[tuple[str, bool], ...]) -> PhrasePlan:
    """The plan of a phrase list (remembered: a novel's list is scanned against every chapter)."""
    return PhrasePlan(phrases)
