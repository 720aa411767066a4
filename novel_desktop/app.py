"""The desktop application's entry point (``novel-desktop``)."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    from PySide6.QtWidgets import QApplication, QMainWindow

    app = QApplication.instance() or QApplication(list(argv) if argv is not None else sys.argv)
    window = QMainWindow()
    window.setWindowTitle("novel_desktop")
    window.resize(1280, 800)
    window.show()
    return int(app.exec())
