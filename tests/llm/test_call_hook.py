"""The client's ledger hook (``on_call``): every attempt's usage reaches it, however the call ends."""

from __future__ import annotations

import asyncio

import pytest

from novel_desktop.llm import LLMClient, LLMOverloaded, PromptBlock
from novel_desktop.llm.roles import AgentRole
from novel_desktop.llm.settings import LLMSettings
from novel_desktop.llm.usage import CallEvent, Usage
from tests.fakes.anthropic_server import TEST_KEY, FakeAnthropicServer, Reply

ASK = [{"role": "user", "content": "写第 3 章。"}]


def _run(
    settings: LLMSettings,
    server: FakeAnthropicServer,
    events: list[CallEvent] | None = None,
    *,
    cancel_after_text: bool = False,
) -> list[CallEvent]:
    events = [] if events is None else events

    async def hook(event: CallEvent) -> None:
        events.append(event)

    async def main() -> None:
        cancel = asyncio.Event()
        async with LLMClient(settings, api_key=TEST_KEY, base_url=server.base_url, on_call=hook) as client:
            await client.stream(
                AgentRole.chapter_writer,
                system=[PromptBlock("你是一名网文作家。")],
                messages=ASK,
                cancel=cancel,
                on_text=(lambda _t: cancel.set()) if cancel_after_text else None,
            )

    asyncio.run(main())
    return events


def _reported(server: FakeAnthropicServer) -> Usage:
    total = Usage()
    for report in server.reported:
        total = total + Usage.from_api(report["usage"])
    return total


def test_a_retried_call_reports_both_attempts_once(
    server: FakeAnthropicServer, settings: LLMSettings
) -> None:
    server.script("chapter_writer", Reply.mid_stream_overloaded(), Reply("林风进了城。" * 10, chunk_size=5))
    events = _run(settings, server)
    assert [e.phase for e in events if e.phase != "progress"] == ["start", "start", "end"]
    end = events[-1]
    assert (end.status, end.attempts) == ("ok", 2)
    assert end.usage == _reported(server)  # the failed attempt's input is billed too
    assert end.cost_usd == pytest.approx(end.usage.cost(settings.price_for(end.model)))
    assert len({e.call_id for e in events}) == 1
    live = [e.live_output_tokens for e in events if e.phase == "progress"]
    assert live and max(live) >= end.usage.output_tokens  # the live view never lags the final figure


def test_a_failed_and_a_cancelled_call_end_with_what_was_reported(
    server: FakeAnthropicServer, settings: LLMSettings
) -> None:
    attempts = settings.retry.max_attempts
    server.script("chapter_writer", *[Reply.mid_stream_overloaded() for _ in range(attempts)])
    failed: list[CallEvent] = []
    with pytest.raises(LLMOverloaded):
        _run(settings, server, failed)
    assert (failed[-1].phase, failed[-1].status, failed[-1].attempts) == ("end", "failed", attempts)
    assert failed[-1].usage == _reported(server)

    server.reported.clear()
    server.script("chapter_writer", Reply.slow("慢" * 400, delay=0.02))
    cancelled: list[CallEvent] = []
    with pytest.raises(asyncio.CancelledError):
        _run(settings, server, cancelled, cancel_after_text=True)
    end = cancelled[-1]
    assert (end.phase, end.status) == ("end", "cancelled")
    assert end.usage.input_tokens == _reported(server).input_tokens > 0
