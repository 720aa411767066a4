"""End-to-end fixtures: a novel imported from the seed project, and the fake Messages API server wired in
through the standard ANTHROPIC_* environment variables, as an author's shell would have them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from novel_desktop.llm.settings import LLMSettings, RetrySettings, save_settings
from novel_desktop.storage.folder import import_folder
from tests.conftest import FIXTURES
from tests.e2e.replies import script_defaults
from tests.fakes.anthropic_server import FakeAnthropicServer


@pytest.fixture
def novel(tmp_path: Path) -> Path:
    """《青石问道》: chapters 1-2 written, a 5-chapter outline for volume 1."""
    path = tmp_path / "青石问道.novel"
    import_folder(FIXTURES / "seed_project", path)
    return path


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        script_defaults(server)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-e2e")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        save_settings(
            LLMSettings(retry=RetrySettings(max_attempts=3, base_backoff_s=0.001, max_backoff_s=0.01))
        )
        yield server
