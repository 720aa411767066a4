"""A chapter's tokens and cost while it streams: the calls in flight (seen through the client's call events)
on top of what the chapter's finished stages took, as ``UsageUpdated`` events a few times a second."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from novel_desktop.agents.ports import CallRecord
from novel_desktop.llm.usage import CallEvent
from novel_desktop.pipeline.events import PipelineEvent, PipelineWarning, UsageUpdated

#: At most this many live updates a second (a start or an end is always shown at once).
UPDATES_PER_SECOND = 4


def stage_rows(stage: str, calls: Sequence[CallRecord]) -> list[dict[str, Any]]:
    """The pipeline log's rows (``notes["stages"]``) for a stage's model calls: one per call."""
    return [
        {
            "name": stage,
            "model": call.model,
            "input_tokens": call.input_tokens,
            "output_tokens": call.output_tokens,
            "cache_creation_input_tokens": call.cache_creation_input_tokens,
            "cache_read_input_tokens": call.cache_read_input_tokens,
            "duration_ms": call.duration_ms,
            "cost_usd": round(call.cost_usd, 6),
        }
        for call in calls
    ]


def stage_totals(stages: list[dict[str, Any]]) -> tuple[int, int, float]:
    """Input tokens, output tokens and cost of a chapter's recorded stages (its gate notes)."""
    return (
        sum(int(s["input_tokens"]) for s in stages),
        sum(int(s["output_tokens"]) for s in stages),
        sum(float(s["cost_usd"]) for s in stages),
    )


class LiveUsage:
    """Watches the model calls of chapter ``chapter`` (pass :meth:`watch` to ``attributed(watch=...)``) and
    emits the chapter's running total: what its stages took before this run (:meth:`start_from`) plus every
    call of this run — input and cost from message_start, output as it arrives (estimated from the text
    between usage figures), the final figures once a call ends. Never lower than a moment before, except by
    the correction of an output estimate.
    """

    def __init__(self, chapter: int, emit: Callable[[PipelineEvent], None]) -> None:
        self.chapter = chapter
        self._emit = emit
        self._base = (0, 0, 0.0)
        self._calls: dict[int, tuple[int, int, float]] = {}
        self._last = 0.0

    def start_from(self, input_tokens: int, output_tokens: int, cost_usd: float) -> None:
        """The chapter's stages recorded before this run (a resumed chapter)."""
        self._base = (input_tokens, output_tokens, cost_usd)

    def finished(self) -> None:
        """A stage was recorded: show the figures at once."""
        self._send()

    def watch(self, event: Any) -> None:
        if not isinstance(event, CallEvent):
            return
        if event.note:
            self._emit(PipelineWarning(self.chapter, event.note))  # a retry, said once in words
        if event.phase == "end":
            figures = (event.usage.input_tokens, event.usage.output_tokens, event.cost_usd)
        else:
            figures = (event.usage.input_tokens, event.live_output_tokens, event.live_cost_usd)
        self._calls[event.call_id] = figures
        now = time.monotonic()
        if event.phase != "progress" or now - self._last >= 1 / UPDATES_PER_SECOND:
            self._send()

    def _send(self) -> None:
        self._last = time.monotonic()
        i, o, c = self._base
        for ci, co, cc in self._calls.values():
            i, o, c = i + ci, o + co, c + cc
        self._emit(UsageUpdated(self.chapter, i, o, c))
