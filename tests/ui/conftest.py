"""Qt fixtures: a qasync event loop (closed after each test) and an open novel behind a ProjectController."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QApplication

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.storage.folder import import_folder
from tests.conftest import FIXTURES


@pytest.fixture
def qloop(qapp: QApplication) -> Iterator[qasync.QEventLoop]:
    """A qasync loop set as current; tests drive coroutines with ``qloop.run_until_complete``."""
    loop = qasync.QEventLoop(qapp, already_running=False)
    asyncio.set_event_loop(loop)
    yield loop
    loop.close()
    asyncio.set_event_loop(None)


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
