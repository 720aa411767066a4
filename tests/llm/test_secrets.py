"""API key from the environment or the OS keyring; base URL from the environment, settings or preset."""

from __future__ import annotations

import keyring
import pytest

from novel_desktop.llm import LLMSettings
from novel_desktop.llm.secrets import (
    KEYRING_SERVICE,
    KeyringUnavailable,
    delete_api_key,
    get_api_key,
    key_source,
    resolve_base_url,
    set_api_key,
)
from tests.fakes.memory_keyring import MemoryKeyring


def test_keyring_round_trip_per_provider(memory_keyring: MemoryKeyring) -> None:
    set_api_key("deepseek", "  sk-deep  ")
    assert memory_keyring.store[(KEYRING_SERVICE, "deepseek")] == "sk-deep"
    assert get_api_key("deepseek") == "sk-deep"
    assert get_api_key("kimi") is None
    assert key_source("deepseek") == "keyring"
    delete_api_key("deepseek")
    delete_api_key("deepseek")  # already gone: not an error
    assert get_api_key("deepseek") is None


def test_environment_key_wins(memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch) -> None:
    set_api_key("anthropic", "sk-keyring")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    assert get_api_key("anthropic") == "sk-env"
    assert key_source("anthropic") == "env"


def test_no_keyring_backend_is_a_clear_message_not_a_crash() -> None:
    from keyring.backends.fail import Keyring as FailKeyring

    previous = keyring.get_keyring()
    keyring.set_keyring(FailKeyring())
    try:
        assert get_api_key("anthropic") is None
        with pytest.raises(KeyringUnavailable, match="ANTHROPIC_API_KEY") as info:
            set_api_key("anthropic", "sk-should-not-echo")
        assert "sk-should-not-echo" not in str(info.value)
        with pytest.raises(KeyringUnavailable):
            delete_api_key("anthropic")
    finally:
        keyring.set_keyring(previous)


def test_empty_key_is_refused(memory_keyring: MemoryKeyring) -> None:
    with pytest.raises(Exception, match="不能为空"):
        set_api_key("anthropic", "   ")


def test_base_url_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_base_url(LLMSettings(provider="glm")) == "https://open.bigmodel.cn/api/anthropic"
    custom = LLMSettings(provider="custom", base_url="http://127.0.0.1:9999")
    assert resolve_base_url(custom) == "http://127.0.0.1:9999"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1234")
    assert resolve_base_url(custom) == "http://127.0.0.1:1234"
