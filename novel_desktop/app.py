"""The desktop application's entry point (``novel-desktop``)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

APP_NAME = "novel_desktop"


def create_main_window() -> QMainWindow:
    """The main window (the full writing workspace comes with the desktop issue)."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QLabel, QMainWindow

    window = QMainWindow()
    window.setWindowTitle("novel_desktop — 网文长篇创作")
    label = QLabel("欢迎使用 novel_desktop。\n用命令行 novel init 新建一部小说。")
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    window.setCentralWidget(label)
    window.resize(1280, 800)
    return window


def main(argv: Sequence[str] | None = None) -> int:
    from PySide6.QtWidgets import QApplication

    args = list(argv) if argv is not None else sys.argv
    app = QApplication.instance() or QApplication(args)
    app.setApplicationName(APP_NAME)
    window = create_main_window()
    window.show()
    return int(app.exec())
