"""The chapter pipeline's events as the pipeline controller's Qt signals."""

from __future__ import annotations

from typing import TYPE_CHECKING

from novel_desktop.pipeline.events import (
    ChapterCommitted,
    ChapterStarted,
    DraftAhead,
    DraftDiscarded,
    GateDecided,
    PipelineEvent,
    PipelineWarning,
    Stage,
    StageStarted,
    TextDelta,
    TextReset,
    UsageUpdated,
)

if TYPE_CHECKING:
    from novel_desktop.controllers.pipeline_controller import PipelineController

#: Stage value the controller reports when the gate decides (the core emits GateDecided, not a stage).
GATE_STAGE = "gate"


def stage_name(stage: str) -> str:
    """A stage id as the author reads it (Chinese, for tr()): a pipeline stage (``refine`` → 润色, the one
    table is ``events.Stage.label``) or a checkpoint's stage (``judged`` → 评审完成); never the raw id."""
    from novel_desktop.pipeline.orchestrator import STAGE_DONE

    if stage in Stage.__members__.values():
        return Stage(stage).label
    return STAGE_DONE.get(stage, "进行中")


def emit_chapter_event(c: PipelineController, event: PipelineEvent) -> bool:
    """Emit the signal of a chapter pipeline event; False for any other event."""
    if isinstance(event, TextDelta):
        c.text_delta.emit(event.chapter, event.text)
    elif isinstance(event, StageStarted):
        c.stage_started.emit(event.chapter, event.stage.value)
    elif isinstance(event, UsageUpdated):
        c.usage_updated.emit(event.chapter, event.input_tokens, event.output_tokens, event.cost_usd)
    elif isinstance(event, TextReset):
        c.text_reset.emit(event.chapter)
    elif isinstance(event, ChapterStarted):
        c._chapter = event.chapter
        c.chapter_started.emit(event.chapter, event.resumed_from or "")
    elif isinstance(event, GateDecided):
        c.stage_started.emit(event.chapter, GATE_STAGE)
        c.gate_decided.emit(event.chapter, event.action, float(event.overall), event.reason)
        if event.issues:
            # Each violation with the rule it breaks, then the other findings (the dock lists them).
            c.gate_issues.emit(event.chapter, list(event.issues))
    elif isinstance(event, PipelineWarning):
        c.warning.emit(event.chapter, event.message)
    elif isinstance(event, ChapterCommitted):
        c.project.notify_pipeline_commit()
        c.chapter_committed.emit(event.chapter)
    elif isinstance(event, DraftAhead):
        c.draft_ahead.emit(event.chapter)
    elif isinstance(event, DraftDiscarded):
        c.draft_discarded.emit(event.chapter, event.reason)
    else:
        return False
    return True
