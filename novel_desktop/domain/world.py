"""L1 world rules, ``world/rules.json`` (seed 004 §6.5.2): constraints the story may never break."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator

from novel_desktop.domain.common import SeedModel, reject_duplicates
from novel_desktop.domain.seed_fields import ChapterNo, ConstraintType

#: A world rule id: ``W-`` and at least three digits.
WorldRuleId = Annotated[str, Field(pattern=r"^W-\d{3,}$")]


class WorldRule(SeedModel):
    """One verifiable world rule. ``hard`` rules are injected as prohibitions and block a chapter."""

    id: WorldRuleId
    category: str
    rule: str
    constraint_type: ConstraintType
    #: Allowed exceptions; a soft rule's exception must be explained in the text.
    exceptions: list[str] = Field(default_factory=list)
    introduced_chapter: ChapterNo | None = None
    #: The last chapter in which the judge checked this rule.
    last_verified: ChapterNo | None = None


class WorldRules(SeedModel):
    """The whole ``world/rules.json`` file."""

    rules: list[WorldRule] = Field(default_factory=list)

    @field_validator("rules")
    @classmethod
    def _unique_ids(cls, value: list[WorldRule]) -> list[WorldRule]:
        # Contracts and verdicts refer to rules by id; a duplicate id would make those references ambiguous.
        reject_duplicates(value, lambda r: r.id, "duplicate world rule id {key}")
        return value

    def get(self, rule_id: str) -> WorldRule | None:
        """The rule with this id, or None."""
        return next((rule for rule in self.rules if rule.id == rule_id), None)

    def hard_rules(self) -> list[WorldRule]:
        """The rules that must never be broken."""
        return [rule for rule in self.rules if rule.constraint_type == "hard"]
