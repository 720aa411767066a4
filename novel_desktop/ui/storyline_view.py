"""故事线泳道 (stub; its owner replaces this module)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.ui.i18n import tr


class StorylineView(QWidget):
    chapter_requested = Signal(int)

    def __init__(self, project: ProjectController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(tr("故事线泳道")))

    def refresh(self) -> None:
        """Re-read what this view shows from the project."""

    def show_volume(self, volume: int) -> None:
        self.refresh()
