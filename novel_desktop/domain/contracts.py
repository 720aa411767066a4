"""L3 chapter contracts, ``volumes/vol-NN/chapter-contracts/chapter-NNN.json`` (seed 004 §6.5.4, §6.6.3).

PlotArchitect derives one per chapter from the volume outline: what must hold before, what the chapter
must achieve, what holds after, and (for multi-thread novels) which storyline it advances.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from novel_desktop.domain.common import SeedModel
from novel_desktop.domain.seed_fields import ChapterNo, Count

#: A foreshadowing thread's status after the chapter.
ForeshadowUpdate = Literal["planned", "planted", "advanced", "resolved"]


class Preconditions(SeedModel):
    """What must already hold when the chapter starts (the previous chapter's postconditions)."""

    #: Character (display name or slug, as the outline writes it) → attribute → value.
    character_states: dict[str, dict[str, Any]] = Field(default_factory=dict)
    #: World rule ids the chapter must respect (W-001 ...).
    required_world_rules: list[str] = Field(default_factory=list)


class Objective(SeedModel):
    """One thing the chapter must (or should) accomplish."""

    id: str
    #: "plot", "foreshadowing", "character" ... (open).
    type: str
    #: Whether the judge fails the chapter when it is missing; the seed writes it only on plot objectives.
    required: bool = False
    description: str = ""
    #: For foreshadowing objectives: "plant", "advance" or "resolve".
    action: str | None = None
    #: For foreshadowing objectives: the foreshadowing id acted on.
    target: str | None = None


class Postconditions(SeedModel):
    """What must hold when the chapter ends, with causal support in the text."""

    state_changes: dict[str, dict[str, Any]] = Field(default_factory=dict)
    #: Foreshadowing id → its status after the chapter.
    foreshadowing_updates: dict[str, ForeshadowUpdate] = Field(default_factory=dict)


class StorylineContext(SeedModel):
    """Where the chapter's storyline stands, for the writer (§6.6.3)."""

    #: The last chapter written on this storyline; None when this chapter opens it.
    last_chapter_on_this_line: ChapterNo | None = None
    last_chapter_summary: str = ""
    chapters_since_last: Count = 0
    #: The arc's progress as the planner wrote it, e.g. "40%".
    line_arc_progress: str = ""
    #: Other active storyline id → one line on where it stands now.
    concurrent_state: dict[str, str] = Field(default_factory=dict)


class TransitionHint(SeedModel):
    """How the chapter's end hands over to the next storyline."""

    next_storyline: str
    bridge: str = ""


class ContractUpdate(SeedModel):
    """A character contract this chapter changes (seed 004 §6.5.3 契约变更协议): the outline marks the
    breakthrough, and when the chapter commits the contract's current version is deprecated and ``rule``
    becomes the next version, in force from the following chapter."""

    #: The character contract id (C-LINFENG-001 ...).
    contract_id: str = Field(min_length=1)
    #: The new rule.
    rule: str = Field(min_length=1)
    #: A new type, when the change moves the contract to another kind; None keeps the old type.
    type: str | None = None
    #: What happened (the breakthrough), for the changelog and the contract's history.
    note: str = ""


class ChapterContract(SeedModel):
    """One chapter's contract: preconditions, objectives, postconditions, acceptance criteria, storyline."""

    chapter: ChapterNo
    storyline_id: str | None = None
    preconditions: Preconditions = Field(default_factory=Preconditions)
    objectives: list[Objective] = Field(default_factory=list)
    postconditions: Postconditions = Field(default_factory=Postconditions)
    acceptance_criteria: list[str] = Field(default_factory=list)
    storyline_context: StorylineContext | None = None
    transition_hint: TransitionHint | None = None
    #: Character contracts the chapter changes; applied when the chapter commits.
    contract_updates: list[ContractUpdate] = Field(default_factory=list)

    def required_objectives(self) -> list[Objective]:
        """The objectives the chapter fails without."""
        return [objective for objective in self.objectives if objective.required]
