"""Typed events the chapter pipeline emits, so a GUI (or the CLI) can follow a chapter as it is written."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Stage(StrEnum):
    """Pipeline stages as the author sees them (写作 → 摘要/润色 → 评审 → 门控 → 提交)."""

    DRAFT = "draft"
    #: The one length pass on a draft outside the platform's range (expand or tighten by edits).
    LENGTH = "length"
    SUMMARIZE = "summarize"
    REFINE = "refine"
    JUDGE = "judge"
    JUDGE_SECONDARY = "judge_secondary"
    GATE = "gate"
    POLISH = "polish"
    REVISE = "revise"
    COMMIT = "commit"

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Stage.DRAFT: "写作",
    Stage.LENGTH: "字数调整",
    Stage.SUMMARIZE: "摘要",
    Stage.REFINE: "润色",
    Stage.JUDGE: "评审",
    Stage.JUDGE_SECONDARY: "复核",
    Stage.GATE: "门控",
    Stage.POLISH: "二次润色",
    Stage.REVISE: "修订",
    Stage.COMMIT: "提交",
}


@dataclass(frozen=True)
class ChapterStarted:
    chapter: int
    resumed_from: str | None


@dataclass(frozen=True)
class StageStarted:
    chapter: int
    stage: Stage


@dataclass(frozen=True)
class StageFinished:
    chapter: int
    stage: Stage
    duration_ms: int
    input_tokens: int
    output_tokens: int
    cost_usd: float


@dataclass(frozen=True)
class TextDelta:
    """A piece of streamed text (the draft as it is written)."""

    chapter: int
    stage: Stage
    text: str


@dataclass(frozen=True)
class TextReset:
    """The stream restarted after an error: drop what was shown so far."""

    chapter: int
    stage: Stage


@dataclass(frozen=True)
class UsageUpdated:
    """Tokens and cost of the chapter so far."""

    chapter: int
    input_tokens: int
    output_tokens: int
    cost_usd: float


@dataclass(frozen=True)
class GateDecided:
    chapter: int
    action: str
    overall: float
    reason: str
    revisions: int
    #: What the checks in code found, one line each (``[LS-005] … 原文：「…」``).
    issues: tuple[str, ...] = ()


@dataclass(frozen=True)
class PipelineWarning:
    """Something the author should know that did not stop the chapter (dropped ops, a skipped output…)."""

    chapter: int
    message: str


@dataclass(frozen=True)
class ChapterCommitted:
    chapter: int
    chars: int
    overall: float | None
    scores: tuple[float, ...]
    revisions: int
    flagged: bool
    cost_usd: float


@dataclass(frozen=True)
class DraftAhead:
    """Chapter ``chapter``'s writer started early, while the chapter before it is still judged (a queued
    run's pipelining, issue 18). Its StageStarted/TextDelta events follow, keyed by ``chapter``; it becomes
    the chapter in flight (ChapterStarted) only once the one before it is committed."""

    chapter: int


@dataclass(frozen=True)
class DraftDiscarded:
    """An early draft of ``chapter`` was thrown away (the chapter before it was sent back, paused or failed,
    or the run stopped); ``reason`` says why in the author's words. Nothing of it was staged."""

    chapter: int
    reason: str


PipelineEvent = (
    ChapterStarted
    | StageStarted
    | StageFinished
    | TextDelta
    | TextReset
    | UsageUpdated
    | GateDecided
    | PipelineWarning
    | ChapterCommitted
    | DraftAhead
    | DraftDiscarded
)
