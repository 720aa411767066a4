"""Usage accounting per call and per chapter, with cache tokens and costs from the price table."""

from __future__ import annotations

import asyncio

import pytest

from novel_desktop.llm import AgentRole, LLMClient, LLMSettings, ModelPrice, PromptBlock, Usage, UsageLedger
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


def test_ledger_sums_per_chapter_and_role() -> None:
    ledger = UsageLedger({"opus": OPUS})
    ledger.record(AgentRole.chapter_writer, "opus", Usage(1000, 2000), chapter=3)
    ledger.record(AgentRole.chapter_writer, "opus", Usage(100, 200), chapter=3)
    ledger.record(AgentRole.summarizer, "opus", Usage(500, 100, 0, 4000), chapter=3)
    ledger.record(AgentRole.world_builder, "unknown-model", Usage(9, 9))

    ch3 = ledger.chapter(3)
    assert ch3.calls == 3
    assert ch3.by_role[AgentRole.chapter_writer] == Usage(1100, 2200)
    assert ch3.usage == Usage(1600, 2300, 0, 4000)
    assert ch3.cost_usd == pytest.approx(Usage(1600, 2300, 0, 4000).cost(OPUS))
    assert ledger.chapter(4).calls == 0
    assert ledger.total == Usage(1609, 2309, 0, 4000)
    assert ledger.total_cost_usd == pytest.approx(ch3.cost_usd)
    assert ledger.unpriced_models == {"unknown-model"}


def test_real_calls_feed_the_ledger_with_cache_savings(
    server: FakeAnthropicServer, settings: LLMSettings
) -> None:
    server.set_default("chapter_writer", Reply("正文。" * 50))
    system = [PromptBlock("世界规则：" + "灵气复苏。" * 300, cache=True), PromptBlock("第 1 章")]
    ledger = UsageLedger(settings.prices)

    async def main() -> None:
        async with LLMClient(settings, api_key=TEST_KEY, base_url=server.base_url) as client:
            for chapter in (1, 2):
                r = await client.stream(
                    AgentRole.chapter_writer, system=system, messages=[{"role": "user", "content": "写"}]
                )
                ledger.record(r.role, r.model, r.usage, chapter=chapter)

    asyncio.run(main())

    first, second = ledger.chapter(1), ledger.chapter(2)
    assert first.usage.cache_creation_input_tokens > 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert second.cost_usd < first.cost_usd  # reading the cache is what makes chapter 500 affordable
    assert first.cost_usd > 0


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
