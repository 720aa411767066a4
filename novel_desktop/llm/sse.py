"""A streamed Messages API reply read as plain JSON events.

The SDK's ``messages.stream`` builds a pydantic object for every server-sent event, then a second event object
and an accumulated message snapshot from it: about 0.1 ms of CPU per streamed delta on the event loop, for a
reply we only need the text, the stop reason and the usage of. Here each event is one ``json.loads`` of its
``data`` line; an ``error`` event after HTTP 200 raises the SDK's ``APIStatusError`` as the SDK's own stream
does, so the client's error mapping and retries are unchanged.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import httpx2


async def sse_events(response: httpx2.Response) -> AsyncGenerator[tuple[str, dict[str, Any]], None]:
    """``(event name, data)`` of each server-sent event of ``response``; ``ping`` and events without data
    skipped; an ``error`` event raised as ``anthropic.APIStatusError`` (its status is the response's, 200)."""
    name: str | None = None
    data: list[str] = []
    # Closed here, in the task that reads it, however the reading ends (an error event, a cancel, the caller
    # leaving): left to the garbage collector, httpcore's connection lock would be released from another task.
    async with aclosing(cast(AsyncGenerator[str, None], response.aiter_lines())) as lines:
        async for line in lines:
            if line:
                if line.startswith("data:"):
                    data.append(line[6:] if line.startswith("data: ") else line[5:])
                elif line.startswith("event:"):
                    name = line[6:].strip()
                continue  # a comment (":…"), an id or a retry field: nothing we use
            if name is not None and data:
                event = _event(response, name, "\n".join(data))
                if event is not None:
                    yield event
            name, data = None, []
    if name is not None and data:  # a last event without its blank line
        event = _event(response, name, "\n".join(data))
        if event is not None:
            yield event


def _event(response: httpx2.Response, name: str, raw: str) -> tuple[str, dict[str, Any]] | None:
    if name == "ping":
        return None
    if name == "error":
        import anthropic

        try:
            body: Any = json.loads(raw)
            message = f"{body}"
        except ValueError:
            body, message = raw, raw or f"Error code: {response.status_code}"
        raise anthropic.APIStatusError(message, response=response, body=body)
    parsed = json.loads(raw)
    return (name, parsed) if isinstance(parsed, dict) else None


@dataclass
class StreamedMessage:
    """What a streamed reply said, accumulated from its events: the text blocks' text in order, the stop
    reason and the usage fields (message_start's, updated by each message_delta's)."""

    parts: list[str] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    stop_reason: str | None = None
    stopped: bool = False

    @property
    def text(self) -> str:
        return "".join(self.parts)
