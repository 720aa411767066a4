"""The AI-phrase list (seed 004 §7): phrases typical of LLM-written Chinese fiction, and where text uses them.

The shipped list is ``resources/ai_phrases.json``, written by us: each entry has a category and a direction
for rewriting. A novel's own ``ai-blacklist.json`` (:class:`~novel_desktop.domain.style.AiBlacklist`) adds and
removes entries. Hits carry character offsets into the text, so an editor can underline them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from novel_desktop.analysis.phrase_scan import plan_for
from novel_desktop.domain.style import AiBlacklist
from novel_desktop.domain.text import count_chars
from novel_desktop.paths import resource

#: Category of phrases the author added without naming a group.
CUSTOM_CATEGORY = "自定义"
#: Category of phrases listed in the novel's ``words`` that the shipped list does not have.
NOVEL_CATEGORY = "本书黑名单"
#: Category of phrases the QualityJudge found and the author accepted (or auto-add took in).
JUDGE_CATEGORY = "评审发现"
#: A phrase the author wrote as ``re:<pattern>`` is a regular expression.
REGEX_PREFIX = "re:"

_DEFAULT_SUGGESTION = "删去，或换成这个人物、这个场景独有的具体表达"


@dataclass(frozen=True, slots=True)
class PhraseEntry:
    """One phrase of the list: a literal string or (``regex=True``) a regular expression."""

    pattern: str
    category: str
    suggestion: str = _DEFAULT_SUGGESTION
    regex: bool = False
    compiled: re.Pattern[str] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        # Compiled once per entry; a literal is escaped so that "…" or "?" in it means itself.
        object.__setattr__(self, "compiled", _compile(self.pattern, self.regex))


@dataclass(frozen=True, slots=True)
class PhraseHit:
    """A place where ``matched`` (an entry's match) stands in the text, as offsets ``[start, end)``."""

    start: int
    end: int
    matched: str
    category: str
    suggestion: str
    pattern: str = ""

    def to_json(self) -> dict[str, Any]:
        """The hit as a JSON object."""
        return {
            "start": self.start,
            "end": self.end,
            "matched": self.matched,
            "category": self.category,
            "suggestion": self.suggestion,
            "pattern": self.pattern,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PhraseHit:
        """The hit :meth:`to_json` wrote."""
        return cls(
            int(data["start"]),
            int(data["end"]),
            str(data["matched"]),
            str(data["category"]),
            str(data["suggestion"]),
            str(data.get("pattern", "")),
        )


@lru_cache(maxsize=4096)
def _compile(pattern: str, regex: bool) -> re.Pattern[str]:
    return re.compile(pattern if regex else re.escape(pattern))


@lru_cache(maxsize=1)
def _default_data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(resource("ai_phrases.json").read_text(encoding="utf-8"))
    return data


@lru_cache(maxsize=1)
def _default_entries() -> tuple[PhraseEntry, ...]:
    data = _default_data()
    categories: dict[str, str] = data.get("categories", {})
    entries = []
    for raw in data["entries"]:
        category = str(raw.get("category") or CUSTOM_CATEGORY)
        suggestion = str(raw.get("suggestion") or categories.get(category) or _DEFAULT_SUGGESTION)
        entries.append(PhraseEntry(str(raw["pattern"]), category, suggestion, bool(raw.get("regex", False))))
    return tuple(entries)


def load_default_phrases() -> list[PhraseEntry]:
    """The shipped list from ``resources/ai_phrases.json``, in file order (the most typical first)."""
    return list(_default_entries())


def default_suggestion(category: str) -> str:
    """The rewriting direction the shipped list gives for ``category`` (a generic one for unknown groups)."""
    return str(_default_data().get("categories", {}).get(category, _DEFAULT_SUGGESTION))


def _entry_from_author(text: str, category: str) -> PhraseEntry | None:
    text = text.strip()
    if not text:
        return None
    if text.startswith(REGEX_PREFIX):
        pattern = text[len(REGEX_PREFIX) :]
        try:
            re.compile(pattern)
        except re.error:
            # A broken pattern typed by the author is read as the literal text rather than failing the check.
            return PhraseEntry(text, category, default_suggestion(category))
        return PhraseEntry(pattern, category, default_suggestion(category), regex=True)
    return PhraseEntry(text, category, default_suggestion(category))


def _is_removed(entry: PhraseEntry, removed: set[str]) -> bool:
    if entry.pattern in removed:
        return True
    # Switching off a phrase also switches off a template that produces exactly that phrase, so that
    # "嘴角微微上扬" stops being reported once the author says it is part of their style.
    return entry.regex and any(entry.compiled.fullmatch(phrase) for phrase in removed)


def phrases_for_novel(blacklist: dict[str, Any] | list[str] | AiBlacklist | None) -> list[PhraseEntry]:
    """The phrases in force for one novel: the shipped list plus the novel's additions, minus its removals.

    ``blacklist`` is the novel's ``ai-blacklist.json`` (parsed JSON or the model); ``None`` means the shipped
    list alone. Phrases of ``words`` and ``categories`` that the shipped list lacks are added under their
    group name; ``custom_added`` under "自定义", ``from_judge``
    under "评审发现". A phrase written ``re:<pattern>`` is a regular expression.
    ``custom_removed`` wins over everything, including a shipped template whose whole match it is.
    """
    entries = load_default_phrases()
    if blacklist is None:
        return entries
    model = blacklist if isinstance(blacklist, AiBlacklist) else AiBlacklist.model_validate(blacklist)
    known = {e.pattern for e in entries}
    groups: list[tuple[str, Iterable[str]]] = [(NOVEL_CATEGORY, model.words)]
    groups += list(model.categories.items())
    groups.append((CUSTOM_CATEGORY, model.custom_added))
    groups.append((JUDGE_CATEGORY, model.from_judge))
    for category, words in groups:
        for word in words:
            entry = _entry_from_author(word, category)
            if entry is not None and entry.pattern not in known:
                known.add(entry.pattern)
                entries.append(entry)
    removed = {w.strip().removeprefix(REGEX_PREFIX) for w in model.custom_removed if w.strip()}
    if removed:
        entries = [e for e in entries if not _is_removed(e, removed)]
    return entries


def find_hits(text: str, phrases: Sequence[PhraseEntry]) -> list[PhraseHit]:
    """Every place a phrase occurs in ``text``, in reading order, as offsets into ``text``.

    Where matches overlap (a literal and a template covering the same words) the longer one is kept, so one
    cliché counts once.
    """
    found: list[tuple[int, int, PhraseEntry]] = []
    # Only the phrases whose required text the chapter has are run (see :mod:`phrase_scan`).
    plan = plan_for(tuple((entry.pattern, entry.regex) for entry in phrases))
    for i in plan.candidates(text):
        entry = phrases[i]
        for m in entry.compiled.finditer(text):
            if m.end() > m.start():
                found.append((m.start(), m.end(), entry))
    found.sort(key=lambda item: (item[0], item[0] - item[1]))
    hits: list[PhraseHit] = []
    last_end = -1
    for start, end, entry in found:
        if start < last_end:
            continue
        hits.append(PhraseHit(start, end, text[start:end], entry.category, entry.suggestion, entry.pattern))
        last_end = end
    return hits


def hits_per_1k(text: str, hits: Sequence[PhraseHit]) -> float:
    """Hits per 1,000 字 (as :func:`~novel_desktop.domain.text.count_chars` counts); 0 for empty text."""
    chars = count_chars(text)
    return len(hits) * 1000.0 / chars if chars else 0.0


def hits_by_category(hits: Iterable[PhraseHit]) -> dict[str, int]:
    """How many hits each category has, most first."""
    counts: dict[str, int] = {}
    for hit in hits:
        counts[hit.category] = counts.get(hit.category, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
