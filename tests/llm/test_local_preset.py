"""Local models (issue 19 point 3): the Ollama and llama.cpp presets need no key, never read the keyring or
send the author's real key, cost nothing, let every agent have its own model, and 测试连接 tells "server not
running" from "model not pulled" — against the fake Messages API server in its local mode (no key checked,
only the pulled models known)."""

from __future__ import annotations

import asyncio
import socket

import pytest

from novel_desktop.controllers.settings_controller import check_connection
from novel_desktop.llm import AgentRole, LLMClient, LLMSettings, PromptBlock, secrets
from novel_desktop.llm.providers import PRESETS, get_preset
from novel_desktop.llm.usage import Usage
from tests.fakes.anthropic_server import FakeAnthropicServer, fast_settings

REAL_KEY = "sk-ant-real-key-of-the-author"


@pytest.fixture
def local_server(monkeypatch: pytest.MonkeyPatch) -> FakeAnthropicServer:
    """An Ollama-like server with two models pulled; the author's real key is in the environment and the
    keyring must not be read."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", REAL_KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)

    def no_keyring(*_a: object, **_k: object) -> None:
        raise AssertionError("the keyring was read for a local model")

    monkeypatch.setattr(secrets, "get_api_key", no_keyring)
    monkeypatch.setattr("novel_desktop.llm.client.get_api_key", no_keyring)
    monkeypatch.setattr("novel_desktop.controllers.settings_controller.get_api_key", no_keyring)
    with FakeAnthropicServer(require_key=False, models={"qwen3:14b", "qwen3:8b"}) as server:
        yield server  # type: ignore[misc]


@pytest.mark.parametrize("provider", ["ollama", "llamacpp"])
def test_the_local_presets_need_no_key_cost_nothing_and_claim_no_caching(provider: str) -> None:
    preset = PRESETS[provider]
    assert not preset.requires_key and preset.local
    assert not preset.supports_prompt_caching and not preset.supports_batches
    assert preset.base_url.startswith("http://localhost:")
    settings = LLMSettings.for_provider(provider)
    for role in AgentRole:
        price = settings.price_for(settings.model_for(role))
        assert price is not None
        assert Usage(input_tokens=10_000, output_tokens=5_000).cost(price) == 0
    assert get_preset("anthropic").requires_key


def test_each_agent_calls_its_own_local_model_without_a_key(local_server: FakeAnthropicServer) -> None:
    settings = fast_settings("ollama")
    settings.models = {
        **settings.models,
        AgentRole.chapter_writer: "qwen3:14b",
        AgentRole.summarizer: "qwen3:8b",
    }

    async def main() -> list[str]:
        async with LLMClient(settings, base_url=local_server.base_url) as client:
            texts = []
            for role in (AgentRole.chapter_writer, AgentRole.summarizer):
                response = await client.stream(
                    role, system=[PromptBlock("你是作家。")], messages=[{"role": "user", "content": "写"}]
                )
                texts.append(response.text)
            return texts

    assert all(asyncio.run(main()))
    assert [r.body["model"] for r in local_server.requests] == ["qwen3:14b", "qwen3:8b"]
    for request in local_server.requests:
        sent = request.headers.get("x-api-key", "") + request.headers.get("authorization", "")
        assert REAL_KEY not in sent


def _check(settings: LLMSettings, provider: str, url: str, model: str) -> tuple[str, str]:
    result = asyncio.run(
        check_connection(settings, provider=provider, base_url=url, api_key="", model=model, timeout=20)
    )
    assert REAL_KEY not in result.message
    return result.kind, result.message


def test_connection_to_a_running_server_with_the_model_succeeds(local_server: FakeAnthropicServer) -> None:
    kind, message = _check(fast_settings("ollama"), "ollama", local_server.base_url, "qwen3:8b")
    assert kind == "ok" and "连接成功" in message and "qwen3:8b" in message


def test_a_model_that_was_not_pulled_says_how_to_pull_it(local_server: FakeAnthropicServer) -> None:
    kind, message = _check(fast_settings("ollama"), "ollama", local_server.base_url, "qwen3:32b")
    assert kind == "model_not_pulled"
    assert message.startswith("模型未下载：ollama pull qwen3:32b")
    assert local_server.requests[-1].body["model"] == "qwen3:32b"


@pytest.mark.parametrize(("provider", "start"), [("ollama", "ollama serve"), ("llamacpp", "llama-server")])
def test_a_server_that_is_not_running_is_named_with_its_address(
    local_server: FakeAnthropicServer, provider: str, start: str
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    kind, message = _check(fast_settings(provider), provider, url, "qwen3:8b")
    assert kind == "not_running"
    assert message.startswith(f"本地模型服务未运行（{url}）")
    assert start in message


def test_an_old_server_without_the_messages_api_is_told_apart(local_server: FakeAnthropicServer) -> None:
    kind, message = _check(fast_settings("ollama"), "ollama", local_server.base_url + "/old", "qwen3:8b")
    assert kind == "not_anthropic"
    assert "0.14" in message


def test_local_presets_wait_longer_but_keep_what_the_author_set() -> None:
    from novel_desktop.llm.settings import LOCAL_READ_TIMEOUT_S, LOCAL_STAGE_TIMEOUT_S, local_timeouts

    settings = LLMSettings.for_provider("ollama")
    assert settings.read_timeout_s == LOCAL_READ_TIMEOUT_S
    assert all(settings.timeout_for(role) == LOCAL_STAGE_TIMEOUT_S for role in AgentRole)
    assert LLMSettings.for_provider("anthropic").read_timeout_s < LOCAL_READ_TIMEOUT_S
    mine = LLMSettings(read_timeout_s=42.0).model_dump()
    mine["stage_timeout_s"][AgentRole.reviser] = 77.0
    adjusted = LLMSettings.model_validate(local_timeouts(mine))
    assert adjusted.read_timeout_s == 42.0
    assert adjusted.timeout_for(AgentRole.reviser) == 77.0
    assert adjusted.timeout_for(AgentRole.chapter_writer) == LOCAL_STAGE_TIMEOUT_S
