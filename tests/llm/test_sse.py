"""The streamed reply's events as the client reads them (novel_desktop.llm.sse): plain JSON per event."""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import httpx2
import pytest

from novel_desktop.llm.sse import sse_events


def _events(body: str) -> list[tuple[str, dict[str, Any]]]:
    response = httpx2.Response(
        200, content=body.encode("utf-8"), request=httpx2.Request("POST", "http://127.0.0.1/v1/messages")
    )

    async def collect() -> list[tuple[str, dict[str, Any]]]:
        return [event async for event in sse_events(response)]

    return asyncio.run(collect())


def test_events_are_parsed_pings_and_comments_skipped_and_split_data_joined() -> None:
    body = (
        ": a comment line\n\n"
        'event: message_start\ndata: {"message": {"usage": {"input_tokens": 7}}}\n\n'
        'event: ping\ndata: {"type": "ping"}\n\n'
        'event: content_block_delta\ndata: {"delta": {"type": "text_delta",\n'
        'data: "text": "第一章"}}\n\n'
        'event: message_stop\ndata:{"type": "message_stop"}'  # no space after the colon, no blank line
    )
    assert _events(body) == [
        ("message_start", {"message": {"usage": {"input_tokens": 7}}}),
        ("content_block_delta", {"delta": {"type": "text_delta", "text": "第一章"}}),
        ("message_stop", {"type": "message_stop"}),
    ]


def test_an_error_event_after_http_200_raises_the_sdks_status_error() -> None:
    body = (
        'event: content_block_delta\ndata: {"delta": {"type": "text_delta", "text": "半"}}\n\n'
        'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error",'
        ' "message": "Overloaded"}}\n\n'
    )
    with pytest.raises(anthropic.APIStatusError) as caught:
        _events(body)
    assert caught.value.status_code == 200
    assert caught.value.type == "overloaded_error"
    assert caught.value.api_message == "Overloaded"


def _chunked(chunks: list[bytes]) -> list[tuple[str, dict[str, Any]]]:
    async def stream() -> Any:
        for chunk in chunks:
            yield chunk

    async def collect() -> list[tuple[str, dict[str, Any]]]:
        response = httpx2.Response(
            200, content=stream(), request=httpx2.Request("POST", "http://127.0.0.1/v1/messages")
        )
        return [event async for event in sse_events(response)]

    return asyncio.run(collect())


def test_lines_end_at_lf_crlf_or_cr_wherever_the_chunks_are_cut() -> None:
    events = [
        ("content_block_delta", {"delta": {"type": "text_delta", "text": "第一章\u2028山门"}}),
        ("message_delta", {"delta": {"stop_reason": "end_turn"}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    body = (
        'event: content_block_delta\r\ndata: {"delta": {"type": "text_delta", "text": "第一章\u2028山门"}}\r\n\r\n'
        'event: message_delta\rdata: {"delta": {"stop_reason": "end_turn"}}\r\r'
        'event: message_stop\ndata: {"type": "message_stop"}\r\n'
    ).encode("utf-8")
    assert _chunked([body]) == events
    # Cut everywhere: inside a CRLF, inside a multi-byte character, between "data:" and its value.
    for size in (1, 2, 3, 5, 7, 24):
        assert _chunked([body[i : i + size] for i in range(0, len(body), size)]) == events, size
