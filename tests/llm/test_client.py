"""LLMClient against the fake Messages API server, through the real anthropic SDK over HTTP."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from novel_desktop.llm import (
    AgentRole,
    LLMAuthError,
    LLMBadRequest,
    LLMClient,
    LLMConfigError,
    LLMConnectionError,
    LLMEmptyResponse,
    LLMOverloaded,
    LLMQuotaError,
    LLMResponse,
    LLMServerError,
    LLMSettings,
    LLMTimeout,
    LLMTruncated,
    PromptBlock,
    build_system,
)
from novel_desktop.llm.settings import save_settings
from tests.fakes.anthropic_server import TEST_KEY, FakeAnthropicServer, Reply

T = TypeVar("T")

SYSTEM = [
    # Above Sonnet's 1,024-token minimum cacheable prefix, as a real writer's instructions are.
    PromptBlock("你是一名网文作家。" * 130, cache=True),
    PromptBlock("风格档案：短句，口语化。" * 20, cache=True),
    PromptBlock("本章写林风进城。"),
]
ASK = [{"role": "user", "content": "写第 3 章。"}]


def run(
    factory: Callable[[LLMClient], Awaitable[T]], settings: LLMSettings, server: FakeAnthropicServer
) -> T:
    """Run one coroutine with a fresh client on a fresh loop (pytest-asyncio is not used)."""

    async def main() -> T:
        async with LLMClient(settings, api_key=TEST_KEY, base_url=server.base_url) as client:
            return await factory(client)

    return asyncio.run(main())


def call(
    role: AgentRole = AgentRole.chapter_writer, **kw: Any
) -> Callable[[LLMClient], Awaitable[LLMResponse]]:
    return lambda client: client.stream(role, system=kw.pop("system", SYSTEM), messages=ASK, **kw)


# --- streaming and the request the provider sees ---


def test_text_streams_in_chunks_and_adds_up(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    chapter = "林风站在城门口，抬头看了一眼。" * 10
    server.script("chapter_writer", Reply(chapter, chunk_size=5))
    pieces: list[str] = []

    response = run(call(on_text=pieces.append), settings, server)

    assert len(pieces) > 10
    assert "".join(pieces) == chapter == response.text
    assert response.stop_reason == "end_turn"
    assert response.attempts == 1
    assert response.role is AgentRole.chapter_writer
    assert not response.truncated


def test_request_carries_role_model_limit_and_bearer_key(
    server: FakeAnthropicServer, settings: LLMSettings
) -> None:
    settings.models[AgentRole.quality_judge] = "judge-model-x"
    settings.max_tokens[AgentRole.quality_judge] = 1234

    run(call(AgentRole.quality_judge), settings, server)
    run(call(AgentRole.world_builder), settings, server)

    judge, world = server.requests
    assert judge.role == "quality_judge"
    assert judge.body["model"] == "judge-model-x"
    assert judge.body["max_tokens"] == 1234
    assert judge.body["stream"] is True
    assert judge.headers["authorization"] == f"Bearer {TEST_KEY}"
    assert "anthropic-version" in judge.headers
    # The seed's split: world building gets the stronger model.
    assert world.body["model"] == "claude-opus-4-6"


def test_default_split_sends_cheap_model_for_bulk_roles(
    server: FakeAnthropicServer, settings: LLMSettings
) -> None:
    for role in (AgentRole.chapter_writer, AgentRole.summarizer, AgentRole.quality_judge):
        run(call(role), settings, server)
    for role in (AgentRole.style_refiner, AgentRole.reviser, AgentRole.plot_architect):
        run(call(role), settings, server)
    models = [r.body["model"] for r in server.requests]
    assert models == ["claude-sonnet-4-6"] + ["claude-haiku-4-5"] * 3 + ["claude-opus-4-6"] * 2


def test_cache_breakpoints_on_stable_blocks_only(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    run(call(), settings, server)
    blocks = server.requests[0].system_blocks
    assert [b.get("cache_control") for b in blocks] == [{"type": "ephemeral"}, {"type": "ephemeral"}, None]
    assert blocks[0]["text"].startswith("你是一名网文作家")


def test_at_most_four_breakpoints_on_the_last_stable_blocks() -> None:
    blocks = [PromptBlock(f"稳定部分{i}", cache=True) for i in range(6)] + [
        PromptBlock("本章"),
        PromptBlock(""),
    ]
    system = build_system(blocks)
    marked = [i for i, b in enumerate(system) if "cache_control" in b]
    assert marked == [2, 3, 4, 5]
    assert len(system) == 7  # the empty block is dropped; the API rejects empty text


def test_cached_block_after_volatile_one_is_refused() -> None:
    with pytest.raises(ValueError, match="precede"):
        build_system([PromptBlock("本章"), PromptBlock("稳定", cache=True)])


def test_repeated_prefix_is_read_from_cache(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    first = run(call(), settings, server)
    second = run(call(), settings, server)

    assert first.usage.cache_creation_input_tokens > 0
    assert first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert second.usage.cache_creation_input_tokens == 0
    assert second.usage.input_tokens == first.usage.input_tokens  # the volatile tail is never cached


# --- retries ---


@pytest.mark.parametrize("status", [429, 500, 503, 529])
def test_transient_http_error_is_retried(
    server: FakeAnthropicServer, settings: LLMSettings, status: int
) -> None:
    server.script("chapter_writer", Reply.http_error(status), Reply("第二次成功。"))

    response = run(call(), settings, server)

    assert response.text == "第二次成功。"
    assert response.attempts == 2
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("status", "error"),
    [(429, LLMQuotaError), (529, LLMOverloaded), (500, LLMServerError)],
)
def test_persistent_error_gives_typed_error_after_max_attempts(
    server: FakeAnthropicServer, settings: LLMSettings, status: int, error: type[Exception]
) -> None:
    server.set_default("chapter_writer", Reply.http_error(status))

    with pytest.raises(error) as info:
        run(call(), settings, server)

    assert len(server.requests) == settings.retry.max_attempts
    assert info.value.attempts == settings.retry.max_attempts  # type: ignore[attr-defined]
    assert "重试" in str(info.value) or "稍后" in str(info.value)


def test_mid_stream_error_restarts_and_discards_partial_text(
    server: FakeAnthropicServer, settings: LLMSettings
) -> None:
    server.script(
        "chapter_writer", Reply.mid_stream_overloaded("半截文字半截文字半截文字"), Reply("完整的一章。")
    )
    live: list[str] = []

    def restart() -> None:
        live.clear()  # what a GUI does: clear the live view

    response = run(call(on_text=live.append, on_restart=restart), settings, server)

    assert response.text == "完整的一章。"
    assert "".join(live) == "完整的一章。"
    assert response.attempts == 2


def test_on_restart_fires_once_per_restart(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    server.script("chapter_writer", Reply.mid_stream_overloaded(), Reply.disconnect(), Reply("好。"))
    restarts: list[int] = []

    response = run(call(on_text=lambda _t: None, on_restart=lambda: restarts.append(1)), settings, server)

    assert response.text == "好。"
    assert restarts == [1, 1]


def test_dropped_connection_mid_stream_is_retried(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    server.script("chapter_writer", Reply.disconnect("断开前的文字断开前的文字"), Reply("重连后的文字。"))
    response = run(call(), settings, server)
    assert response.text == "重连后的文字。"
    assert response.attempts == 2


def test_a_stream_that_ends_without_message_stop_is_retried(
    server: FakeAnthropicServer, settings: LLMSettings
) -> None:
    # Issue 16: a stream a proxy ended early (clean body, no message_stop) is not taken as a whole reply.
    server.script("chapter_writer", Reply.cut_short("半截的文字，作废。"), Reply("完整的一章。"))
    restarts: list[int] = []
    response = run(call(on_text=lambda _t: None, on_restart=lambda: restarts.append(1)), settings, server)
    assert response.text == "完整的一章。"
    assert response.stop_reason == "end_turn"
    assert response.attempts == 2
    assert restarts == [1]


def test_dropped_connection_every_time_is_a_connection_error(
    server: FakeAnthropicServer, settings: LLMSettings
) -> None:
    server.set_default("chapter_writer", Reply.disconnect())
    with pytest.raises(LLMConnectionError, match="网络"):
        run(call(), settings, server)
    assert len(server.requests) == settings.retry.max_attempts


def test_unreachable_server_is_a_connection_error(settings: LLMSettings) -> None:
    with FakeAnthropicServer() as gone:
        url = gone.base_url
    settings.retry.max_attempts = 2

    async def main() -> None:
        async with LLMClient(settings, api_key=TEST_KEY, base_url=url) as client:
            await client.stream(AgentRole.summarizer, system=SYSTEM, messages=ASK)

    with pytest.raises(LLMConnectionError):
        asyncio.run(main())


def test_mid_stream_overload_every_time_is_overloaded(
    server: FakeAnthropicServer, settings: LLMSettings
) -> None:
    server.set_default("chapter_writer", Reply.mid_stream_overloaded())
    with pytest.raises(LLMOverloaded):
        run(call(), settings, server)
    assert len(server.requests) == settings.retry.max_attempts


def test_empty_reply_is_retried_then_reported(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    server.script("summarizer", Reply.empty_reply(), Reply("摘要。"))
    assert run(call(AgentRole.summarizer), settings, server).text == "摘要。"

    server.set_default("summarizer", Reply.empty_reply())
    with pytest.raises(LLMEmptyResponse, match="空内容"):
        run(call(AgentRole.summarizer), settings, server)


# --- errors a retry cannot fix ---


def test_bad_key_is_not_retried_and_says_check_the_key(
    server: FakeAnthropicServer, settings: LLMSettings
) -> None:
    server.api_key = "sk-the-right-one"
    with pytest.raises(LLMAuthError, match="API Key"):
        run(call(), settings, server)
    assert len(server.requests) == 1


def test_bad_request_shows_provider_message(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    server.script("chapter_writer", Reply.http_error(400, message="max_tokens: must be <= 64000"))
    with pytest.raises(LLMBadRequest) as info:
        run(call(), settings, server)
    assert "max_tokens: must be <= 64000" in str(info.value)
    assert len(server.requests) == 1


def test_unknown_model_404_names_the_model_setting(
    server: FakeAnthropicServer, settings: LLMSettings
) -> None:
    server.script("chapter_writer", Reply.http_error(404, message="model: no-such-model"))
    with pytest.raises(LLMBadRequest, match="模型名称"):
        run(call(), settings, server)


@pytest.mark.parametrize(
    "reply",
    [
        Reply.http_error(402, message="Insufficient Balance"),
        Reply.http_error(429, message="You exceeded your current quota"),
        Reply.http_error(400, message="Your credit balance is too low to access the Anthropic API."),
    ],
)
def test_exhausted_balance_is_a_quota_error_without_retries(
    server: FakeAnthropicServer, settings: LLMSettings, reply: Reply
) -> None:
    server.script("chapter_writer", reply)
    with pytest.raises(LLMQuotaError, match="充值"):
        run(call(), settings, server)
    assert len(server.requests) == 1


def test_truncated_reply_is_flagged_not_raised(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    server.script("chapter_writer", Reply.truncated("写到一半"))
    response = run(call(), settings, server)
    assert response.truncated
    assert response.text == "写到一半"
    with pytest.raises(LLMTruncated, match="max_tokens"):
        response.raise_if_truncated()


# --- cancellation and timeouts ---


def test_cancel_closes_the_stream_at_once(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    full = "慢" * 400
    server.script("chapter_writer", Reply.slow(full, delay=0.02, chunk_size=2))
    received: list[str] = []

    async def main() -> None:
        cancel = asyncio.Event()

        def on_text(piece: str) -> None:
            received.append(piece)
            if len(received) == 3:
                cancel.set()

        async with LLMClient(settings, api_key=TEST_KEY, base_url=server.base_url) as client:
            await client.stream(
                AgentRole.chapter_writer, system=SYSTEM, messages=ASK, on_text=on_text, cancel=cancel
            )

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())

    assert server.client_disconnected.wait(5), "the server never saw the connection close"
    assert len("".join(received)) < len(full) // 4
    assert len(server.requests) == 1  # a cancelled call is not retried


def test_cancelling_the_task_closes_the_stream(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    server.script("chapter_writer", Reply.slow("慢" * 400, delay=0.02))

    async def main() -> None:
        started = asyncio.Event()
        async with LLMClient(settings, api_key=TEST_KEY, base_url=server.base_url) as client:
            task = asyncio.create_task(
                client.stream(
                    AgentRole.chapter_writer, system=SYSTEM, messages=ASK, on_text=lambda _t: started.set()
                )
            )
            await started.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(main())
    assert server.client_disconnected.wait(5)


def test_cancel_already_set_sends_nothing(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    async def main() -> None:
        cancel = asyncio.Event()
        cancel.set()
        async with LLMClient(settings, api_key=TEST_KEY, base_url=server.base_url) as client:
            await client.stream(AgentRole.chapter_writer, system=SYSTEM, messages=ASK, cancel=cancel)

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())
    assert server.requests == []


def test_stage_timeout_raises_typed_error(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    server.set_default("quality_judge", Reply.slow("慢" * 400, delay=0.05))
    settings.stage_timeout_s[AgentRole.quality_judge] = 0.3

    with pytest.raises(LLMTimeout, match="超时"):
        run(call(AgentRole.quality_judge), settings, server)
    assert server.client_disconnected.wait(5)


def test_a_result_before_cancel_is_returned(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    async def main() -> LLMResponse:
        async with LLMClient(settings, api_key=TEST_KEY, base_url=server.base_url) as client:
            return await client.stream(
                AgentRole.summarizer, system=SYSTEM, messages=ASK, cancel=asyncio.Event()
            )

    assert asyncio.run(main()).text == "好的。"


# --- key, base URL and secrecy ---


def test_missing_key_says_where_to_put_it(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    async def main() -> None:
        async with LLMClient(settings, base_url=server.base_url) as client:
            await client.stream(AgentRole.summarizer, system=SYSTEM, messages=ASK)

    with pytest.raises(LLMConfigError, match="ANTHROPIC_API_KEY"):
        asyncio.run(main())
    assert server.requests == []


def test_environment_key_and_base_url_are_honoured(
    server: FakeAnthropicServer, settings: LLMSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    server.api_key = "sk-from-env"
    settings.provider = "deepseek"  # its preset URL is not reachable here; the env wins

    async def main() -> LLMResponse:
        async with LLMClient(settings) as client:
            return await client.stream(AgentRole.summarizer, system=SYSTEM, messages=ASK)

    assert asyncio.run(main()).text == "好的。"
    assert server.requests[0].headers["authorization"] == "Bearer sk-from-env"


def test_key_never_leaks_into_errors_logs_or_settings(
    server: FakeAnthropicServer,
    settings: LLMSettings,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Any,
) -> None:
    secret = "sk-ant-SECRET-do-not-leak-42"
    server.script(
        "chapter_writer",
        Reply.http_error(529),
        Reply.mid_stream_overloaded(),
        Reply("好。"),
        # A provider that echoes the key in its error text.
        Reply.http_error(401, message=f"invalid x-api-key: {secret}"),
    )
    caplog.set_level(logging.DEBUG)

    async def main() -> None:
        async with LLMClient(settings, api_key=secret, base_url=server.base_url) as client:
            assert secret not in repr(client)
            await client.stream(AgentRole.chapter_writer, system=SYSTEM, messages=ASK)
            await client.stream(AgentRole.chapter_writer, system=SYSTEM, messages=ASK)

    with pytest.raises(LLMAuthError) as info:
        asyncio.run(main())

    assert secret not in str(info.value)
    assert secret not in repr(info.value)
    assert "***" in str(info.value)
    assert caplog.records, "the client logs its calls"
    assert secret not in caplog.text
    path = tmp_path / "llm.json"
    save_settings(settings, path)
    assert secret not in path.read_text(encoding="utf-8")


def test_importing_the_llm_package_does_not_import_the_sdk() -> None:
    code = "import sys, novel_desktop.llm; print('anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_stalled_stream_counts_as_dropped_and_is_retried(
    server: FakeAnthropicServer, settings: LLMSettings
) -> None:
    # No byte for longer than read_timeout_s: the connection is given up and the call made again.
    settings.read_timeout_s = 0.3
    server.script("summarizer", Reply.slow("卡住了卡住了", delay=3.0), Reply("恢复了。"))
    restarts: list[int] = []

    response = run(call(AgentRole.summarizer, on_restart=lambda: restarts.append(1)), settings, server)

    assert response.text == "恢复了。"
    assert response.attempts == 2
    assert restarts == []  # nothing had reached the view, so there is nothing to clear


def test_token_rate_stream_delivers_everything(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    text = "快" * 300
    server.script("chapter_writer", Reply(text, chunk_size=6, token_rate=5000))
    pieces: list[str] = []
    assert run(call(on_text=pieces.append), settings, server).text == text
    assert len(pieces) == 50
