"""Characters and their L2 contracts (seed 004 §5.2, §6.5.3).

``characters/active/<slug>.json`` holds one :class:`Character`; ``characters/relationships.json`` holds the
relationship graph.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from novel_desktop.domain.common import SeedModel, reject_duplicates
from novel_desktop.domain.seed_fields import ChapterNo, Slug

#: A character contract id such as ``C-LUCHEN-001``: ``C-``, an upper-case name key, a number.
ContractId = Annotated[str, Field(pattern=r"^C-[A-Z0-9]+(?:[-_][A-Z0-9]+)*-\d{3,}$")]

#: Where a contract stands in its lifecycle (seed 004 §6.5.3): planned (holds from ``valid_from_chapter``
#: on, once the story gets there), established (holds now), deprecated (replaced or retired; it held only up
#: to its ``valid_until``).
ContractStatus = Literal["planned", "established", "deprecated"]


class CharacterContract(SeedModel):
    """One verifiable behaviour boundary of a character (capability, personality, relationship ...)."""

    id: ContractId
    #: "capability", "personality", "relationship" ... (open: the seed gives only examples).
    type: str
    rule: str
    valid_from_chapter: ChapterNo | None = None
    #: The last chapter the contract holds for; None while it is open-ended.
    valid_until: ChapterNo | None = None
    #: What must happen before the contract may change (the change protocol of §6.5.3).
    update_requires: str | None = None
    exceptions: list[str] = Field(default_factory=list)
    #: Files written before the lifecycle existed have no status: their contracts are established.
    status: ContractStatus = "established"
    #: Versions of one contract share its id: a breakthrough deprecates version k and adds version k+1.
    version: int = Field(default=1, ge=1)
    #: The chapter whose commit made this version (None for the version the character was created with).
    changed_in_chapter: ChapterNo | None = None
    #: Why this version exists (the outline's breakthrough, the author's note).
    note: str = ""


def _unique_contract_ids(value: list[CharacterContract]) -> list[CharacterContract]:
    # One id may appear once per version (its history); the judge reports by id, and only one version of
    # an id is in force for any chapter.
    reject_duplicates(value, lambda c: (c.id, c.version), "duplicate contract id {key[0]} (version {key[1]})")
    return value


class CharacterContracts(SeedModel):
    """Just the ``contracts`` of a character file, as the seed example shows them."""

    contracts: list[CharacterContract] = Field(default_factory=list)

    @field_validator("contracts")
    @classmethod
    def _unique_ids(cls, value: list[CharacterContract]) -> list[CharacterContract]:
        # The judge reports results by contract id.
        return _unique_contract_ids(value)


class Character(CharacterContracts):
    """``characters/active/<slug>.json`` (or ``retired/``): a character's profile and contracts.

    ``id`` is the slug the state and op paths use (the file name without ``.json``); ``name`` is the name the
    text uses. An importer reading a file without ``id`` fills it in from the file name.
    """

    id: Slug
    name: str = Field(min_length=1)
    aliases: list[str] = Field(default_factory=list)
    #: "protagonist", "mentor", "antagonist", "supporting" ... (open).
    role: str | None = None
    description: str = ""
    goals: list[str] = Field(default_factory=list)
    motivation: str = ""
    inner_conflict: str = ""
    speech_pattern: str = ""
    status: Literal["active", "retired"] = "active"


class Relationship(SeedModel):
    """A directed relationship from one character to another (the graph of DR-010 is directed)."""

    from_: Slug = Field(alias="from")
    to: Slug
    #: "师徒", "rival", "恩人" ... (open).
    type: str
    #: Strength of feeling, -100 (hatred) to 100 (devotion), as the state's relationship values.
    value: int | None = Field(default=None, ge=-100, le=100)
    note: str | None = None


class Relationships(SeedModel):
    """``characters/relationships.json``: ``{"relationships": [...]}``."""

    relationships: list[Relationship] = Field(default_factory=list)

    def of(self, slug: str) -> list[Relationship]:
        """The relationships going out from ``slug``."""
        return [rel for rel in self.relationships if rel.from_ == slug]

    def between(self, source: str, target: str) -> Relationship | None:
        """The relationship from ``source`` to ``target``, or None."""
        return next((r for r in self.relationships if r.from_ == source and r.to == target), None)
