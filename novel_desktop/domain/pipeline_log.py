"""Per-chapter pipeline log, ``logs/chapter-NNN-log.json`` (seed 004 §9.2): timings, tokens, cost."""

from __future__ import annotations

from pydantic import Field

from novel_desktop.domain.common import SeedModel
from novel_desktop.domain.seed_fields import ChapterNo, Count, IsoTimestamp, NonNegative


class StageLog(SeedModel):
    """One LLM call of the pipeline (draft, summarize, refine, judge, revise ...)."""

    name: str
    model: str
    input_tokens: Count
    output_tokens: Count
    #: Prompt-cache fields reported by the Messages API; absent in the seed example, so 0 when missing.
    cache_creation_input_tokens: Count = 0
    cache_read_input_tokens: Count = 0
    duration_ms: Count
    cost_usd: NonNegative | None = None


class PipelineLog(SeedModel):
    """What one chapter's pipeline run did, for debugging, cost tracking and quality review."""

    chapter: ChapterNo
    storyline_id: str | None = None
    started_at: IsoTimestamp
    stages: list[StageLog] = Field(default_factory=list)
    #: The gate's outcome, e.g. "pass", "polish", "revise", "rewrite" (kept open: the gate may grow outcomes).
    gate_decision: str | None = None
    revisions: Count = 0
    total_duration_ms: Count = 0
    total_cost_usd: NonNegative | None = None
