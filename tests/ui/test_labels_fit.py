"""English labels fit (issue 19 point 5): in every view and dialog the window opens, at the UI font's size
and at 1.5× it (a 150% scale), each label, button, check box, radio button, group box title, tab, column
header and chart axis title has the width its whole text needs (QFontMetrics plus the style's margins)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from novel_desktop import i18n
from novel_desktop.config import AppSettings
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.ui.main_window import MainWindow
from novel_desktop.ui.quality_panel import QualityPanel
from tests.ui.labels import clipped
from tests.ui.shots import save_shot

SIZE = (1366, 768)


@pytest.fixture(params=[1.0, 1.5], ids=["100%", "150%"])
def scale(request: pytest.FixtureRequest, qapp: QApplication) -> Iterator[float]:
    """English, with the application font at ``scale`` times its size for the widgets made meanwhile."""
    font = qapp.font()
    bigger = qapp.font()
    bigger.setPointSizeF(font.pointSizeF() * request.param)
    qapp.setFont(bigger)
    i18n.set_language("en")
    yield request.param
    i18n.set_language("zh")
    qapp.setFont(font)


def _settle(qapp: QApplication, root: QWidget | None = None) -> None:
    for _ in range(4):
        qapp.processEvents()
    # A quality report arrives a part a turn: the window is checked once the whole report is in.
    deadline = time.monotonic() + 5
    while root is not None and time.monotonic() < deadline:
        if not any(panel.report_pending() for panel in root.findChildren(QualityPanel)):
            break
        QTest.qWait(5)
    for _ in range(2):
        qapp.processEvents()


def _check(qapp: QApplication, root: QWidget, name: str, scale: float) -> list[str]:
    _settle(qapp, root)
    save_shot(root, f"labels_{name}_{int(scale * 100)}")
    problems = clipped(root)
    for panel in root.findChildren(QualityPanel):
        # The report is a scroll down, never a scroll sideways: it wraps to its dock's width.
        content, viewport = panel.report_scroll.widget(), panel.report_scroll.viewport()
        if panel.isVisible() and content is not None and content.width() > viewport.width():
            problems.append(f"quality report {content.width()} px wide in a {viewport.width()} px dock")
    return [f"{name}: {problem}" for problem in problems]


def _window(qtbot: QtBot, project: ProjectController | None) -> MainWindow:
    win = (
        MainWindow(project=project, settings=AppSettings()) if project else MainWindow(settings=AppSettings())
    )
    qtbot.addWidget(win)
    win.resize(*SIZE)
    win.show()
    return win


def test_the_start_page_fits(qtbot: QtBot, qapp: QApplication, scale: float) -> None:
    win = _window(qtbot, None)
    win.show_start_page()
    assert _check(qapp, win, "start", scale) == []


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[ProjectController]:
    """The demo novel (the README's screenshots): every view has something to show."""
    from novel_desktop.demo import build_demo

    project = ProjectController()
    project.open(build_demo(tmp_path / "demo.novel"))
    yield project
    project.close()


@pytest.mark.parametrize("size", [SIZE, (1600, 1000)], ids=["1366x768", "1600x1000"])
def test_the_views_of_a_novel_fit(
    qtbot: QtBot, qapp: QApplication, demo: ProjectController, scale: float, size: tuple[int, int]
) -> None:
    win = _window(qtbot, demo)
    win.resize(*size)
    win._update_for_project()
    problems: list[str] = []
    win.show_start_page()
    problems += _check(qapp, win, "start-novel", scale)
    win.show_workspace()
    win.open_chapter(1)
    win.quality_dock.show()
    problems += _check(qapp, win, "editor", scale)
    panel = win.quality_panel
    assert isinstance(panel, QualityPanel)
    panel.show_novel()  # the whole novel's trend charts (built on a timer)
    qtbot.wait(300)
    problems += _check(qapp, win, f"quality-trends-{size[0]}", scale)
    panel.show_chapter(1)
    for view in ("outline", "storylines", "foreshadowing", "analytics"):
        win.open_view(view)
        problems += _check(qapp, win, f"{view}-{size[0]}", scale)
    assert problems == []


def test_the_settings_dialog_fits(qtbot: QtBot, qapp: QApplication, scale: float) -> None:
    from novel_desktop.ui.settings_dialog import SettingsDialog

    dialog = SettingsDialog(None)
    qtbot.addWidget(dialog)
    dialog.show()
    problems: list[str] = []
    for page in range(dialog.tabs.count()) if hasattr(dialog, "tabs") else [0]:
        if hasattr(dialog, "tabs"):
            dialog.tabs.setCurrentIndex(page)
        problems += _check(qapp, dialog, f"settings{page}", scale)
    assert problems == []


def test_the_ask_dialog_fits(qtbot: QtBot, qapp: QApplication, scale: float) -> None:
    from novel_desktop.ui.ask_dialog import AskDialog
    from tests.ui.test_ask_dialog import LOW_SCORE, NOTE, TAGS, _spec

    dialog = AskDialog(_spec(LOW_SCORE, TAGS, NOTE), "")
    qtbot.addWidget(dialog)
    dialog.show()
    assert _check(qapp, dialog, "ask", scale) == []


def test_the_measure_finds_what_is_clipped(qtbot: QtBot, qapp: QApplication) -> None:
    """The checker itself: a button narrower than its text, a label cut off by its panel, a column narrower
    than its title and a check box are found; the same widgets with room are not."""
    from PySide6.QtWidgets import QCheckBox, QLabel, QPushButton, QTableWidget

    from tests.ui.labels import clipped

    root = QWidget()
    qtbot.addWidget(root)
    root.resize(400, 300)
    button = QPushButton("Continue writing the next chapter", root)
    button.setGeometry(0, 0, 60, 30)
    panel = QWidget(root)
    panel.setGeometry(0, 40, 80, 30)
    label = QLabel("A label wider than its panel", panel)
    label.setGeometry(0, 0, 300, 30)
    box = QCheckBox("Remember this choice", root)
    box.setGeometry(0, 80, 50, 30)
    table = QTableWidget(1, 2, root)
    table.setGeometry(0, 120, 380, 150)
    table.setHorizontalHeaderLabels(["A long column title", "B"])
    table.horizontalHeader().resizeSection(0, 40)
    root.show()
    _settle(qapp)
    found = "\n".join(clipped(root))
    for text in ("Continue writing", "A label wider", "Remember this", "A long column title"):
        assert text in found
    button.setGeometry(0, 0, 380, 30)
    panel.setGeometry(0, 40, 380, 30)
    box.setGeometry(0, 80, 380, 30)
    table.horizontalHeader().resizeSection(0, 250)
    _settle(qapp)
    assert clipped(root) == []
