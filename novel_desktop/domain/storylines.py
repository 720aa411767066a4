"""Multi-thread narrative: storylines, the LS spec and a volume's schedule (seed 004 §6.6.1-§6.6.4).

Files: ``storylines/storylines.json`` (:class:`StorylinesFile`), ``storylines/storyline-spec.json``
(:class:`StorylineSpec`) and ``volumes/vol-NN/storyline-schedule.json`` (:class:`StorylineSchedule`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from novel_desktop.domain.common import SeedModel
from novel_desktop.domain.seed_fields import ChapterNo, ConstraintType, Count, Slug

#: The storyline types the seed lists; a novel may add its own in ``storyline_types``.
DEFAULT_STORYLINE_TYPES: tuple[str, ...] = (
    "main_arc",
    "faction_conflict",
    "conspiracy",
    "mystery",
    "character_arc",
    "parallel_timeline",
)

StorylineScope = Literal["novel", "multi_volume", "single_volume"]
StorylineStatus = Literal["active", "dormant", "planned", "resolved"]
VolumeRole = Literal["primary", "secondary", "seasoning"]


class Storyline(SeedModel):
    """One narrative thread. A thread with no POV characters is told through fragments from many views."""

    #: The slug also names the thread's memory folder, ``storylines/<id>/memory.md``.
    id: Slug
    name: str
    type: str
    scope: StorylineScope
    pov_characters: list[str] = Field(default_factory=list)
    affiliated_factions: list[str] = Field(default_factory=list)
    #: "present", "past" ... (open: a parallel timeline may name its own).
    timeline: str = "present"
    status: StorylineStatus
    introduced_volume: ChapterNo | None = None
    description: str = ""


class Bridges(SeedModel):
    """What two storylines share: characters, foreshadowing and events."""

    shared_characters: list[str] = Field(default_factory=list)
    shared_foreshadowing: list[str] = Field(default_factory=list)
    shared_events: list[str] = Field(default_factory=list)


class StorylineRelationship(SeedModel):
    """How two storylines relate and when they meet."""

    from_: str = Field(alias="from")
    to: str
    type: str
    bridges: Bridges = Field(default_factory=Bridges)
    convergence_condition: str = ""
    #: What the meeting of the two threads does for the story; guides PlotArchitect.
    narrative_function: str = ""


class StorylinesFile(SeedModel):
    """``storylines/storylines.json``: every storyline of the novel and how they relate."""

    storylines: list[Storyline] = Field(default_factory=list)
    relationships: list[StorylineRelationship] = Field(default_factory=list)
    storyline_types: list[str] = Field(default_factory=lambda: list(DEFAULT_STORYLINE_TYPES))

    @model_validator(mode="after")
    def _references_resolve(self) -> StorylinesFile:
        # Ids are referenced from schedules, contracts and memory folders, so they must be unique, and a
        # relationship to an unknown thread is a typo that would otherwise surface chapters later.
        ids: set[str] = set()
        for storyline in self.storylines:
            if storyline.id in ids:
                raise ValueError(f"storylines: duplicate id {storyline.id}")
            ids.add(storyline.id)
        for rel in self.relationships:
            for end in (rel.from_, rel.to):
                if end not in ids:
                    raise ValueError(f"relationships: unknown storyline {end!r}")
        return self

    def get(self, storyline_id: str) -> Storyline | None:
        """The storyline with this id, or None."""
        return next((s for s in self.storylines if s.id == storyline_id), None)

    def active(self) -> list[Storyline]:
        """The storylines currently being told."""
        return [s for s in self.storylines if s.status == "active"]


class StorylineRule(SeedModel):
    """One LS rule. Only timeline consistency is hard; the rest are reported, never blocking."""

    id: Annotated[str, Field(pattern=r"^LS-\d{3,}$")]
    category: str
    rule: str
    constraint_type: ConstraintType


class StorylineSpec(SeedModel):
    """``storylines/storyline-spec.json``: the LS layer of specs."""

    spec_version: int = Field(default=1, ge=1)
    rules: list[StorylineRule] = Field(default_factory=list)

    def hard_rules(self) -> list[StorylineRule]:
        """The rules whose violation blocks a chapter."""
        return [rule for rule in self.rules if rule.constraint_type == "hard"]


class ActiveStoryline(SeedModel):
    """A storyline's part in one volume."""

    storyline_id: str
    volume_role: VolumeRole
    target_chapters: Count = 0
    arc_goal: str = ""


class InterleavingPattern(SeedModel):
    """Rhythm constraints for interleaving threads; the outline decides the exact order."""

    strategy: str = "primary_dominant"
    primary_max_consecutive: ChapterNo | None = None
    #: E.g. "every_8_chapters".
    secondary_min_appearance: str | None = None
    #: E.g. "mid_volume_and_climax".
    seasoning_placement: str | None = None


class ConvergenceEvent(SeedModel):
    """A planned meeting of storylines within a range of chapters (inclusive, absolute chapter numbers)."""

    chapter_range: tuple[ChapterNo, ChapterNo]
    involved_storylines: list[str] = Field(default_factory=list)
    trigger: str = ""
    aftermath: str = ""

    @field_validator("chapter_range")
    @classmethod
    def _ordered(cls, value: tuple[int, int]) -> tuple[int, int]:
        if value[0] > value[1]:
            raise ValueError(f"chapter_range starts after it ends: {list(value)}")
        return value

    def covers(self, chapter: int) -> bool:
        """True when ``chapter`` lies in the range."""
        return self.chapter_range[0] <= chapter <= self.chapter_range[1]


class StorylineSchedule(SeedModel):
    """``volumes/vol-NN/storyline-schedule.json``: which threads a volume runs and where they meet."""

    volume: ChapterNo
    volume_theme: str = ""
    active_storylines: list[ActiveStoryline] = Field(default_factory=list)
    interleaving_pattern: InterleavingPattern = Field(default_factory=InterleavingPattern)
    convergence_events: list[ConvergenceEvent] = Field(default_factory=list)
    dormant_storylines: list[str] = Field(default_factory=list)
    newly_activated: list[str] = Field(default_factory=list)

    def role_of(self, storyline_id: str) -> VolumeRole | None:
        """The volume role of a storyline, or None when it is not active in this volume."""
        entry = next((a for a in self.active_storylines if a.storyline_id == storyline_id), None)
        return entry.volume_role if entry else None


def schedule_after_deleted_chapter(data: dict[str, Any], deleted: int) -> dict[str, Any]:
    """A volume's ``storyline-schedule.json`` (as parsed JSON) after the outline's section for chapter
    ``deleted`` was deleted and the later sections moved one number down: every convergence range end after it
    moves down too, so a meeting planned for a chapter stays with that chapter's section. The rest is kept."""
    events = data.get("convergence_events")
    if not isinstance(events, list):
        return data
    shifted = []
    for event in events:
        span = event.get("chapter_range") if isinstance(event, dict) else None
        if isinstance(span, list) and len(span) == 2 and all(isinstance(n, int) for n in span):
            start, end = span
            # A range ending at the deleted chapter ends one before it (unless that was its only chapter: the
            # meeting then falls on the chapter that takes its number).
            end = end - 1 if end > deleted or (end == deleted and start < end) else end
            start = start - 1 if start > deleted else start
            event = {**event, "chapter_range": [start, end]}
        shifted.append(event)
    return {**data, "convergence_events": shifted}
