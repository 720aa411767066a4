"""A model error says what to do in Chinese (the CLI, the log) and, through its phrase, in the window's language:
every message the LLM layer can raise has its English, with the provider's own words kept as they came."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from novel_desktop import i18n
from novel_desktop.llm import errors
from novel_desktop.llm.secrets import KeyringUnavailable

ERRORS = [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, errors.LLMError)]
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def english() -> Iterator[None]:
    i18n.set_language("en")
    yield None
    i18n.set_language("zh")


def test_the_chinese_text_is_as_before() -> None:
    error = errors.LLMOverloaded(provider_message="Overloaded")
    assert error.message == errors.LLMOverloaded.default_message
    assert str(error) == f"{errors.LLMOverloaded.default_message}（服务商返回：Overloaded）"
    named = errors.LLMConfigError("没有找到 {name} 的 API Key：请填写。", values={"name": "Anthropic"})
    assert named.message == str(named) == "没有找到 Anthropic 的 API Key：请填写。"


@pytest.mark.parametrize("kind", [*ERRORS, KeyringUnavailable], ids=lambda c: c.__name__)
def test_every_error_reads_in_english(english: object, kind: type[errors.LLMError]) -> None:
    text = i18n.tr_phrase(kind(provider_message="overloaded_error: 服务器忙").phrase)
    assert text.endswith("(the provider said: overloaded_error: 服务器忙)")
    assert not CJK.search(text.removesuffix("服务器忙)")), text


@pytest.mark.usefixtures("memory_keyring")
def test_a_missing_key_names_the_provider_in_english(english: object) -> None:
    from novel_desktop.llm.client import LLMClient
    from novel_desktop.llm.settings import LLMSettings

    with pytest.raises(errors.LLMConfigError) as caught:
        LLMClient(LLMSettings(), api_key="")._ensure_sdk()
    text = i18n.tr_phrase(caught.value.phrase)
    assert text.startswith("No API key found for ") and not CJK.search(text), text
