"""The style fingerprint and the AI-phrase blacklist (seed 004 §5.6, §7, §9.2)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from novel_desktop.domain.common import SeedModel
from novel_desktop.domain.seed_fields import NonNegative

#: Where a style profile came from: the author's own samples, a reference author (仿写), or a preset template.
StyleSource = Literal["original", "reference", "template"]


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
        groups = [self.words, *self.categories.values(), self.custom_added]
        for group in groups:
            for word in group:
                word = word.strip()
                if word and word not in removed and word not in seen:
                    seen.add(word)
                    result.append(word)
        return result
