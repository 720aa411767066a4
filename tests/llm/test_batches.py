"""Message Batches against the fake server: half price, polling, per-item errors, and the fallback."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from novel_desktop.llm.batches import BatchReport, BatchRequest, run_batch
from novel_desktop.llm.client import LLMClient, PromptBlock
from novel_desktop.llm.roles import AgentRole
from novel_desktop.llm.settings import LLMSettings
from novel_desktop.llm.usage import Usage
from tests.fakes.anthropic_server import BATCH_ROLE, TEST_KEY, FakeAnthropicServer, Reply, fast_settings


def _requests(n: int) -> list[BatchRequest]:
    return [
        BatchRequest(
            f"chapter-{i:03d}",
            AgentRole.quality_judge,
            [PromptBlock("你是评审。", cache=True)],
            [{"role": "user", "content": f"评第 {i} 章"}],
        )
        for i in range(1, n + 1)
    ]


async def _run(server: FakeAnthropicServer, settings: LLMSettings, n: int, **kwargs: Any) -> BatchReport:
    async with LLMClient(settings, api_key=TEST_KEY, base_url=server.base_url) as client:
        return await run_batch(client, _requests(n), **kwargs)


def test_batch_costs_half_of_ordinary_calls(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    server.set_default(BATCH_ROLE, '{"ok": true}')
    server.batch_polls_before_end = 2
    lines: list[str] = []
    report = asyncio.run(
        _run(server, settings, 3, first_poll_s=0.01, max_poll_s=0.02, on_progress=lines.append)
    )

    assert report.mode == "batch"
    assert report.batch_id is not None and report.batch_id.startswith("msgbatch_")
    assert sorted(report.results) == ["chapter-001", "chapter-002", "chapter-003"]
    assert all(r.ok and r.text == '{"ok": true}' for r in report.results.values())
    # Each item is priced at half the table price of the judge's model.
    price = settings.price_for(settings.model_for(AgentRole.quality_judge))
    item = report.results["chapter-001"]
    assert item.cost_usd == pytest.approx(Usage.cost(item.usage, price) * 0.5)
    assert report.cost_usd == pytest.approx(report.full_price_usd / 2)
    assert report.saved_usd > 0
    assert report.polls >= 2  # it waited while the batch was in progress
    assert "50%" in report.note
    creates = [r for r in server.requests if r.path == "/v1/messages/batches"]
    assert len(creates) == 1 and len(creates[0].body["requests"]) == 3
    assert not server.requests_for("quality_judge")  # no ordinary calls


def test_a_failed_item_is_reported_not_raised(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    server.set_default(BATCH_ROLE, '{"ok": true}')
    server.script("chapter-002", Reply.http_error(500, message="boom"))
    report = asyncio.run(_run(server, settings, 3, first_poll_s=0.01))
    assert report.results["chapter-001"].ok
    failed = report.results["chapter-002"]
    assert not failed.ok and failed.error is not None and "boom" in failed.error
    assert failed.cost_usd == 0


def test_provider_without_batches_falls_back_to_calls_at_full_price(server: FakeAnthropicServer) -> None:
    settings = fast_settings("deepseek")
    server.set_default("quality_judge", '{"ok": true}')
    lines: list[str] = []
    report = asyncio.run(_run(server, settings, 2, on_progress=lines.append))
    assert report.mode == "sequential"
    assert "不提供批处理" in report.note and "原价" in report.note
    assert report.note in lines
    assert len(server.requests_for("quality_judge")) == 2
    assert not [r for r in server.requests if r.path.startswith("/v1/messages/batches")]
    assert report.cost_usd == pytest.approx(report.full_price_usd)
    assert report.cost_usd > 0


def test_empty_request_list_makes_no_call(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    report = asyncio.run(_run(server, settings, 0))
    assert report.results == {}
    assert not server.requests
