"""The main window: the project tree (left), chapter editors and views as tabs (centre), the quality report
(right) and the pipeline's progress and log (bottom); the start page when no novel is open.

Docks can be moved and closed; their layout and the window geometry are kept in ``window.ini`` in the
config folder. The window never touches the store: it reads and writes through :class:`ProjectController`
and runs the pipeline through :class:`PipelineController`. All signals are connected in :meth:`_connect`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QKeySequence,
    QShowEvent,
    QTextCursor,
)
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QFrame,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QScrollArea,
    QStackedWidget,
    QTabBar,
    QTabWidget,
    QTextBrowser,
    QToolBar,
    QToolButton,
    QWidget,
)

from novel_desktop.config import AppSettings, load_app_settings, save_app_settings
from novel_desktop.controllers.jobs import JobRunner
from novel_desktop.controllers.pipeline_controller import PipelineController
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.i18n import tr
from novel_desktop.paths import user_config_dir
from novel_desktop.storage.layout import volume_dir
from novel_desktop.storage.lock import ProjectLocked
from novel_desktop.ui.ask_dialog import dialog_asker
from novel_desktop.ui.chapter_editor import ChapterEditor, ChapterTab
from novel_desktop.ui.find_replace import FindReplaceDialog
from novel_desktop.ui.pipeline_dock import LiveDraftView, PipelineDock
from novel_desktop.ui.project_tree import ProjectTree, chapter_label
from novel_desktop.ui.revision_dialog import RevisionDialog
from novel_desktop.ui.start_page import StartPage
from novel_desktop.ui.story_actions import StoryActions

log = logging.getLogger(__name__)

APP_TITLE = "novel_desktop — 网文长篇创作"
#: Bump when the docks change, so an old saved layout is not applied to a different set of docks.
LAYOUT_VERSION = 1
#: The views that open as tabs, by name: (tab title, module, class).
VIEWS = {
    "outline": ("大纲", "novel_desktop.ui.outline_view", "OutlineView"),
    "storylines": ("故事线", "novel_desktop.ui.storyline_view", "StorylineView"),
    "foreshadowing": ("伏笔", "novel_desktop.ui.foreshadowing_view", "ForeshadowingView"),
}
#: What the author reads while a run goes on, for the title of its error message.
RUN_TITLES = {
    "continue": "续写",
    "rebuild": "重建",
    "quick_start": "快速起步",
    "plan": "卷规划",
    "review": "卷末回顾",
    "check": "定期检查",
    "add_character": "添加角色",
    "retire_character": "角色退场",
    "extend_world": "扩展世界观",
    "add_storyline": "添加故事线",
    "import_research": "导入研究资料",
    "rejudge": "重新评审",
    "reevaluate": "批量重新评审",
}


def layout_settings() -> QSettings:
    """Window geometry and dock layout, next to app.json (never the registry: tests redirect the folder)."""
    return QSettings(str(user_config_dir() / "window.ini"), QSettings.Format.IniFormat)


class MainWindow(QMainWindow):
    """The writing workspace of one open novel."""

    def __init__(
        self,
        project: ProjectController | None = None,
        settings: AppSettings | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr(APP_TITLE))
        self.settings = settings or load_app_settings()
        self.project = project or ProjectController(self)
        self.jobs = JobRunner(self)
        self.pipeline = PipelineController(self.project, self, asker=dialog_asker(self), jobs=self.jobs)
        self._views: dict[str, QWidget] = {}
        self._live: LiveDraftView | None = None
        self._live_chapter = 0
        #: The chapter tab the pipeline opened for its last committed chapter (0: none, or the author's own).
        self._auto_opened = 0
        self._find_dialog: FindReplaceDialog | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.story = StoryActions(self.project, self.pipeline, self, self._current_chapter_number)

        # --- centre: the start page or the tabs
        self.start_page = StartPage(self.project)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("EditorTabs")
        self.tabs.setTabsClosable(False)  # each tab gets its own quiet close button in _add_tab
        self.tabs.setMovable(True)
        self.tabs.setDocumentMode(True)
        self.center = QStackedWidget()
        self.center.addWidget(self.start_page)
        self.center.addWidget(self.tabs)
        self.setCentralWidget(self.center)

        # --- docks
        self.tree = ProjectTree(self.project)
        self.tree_dock = self._dock(
            "ProjectDock", tr("项目"), self.tree, Qt.DockWidgetArea.LeftDockWidgetArea
        )
        self.quality_panel: QWidget | None = None
        self.quality_dock = self._dock(
            "QualityDock", tr("质量报告"), self._placeholder(), Qt.DockWidgetArea.RightDockWidgetArea
        )
        self.pipeline_dock = PipelineDock(self.pipeline)
        self.progress_dock = self._dock(
            "PipelineDock", tr("流水线"), self.pipeline_dock, Qt.DockWidgetArea.BottomDockWidgetArea
        )
        # The bottom dock spans the whole width (Qt's default corners): its stage bar needs the room on a
        # laptop screen, where the side docks and the text column already share 1366 pixels.

        # --- status bar
        self.counts_label = QLabel()
        self.save_label = QLabel()
        self.novel_label = QLabel()
        self.statusBar().addPermanentWidget(self.save_label)
        self.statusBar().addPermanentWidget(self.counts_label)
        self.statusBar().addPermanentWidget(self.novel_label)

        self.setAcceptDrops(True)  # style samples and manuscripts can be dropped anywhere on the window
        self._create_actions()
        self._create_menus()
        self._connect()
        self.resize(1600, 1000)
        self.tree.setMinimumWidth(200)
        self._layout_restored = self.restore_layout()
        self._update_for_project()

    def _dock(self, name: str, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)  # saveState/restoreState find docks by object name
        dock.setWidget(widget)
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
        )
        self.addDockWidget(area, dock)
        return dock

    @staticmethod
    def _placeholder() -> QWidget:
        label = QLabel(tr("打开一部小说后显示质量报告。"))
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        label.setWordWrap(True)
        label.setStyleSheet("color: palette(mid); padding: 16px;")
        return label

    # ------------------------------------------------------------------ actions and menus
    def _action(
        self, text: str, slot: Callable[[], object], shortcut: str | None = None, tip: str = ""
    ) -> QAction:
        action = QAction(text, self)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setToolTip(tip)
            action.setStatusTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        return action

    def _create_actions(self) -> None:
        a = self._action
        self.start_action = a(tr("开始页"), self.show_start_page)
        self.new_action = a(tr("新建小说…"), self.new_novel, "Ctrl+N")
        self.open_action = a(tr("打开小说…"), self.open_novel_dialog, "Ctrl+O")
        self.import_action = a(tr("导入书稿…"), self.import_manuscript_dialog)
        self.export_action = a(tr("导出…"), self.export_dialog, tip=tr("导出为 txt、md、epub 或 docx"))
        self.close_action = a(tr("关闭小说"), self.close_novel)
        self.quit_action = a(tr("退出"), self.close, "Ctrl+Q")
        self.save_action = a(tr("保存"), self.save_all, "Ctrl+S")
        self.find_action = a(
            tr("查找替换…"), self.show_find_replace, "Ctrl+Shift+F", tr("在全书中查找和替换")
        )
        self.indent_action = a(tr("段首缩进"), self.indent_current, tip=tr("每段开头加两个全角空格“　　”"))
        self.history_action = a(
            tr("历史版本…"),
            self.show_history,
            "Ctrl+Shift+H",
            tr("本章的所有版本，与草稿、润色稿对比，可恢复"),
        )
        self.continue_action = a(tr("续写"), self.continue_one, "Ctrl+Return", tr("按本卷大纲续写下一章"))
        self.continue_n_action = a(tr("续写 N 章…"), self.continue_many)
        self.stop_action = a(tr("停止"), self.pipeline.cancel, tip=tr("立即停止；未提交的章节下次续写时继续"))
        self.rebuild_action = a(
            tr("重建…"), self.rebuild_stale, tip=tr("重新摘要手改过的章节、重放故事状态，并检查后续章节")
        )
        self.quick_start_action = a(
            tr("快速起步…"),
            lambda: self.run_lifecycle("quick_start"),
            tip=tr("回答题材、主角、冲突和平台，生成设定、角色和文风，试写 3 章"),
        )
        self.plan_action = a(
            tr("规划卷…"),
            lambda: self.run_lifecycle("plan"),
            tip=tr("规划当前卷或下一卷：大纲、章节契约、故事线调度、伏笔"),
        )
        self.review_action = a(
            tr("卷末回顾"),
            lambda: self.run_lifecycle("review"),
            tip=tr("全卷一致性报告、伏笔完成度、下卷铺垫、状态清理，然后进入下一卷规划"),
        )
        self.check_action = a(
            tr("定期检查"),
            lambda: self.run_lifecycle("check"),
            tip=tr("现在运行到期的质量简报、文风漂移和一致性检查"),
        )
        self.settings_action = a(tr("设置"), self.show_settings, "Ctrl+,")
        self.outline_action = a(tr("大纲"), lambda: self.open_view("outline"))
        self.storylines_action = a(tr("故事线"), lambda: self.open_view("storylines"))
        self.foreshadowing_action = a(tr("伏笔"), lambda: self.open_view("foreshadowing"))
        self.style_action = a(
            tr("文风"), self.show_style, tip=tr("文风档案：拖入 1-3 章样本测量文风，或直接编辑")
        )
        self.stop_action.setEnabled(False)
        # Actions that need an open novel (enabled in _update_for_project).
        self._novel_actions = [
            self.export_action,
            self.close_action,
            self.save_action,
            self.find_action,
            self.continue_action,
            self.continue_n_action,
            self.rebuild_action,
            self.quick_start_action,
            self.plan_action,
            self.review_action,
            self.check_action,
            self.outline_action,
            self.storylines_action,
            self.foreshadowing_action,
            self.style_action,
        ]
        self._editor_actions = [self.indent_action, self.history_action]

    def _create_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu(tr("文件"))
        file_menu.addAction(self.start_action)
        file_menu.addSeparator()
        file_menu.addActions([self.new_action, self.open_action, self.import_action])
        self.recent_menu = QMenu(tr("最近打开"), self)
        file_menu.addMenu(self.recent_menu)
        file_menu.addSeparator()
        file_menu.addActions([self.save_action, self.export_action, self.close_action])
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)

        edit_menu = bar.addMenu(tr("编辑"))
        edit_menu.addActions([self.find_action, self.indent_action, self.history_action])

        write_menu = bar.addMenu(tr("写作"))
        write_menu.addActions([self.continue_action, self.continue_n_action, self.stop_action])
        write_menu.addSeparator()
        write_menu.addActions(
            [self.quick_start_action, self.plan_action, self.review_action, self.check_action]
        )
        write_menu.addSeparator()
        write_menu.addAction(self.rebuild_action)

        self.story_menu = bar.addMenu(tr("故事"))
        self.story.fill_menu(self.story_menu)

        view_menu = bar.addMenu(tr("视图"))
        view_menu.addActions(
            [self.outline_action, self.storylines_action, self.foreshadowing_action, self.style_action]
        )
        view_menu.addSeparator()
        for dock in (self.tree_dock, self.quality_dock, self.progress_dock):
            view_menu.addAction(dock.toggleViewAction())

        tools_menu = bar.addMenu(tr("工具"))
        tools_menu.addAction(self.settings_action)

        toolbar = QToolBar(tr("工具栏"))
        toolbar.setObjectName("MainToolBar")
        toolbar.setMovable(False)
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        toolbar.addActions([self.continue_action, self.continue_n_action, self.stop_action])
        toolbar.addSeparator()
        toolbar.addActions([self.history_action, self.find_action, self.indent_action])
        toolbar.addSeparator()
        toolbar.addActions(
            [self.outline_action, self.storylines_action, self.foreshadowing_action, self.style_action]
        )
        toolbar.addSeparator()
        toolbar.addAction(self.settings_action)
        self.addToolBar(toolbar)
        self.toolbar = toolbar

    def _connect(self) -> None:
        p, pc = self.project, self.pipeline
        p.chapters_changed.connect(self._on_project_chapters_changed)
        p.chapter_saved.connect(self._on_project_chapter_saved)
        pc.running_changed.connect(self._on_pipeline_running_changed)
        pc.chapter_started.connect(self._on_pipeline_chapter_started)
        pc.chapter_committed.connect(self._on_pipeline_chapter_committed)
        pc.failed.connect(self._on_pipeline_failed)
        pc.finished.connect(self._on_pipeline_finished)
        pc.rebuild_finished.connect(self._on_pipeline_rebuild_finished)
        pc.lifecycle_finished.connect(self._on_pipeline_lifecycle_finished)
        pc.volume_finished.connect(self._on_pipeline_volume_finished)
        self.tree.chapter_requested.connect(self.open_chapter)
        self.tree.view_requested.connect(self._on_tree_view_requested)
        self.tree.document_requested.connect(self.open_document)
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)
        self.tabs.tabCloseRequested.connect(self._on_tabs_close_requested)
        sp = self.start_page
        sp.action_requested.connect(self.run_recommended)
        sp.new_requested.connect(self.new_novel)
        sp.open_requested.connect(self.open_novel_dialog)
        sp.import_requested.connect(self.import_manuscript_dialog)
        sp.demo_requested.connect(self.open_demo)
        sp.settings_requested.connect(self.show_settings)
        sp.recent_requested.connect(self.open_novel)

    # ------------------------------------------------------------------ layout memory
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._layout_restored:
            self._layout_restored = True
            self.apply_default_layout()

    def apply_default_layout(self) -> None:
        """Dock sizes in proportion to the window, so a laptop screen keeps most of its width for the text."""
        w, h = self.width(), self.height()
        self.resizeDocks(
            [self.tree_dock, self.quality_dock],
            [max(220, int(w * 0.16)), max(280, int(w * 0.22))],
            Qt.Orientation.Horizontal,
        )
        self.resizeDocks([self.progress_dock], [max(140, int(h * 0.15))], Qt.Orientation.Vertical)

    def save_layout(self) -> None:
        s = layout_settings()
        s.setValue("geometry", self.saveGeometry())
        s.setValue("state", self.saveState(LAYOUT_VERSION))
        s.sync()

    def restore_layout(self) -> bool:
        s = layout_settings()
        geometry, state = s.value("geometry"), s.value("state")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        if isinstance(state, QByteArray):
            return bool(self.restoreState(state, LAYOUT_VERSION))
        return False

    # ------------------------------------------------------------------ opening and closing novels
    def open_novel(self, path: str | Path, *, remember: bool = True) -> bool:
        """Open a novel for writing; a lock held elsewhere is explained (and cleared if stale and agreed)."""
        path = Path(path)
        if self.project.is_open and self.project.path and self.project.path.resolve() == path.resolve():
            self.show_workspace()
            return True
        if not self.close_novel():
            return False
        try:
            self.project.open(path)
        except ProjectLocked as exc:
            if not self._resolve_lock(path, exc):
                return False
            try:
                self.project.open(path)
            except Exception as again:
                QMessageBox.critical(self, tr("无法打开"), str(again))
                return False
        except Exception as exc:  # a broken file, a newer schema, a missing file: say so, keep the window
            QMessageBox.critical(
                self, tr("无法打开"), tr("打开 {path} 失败：{error}").format(path=path, error=exc)
            )
            return False
        if remember:
            self._remember(path)
        self._update_for_project()
        self.show_workspace()
        return True

    def _resolve_lock(self, path: Path, exc: ProjectLocked) -> bool:
        holder = exc.holder
        when = holder.started.astimezone().strftime("%Y-%m-%d %H:%M:%S")
        who = tr("进程 {pid}（主机 {host}），{time} 起").format(pid=holder.pid, host=holder.host, time=when)
        if not exc.stale:
            QMessageBox.warning(
                self,
                tr("小说正在别处打开"),
                tr("《{name}》正被另一个窗口或命令写入：\n{who}\n\n请先关闭它，再打开。").format(
                    name=path.stem, who=who
                ),
            )
            return False
        answer = QMessageBox.question(
            self,
            tr("清除失效的锁？"),
            tr(
                "《{name}》的写入锁属于一个已不存在的进程：\n{who}\n\n确认那个程序已经退出后，可以清除这个锁并打开。"
            ).format(name=path.stem, who=who),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return False
        ProjectController.clear_stale_lock(path)
        return True

    def _remember(self, path: Path) -> None:
        self.settings.add_recent(path)
        try:
            save_app_settings(self.settings)
        except OSError:
            log.warning("could not save the recent novels", exc_info=True)

    def close_novel(self) -> bool:
        """Save and close the open novel (refused while the pipeline runs)."""
        if not self.project.is_open:
            return True
        if self.pipeline.running:
            QMessageBox.information(self, tr("正在续写"), tr("请先停止正在运行的续写或重建。"))
            return False
        self.save_all()
        while self.tabs.count():
            widget = self.tabs.widget(0)
            self.tabs.removeTab(0)
            if widget is not None:
                widget.deleteLater()
        self._views.clear()
        self._live = None
        self.project.close()
        self._update_for_project()
        return True

    def new_novel(self) -> None:
        title, ok = QInputDialog.getText(self, tr("新建小说"), tr("书名："))
        title = title.strip()
        if not ok or not title:
            return
        default = str(Path.home() / f"{title}.novel")
        path, _ = QFileDialog.getSaveFileName(self, tr("保存为"), default, tr("小说 (*.novel)"))
        if not path:
            return
        if not path.endswith(".novel"):
            path += ".novel"
        if not self.close_novel():
            return
        try:
            self.project.create(path, title=title, genre=None, platform="web")
        except Exception as exc:
            QMessageBox.critical(self, tr("无法新建"), str(exc))
            return
        self._remember(Path(path))
        self._update_for_project()
        self.show_start_page()  # a new novel's next step is its quick start: the start page says so
        answer = QMessageBox.question(
            self,
            tr("快速起步"),
            tr(
                "《{title}》已建好。现在快速起步吗？（题材、主角、冲突、平台 → 设定、角色、文风 → 试写 3 章）"
            ).format(title=title),
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.run_lifecycle("quick_start")

    def open_demo(self) -> bool:
        """Open a fresh copy of the bundled demo novel (the same copy ``--demo`` opens)."""
        from novel_desktop.demo import demo_copy

        try:
            path = demo_copy()
        except Exception as exc:  # a broken bundle or a full disk: say so, keep the window
            QMessageBox.critical(self, tr("无法打开示例"), str(exc))
            return False
        return self.open_novel(path)

    def open_novel_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, tr("打开小说"), str(Path.home()), tr("小说 (*.novel)"))
        if path:
            self.open_novel(path)

    def import_manuscript_dialog(self) -> None:
        source, _ = QFileDialog.getOpenFileName(
            self, tr("导入书稿"), str(Path.home()), tr("书稿 (*.txt *.md *.docx *.epub)")
        )
        if source:
            self.import_manuscript(source)

    def import_manuscript(self, source: str | Path) -> None:
        """Read and split a manuscript (in a worker thread), show what it splits into, and only when the
        author confirms, write it as a new novel and open it."""
        src = Path(source)

        def preview(result: Any) -> None:
            from novel_desktop.ui.import_dialog import ImportPreviewDialog

            manuscript, split = result
            title = ImportPreviewDialog.confirm(self, src, manuscript, split)
            if title is None:
                return
            target, _ = QFileDialog.getSaveFileName(
                self, tr("新小说保存为"), str(src.with_suffix(".novel")), tr("小说 (*.novel)")
            )
            if not target:
                return
            if not target.endswith(".novel"):
                target += ".novel"
            if Path(target).exists():
                QMessageBox.warning(
                    self,
                    tr("导入失败"),
                    tr("{path} 已经存在，导入不会覆盖已有的小说。请换一个文件名。").format(path=target),
                )
                return

            def done(summary: Any) -> None:
                QMessageBox.information(
                    self,
                    tr("导入完成"),
                    tr("《{title}》：{chapters} 章，{volumes} 卷，共 {chars} 字。").format(
                        title=summary.title, chapters=summary.chapters, volumes=summary.volumes,
                        chars=f"{summary.total_chars:,}",
                    ),
                )  # fmt: skip
                self.open_novel(target)

            self.run_blocking(
                lambda: ProjectController.write_manuscript(src, manuscript, split, target, title=title),
                done,
                tr("导入失败"),
            )

        self.run_blocking(lambda: ProjectController.read_manuscript(src), preview, tr("无法读取书稿"))

    def show_style(self, paths: list[str] | None = None) -> None:
        """The style profile: measured from sample files (when given), editable, saved to the novel."""
        from novel_desktop.ui.style_drop import StyleProfileDialog

        if not self.project.is_open:
            QMessageBox.information(self, tr("文风档案"), tr("先打开或新建一部小说，再设置它的文风。"))
            return
        StyleProfileDialog.show_for(self, self.project, paths or [])

    # ------------------------------------------------------------------ drag and drop
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        self._accept_files(event)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        self._accept_files(event)

    @staticmethod
    def _accept_files(event: QDragEnterEvent | QDragMoveEvent) -> None:
        from novel_desktop.ui.style_drop import local_paths

        if local_paths(event):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        from novel_desktop.ui.style_drop import local_paths

        paths = local_paths(event)
        if paths:
            event.acceptProposedAction()
            self.handle_dropped_files(paths)

    def handle_dropped_files(self, paths: list[str]) -> None:
        """1-3 short files are style samples (measured into the style profile); one long file or an EPUB
        is a manuscript (offered for import); anything else is explained."""
        from novel_desktop.ui.style_drop import classify_drop

        def decided(kind: Any) -> None:
            if kind == "samples":
                self.show_style(paths)
            elif kind == "manuscript":
                answer = QMessageBox.question(
                    self,
                    tr("导入书稿"),
                    tr("“{name}”像是一部书稿。按章节拆分，导入成一部新小说？").format(
                        name=Path(paths[0]).name
                    ),
                )
                if answer == QMessageBox.StandardButton.Yes:
                    self.import_manuscript(paths[0])
            else:
                QMessageBox.information(
                    self,
                    tr("无法使用这些文件"),
                    tr("拖入 1-3 个样本（txt/md/docx，共 3 万字内）测文风，或拖入一部书稿导入。"),
                )

        self.run_blocking(lambda: classify_drop(paths), decided, tr("无法读取文件"))

    def export_dialog(self) -> None:
        if not self.project.is_open:
            return
        self.save_all()
        default = str(Path.home() / f"{self.project.title() or 'novel'}.txt")
        path, _ = QFileDialog.getSaveFileName(
            self, tr("导出"), default, tr("文本 (*.txt);;Markdown (*.md);;EPUB (*.epub);;Word (*.docx)")
        )
        if not path:
            return
        from novel_desktop.storage.book_export import format_for

        fmt = format_for(path) or "txt"
        self.run_blocking(
            lambda: self.project.export_book(path, fmt),
            lambda result: self.statusBar().showMessage(
                tr("已导出 {chapters} 章到 {path}").format(chapters=result.chapters, path=path), 8000
            ),
            tr("导出失败"),
        )

    def run_blocking(self, work: Callable[[], Any], done: Callable[[Any], None], error_title: str) -> None:
        """Run slow file work in a worker thread on the qasync loop (inline when no loop runs: tests)."""

        def report(exc: BaseException) -> None:
            QMessageBox.critical(self, error_title, str(exc))

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None:
            QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
            try:
                result = work()
            except Exception as exc:
                QApplication.restoreOverrideCursor()
                report(exc)
                return
            QApplication.restoreOverrideCursor()
            done(result)
            return

        async def run() -> None:
            try:
                result = await asyncio.to_thread(work)
            except Exception as exc:
                report(exc)
                return
            done(result)

        task = loop.create_task(run())
        self._tasks.add(task)  # keep a reference: a task only the loop knows about may be collected
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------------ pages
    def show_start_page(self) -> None:
        self.save_all()
        self.start_page.refresh(self.settings.recent_novels)
        self.center.setCurrentWidget(self.start_page)

    def show_workspace(self) -> None:
        if not self.project.is_open:
            self.show_start_page()
            return
        self.center.setCurrentWidget(self.tabs)
        if self.tabs.count() == 0:
            chapters = self.project.chapters()
            if chapters:
                self.open_chapter(chapters[-1].number)
            else:
                self.open_view("outline")

    def _update_for_project(self) -> None:
        is_open = self.project.is_open
        for action in self._novel_actions:
            action.setEnabled(is_open)
        self.story.set_enabled(is_open)
        self.tree.reload()
        self._rebuild_recent_menu()
        if is_open:
            title = self.project.title()
            self.setWindowTitle(f"《{title}》 — {tr(APP_TITLE)}")
            if self.quality_panel is None:
                self._create_quality_panel()
        else:
            self.setWindowTitle(tr(APP_TITLE))
            if self.quality_panel is not None:
                self.quality_dock.setWidget(self._placeholder())
                self.quality_panel.deleteLater()
                self.quality_panel = None
            self.show_start_page()
        self._update_status()
        self._update_editor_actions()

    def _create_quality_panel(self) -> None:
        from novel_desktop.ui.quality_panel import QualityPanel

        panel = QualityPanel(self.project)
        panel.jump_requested.connect(self._on_quality_jump_requested)
        panel.chapter_requested.connect(self.open_chapter)
        self.quality_panel = panel
        # In a scroll area, so the panel's own minimum height cannot make the window taller than a laptop's
        # 768-pixel screen: the dock scrolls instead.
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(panel)
        scroll.setMinimumWidth(
            panel.minimumSizeHint().width() + scroll.verticalScrollBar().sizeHint().width()
        )
        self.quality_dock.setWidget(scroll)

    def _rebuild_recent_menu(self) -> None:
        self.recent_menu.clear()
        for path in self.settings.recent_novels:
            action = self.recent_menu.addAction(Path(path).stem)
            action.setToolTip(path)
            action.triggered.connect(lambda _c=False, p=path: self.open_novel(p))
        self.recent_menu.setEnabled(bool(self.settings.recent_novels))

    def _update_status(self) -> None:
        if not self.project.is_open:
            self.novel_label.setText("")
            return
        st = self.project.status()
        text = tr("全书 {chapters} 章 · {chars} 字").format(chapters=st.chapters, chars=f"{st.total_chars:,}")
        if st.needs_rebuild:
            text += " · " + tr("{n} 章待重建").format(n=len(st.needs_rebuild))
        self.novel_label.setText(text)

    # ------------------------------------------------------------------ tabs
    def _add_tab(self, widget: QWidget, title: str) -> int:
        """Add a tab with a quiet "×" close button (the style's own is a loud red box under our theme)."""
        index = self.tabs.addTab(widget, title)
        button = QToolButton()
        button.setText("×")
        button.setAutoRaise(True)
        button.setToolTip(tr("关闭"))
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        button.setStyleSheet("QToolButton { border: none; padding: 0 2px; color: #8a8a8a; font-size: 13pt; }"
                             "QToolButton:hover { color: #b23b3b; }")  # fmt: skip
        button.clicked.connect(lambda _c=False, w=widget: self._on_tabs_close_requested(self.tabs.indexOf(w)))
        self.tabs.tabBar().setTabButton(index, QTabBar.ButtonPosition.RightSide, button)
        return index

    def chapter_tab(self, number: int) -> ChapterTab | None:
        for i in range(self.tabs.count()):
            w = self.tabs.widget(i)
            if isinstance(w, ChapterTab) and w.number == number:
                return w
        return None

    def current_editor(self) -> ChapterEditor | None:
        w = self.tabs.currentWidget()
        return w.editor if isinstance(w, ChapterTab) else None

    def editors(self) -> list[ChapterEditor]:
        return [
            w.editor for i in range(self.tabs.count()) if isinstance(w := self.tabs.widget(i), ChapterTab)
        ]

    def open_chapter(self, number: int) -> ChapterTab | None:
        if not self.project.is_open:
            return None
        if number not in {c.number for c in self.project.chapters()}:
            if number == self._live_chapter and self._live is not None:
                self.center.setCurrentWidget(self.tabs)
                self.tabs.setCurrentWidget(self._live)
            return None
        self.center.setCurrentWidget(self.tabs)
        tab = self.chapter_tab(number)
        if tab is None:
            tab = ChapterTab(self.project, number)
            tab.editor.counts_changed.connect(self._on_editor_counts_changed)
            tab.editor.chapter_saved.connect(self._on_editor_chapter_saved)
            tab.editor.save_failed.connect(self._on_editor_save_failed)
            tab.rebuild_requested.connect(self.request_rebuild)
            info = next((c for c in self.project.chapters() if c.number == number), None)
            title = chapter_label(info) if info else tr("第{n}章").format(n=number)
            index = self._add_tab(tab, title if len(title) <= 14 else title[:13] + "…")
            self.tabs.setTabToolTip(index, title)
        self.tabs.setCurrentWidget(tab)
        tab.editor.setFocus()
        self.tree.select_chapter(number)
        return tab

    def open_view(self, name: str, volume: int = 0) -> QWidget | None:
        if not self.project.is_open or name not in VIEWS:
            return None
        self.center.setCurrentWidget(self.tabs)
        view = self._views.get(name)
        if view is None or self.tabs.indexOf(view) < 0:
            import importlib

            title, module, cls_name = VIEWS[name]
            cls = getattr(importlib.import_module(module), cls_name)
            view = cls(self.project)
            if hasattr(view, "chapter_requested"):
                view.chapter_requested.connect(self.open_chapter)
            self._views[name] = view
            self._add_tab(view, tr(title))
        elif hasattr(view, "refresh"):
            view.refresh()
        if volume and hasattr(view, "show_volume"):
            view.show_volume(volume)
        self.tabs.setCurrentWidget(view)
        return view

    def open_document(self, path: str, title: str) -> None:
        """A stored Markdown or JSON document, read-only (character sheets, world rules)."""
        if not self.project.is_open:
            return
        key = f"doc:{path}"
        view = self._views.get(key)
        if view is None or self.tabs.indexOf(view) < 0:
            browser = QTextBrowser()
            browser.setOpenExternalLinks(False)
            text = self.project.document(path) or ""
            if path.endswith(".md"):
                browser.setMarkdown(text)
            else:
                browser.setPlainText(text)
            browser.document().setDocumentMargin(24)
            self._views[key] = browser
            self._add_tab(browser, title)
            view = browser
        self.center.setCurrentWidget(self.tabs)
        self.tabs.setCurrentWidget(view)

    def save_all(self) -> None:
        for editor in self.editors():
            editor.save()

    def reload_chapters(self, numbers: list[int]) -> None:
        """Show the stored text again in open editors of ``numbers`` (after a restore or a replacement)."""
        for number in numbers:
            tab = self.chapter_tab(number)
            if tab is not None:
                tab.editor.load()

    # ------------------------------------------------------------------ editing
    def indent_current(self) -> None:
        editor = self.current_editor()
        if editor is not None:
            editor.indent_paragraphs()

    def show_history(self) -> RevisionDialog | None:
        editor = self.current_editor()
        if editor is None:
            return None
        editor.save()
        dialog = RevisionDialog.show_history(self, self.project, editor.number)
        dialog.revision_restored.connect(self._on_revision_restored)
        return dialog

    def show_find_replace(self) -> FindReplaceDialog | None:
        if not self.project.is_open:
            return None
        if self._find_dialog is None:
            dialog = FindReplaceDialog(self.project, self)
            dialog.save_requested.connect(self.save_all)
            dialog.hit_requested.connect(self.show_hit)
            dialog.chapters_replaced.connect(self.reload_chapters)
            self._find_dialog = dialog
        editor = self.current_editor()
        if editor is not None and editor.textCursor().hasSelection():
            self._find_dialog.find_edit.setText(editor.textCursor().selectedText())
        if self._find_dialog.isVisible():
            self._find_dialog.raise_()  # already open behind the window: bring it forward
        self._find_dialog.show()
        self._find_dialog.find_edit.setFocus()
        return self._find_dialog

    def show_hit(self, chapter: int, start: int, end: int) -> None:
        tab = self.open_chapter(chapter)
        if tab is None:
            return
        cursor = tab.editor.textCursor()
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        tab.editor.setTextCursor(cursor)
        tab.editor.ensureCursorVisible()

    def show_settings(self) -> None:
        from novel_desktop.ui.settings_dialog import SettingsDialog

        dialog = SettingsDialog(self)
        dialog.exec()

    # ------------------------------------------------------------------ pipeline
    def run_recommended(self, action: str) -> None:
        if action == "create":
            self.new_novel()
        elif action == "continue":
            self.show_workspace()
            self.continue_one()
        elif action == "rebuild":
            self.show_workspace()
            self.rebuild_stale()
        else:
            self.run_lifecycle(action)

    def run_lifecycle(self, action: str) -> None:
        """Quick start, volume planning, the volume review or the periodic checks, through the pipeline
        controller; its questions come as dialogs over this window."""
        if not self.project.is_open or self.pipeline.running:
            return
        self.save_all()
        state = self.project.recommendation().state
        if action == "quick_start" and state == "INIT":
            count = self._ask_volume_chapters(1)
            if count is None:
                return
            self.project.set_planned_chapters(1, count)
        if action == "review" and self.project.recommendation().action != "review":
            # The review ends the volume and leads to the next one's plan: not by a stray click mid-volume.
            answer = QMessageBox.question(
                self,
                tr("卷末回顾"),
                tr("本卷还没有写完。现在回顾会结束本卷，接着规划下一卷。确定现在回顾吗？"),
            )
            if answer != QMessageBox.StandardButton.Yes:
                return
        self.pipeline.volume_chapters = None
        if action == "plan":
            count = self._ask_volume_chapters(self.project.volume_to_plan())
            if count is None:
                return
            self.pipeline.volume_chapters = count
        self.show_workspace()
        self.progress_dock.show()
        self.pipeline.run_lifecycle(action)

    def _ask_volume_chapters(self, volume: int) -> int | None:
        count, ok = QInputDialog.getInt(
            self,
            tr("第 {v} 卷").format(v=volume),
            tr("第 {v} 卷计划写多少章？").format(v=volume),
            self.project.planned_chapters(volume),
            1,
            500,
        )
        return count if ok else None

    def _current_chapter_number(self) -> int | None:
        editor = self.current_editor()
        return editor.number if editor is not None else None

    def continue_one(self) -> None:
        self.continue_chapters(1)

    def continue_many(self) -> None:
        count, ok = QInputDialog.getInt(self, tr("续写 N 章"), tr("连续续写的章数："), 3, 1, 50)
        if ok:
            self.continue_chapters(count)

    def continue_chapters(self, count: int) -> None:
        if not self.project.is_open or self.pipeline.running:
            return
        self.save_all()  # the pipeline reads the chapters the author just edited
        self.progress_dock.show()
        self.pipeline.continue_chapters(count)

    def request_rebuild(self, chapter: int) -> None:
        if self.pipeline.running:
            QMessageBox.information(self, tr("正在运行"), tr("续写结束后再重建。"))
            return
        self.save_all()
        self.progress_dock.show()
        self.pipeline.rebuild(chapter)

    def rebuild_stale(self) -> None:
        if not self.project.is_open:
            return
        self.save_all()
        stale = self.project.status().needs_rebuild
        if not stale:
            QMessageBox.information(self, tr("重建"), tr("没有需要重建的章节：摘要和故事状态都与正文一致。"))
            return
        self.request_rebuild(stale[0])

    def _ensure_live_tab(self, chapter: int) -> LiveDraftView:
        if self._live is None or self.tabs.indexOf(self._live) < 0:
            self._live = LiveDraftView(self.pipeline)
            self._add_tab(self._live, "")
        self._live_chapter = chapter
        self.tabs.setTabText(self.tabs.indexOf(self._live), tr("第{n}章（生成中）").format(n=chapter))
        return self._live

    def _close_live_tab(self) -> None:
        if self._live is not None:
            index = self.tabs.indexOf(self._live)
            if index >= 0:
                self.tabs.removeTab(index)
            self._live.deleteLater()
            self._live = None

    # ------------------------------------------------------------------ slots
    def _on_project_chapters_changed(self) -> None:
        self.tree.reload()
        self._update_status()

    def _on_project_chapter_saved(self, _number: int, _marked: list[int]) -> None:
        self._update_status()

    def _on_editor_counts_changed(self, chars: int, selected: int) -> None:
        if self.sender() is not self.current_editor():
            return
        self._show_counts(chars, selected)

    def _show_counts(self, chars: int, selected: int) -> None:
        text = tr("本章 {chars} 字").format(chars=f"{chars:,}")
        if selected:
            text += " · " + tr("选中 {n} 字").format(n=f"{selected:,}")
        self.counts_label.setText(text)

    def _on_editor_chapter_saved(self, number: int, _marked: list[int]) -> None:
        from datetime import datetime

        self.save_label.setText(
            tr("第{n}章已保存 {time}").format(n=number, time=datetime.now().strftime("%H:%M:%S"))
        )
        self.tree.reload()

    def _on_editor_save_failed(self, message: str) -> None:
        self.save_label.setText(tr("未保存"))
        self.statusBar().showMessage(message, 15000)

    def _on_revision_restored(self, chapter: int, _marked: list[int]) -> None:
        self.reload_chapters([chapter])
        self.tree.reload()

    def _on_tree_view_requested(self, name: str, volume: int) -> None:
        self.open_view(name, volume)

    def _on_tabs_current_changed(self, _index: int) -> None:
        current = self.current_editor()
        for other in self.editors():
            if other is not current:
                other.save()  # switching away saves the tab that was left
        editor = current
        if editor is not None:
            self._show_counts(editor.chars, editor.selected_chars)
            self.tree.select_chapter(editor.number)
            # The report (its chart) is built on the next turn: the tab the author picked paints first.
            QTimer.singleShot(0, self._follow_current_chapter)
        else:
            self.counts_label.setText("")
        self._update_editor_actions()

    def _follow_current_chapter(self) -> None:
        editor = self.current_editor()
        if (
            editor is not None
            and self.quality_panel is not None
            and hasattr(self.quality_panel, "show_chapter")
        ):
            self.quality_panel.show_chapter(editor.number)

    def _update_editor_actions(self) -> None:
        has_editor = self.current_editor() is not None
        for action in self._editor_actions:
            action.setEnabled(has_editor)

    def _on_tabs_close_requested(self, index: int) -> None:
        found = self.tabs.widget(index)
        if found is None:
            return
        widget: QWidget = found
        if widget is self._live and self.pipeline.running:
            return  # the stream has nowhere else to go while the chapter is being written
        if isinstance(widget, ChapterTab):
            widget.editor.save()
        self.tabs.removeTab(index)
        for key, view in list(self._views.items()):
            if view is widget:
                del self._views[key]
        if widget is self._live:
            self._live = None
        widget.deleteLater()

    def _on_quality_jump_requested(self, chapter: int, quote: str) -> None:
        tab = self.open_chapter(chapter)
        if tab is None or not quote:
            return
        found = tab.editor.document().find(quote)
        if not found.isNull():
            tab.editor.setTextCursor(found)
            tab.editor.ensureCursorVisible()

    def _on_pipeline_running_changed(self, running: bool) -> None:
        self.stop_action.setEnabled(running)
        runs = (
            self.continue_action,
            self.continue_n_action,
            self.rebuild_action,
            self.quick_start_action,
            self.plan_action,
            self.review_action,
            self.check_action,
        )
        for action in runs:
            action.setEnabled(not running and self.project.is_open)
        self.story.set_enabled(not running and self.project.is_open)

    def _on_pipeline_chapter_started(self, chapter: int, _resumed: str) -> None:
        live = self._ensure_live_tab(chapter)
        self.center.setCurrentWidget(self.tabs)
        self.tabs.setCurrentWidget(live)

    def _on_pipeline_chapter_committed(self, chapter: int) -> None:
        # The tree and the quality panel already followed the commit (chapters_changed). Opening the new
        # chapter (an editor, its AI-phrase marks, its report) waits for the next event-loop turn, so the
        # window never freezes for all of it at once.
        self._close_live_tab()
        tab = self.chapter_tab(chapter)
        if tab is not None and not tab.editor.is_modified:
            tab.editor.load()
        QTimer.singleShot(0, lambda: self._show_committed(chapter, opened_here=tab is None))

    def _show_committed(self, chapter: int, *, opened_here: bool) -> None:
        if not self.project.is_open:
            return
        # 续写 N 章 shows each new chapter in turn: the previous one it opened goes, unless the author has
        # been editing it, so fifty chapters do not leave fifty tabs.
        previous = self.chapter_tab(self._auto_opened) if self._auto_opened else None
        if previous is not None and previous.number != chapter and not previous.editor.is_modified:
            index = self.tabs.indexOf(previous)
            if index >= 0:
                self._on_tabs_close_requested(index)
        self.open_chapter(chapter)
        self._auto_opened = chapter if opened_here else 0

    def _on_pipeline_failed(self, message: str) -> None:
        QMessageBox.warning(
            self,
            tr("{what}没有完成").format(what=tr(RUN_TITLES.get(self.pipeline.run_name, "操作"))),
            message,
        )

    def _on_pipeline_finished(self) -> None:
        if self._live is not None:
            index = self.tabs.indexOf(self._live)
            if index >= 0:
                self.tabs.setTabText(index, tr("第{n}章（未完成）").format(n=self._live_chapter))
        self.tree.reload()
        self._update_status()

    def _on_pipeline_rebuild_finished(self, report: dict[str, Any]) -> None:
        chapter = int(report.get("chapter", 0))
        disagreeing: dict[Any, list[str]] = report.get("disagreeing") or {}
        self.reload_chapters([chapter])
        if disagreeing:
            lines = "\n".join(
                tr("第{n}章：{what}").format(n=n, what="；".join(reasons) or tr("与新状态不一致"))
                for n, reasons in sorted(disagreeing.items(), key=lambda kv: int(kv[0]))
            )
            QMessageBox.warning(
                self,
                tr("重建完成"),
                tr(
                    "第{n}章已重新摘要，故事状态已重放。以下后续章节与新状态不一致，请检查：\n\n{lines}"
                ).format(n=chapter, lines=lines),
            )
        else:
            self.statusBar().showMessage(tr("第{n}章重建完成；后续章节与新状态一致").format(n=chapter), 10000)

    def _on_pipeline_lifecycle_finished(self, _action: str, message: str) -> None:
        # Planning writes outlines and contracts, a review archives a volume: views re-read what they show.
        self.tree.reload()
        for volume, _title in self.project.volumes():
            # The views re-read an outline on this signal, and keep one with unsaved edits as it is.
            self.project.document_changed.emit(f"{volume_dir(volume)}/outline.md")
        last = message.strip().splitlines()[-1] if message.strip() else ""
        self.statusBar().showMessage(last, 15000)

    def _on_pipeline_volume_finished(self, volume: int) -> None:
        self.statusBar().showMessage(
            tr("第 {v} 卷已写完：下一步是卷末回顾（写作 → 卷末回顾）").format(v=volume), 15000
        )

    # ------------------------------------------------------------------ closing
    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_all()
        self.save_layout()
        if self._find_dialog is not None:
            self._find_dialog.close()
        self.pipeline.cancel()
        if not self.pipeline.running:
            self.project.close()
        # else the app waits for the cancelled task, then closes the project (and releases the lock)
        super().closeEvent(event)

    async def shutdown(self) -> None:
        """After the window closed: wait for a cancelled run, then release the lock."""
        self.pipeline.cancel()
        await self.pipeline.wait()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks))
        self.project.close()
