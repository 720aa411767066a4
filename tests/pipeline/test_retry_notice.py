"""A retried model call is told to the author once, in words (the window's log and the CLI's stderr both show
the chapter's PipelineWarning events)."""

from __future__ import annotations

import asyncio

from novel_desktop.llm.client import LLMClient
from novel_desktop.llm.settings import LLMSettings
from novel_desktop.llm.usage import CallEvent, Usage
from novel_desktop.pipeline.events import PipelineEvent, PipelineWarning
from novel_desktop.pipeline.live_usage import LiveUsage
from tests.fakes.anthropic_server import TEST_KEY, FakeAnthropicServer, Reply


def test_the_client_reports_a_retry_with_a_chinese_note(
    server: FakeAnthropicServer, settings: LLMSettings
) -> None:
    server.script("quality_judge", Reply.overloaded(), "好的。")
    events: list[CallEvent] = []

    async def hook(event: CallEvent) -> None:
        events.append(event)

    async def run() -> None:
        async with LLMClient(settings, api_key=TEST_KEY, base_url=server.base_url, on_call=hook) as client:
            await client.stream("quality_judge", system=[], messages=[{"role": "user", "content": "评"}])

    asyncio.run(run())
    notes = [e.note for e in events if e.note]
    assert len(notes) == 1 and notes[0].startswith("质量评审的请求服务繁忙（529）")


def test_live_usage_turns_the_note_into_one_pipeline_warning() -> None:
    emitted: list[PipelineEvent] = []
    live = LiveUsage(7, emitted.append)
    note = "章节写作的请求连接中断，马上重试（第 2 次，最多 3 次）"
    live.watch(CallEvent(1, "progress", "chapter_writer", "m", Usage(), 0.0, note=note))
    live.watch(CallEvent(1, "progress", "chapter_writer", "m", Usage(), 0.0))
    assert [e for e in emitted if isinstance(e, PipelineWarning)] == [PipelineWarning(7, note)]
