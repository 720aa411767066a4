"""The Qt runtime this project pins is sound here (shared/ENVIRONMENT.md: PySide6 6.12.0 on 3.11 is not)."""

from __future__ import annotations

import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QPlainTextEdit
from pytestqt.qtbot import QtBot


def test_void_qt_calls_do_not_eat_the_refcount_of_none(qtbot: QtBot) -> None:
    editor = QPlainTextEdit()
    qtbot.addWidget(editor)
    timer = QTimer()
    before = sys.getrefcount(None)
    for _ in range(10_000):
        editor.ensureCursorVisible()
        timer.start(1000)
    timer.stop()
    editor.insertPlainText("字")
    after = sys.getrefcount(None)
    assert after >= before - 100
    assert editor.toPlainText() == "字"
