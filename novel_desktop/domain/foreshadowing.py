"""Foreshadowing threads (伏笔): ``foreshadowing/global.json`` and ``volumes/vol-NN/foreshadowing.json``.

The seed names the files but not their content; the shape here is the one the state-ops code updates:
``{"foreshadowing": [item, ...]}`` for the novel and ``{"volume": N, "foreshadowing": [...]}`` per volume.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar, Literal, TypeVar

from pydantic import Field, field_validator

from novel_desktop.domain.common import SeedModel
from novel_desktop.domain.seed_fields import ChapterNo, Slug, WrittenWhole

ForeshadowScope = Literal["novel", "multi_volume", "volume"]
ForeshadowStatus = Literal["planned", "planted", "advanced", "resolved"]


class ForeshadowEvent(SeedModel):
    """One step in a thread's life: planted, advanced or resolved in a chapter."""

    chapter: ChapterNo
    #: "planted", "advanced" or "resolved" (the ``foreshadow`` op's value).
    action: str
    #: What happened; None when the op carried no detail.
    detail: str | None = None


class ForeshadowItem(WrittenWhole):
    """One foreshadowing thread."""

    # Every entry carries the same keys, so readers and the ops code never meet a missing one.
    always_written: ClassVar[tuple[str, ...]] = (
        "id",
        "description",
        "scope",
        "status",
        "planted_chapter",
        "advanced_chapters",
        "resolved_chapter",
        "target_resolve_range",
        "storyline_id",
        "history",
    )

    id: Slug
    description: str = ""
    #: None for a thread first met in a chapter's ops, before a planner gave it a scope.
    scope: ForeshadowScope | None = None
    status: ForeshadowStatus = "planned"
    planted_chapter: ChapterNo | None = None
    advanced_chapters: list[ChapterNo] = Field(default_factory=list)
    resolved_chapter: ChapterNo | None = None
    #: The chapters (inclusive) in which the thread should be resolved.
    target_resolve_range: tuple[ChapterNo, ChapterNo] | None = None
    storyline_id: str | None = None
    history: list[ForeshadowEvent] = Field(default_factory=list)

    @field_validator("target_resolve_range")
    @classmethod
    def _ordered(cls, value: tuple[int, int] | None) -> tuple[int, int] | None:
        if value is not None and value[0] > value[1]:
            raise ValueError(f"target_resolve_range starts after it ends: {list(value)}")
        return value

    def resolve_deadline(self) -> int | None:
        """The last chapter by which the thread should be resolved, or None when no target is set."""
        return self.target_resolve_range[1] if self.target_resolve_range else None


class VolumeForeshadowItem(ForeshadowItem):
    """A thread as a volume plans it: when it is to be planted and resolved in this volume."""

    planned_plant_chapter: ChapterNo | None = None
    planned_resolve_chapter: ChapterNo | None = None

    def resolve_deadline(self) -> int | None:
        """The planned resolve chapter when given, else the end of the target range."""
        if self.planned_resolve_chapter is not None:
            return self.planned_resolve_chapter
        return super().resolve_deadline()


_Item = TypeVar("_Item", bound=ForeshadowItem)


def _unique_ids(items: list[_Item]) -> list[_Item]:
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise ValueError(f"duplicate foreshadowing id {item.id}")
        seen.add(item.id)
    return items


class GlobalForeshadowing(SeedModel):
    """``foreshadowing/global.json``: every thread of the novel."""

    foreshadowing: list[ForeshadowItem] = Field(default_factory=list)

    @field_validator("foreshadowing")
    @classmethod
    def _unique(cls, value: list[ForeshadowItem]) -> list[ForeshadowItem]:
        # Ops address a thread by its id alone.
        return _unique_ids(value)

    def get(self, item_id: str) -> ForeshadowItem | None:
        """The thread with this id, or None."""
        return next((item for item in self.foreshadowing if item.id == item_id), None)

    def open_items(self) -> list[ForeshadowItem]:
        """Threads planted or advanced but not yet resolved."""
        return [item for item in self.foreshadowing if item.status in ("planted", "advanced")]


class VolumeForeshadowing(SeedModel):
    """``volumes/vol-NN/foreshadowing.json``: the threads a volume plants, advances or resolves."""

    volume: ChapterNo
    foreshadowing: list[VolumeForeshadowItem] = Field(default_factory=list)

    @field_validator("foreshadowing")
    @classmethod
    def _unique(cls, value: list[VolumeForeshadowItem]) -> list[VolumeForeshadowItem]:
        return _unique_ids(value)


def overdue(items: Iterable[_Item], current_chapter: int) -> list[_Item]:
    """The unresolved threads whose resolve deadline lies before ``current_chapter``.

    ``current_chapter`` is the chapter about to be written: a thread due in that chapter is not overdue yet.
    Threads without a deadline are never overdue.
    """
    result: list[_Item] = []
    for item in items:
        deadline = item.resolve_deadline()
        if item.status != "resolved" and deadline is not None and deadline < current_chapter:
            result.append(item)
    return result
