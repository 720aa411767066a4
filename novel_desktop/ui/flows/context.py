"""上下文检查 in the window (issue 16 point 7): the chapter tree's 查看上下文… and 故事 → 上下文检查… open the
context inspector (:class:`~novel_desktop.ui.context_dialog.ContextDialog`) on a chapter."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction

from novel_desktop.controllers.context_controller import ContextController
from novel_desktop.i18n import tr
from novel_desktop.ui import alerts
from novel_desktop.ui.context_dialog import ContextDialog

if TYPE_CHECKING:
    from novel_desktop.ui.main_window import MainWindow


class ContextFlows:
    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.controller = ContextController(window.project)
        self.dialog: ContextDialog | None = None
        window.tree.context_requested.connect(self.show_context)
        self.action = QAction(tr("上下文检查…"), window)
        self.action.setObjectName("ContextAction")
        self.action.setStatusTip(
            tr("查看某章每个智能体的提示词：各部分的 token 和纳入原因，被预算裁剪的内容")
        )
        self.action.triggered.connect(lambda _checked=False: self.show_context(0))
        window.story_menu.addAction(self.action)

    def show_context(self, chapter: int) -> ContextDialog | None:
        """Open the inspector on ``chapter`` (0: the chapter in flight, else the last one written)."""
        numbers = self.controller.chapters()
        if not numbers:
            alerts.warning(self.window, tr("上下文检查"), tr("还没有写好的章节，没有可查看的上下文"))
            return None
        if self.dialog is not None:
            self.dialog.close()
        self.dialog = ContextDialog(self.controller, chapter or numbers[-1], self.window)
        self.dialog.show()
        return self.dialog
