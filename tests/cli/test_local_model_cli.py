"""A chapter written with a local model (issue 19 point 3): ``novel continue`` with the Ollama preset, no
key in the environment or the keyring, each agent on the model the author gave it — against the fake server
in its local mode (it checks no key)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.llm.roles import AgentRole
from novel_desktop.llm.settings import save_settings
from tests.e2e.replies import script_defaults
from tests.fakes.anthropic_server import FakeAnthropicServer, fast_settings
from tests.fakes.memory_keyring import MemoryKeyring


@pytest.fixture
def local_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropicServer]:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with FakeAnthropicServer(require_key=False) as server:
        script_defaults(server)
        yield server


def test_continue_writes_a_chapter_with_per_agent_local_models_and_no_key(
    seed_novel: Path,
    local_server: FakeAnthropicServer,
    memory_keyring: MemoryKeyring,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = fast_settings("ollama")
    settings.base_url = local_server.base_url
    settings.models = {
        **settings.models,
        AgentRole.chapter_writer: "qwen3:14b",
        AgentRole.quality_judge: "deepseek-r1:14b",
        AgentRole.summarizer: "qwen3:8b",
    }
    save_settings(settings)
    assert main(["continue", str(seed_novel), "-n", "1", "--non-interactive"]) == 0
    calls = [r for r in local_server.requests if r.path == "/v1/messages"]
    assert calls
    roles = {r.role for r in calls}
    assert {"chapter_writer", "quality_judge", "summarizer"} <= roles
    for request in calls:
        assert request.body["model"] == settings.model_for(AgentRole(request.role))
        # The SDK sends its key as x-api-key or as a bearer token: the placeholder, never a real key.
        sent = request.headers.get("x-api-key") or request.headers.get("authorization", "")
        assert sent in ("local", "Bearer local")
    assert memory_keyring.store == {}
    out = capsys.readouterr().out
    assert "第3章" in out and "$0.00" in out  # written, and a local model costs nothing
