"""UI tests: every alert is recorded instead of shown, and the usual main window (the other shared fixtures
are in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.alerts import RecordingAlerts


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
def window(qtbot: object, project: object) -> object:
    """The main window over the ``project`` fixture's novel, shown on its workspace at 1366×768."""
    from novel_desktop.config import AppSettings
    from novel_desktop.ui.main_window import MainWindow

    win = MainWindow(project=project, settings=AppSettings())  # type: ignore[arg-type]
    qtbot.addWidget(win)  # type: ignore[attr-defined]
    win.resize(1366, 768)
    win._update_for_project()
    win.show_workspace()
    win.show()
    return win
