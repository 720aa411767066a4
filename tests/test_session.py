"""The composition root: a novel opened through session.py has one client, its agents share it, the CLI gets
it from the same builder, and it talks to the fake Messages API server (never the network)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from novel_desktop import session as session_module
from novel_desktop.cli import main
from novel_desktop.domain.ledger import ModelCall, attributed
from novel_desktop.llm.client import LLMClient, PromptBlock
from novel_desktop.llm.roles import AgentRole
from novel_desktop.llm.settings import LLMSettings
from novel_desktop.session import NovelSession
from novel_desktop.storage.store import NovelStore
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply, fast_settings

KEY = "sk-ant-test-session"


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[LLMClient]:
    """Every client session.build_client makes, in order."""
    made: list[LLMClient] = []
    real = session_module.build_client

    def counting(*args: Any, **kwargs: Any) -> LLMClient:
        client = real(*args, **kwargs)
        made.append(client)
        return client

    monkeypatch.setattr(session_module, "build_client", counting)
    return made


def test_a_session_builds_one_client_that_its_agents_share(
    novel: Path, fake: FakeAnthropicServer, builds: list[LLMClient]
) -> None:
    session = NovelSession.open(novel)
    try:
        assert builds == []  # opening a novel builds no client
        client = session.client
        assert session.client is client and session.client is client
        agents = session.agents
        assert session.agents is agents
        assert agents.chapter.client is client
        assert agents.planning.client is client
        assert agents.judge.client is client
        assert session.interaction is session.interaction
        assert builds == [client]
    finally:
        session.close()


def test_the_client_talks_to_the_fake_server(
    novel: Path, fake: FakeAnthropicServer, builds: list[LLMClient]
) -> None:
    session = NovelSession.open(novel)
    try:
        text = session.store.chapter_text(2)
        assert text is not None
        result = session.run(lambda s: s.agents.judge.judge(2, text))
    finally:
        session.close()
    assert result.value is not None and result.value.overall == pytest.approx(4.0, abs=0.5)
    assert len(fake.requests_for("quality_judge")) == 1
    assert [c.base_url for c in builds] == [fake.base_url]
    assert fake.base_url.startswith("http://127.0.0.1:")


def test_a_call_cancelled_while_its_first_ledger_row_is_written_is_one_cancelled_row(
    novel: Path, fake: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The row a call's start writes is held in its worker thread until the call was cancelled: the end must
    # complete that row, not write a second one beside it (an early draft thrown away was counted twice).
    writing, cancelled = threading.Event(), threading.Event()
    record = NovelStore.record_model_call

    def held(self: NovelStore, call: ModelCall, row_id: int | None = None) -> int:
        if call.status == "interrupted" and not writing.is_set():
            writing.set()
            cancelled.wait(10)
        return record(self, call, row_id)

    monkeypatch.setattr(NovelStore, "record_model_call", held)
    fake.script("chapter_writer", Reply.slow("林风" * 200, delay=0.02))

    async def work(session: NovelSession) -> None:
        with attributed("write", chapter=3):
            call = asyncio.ensure_future(
                session.client.stream(
                    AgentRole.chapter_writer,
                    system=[PromptBlock("你是网文作者。")],
                    messages=[{"role": "user", "content": "写第三章"}],
                )
            )
        assert await asyncio.to_thread(writing.wait, 10)
        call.cancel()
        cancelled.set()
        with pytest.raises(asyncio.CancelledError):
            await call

    with NovelSession.open(novel, settings=fast_settings()) as session:
        session.run(work)
        calls = session.store.model_calls()
    assert [(c.chapter, c.purpose, c.status) for c in calls] == [(3, "write", "cancelled")]
    assert calls[0].input_tokens == fake.reported[-1]["usage"]["input_tokens"] > 0


def test_the_cli_and_a_second_call_share_the_builder(
    novel: Path, fake: FakeAnthropicServer, builds: list[LLMClient], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["judge", str(novel), "--chapter", "2"]) == 0
    assert "第2章 重新评审" in capsys.readouterr().out
    assert len(builds) == 1  # the command built its client through session.build_client, once
    assert len(fake.requests_for("quality_judge")) == 1

    # A second call (here: the window's way, a session over a store it opened itself) uses the same builder.
    store = NovelStore.open(novel)
    try:
        second = NovelSession(store, settings=fast_settings(), api_key=KEY, base_url=fake.base_url)
        text = store.chapter_text(1)
        assert text is not None
        second.run(lambda s: s.agents.judge.judge(1, text))
        assert second.store is store
    finally:
        second.close()  # a session does not close a store it did not open
        assert store.chapter_text(1) is not None
        store.close()
    assert len(builds) == 2 and builds[0] is not builds[1]
    assert len(fake.requests_for("quality_judge")) == 2


def test_a_closed_session_releases_the_novel(novel: Path, fake: FakeAnthropicServer) -> None:
    with NovelSession.open(novel) as session:
        assert session.store.writable
    # The writer lock went with the session: the novel opens for writing again.
    with NovelSession.open(novel) as again:
        assert again.store.writable
        again.close()
        with pytest.raises(RuntimeError):
            _ = again.client


def test_new_settings_give_a_new_client_on_next_use(novel: Path, fake: FakeAnthropicServer) -> None:
    other = LLMSettings(provider="deepseek", retry=fast_settings().retry)

    async def work(session: NovelSession) -> tuple[LLMClient, LLMClient, LLMClient]:
        before = session.client
        await session.reconfigure(other)
        return before, session.client, session.agents.chapter.client

    with NovelSession.open(novel) as session:
        before, after, agents_client = session.run(work)
        assert after is not before and after.settings is other
        assert agents_client is after
        assert session.settings is other


def test_opening_a_novel_does_not_import_the_sdk_or_qt(novel: Path) -> None:
    """`import anthropic` costs over a second: opening a novel, reading its settings and status skip it.
    The composition root is core, too: no Qt."""
    code = (
        "import sys\n"
        "from novel_desktop.session import NovelSession\n"
        f"s = NovelSession.open({str(novel)!r}, write=False)\n"
        "s.settings\n"
        "s.store.checkpoint()\n"
        "s.close()\n"
        "print('anthropic' in sys.modules, any(m.startswith(('PySide6', 'qasync')) for m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "False False"
