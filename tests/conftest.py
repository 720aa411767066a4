"""Fixtures shared by every test.

- Settings and data folders go to tmp_path; no test sees the real user's API key. Qt runs offscreen.
- Any test that leaves a modal dialog, a QMessageBox or a QFileDialog open fails, naming it (it is closed
  first). A test that blocks in a dialog's exec() is killed by pytest-timeout (thread method) with its stack.
- One fake Messages API server for every folder: ``server`` (bare: nothing scripted, nothing in the
  environment), ``fake_server`` (every role answers well), ``fake`` (``fake_server`` reached through the
  ANTHROPIC_* variables, as an author's shell would have them, with fast retries saved in the settings) and
  ``settings`` (LLMSettings with millisecond backoff, not saved). A module that needs more scripted, or a
  required key, overrides the fixture by name and asks for the shared one (``def server(server): …``); no
  module starts its own server in a fixture.
- ``memory_keyring``: an in-memory OS keyring (tests/fakes/memory_keyring.py) for the test.
- ``spec`` / ``answer``: the NOVEL_ASK question spec with all three kinds and a valid answer to it.
- Qt fixtures: ``qloop`` (a qasync loop, closed after the test), ``seed_novel`` / ``novel`` (《青石问道》
  imported from tests/fixtures/seed_project; ``seed_store`` has it open), ``project`` (that novel open in a ProjectController) and
  ``gui_thread_gc``. Qt, qasync and the package are imported inside the fixtures, so tests that do not ask for
  them (tests/domain, tests/storage …) never import Qt.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    import qasync
    from PySide6.QtWidgets import QApplication, QWidget

    from novel_desktop.controllers.project_controller import ProjectController
    from novel_desktop.llm.settings import LLMSettings
    from novel_desktop.storage.store import NovelStore
    from tests.fakes.anthropic_server import FakeAnthropicServer
    from tests.fakes.memory_keyring import MemoryKeyring

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: Public-domain excerpts of three novels (see tests/fixtures/README.md).
CORPUS = FIXTURES / "corpus"


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the real user's settings, data or API key."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("NOVEL_DESKTOP_CONFIG_DIR", str(home / "config"))
    monkeypatch.setenv("NOVEL_DESKTOP_DATA_DIR", str(home / "data"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


# --- no dialog left open ---------------------------------------------------------------------------------


def open_modal_dialogs() -> list[QWidget]:
    """The visible windows that wait for an answer: modal dialogs, message boxes, file dialogs. Empty when Qt
    was never imported (the check costs nothing then)."""
    if "PySide6.QtWidgets" not in sys.modules:
        return []
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication, QDialog, QFileDialog, QMessageBox

    if QApplication.instance() is None:
        return []
    return [
        w
        for w in QApplication.topLevelWidgets()
        if w.isVisible()
        and (
            isinstance(w, QMessageBox | QFileDialog)
            or (isinstance(w, QDialog) and w.isModal())
            or w.windowModality() != Qt.WindowModality.NonModal
        )
    ]


def describe_dialog(widget: QWidget) -> str:
    """A dialog as a failure message names it: its class, title and, for a message box, its text."""
    from PySide6.QtWidgets import QMessageBox

    described = f"{type(widget).__name__} {widget.windowTitle()!r}"
    if isinstance(widget, QMessageBox):
        described += f": {widget.text()!r}"
    return described


def close_modal_dialogs() -> list[str]:
    """Close every dialog ``open_modal_dialogs`` finds (rejecting it, as Esc would) and name them."""
    left = open_modal_dialogs()
    if not left:
        return []
    from PySide6.QtWidgets import QApplication, QDialog

    names = [describe_dialog(w) for w in left]
    for widget in left:
        if isinstance(widget, QDialog):
            widget.reject()
        widget.close()
    QApplication.processEvents()
    return names


@pytest.fixture(autouse=True)
def _no_modal_dialog_left_open() -> Iterator[None]:
    """A dialog left open would wait for a click no one makes: close it and fail the test that left it."""
    yield
    left = close_modal_dialogs()
    if left:
        pytest.fail("the test left a dialog open (closed now): " + "; ".join(left), pytrace=False)


_NESTED_LOOP_CALLS = (
    ("QDialog", "exec"),
    ("QMessageBox", "exec"),
    ("QMessageBox", "critical"),
    ("QMessageBox", "warning"),
    ("QMessageBox", "information"),
    ("QMessageBox", "question"),
    ("QFileDialog", "exec"),
    ("QFileDialog", "getOpenFileName"),
    ("QFileDialog", "getOpenFileNames"),
    ("QFileDialog", "getSaveFileName"),
    ("QFileDialog", "getExistingDirectory"),
    ("QInputDialog", "getText"),
    ("QInputDialog", "getInt"),
    ("QInputDialog", "getItem"),
)


def _running_task() -> object | None:
    import asyncio

    try:
        return asyncio.current_task()
    except RuntimeError:  # no running loop
        return None


@pytest.fixture(autouse=True)
def _no_nested_loop_in_a_task(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A modal exec() (or a QMessageBox / QFileDialog / QInputDialog static, which runs one) inside an asyncio
    task on the qasync loop hangs the app ("Cannot enter into task … while another task … is being executed").
    Every such call made while a task runs is recorded, refused, and fails the test that made it."""
    if "PySide6.QtWidgets" not in sys.modules:
        yield
        return
    from PySide6 import QtWidgets

    offences: list[str] = []

    def guarded(owner: str, name: str, original: object) -> object:
        def call(*args: object, **kwargs: object) -> object:
            task = _running_task()
            if task is not None:
                offences.append(f"{owner}.{name}() inside the asyncio task {task!r}")
                return 0
            return original(*args, **kwargs)  # type: ignore[operator]

        return staticmethod(call) if name != "exec" else call

    for owner, name in _NESTED_LOOP_CALLS:
        cls = getattr(QtWidgets, owner)
        if name in vars(cls) or name == "exec":
            monkeypatch.setattr(cls, name, guarded(owner, name, getattr(cls, name)))
    yield
    if offences:
        pytest.fail("a nested event loop inside a coroutine: " + "; ".join(offences), pytrace=False)


