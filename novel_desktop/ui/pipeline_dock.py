"""Pipeline progress and log (stub; its owner replaces this module)."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from novel_desktop.controllers.pipeline_controller import PipelineController
from novel_desktop.ui.i18n import tr


class PipelineDock(QWidget):
    def __init__(self, pipeline: PipelineController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pipeline = pipeline
        QVBoxLayout(self).addWidget(QLabel(tr("流水线")))
