"""Settings: provider, key, models, prices, language (stub; its owner replaces this module)."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QWidget


class SettingsDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("设置")
