"""Runs the chapter pipeline for the window (stub; its owner replaces this module)."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from novel_desktop.controllers.project_controller import ProjectController


class PipelineController(QObject):
    """Owns the running pipeline task; turns pipeline events into signals; cancels."""

    running_changed = Signal(bool)
    stage_started = Signal(int, str)  # chapter, stage value
    text_delta = Signal(int, str)
    text_reset = Signal(int)
    usage_updated = Signal(int, int, int, float)  # chapter, input tokens, output tokens, cost
    gate_decided = Signal(int, str, float, str)  # chapter, action, overall, reason
    chapter_committed = Signal(int)
    warning = Signal(int, str)
    failed = Signal(str)
    finished = Signal()

    def __init__(self, project: ProjectController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.project = project

    @property
    def running(self) -> bool:
        return False

    def continue_chapters(self, count: int = 1) -> None:
        """Start writing ``count`` chapters (no-op while running)."""

    def cancel(self) -> None:
        """Stop at once; the novel stays as it was."""
