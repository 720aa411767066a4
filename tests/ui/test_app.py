"""The desktop entry point opens a window."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from novel_desktop.app import create_main_window


def test_main_window_opens_with_a_chinese_title(qtbot: QtBot) -> None:
    window = create_main_window()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert "网文" in window.windowTitle()
    assert window.isVisible()
