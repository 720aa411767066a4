"""接续已有书稿 from the window: the start page's recommendation and the 写作 menu open the adoption dialog;
when it ends the start page shows the next step (规划)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from novel_desktop.controllers.adopt_controller import AdoptController
from novel_desktop.i18n import tr
from novel_desktop.ui import alerts
from novel_desktop.ui.adopt_dialog import AdoptDialog

if TYPE_CHECKING:
    from novel_desktop.ui.main_window import MainWindow


class AdoptFlows:
    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.controller = AdoptController(window.pipeline, window)
        self.dialog: AdoptDialog | None = None
        self.controller.finished.connect(lambda _summary: self._refresh_start_page())
        self.controller.cancelled.connect(lambda _kept: self._refresh_start_page())
        self.controller.failed.connect(lambda _why: self._refresh_start_page())

    def open(self) -> AdoptDialog | None:
        """Show the dialog with the estimate (none while another run goes on or for a novel not imported)."""
        w = self.window
        if not w.project.is_open:
            return None
        if self.dialog is not None and self.dialog.isVisible():
            self.dialog.raise_()
            self.dialog.activateWindow()
            return self.dialog
        if w.pipeline.running:
            alerts.info(w, tr("正在运行"), tr("当前任务结束后再接续分析书稿。"))
            return None
        if not self.controller.available():
            alerts.info(
                w,
                tr("接续已有书稿"),
                tr("这部小说不是从书稿导入的：接续分析只用于“导入书稿”建成的小说。"),
            )
            return None
        w.save_all()  # the analysis reads the chapters as the author last left them
        dialog = AdoptDialog(self.controller, w)
        dialog.finished.connect(lambda _result: self._forget(dialog))
        self.dialog = dialog
        dialog.show()
        dialog.load()
        return dialog

    def _forget(self, dialog: AdoptDialog) -> None:
        if self.dialog is dialog:
            self.dialog = None
        dialog.deleteLater()

    def _refresh_start_page(self) -> None:
        w = self.window
        w.tree.reload()
        w.start_page.refresh(w.settings.recent_novels)
