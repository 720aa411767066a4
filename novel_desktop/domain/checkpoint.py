"""The orchestrator's recovery point, ``.checkpoint.json`` (seed 004 §8, §9.2; seed 001 §10.4)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

from pydantic import Field

from novel_desktop.domain.common import iso_now
from novel_desktop.domain.seed_fields import ChapterNo, Count, IsoTimestamp, WrittenWhole


class OrchestratorState(StrEnum):
    """The states of the volume-cycle state machine (§8.2)."""

    INIT = "INIT"
    QUICK_START = "QUICK_START"
    VOL_PLANNING = "VOL_PLANNING"
    WRITING = "WRITING"
    CHAPTER_REWRITE = "CHAPTER_REWRITE"
    VOL_REVIEW = "VOL_REVIEW"
    ERROR_RETRY = "ERROR_RETRY"


class PipelineStage(StrEnum):
    """How far the in-flight chapter got through the pipeline (§9.2). ``None`` in the file means idle.

    The members are declared in pipeline order, which is also the order a resumed chapter goes through.
    """

    DRAFTING = "drafting"
    DRAFTED = "drafted"
    REFINED = "refined"
    JUDGED = "judged"
    COMMITTED = "committed"


class Checkpoint(WrittenWhole):
    """``.checkpoint.json``: where the orchestrator stands; read first on every cold start.

    A new novel starts at chapter 0 of volume 1 in ``INIT``, with no chapter in flight.
    """

    # A checkpoint is always written whole, so that a reader never has to guess a missing key.
    always_written: ClassVar[tuple[str, ...]] = (
        "last_completed_chapter",
        "current_volume",
        "orchestrator_state",
        "pipeline_stage",
        "inflight_chapter",
        "pending_actions",
        "last_checkpoint_time",
    )

    last_completed_chapter: Count = 0
    current_volume: ChapterNo = 1
    orchestrator_state: OrchestratorState = OrchestratorState.INIT
    pipeline_stage: PipelineStage | None = None
    inflight_chapter: ChapterNo | None = None
    # The seed leaves the item shape open; strings and objects are both kept as written.
    pending_actions: list[Any] = Field(default_factory=list)
    last_checkpoint_time: IsoTimestamp = Field(default_factory=iso_now)

    @property
    def needs_recovery(self) -> bool:
        """True when a chapter was left mid-pipeline and must be resumed from staging (§9.2)."""
        return self.inflight_chapter is not None and self.pipeline_stage is not PipelineStage.COMMITTED

    @property
    def next_chapter(self) -> int:
        """The chapter the next ``continue`` writes: the in-flight one, else the one after the last commit."""
        if self.needs_recovery and self.inflight_chapter is not None:
            return self.inflight_chapter
        return self.last_completed_chapter + 1
