"""Usage accounting per call and per chapter, with cache tokens and costs from the price table."""

from __future__ import annotations

import asyncio

import pytest

from novel_desktop.llm import AgentRole, LLMClient, LLMSettings, ModelPrice, PromptBlock, Usage
from tests.fakes.anthropic_server import TEST_KEY, FakeAnthropicServer, Reply

OPUS = ModelPrice(input=5.0, output=25.0, cache_write=6.25, cache_read=0.5)


def test_usage_adds_field_by_field() -> None:
    total = Usage(10, 20, 30, 40) + Usage(1, 2, 3, 4)
    assert total == Usage(11, 22, 33, 44)
    assert total.total_input_tokens == 11 + 33 + 44


def test_cost_prices_each_kind_of_token() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=100_000, cache_creation_input_tokens=200_000,
                  cache_read_input_tokens=2_000_000)  # fmt: skip
    assert usage.cost(OPUS) == pytest.approx(5.0 + 2.5 + 1.25 + 1.0)
    assert usage.cost(None) == 0.0


def test_usage_from_api_tolerates_missing_cache_fields() -> None:
    assert Usage.from_api({"input_tokens": 5, "output_tokens": 7, "cache_read_input_tokens": None}) == Usage(
        5, 7
    )


def test_real_calls_report_cache_savings(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    server.set_default("chapter_writer", Reply("正文。" * 50))
    system = [PromptBlock("世界规则：" + "灵气复苏。" * 300, cache=True), PromptBlock("第 1 章")]

    async def main() -> list[tuple[Usage, float]]:
        out = []
        async with LLMClient(settings, api_key=TEST_KEY, base_url=server.base_url) as client:
            for _chapter in (1, 2):
                r = await client.stream(
                    AgentRole.chapter_writer, system=system, messages=[{"role": "user", "content": "写"}]
                )
                out.append((r.usage, r.usage.cost(settings.price_for(r.model))))
        return out

    (first, first_cost), (second, second_cost) = asyncio.run(main())
    assert first.cache_creation_input_tokens > 0
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second_cost < first_cost  # reading the cache is what makes chapter 500 affordable
    assert first_cost > 0


def test_usage_override_is_reported_verbatim(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    scripted = {"input_tokens": 12000, "output_tokens": 3500, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 8000}  # fmt: skip
    server.script("chapter_writer", Reply("正文", usage=scripted))

    async def main() -> Usage:
        async with LLMClient(settings, api_key=TEST_KEY, base_url=server.base_url) as client:
            r = await client.stream(
                AgentRole.chapter_writer, system=[], messages=[{"role": "user", "content": "写"}]
            )
            return r.usage

    assert asyncio.run(main()).to_dict() == scripted


def test_failed_attempts_count_towards_usage(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    # The provider bills the prompt of an attempt that died mid-stream; the response's usage says so.
    server.script(
        "chapter_writer",
        Reply.mid_stream_overloaded(),
        Reply("好", usage={"input_tokens": 100, "output_tokens": 1}),
    )

    async def main() -> Usage:
        async with LLMClient(settings, api_key=TEST_KEY, base_url=server.base_url) as client:
            r = await client.stream(
                AgentRole.chapter_writer, system=[], messages=[{"role": "user", "content": "写" * 30}]
            )
            return r.usage

    usage = asyncio.run(main())
    assert usage.input_tokens > 100
