"""The world and character state, ``state/current-state.json`` (seed 004 §9.2, seed 001 §10.6).

Changes to it arrive as ops patches; those live in ``state_ops``. This module only describes the document.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, field_validator

from novel_desktop.domain.common import SLUG_RE
from novel_desktop.domain.seed_fields import Count, WrittenWhole

#: The entity maps, keyed by slug.
ENTITY_CATEGORIES: tuple[str, ...] = ("characters", "items", "locations", "factions")

#: The schema version this program writes.
CURRENT_SCHEMA_VERSION = 1


class CurrentState(WrittenWhole):
    """``state/current-state.json``: the live state of characters, items, places, factions and the world.

    Entities are free-form dicts keyed by slug (``characters.lin-feng.location``), because what an agent
    tracks about an entity is open-ended. ``state_version`` goes up by one per applied patch.
    """

    # ``items``, ``locations`` and ``factions`` are often absent in seed files; they are written only once
    # set, so a file without them round-trips unchanged.
    always_written: ClassVar[tuple[str, ...]] = (
        "schema_version",
        "state_version",
        "last_updated_chapter",
        "characters",
        "world_state",
        "active_foreshadowing",
    )

    schema_version: int = Field(default=CURRENT_SCHEMA_VERSION, ge=1)
    state_version: Count = 0
    last_updated_chapter: Count = 0
    characters: dict[str, dict[str, Any]] = Field(default_factory=dict)
    items: dict[str, dict[str, Any]] = Field(default_factory=dict)
    locations: dict[str, dict[str, Any]] = Field(default_factory=dict)
    factions: dict[str, dict[str, Any]] = Field(default_factory=dict)
    world_state: dict[str, Any] = Field(default_factory=dict)
    active_foreshadowing: list[str] = Field(default_factory=list)

    @field_validator("characters", "items", "locations", "factions")
    @classmethod
    def _keys_are_slugs(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        # Op paths address entities by slug (§10.6); a display name as a key could never be patched.
        bad = [key for key in value if not SLUG_RE.fullmatch(key)]
        if bad:
            raise ValueError(f"entity keys must be slugs, not display names: {bad}")
        return value

    def entity(self, category: str, slug: str) -> dict[str, Any] | None:
        """The entity ``slug`` of an entity category (``characters``, ``items``, ...), or None."""
        if category not in ENTITY_CATEGORIES:
            raise KeyError(f"not an entity category: {category!r}")
        table: dict[str, dict[str, Any]] = getattr(self, category)
        return table.get(slug)