# --- novels --------------------------------------------------------------------------------------------------


@pytest.fixture
def novel_path(tmp_path: Path) -> Path:
    """Where a test's fresh novel file goes."""
    return tmp_path / "测试小说.novel"


@pytest.fixture
def store(novel_path: Path) -> Iterator[object]:
    """A new novel, open for writing."""
    from novel_desktop.storage.store import NovelStore

    s = NovelStore.create(novel_path, title="测试小说", genre="玄幻", platform="qidian")
    yield s
    s.close()


@pytest.fixture
def seed_novel(tmp_path: Path) -> Path:
    """《青石问道》 imported from the seed project fixture: chapters 1-2 written, a 5-chapter outline for volume 1."""
    from novel_desktop.storage.folder import import_folder

    path = tmp_path / "青石问道.novel"
    import_folder(FIXTURES / "seed_project", path)
    return path


@pytest.fixture
def seed_store(seed_novel: Path) -> Iterator[NovelStore]:
    """《青石问道》 open for writing (closed after the test)."""
    from novel_desktop.storage.store import NovelStore

    s = NovelStore.open(seed_novel)
    yield s
    s.close()


@pytest.fixture
def novel(seed_novel: Path) -> Path:
    """The same 《青石问道》 under the name the end-to-end tests use."""
    return seed_novel


# --- NOVEL_ASK examples -------------------------------------------------------------------------------------


@pytest.fixture
def spec() -> dict[str, Any]:
    """A NOVEL_ASK question spec with all three kinds: platform (single, required), genres (multi, optional,
    allow_other), tone (multi, required), protagonist_name (free_text, required), notes (free_text, optional)."""
    from tests.domain.novel_ask_examples import load_fixture

    data: dict[str, Any] = load_fixture("question_spec_all_kinds.json")
    return data


@pytest.fixture
def answer() -> dict[str, Any]:
    """A valid answer to ``spec``."""
    from tests.domain.novel_ask_examples import load_fixture

    data: dict[str, Any] = load_fixture("answer_spec_all_kinds.json")
    return data


# --- the fake Messages API -----------------------------------------------------------------------------------


@pytest.fixture
def settings() -> LLMSettings:
    """Default settings with millisecond backoff, so retry tests run fast (not saved anywhere)."""
    from tests.fakes.anthropic_server import fast_settings

    return fast_settings(max_attempts=3)


@pytest.fixture
def server() -> Iterator[FakeAnthropicServer]:
    """A started fake server with nothing scripted and nothing in the environment: tests pass its base_url
    themselves and script replies per role via ``server.script``."""
    from tests.fakes.anthropic_server import FakeAnthropicServer

    with FakeAnthropicServer() as s:
        yield s


@pytest.fixture
def fake_server() -> Iterator[FakeAnthropicServer]:
    """A started fake server on which every role answers well by default; not in the environment."""
    from tests.e2e.replies import script_defaults
    from tests.fakes.anthropic_server import FakeAnthropicServer

    with FakeAnthropicServer() as s:
        script_defaults(s)
        yield s


@pytest.fixture
def fake(
    fake_server: FakeAnthropicServer, settings: LLMSettings, monkeypatch: pytest.MonkeyPatch
) -> FakeAnthropicServer:
    """``fake_server`` through the ANTHROPIC_* variables, as an author's shell would have them, with fast
    retries saved in the user's settings."""
    from novel_desktop.llm.settings import save_settings
    from tests.fakes.anthropic_server import TEST_KEY

    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_server.base_url)
    save_settings(settings)
    return fake_server


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    """An in-memory OS keyring for the test (the previous backend comes back after it): tests read what the app
    saved in ``memory_keyring.store`` and the real keyring is never touched."""
    import keyring

    from tests.fakes.memory_keyring import MemoryKeyring

    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


# --- Qt ------------------------------------------------------------------------------------------------------


@pytest.fixture
def qloop(qapp: QApplication) -> Iterator[qasync.QEventLoop]:
    """A qasync loop set as current; tests drive coroutines with ``qloop.run_until_complete`` (see
    tests/qt_loop.py: between two such calls no task of the app is ever stepped without a running loop)."""
    import asyncio

    from tests.qt_loop import TestEventLoop

    loop = TestEventLoop(qapp, already_running=False)
    asyncio.set_event_loop(loop)
    yield loop
    loop.close()
    asyncio.set_event_loop(None)


@pytest.fixture
def project(seed_novel: Path) -> Iterator[ProjectController]:
    """《青石问道》 open in a ProjectController."""
    from novel_desktop.controllers.project_controller import ProjectController

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
