"""Qt fixtures: a qasync event loop (closed after each test) and an open novel behind a ProjectController."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QApplication

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.llm.settings import LLMSettings, RetrySettings, save_settings
from novel_desktop.storage.folder import import_folder
from tests.conftest import FIXTURES
from tests.e2e.replies import script_defaults
from tests.fakes.alerts import RecordingAlerts
from tests.fakes.anthropic_server import FakeAnthropicServer


@pytest.fixture
def qloop(qapp: QApplication) -> Iterator[qasync.QEventLoop]:
    """A qasync loop set as current; tests drive coroutines with ``qloop.run_until_complete``."""
    loop = qasync.QEventLoop(qapp, already_running=False)
    asyncio.set_event_loop(loop)
    yield loop
    loop.close()
    asyncio.set_event_loop(None)


@pytest.fixture(autouse=True)
def alerts() -> Iterator[RecordingAlerts]:
    """Every alert (info / warning / error / confirm) of a UI test is recorded, never shown, and every
    confirm is answered 是 unless the test sets ``alerts.answer`` (or ``alerts.answers``)."""
    from novel_desktop.ui import alerts as alerts_module

    recorder = RecordingAlerts()
    previous = alerts_module.use(recorder)
    yield recorder
    alerts_module.use(previous)


@pytest.fixture
def seed_novel(tmp_path: Path) -> Path:
    """《青石问道》 imported from the seed project fixture: 2 chapters, a 5-chapter outline."""
    path = tmp_path / "青石问道.novel"
    import_folder(FIXTURES / "seed_project", path)
    return path


@pytest.fixture
def project(seed_novel: Path) -> Iterator[ProjectController]:
    controller = ProjectController()
    controller.open(seed_novel)
    yield controller
    controller.close()


@pytest.fixture
def gui_thread_gc() -> Iterator[None]:
    """Qt objects that earlier tests left in reference cycles are destroyed here, in the GUI thread: a garbage
    collection that happens to start in one of a run's worker threads would destroy them there, and Qt warns
    that their timers cannot be stopped from another thread. Modules whose tests run work in threads use it
    (``pytestmark = pytest.mark.usefixtures("gui_thread_gc")``)."""
    gc.collect()
    yield
    gc.collect()


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropicServer]:
    """The fake server through ANTHROPIC_* variables, as an author's shell would have them; every role
    answers well by default; fast retries."""
    with FakeAnthropicServer() as server:
        script_defaults(server)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-ui")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        save_settings(
            LLMSettings(retry=RetrySettings(max_attempts=3, base_backoff_s=0.001, max_backoff_s=0.01))
        )
        yield server
