"""A chapter's tokens and cost while it streams: the calls in flight (seen through the client's call events)
on top of what the chapter's finished stages took, as ``UsageUpdated`` events a few times a second."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from novel_desktop.llm.usage import CallEvent
from novel_desktop.pipeline.events import PipelineEvent, UsageUpdated

#: At most this many live updates a second (a start or an end is always shown at once).
UPDATES_PER_SECOND = 4


class LiveUsage:
    """Watches the model calls of chapter ``chapter`` (pass :meth:`watch` to ``attributed(watch=...)``) and
    emits the chapter's running total: the finished stages (:meth:`finished`) plus the calls in flight —
    input and cost from message_start, output as it arrives (estimated from the text between usage figures).
    """

    def __init__(self, chapter: int, emit: Callable[[PipelineEvent], None]) -> None:
        self.chapter = chapter
        self._emit = emit
        self._base = (0, 0, 0.0)
        self._live: dict[int, tuple[int, int, float]] = {}
        self._last = 0.0

    def finished(self, input_tokens: int, output_tokens: int, cost_usd: float) -> None:
        """The chapter's finished stages now total this; the calls in flight so far are part of it."""
        self._base = (input_tokens, output_tokens, cost_usd)
        self._live.clear()
        self._send()

    def watch(self, event: Any) -> None:
        if not isinstance(event, CallEvent):
            return
        self._live[event.call_id] = (event.usage.input_tokens, event.live_output_tokens, event.live_cost_usd)
        now = time.monotonic()
        if event.phase != "progress" or now - self._last >= 1 / UPDATES_PER_SECOND:
            self._send()

    def _send(self) -> None:
        self._last = time.monotonic()
        i, o, c = self._base
        for li, lo, lc in self._live.values():
            i, o, c = i + li, o + lo, c + lc
        self._emit(UsageUpdated(self.chapter, i, o, c))
