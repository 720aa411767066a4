"""The style fingerprint and the AI-phrase blacklist (seed 004 §5.6, §7, §9.2)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field, model_validator

from novel_desktop.domain.common import SeedModel
from novel_desktop.domain.seed_fields import ChapterNo, NonNegative

#: Where a style profile came from: the author's own samples, a reference author (仿写), a preset template,
#: or the author's hand edit of the profile (手改) since.
StyleSource = Literal["original", "reference", "template", "manual"]


class StyleProfile(SeedModel):
    """``style-profile.json``: measurable features of the target style, injected into writer and refiner."""

    avg_sentence_length: NonNegative = Field(description="平均句长（字）")
    dialogue_ratio: float = Field(ge=0, le=1, description="对话/叙述比例")
    rhetoric_preferences: list[str] = Field(default_factory=list)
    forbidden_words: list[str] = Field(default_factory=list)
    #: Character slug → a description of how that character talks.
    character_speech_patterns: dict[str, str] = Field(default_factory=dict)
    source_type: StyleSource = "original"
    #: Positive, actionable style instructions distilled from the samples (§7 Layer 1).
    writing_directives: list[str] = Field(default_factory=list)
    #: The author imitated when ``source_type`` is "reference".
    reference_author: str | None = None


class PhraseProposal(SeedModel):
    """A phrase the QualityJudge found in a chapter and proposed for the list (seed §7 黑名单维护)."""

    phrase: str = Field(min_length=1)
    #: The chapter whose judge found it.
    chapter: ChapterNo | None = None


class AiBlacklist(SeedModel):
    """``ai-blacklist.json``: phrases that mark text as machine-written.

    Written as ``{"version": 1, "words": [...], "categories": {name: [...]}, "custom_added": [...],
    "custom_removed": [...]}``. A plain JSON list of strings (the simplest hand-written form) is read as
    ``words`` and written back in the object form.
    """

    version: int = Field(default=1, ge=1)
    #: The shipped list.
    words: list[str] = Field(default_factory=list)
    #: Optional grouping of further phrases (e.g. "神态", "转折"), each list counted like ``words``.
    categories: dict[str, list[str]] = Field(default_factory=dict)
    #: Phrases the author added (§7 "用户自定义：允许添加").
    custom_added: list[str] = Field(default_factory=list)
    #: Shipped phrases the author switched off; they win over every other list.
    custom_removed: list[str] = Field(default_factory=list)
    #: Phrases the judge found and the author accepted (or ``auto_add`` took in); counted like custom_added.
    from_judge: list[str] = Field(default_factory=list)
    #: Phrases the judge found, waiting for the author's 接受 / 拒绝.
    proposed: list[PhraseProposal] = Field(default_factory=list)
    #: Proposals the author rejected: the judge's finding them again proposes nothing.
    rejected: list[str] = Field(default_factory=list)
    #: Take the judge's phrases in at once instead of proposing them.
    auto_add: bool = False

    @model_validator(mode="before")
    @classmethod
    def _accept_plain_list(cls, data: Any) -> Any:
        if isinstance(data, list):
            return {"words": data}
        return data

    def effective_words(self) -> list[str]:
        """Every phrase in force, once each, in file order: words, categories, additions, minus removals."""
        removed = set(self.custom_removed)
        seen: set[str] = set()
        result: list[str] = []
        groups = [self.words, *self.categories.values(), self.custom_added, self.from_judge]
        for group in groups:
            for word in group:
                word = word.strip()
                if word and word not in removed and word not in seen:
                    seen.add(word)
                    result.append(word)
        return result

    # ------------------------------------------------------------------ the author's edits (new models)
    def listed(self, phrase: str) -> bool:
        """Whether ``phrase`` is written in one of the lists that add phrases."""
        groups = [self.words, *self.categories.values(), self.custom_added, self.from_judge]
        return any(phrase in group for group in groups)

    def with_added(self, phrases: list[str]) -> AiBlacklist:
        """The author adds ``phrases``: a switched-off phrase is switched on again, a new one is appended to
        ``custom_added``; a pending proposal of it is settled."""
        data = self.model_copy(deep=True)
        for phrase in (p.strip() for p in phrases):
            if not phrase:
                continue
            if phrase in data.custom_removed:
                data.custom_removed.remove(phrase)
            if not data.listed(phrase) and not _shipped_switched_back(phrase, self):
                data.custom_added.append(phrase)
            data.proposed = [p for p in data.proposed if p.phrase != phrase]
        return _touched(data, self)

    def with_removed(self, phrases: list[str], shipped: set[str]) -> AiBlacklist:
        """The author removes ``phrases``: an added one leaves its list; a shipped one (in ``shipped``, or in
        ``words`` / ``categories``) is recorded in ``custom_removed``."""
        data = self.model_copy(deep=True)
        for phrase in (p.strip() for p in phrases):
            if not phrase:
                continue
            for group in (data.custom_added, data.from_judge):
                while phrase in group:
                    group.remove(phrase)
            builtin = (
                phrase in shipped
                or phrase in data.words
                or any(phrase in group for group in data.categories.values())
            )
            if builtin and phrase not in data.custom_removed:
                data.custom_removed.append(phrase)
        return _touched(data, self)

    def with_accepted(self, phrases: list[str] | None) -> AiBlacklist:
        """Accept the proposals of ``phrases`` (all of them when None) into ``from_judge``."""
        data = self.model_copy(deep=True)
        wanted = None if phrases is None else {p.strip() for p in phrases}
        keep = []
        for proposal in data.proposed:
            if wanted is None or proposal.phrase in wanted:
                if not data.listed(proposal.phrase):
                    data.from_judge.append(proposal.phrase)
                if proposal.phrase in data.custom_removed:
                    data.custom_removed.remove(proposal.phrase)
            else:
                keep.append(proposal)
        data.proposed = keep
        return _touched(data, self)

    def with_rejected(self, phrases: list[str]) -> AiBlacklist:
        """Reject the proposals of ``phrases``; the judge finding them again proposes nothing."""
        data = self.model_copy(deep=True)
        wanted = {p.strip() for p in phrases}
        data.proposed = [p for p in data.proposed if p.phrase not in wanted]
        for phrase in sorted(wanted):
            if phrase and phrase not in data.rejected:
                data.rejected.append(phrase)
        return _touched(data, self)

    def with_findings(self, phrases: list[str], chapter: int, in_force: set[str]) -> AiBlacklist:
        """The judge of ``chapter`` found ``phrases``: each one new to the list (not ``in_force``, proposed,
        rejected or removed by the author) is proposed, or added at once when ``auto_add`` is on."""
        data = self.model_copy(deep=True)
        pending = {p.phrase for p in data.proposed}
        for phrase in dict.fromkeys(p.strip() for p in phrases):
            if not phrase or len(phrase) > 40:
                continue
            if phrase in in_force or phrase in pending or phrase in data.rejected or data.listed(phrase):
                continue
            if phrase in data.custom_removed:
                continue
            if data.auto_add:
                data.from_judge.append(phrase)
            else:
                data.proposed.append(PhraseProposal(phrase=phrase, chapter=chapter))
                pending.add(phrase)
        return _touched(data, self)


def _shipped_switched_back(phrase: str, before: AiBlacklist) -> bool:
    # A shipped phrase the author had switched off needs no entry of its own once switched back on.
    return phrase in before.custom_removed


def _touched(data: AiBlacklist, before: AiBlacklist) -> AiBlacklist:
    """``data`` with every list field marked as set, so that it is written out (exclude_unset) when it
    changed."""
    if data == before:
        return before
    return AiBlacklist.model_validate(
        {
            **data.to_json_dict(),
            "custom_added": data.custom_added,
            "custom_removed": data.custom_removed,
            "from_judge": data.from_judge,
            "proposed": [p.to_json_dict() for p in data.proposed],
            "rejected": data.rejected,
            "auto_add": data.auto_add,
        }
    )


# ---------------------------------------------------------------------------- what the author sees and asks
@dataclass(frozen=True)
class PhraseRow:
    """One phrase in force: what the author types, where it came from, its group and its hits."""

    phrase: str
    source: str
    category: str
    hits: int

    def to_json(self) -> dict[str, Any]:
        return {"phrase": self.phrase, "source": self.source, "category": self.category, "hits": self.hits}


@dataclass
class BlacklistReport:
    """What the panel and ``novel blacklist`` show."""

    rows: list[PhraseRow] = field(default_factory=list)
    proposed: list[PhraseProposal] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    auto_add: bool = False
    chapters: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "phrases": [r.to_json() for r in self.rows],
            "proposed": [p.to_json_dict() for p in self.proposed],
            "removed": self.removed,
            "rejected": self.rejected,
            "auto_add": self.auto_add,
            "chapters": self.chapters,
        }


@dataclass
class BlacklistEdit:
    """One change the author asks for; empty lists change nothing."""

    add: list[str] = field(default_factory=list)
    remove: list[str] = field(default_factory=list)
    accept: list[str] = field(default_factory=list)
    accept_all: bool = False
    reject: list[str] = field(default_factory=list)
    auto_add: bool | None = None

    def is_empty(self) -> bool:
        return not (self.add or self.remove or self.accept or self.accept_all or self.reject) and (
            self.auto_add is None
        )
