"""Fixtures for the LLM layer: a fake Messages API server on 127.0.0.1 and settings with tiny backoff."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from novel_desktop.llm.settings import LLMSettings, RetrySettings
from tests.fakes.anthropic_server import FakeAnthropicServer

TEST_KEY = "sk-ant-test-0123456789abcdef"


@pytest.fixture
def server() -> Iterator[FakeAnthropicServer]:
    """A started fake server; scripted replies per role via ``server.script``."""
    with FakeAnthropicServer() as s:
        yield s


@pytest.fixture
def settings() -> LLMSettings:
    """Default settings with millisecond backoff, so retry tests run fast."""
    return LLMSettings(retry=RetrySettings(max_attempts=3, base_backoff_s=0.001, max_backoff_s=0.01))
