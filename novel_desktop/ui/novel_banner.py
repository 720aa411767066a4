"""What the window says about the open novel's file itself: a banner over the workspace when it is read-only
(editing off, and the actions that would write disabled), the journal mode when it is not WAL (once, in the
status bar), and a failed save (once, as an alert naming the file, until a save succeeds again)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from novel_desktop.i18n import tr
from novel_desktop.ui import alerts

if TYPE_CHECKING:
    from novel_desktop.ui.main_window import MainWindow


class NovelBanner(QLabel):
    """A strip above the workspace, shown only while the open novel is read-only."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("NovelBanner")
        self.setTextFormat(Qt.TextFormat.PlainText)  # the path comes from the disk, not from us
        self.setWordWrap(True)
        self.setStyleSheet("QLabel#NovelBanner { background: #fff4d6; color: #6b4e00; padding: 6px 12px; }")
        self.hide()


def with_banner(banner: NovelBanner, body: QWidget) -> QWidget:
    """``body`` with ``banner`` above it (the window's central widget)."""
    holder = QWidget()
    layout = QVBoxLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(0)
    layout.addWidget(banner)
    layout.addWidget(body, 1)
    return holder


def write_actions(window: MainWindow) -> list[QAction]:
    """The actions that write to the novel: saving, the pipeline's runs, planning, the style profile and
    find/replace (whose replace writes)."""
    return [
        window.save_action,
        window.find_action,
        window.continue_action,
        window.continue_n_action,
        window.rebuild_action,
        window.quick_start_action,
        window.plan_action,
        window.review_action,
        window.check_action,
        window.style_action,
    ]


def update_for_project(window: MainWindow) -> None:
    """After a novel opened or closed: the read-only banner and actions, and the journal note."""
    project = window.project
    readonly = project.is_open and project.readonly
    window.saving_failed = False
    if readonly:
        for action in write_actions(window):
            action.setEnabled(False)
        window.story.set_enabled(False)
        window.banner.setText(
            tr("只读：{path} 不能写入（文件或所在文件夹只读），只能查看。").format(path=project.path)
            + tr("要修改，请用“导出…”另存一份，或复制到可写的文件夹再打开。")
        )
    window.banner.setVisible(readonly)
    note = project.journal_note() if project.is_open else None
    if note:
        window.statusBar().showMessage(tr("日志模式：{reason}").format(reason=note))


def save_failed(window: MainWindow, message: str) -> None:
    """A chapter could not be saved: the text stays in the editor; the author hears it once (an alert), and
    the status bar says so at every further try."""
    window.save_label.setText(tr("未保存"))
    window.statusBar().showMessage(message, 15000)
    if not window.saving_failed:
        window.saving_failed = True
        alerts.error(
            window, tr("保存失败"), message + "\n\n" + tr("文字仍在编辑器里，解决问题后会自动再保存。")
        )
