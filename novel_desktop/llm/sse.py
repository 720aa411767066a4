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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx2


async def sse_events(response: httpx2.Response) -> AsyncGenerator[tuple[str, dict[str, Any]], None]:
    """``(event name, data)`` of each server-sent event of ``response``; ``ping`` and events without data
    skipped; an ``error`` event raised as ``anthropic.APIStatusError`` (its status is the response's, 200).

    Read as bytes and split into lines here, not through httpx's text and line iterators (two generator hops
    and a decode less per received chunk). A line ends at LF, CRLF or CR, as the SSE format says (and the
    SDK's own decoder does); a U+2028 inside an event's JSON is text, not a line end as str.splitlines has it.
    """
    name: bytes | None = None
    data: list[bytes] = []
    pending = b""  # the start of a line whose end has not arrived yet
    # Closed here, in the task that reads it, however the reading ends (an error event, a cancel, the caller
    # leaving): left to the garbage collector, httpcore's connection lock would be released from another task.
    async with aclosing(response.aiter_bytes()) as chunks:
        async for chunk in chunks:
            lines = _lines(pending + chunk if pending else chunk)
            pending = lines.pop()
            for line in lines:
                if line:
                    if line.startswith(b"data:"):
                        data.append(line[6:] if line.startswith(b"data: ") else line[5:])
                    elif line.startswith(b"event:"):
                        name = line[6:].strip()
                    continue  # a comment (":…"), an id or a retry field: nothing we use
                if name is not None and data:
                    event = _event(response, name, b"\n".join(data))
                    if event is not None:
                        yield event
                name, data = None, []
    last = pending[:-1] if pending.endswith(b"\r") else pending  # the body's last line, without its end
    if last.startswith(b"data:"):
        data.append(last[6:] if last.startswith(b"data: ") else last[5:])
    elif last.startswith(b"event:"):
        name = last[6:].strip()
    if name is not None and data:  # a last event without its blank line
        event = _event(response, name, b"\n".join(data))
        if event is not None:
            yield event


def _lines(buffer: bytes) -> list[bytes]:
    """The complete lines of ``buffer``, then what is left of it (the start of the next line). A CR at the
    very end stays with the rest: it may be the first half of a CRLF split between two chunks."""
    if b"\r" not in buffer:
        return buffer.split(b"\n")
    held = b"\r" if buffer.endswith(b"\r") else b""
    if held:
        buffer = buffer[:-1]
    lines = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    lines[-1] += held
    return lines


def _event(response: httpx2.Response, name: bytes, raw: bytes) -> tuple[str, dict[str, Any]] | None:
    if name == b"ping":
        return None
    if name == b"error":
        import anthropic

        text = raw.decode("utf-8", "replace")
        try:
            body: Any = json.loads(text)
            message = f"{body}"
        except ValueError:
            body, message = text, text or f"Error code: {response.status_code}"
        raise anthropic.APIStatusError(message, response=response, body=body)
    parsed = json.loads(raw.decode("utf-8", "replace"))  # a str: json.loads would detect a bytes' encoding
    return (name.decode("utf-8", "replace"), parsed) if isinstance(parsed, dict) else None


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
