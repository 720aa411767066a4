"""The main window: the project tree (left), chapter editors and views as tabs (centre), the quality report
(right) and the pipeline's progress and log (bottom); the start page when no novel is open.

Docks can be moved and closed; their layout and the window geometry are kept in ``window.ini`` in the
config folder. The window never touches the store: it reads and writes through :class:`ProjectController`
and runs the pipeline through :class:`PipelineController`. All signals are connected in :meth:`_connect`.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import (
    QCloseEvent,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFrame,
    QLabel,
    QScrollArea,
    QStackedWidget,
    QTabBar,
    QTabWidget,
    QTextBrowser,
    QToolButton,
    QWidget,
)

from novel_desktop.controllers.drops import Target
from novel_desktop.controllers.jobs import Job, JobRunner
from novel_desktop.controllers.pipeline_controller import PipelineController
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.controllers.settings_controller import AppSettings, load_app_settings
from novel_desktop.controllers.turns import next_turn
from novel_desktop.i18n import tr, tr_n
from novel_desktop.ui.ask_dialog import dialog_asker
from novel_desktop.ui.chapter_editor import ChapterEditor, ChapterTab
from novel_desktop.ui.chapter_tabs import label_chapter_tab
from novel_desktop.ui.cost_label import CostLabel
from novel_desktop.ui.drops import accept_drag, dropped_of
from novel_desktop.ui.field_drops import field_drops_paused
from novel_desktop.ui.find_replace import FindReplaceDialog
from novel_desktop.ui.flows.files import FileFlows
from novel_desktop.ui.flows.novels import NovelFlows
from novel_desktop.ui.flows.runs import RUN_TITLES, RunFlows
from novel_desktop.ui.gate_report import gate_report_for
from novel_desktop.ui.novel_banner import NovelBanner, save_failed, update_for_project, with_banner
from novel_desktop.ui.pipeline_dock import PipelineDock
from novel_desktop.ui.project_tree import ProjectTree
from novel_desktop.ui.revision_dialog import RevisionDialog
from novel_desktop.ui.start_page import StartPage
from novel_desktop.ui.story_actions import StoryActions
from novel_desktop.ui.window_actions import WindowActions

log = logging.getLogger(__name__)

APP_TITLE = "novel_desktop — 网文长篇创作"
#: The views that open as tabs, by name: (tab title, module, class).
VIEWS = {
    "outline": ("大纲", "novel_desktop.ui.outline_view", "OutlineView"),
    "storylines": ("故事线", "novel_desktop.ui.storyline_view", "StorylineView"),
    "foreshadowing": ("伏笔", "novel_desktop.ui.foreshadowing_view", "ForeshadowingView"),
    "analytics": ("统计", "novel_desktop.ui.analytics_view", "AnalyticsView"),
}


class MainWindow(WindowActions):
    """The writing workspace of one open novel."""

    @field_drops_paused()  # hundreds of widgets built in one go (no drag can arrive meanwhile)
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
        asker = dialog_asker(self, gate_report_for(self.project, lambda: self.quality_panel))
        self.pipeline = PipelineController(self.project, self, asker=asker, jobs=self.jobs)
        self._views: dict[str, QWidget] = {}
        self._find_dialog: FindReplaceDialog | None = None
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
        self.banner, self.saving_failed = NovelBanner(), False  # read-only novel; a failed save was told
        self.setCentralWidget(with_banner(self.banner, self.center))

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
        self.statusBar().addPermanentWidget(CostLabel(self.pipeline))
        #: The window shows jobs one way: this label while any runs, their progress in the status bar.
        self.busy_label = QLabel()
        self.statusBar().addWidget(self.busy_label)

        self.setAcceptDrops(True)  # style samples and manuscripts can be dropped anywhere on the window
        # The flows (ui/flows/): novels, files and the pipeline's runs.
        self.novels = NovelFlows(self)
        self.files = FileFlows(self)
        self.runs = RunFlows(self)
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

    def _connect(self) -> None:
        p = self.project
        p.chapters_changed.connect(self._on_project_chapters_changed)
        p.chapter_saved.connect(self._on_project_chapter_saved)
        # The pipeline's own signals are the run flow's (RunFlows connects them).
        self.jobs.job_started.connect(self._on_job_started)
        self.jobs.busy_changed.connect(self._on_jobs_busy_changed)
        self.tree.chapter_requested.connect(self.open_chapter)
        self.tree.view_requested.connect(self.open_view)
        self.tree.document_requested.connect(self.open_document)
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)
        self.tabs.tabCloseRequested.connect(self._on_tabs_close_requested)
        sp = self.start_page
        sp.action_requested.connect(self.runs.run_recommended)
        sp.new_requested.connect(self.novels.new_novel)
        sp.open_requested.connect(self.novels.open_novel_dialog)
        sp.import_requested.connect(self.files.import_manuscript_dialog)
        sp.demo_requested.connect(self.open_demo)
        sp.settings_requested.connect(self.show_settings)
        sp.recent_requested.connect(self.open_novel)

    # ------------------------------------------------------------------ layout memory
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._layout_restored:
            self._layout_restored = True
            self.apply_default_layout()

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
            readonly = tr("（只读）") if self.project.readonly else ""
            self.setWindowTitle(f"《{title}》{readonly} — {tr(APP_TITLE)}")
            if self.quality_panel is None:
                self._create_quality_panel()
        else:
            self.setWindowTitle(tr(APP_TITLE))
            if self.quality_panel is not None:
                self.quality_dock.setWidget(self._placeholder())
                self.quality_panel.deleteLater()
                self.quality_panel = None
            self.show_start_page()
        update_for_project(self)
        self._update_status()
        self._update_editor_actions()

    def _create_quality_panel(self) -> None:
        from novel_desktop.ui.quality_panel import QualityPanel

        panel = QualityPanel(self.project, defer_first=True)
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
        if st.stale_chapters:
            text += " · " + tr_n("{n} 章待重建", len(st.stale_chapters)).format(n=len(st.stale_chapters))
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

    @field_drops_paused()  # a new chapter tab: many widgets built in one go
    def open_chapter(self, number: int) -> ChapterTab | None:
        if not self.project.is_open:
            return None
        if number not in {c.number for c in self.project.chapters()}:
            live = self.runs.live
            if number == self.runs.live_chapter and live is not None:
                self.center.setCurrentWidget(self.tabs)
                self.tabs.setCurrentWidget(live)
            return None
        self.center.setCurrentWidget(self.tabs)
        tab = self.chapter_tab(number)
        if tab is None:
            tab = ChapterTab(self.project, number)
            tab.editor.counts_changed.connect(self._on_editor_counts_changed)
            tab.editor.chapter_saved.connect(self._on_editor_chapter_saved)
            tab.editor.save_failed.connect(self._on_editor_save_failed)
            tab.editor.files_dropped.connect(self.files.drops.editor_drop)
            self._add_tab(tab, "")
            label_chapter_tab(self.tabs, tab, self.project, number)
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
                label_chapter_tab(self.tabs, tab, self.project, number)

    # ------------------------------------------------------------------ editing
    def indent_current(self) -> None:
        if (editor := self.current_editor()) is not None:
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
        tab.editor.select_stored(start, end)  # the hit's offsets are in the stored text (heading included)

    def show_settings(self) -> QWidget:
        from novel_desktop.ui.settings_dialog import SettingsDialog

        return SettingsDialog.edit(self, jobs=self.jobs)

    # ------------------------------------------------------------------ jobs
    def _on_job_started(self, job: Job) -> None:
        job.progress.connect(lambda text: self.statusBar().showMessage(text, 10000))
        self.busy_label.setText(tr("{what}……").format(what=tr(RUN_TITLES.get(job.name, job.title))))

    def _on_jobs_busy_changed(self, busy: bool) -> None:
        if busy:
            QApplication.setOverrideCursor(Qt.CursorShape.BusyCursor)
        else:
            QApplication.restoreOverrideCursor()
            self.busy_label.setText("")

    # ------------------------------------------------------------------ the flows, as the window's own
    def open_novel(self, path: str | Path, *, remember: bool = True) -> bool:
        return self.novels.open_novel(path, remember=remember)

    def close_novel(self) -> bool:
        return self.novels.close_novel()

    def open_demo(self) -> bool:
        return self.novels.open_demo()

    def import_manuscript(self, source: str | Path) -> Job:
        return self.files.import_manuscript(source)

    def show_style(self, paths: list[str] | None = None) -> QWidget | None:
        return self.files.show_style(paths)

    def close_all_tabs(self) -> None:
        while self.tabs.count():
            widget = self.tabs.widget(0)
            self.tabs.removeTab(0)
            if widget is not None:
                widget.deleteLater()
        self._views.clear()
        self.runs.live = None

    # ------------------------------------------------------------------ drag and drop (ui/flows/drops.py)
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        accept_drag(event, Target.WINDOW)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        accept_drag(event, Target.WINDOW)

    def dropEvent(self, event: QDropEvent) -> None:
        if accept_drag(event, Target.WINDOW):
            self.files.drops.drop(dropped_of(event.mimeData()), Target.WINDOW)

    # ------------------------------------------------------------------ pipeline
    def _current_chapter_number(self) -> int | None:
        editor = self.current_editor()
        return editor.number if editor is not None else None

    # ------------------------------------------------------------------ slots
    def _on_project_chapters_changed(self) -> None:
        self.tree.reload()
        next_turn(self._update_status)  # its own turn: a commit's re-reads are spread out

    def _on_project_chapter_saved(self, _number: int, _marked: list[int]) -> None:
        self._update_status()

    def _on_editor_counts_changed(self, chars: int, selected: int) -> None:
        if self.sender() is not self.current_editor():
            return
        self._show_counts(chars, selected)

    def _show_counts(self, chars: int, selected: int) -> None:
        text = tr_n("本章 {chars} 字", chars).format(chars=f"{chars:,}")
        if selected:
            text += " · " + tr("选中 {n} 字").format(n=f"{selected:,}")
        self.counts_label.setText(text)

    def _on_editor_chapter_saved(self, number: int, _marked: list[int]) -> None:
        from datetime import datetime

        self.saving_failed = False
        self.save_label.setText(
            tr("第{n}章已保存 {time}").format(n=number, time=datetime.now().strftime("%H:%M:%S"))
        )
        if (tab := self.chapter_tab(number)) is not None:
            label_chapter_tab(self.tabs, tab, self.project, number)  # a renamed chapter's tab follows
        self.tree.reload()

    def _on_editor_save_failed(self, message: str) -> None:
        save_failed(self, message)

    def _on_revision_restored(self, chapter: int, _marked: list[int]) -> None:
        self.reload_chapters([chapter])
        self.tree.reload()

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
            next_turn(self._follow_current_chapter)
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
            self.quality_panel.show_chapter(editor.number, in_parts=True)

    def _update_editor_actions(self) -> None:
        has_editor = self.current_editor() is not None
        for action in self._editor_actions:
            action.setEnabled(has_editor)
        self.indent_action.setEnabled(has_editor and not self.project.readonly)

    def _on_tabs_close_requested(self, index: int) -> None:
        found = self.tabs.widget(index)
        if found is None:
            return
        widget: QWidget = found
        if widget is self.runs.live and self.pipeline.running:
            return  # the stream has nowhere else to go while the chapter is being written
        if isinstance(widget, ChapterTab):
            widget.editor.save()
        self.tabs.removeTab(index)
        for key, view in list(self._views.items()):
            if view is widget:
                del self._views[key]
        if widget is self.runs.live:
            self.runs.live = None
        widget.deleteLater()

    def _on_quality_jump_requested(self, chapter: int, quote: str) -> None:
        tab = self.open_chapter(chapter)
        if tab is None or not quote:
            return
        found = tab.editor.document().find(quote)
        if not found.isNull():
            tab.editor.setTextCursor(found)
            tab.editor.ensureCursorVisible()

    # ------------------------------------------------------------------ closing
    def setVisible(self, visible: bool) -> None:
        with field_drops_paused():  # showing lays out and polishes every widget at once, in one turn
            super().setVisible(visible)

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_all()
        self.save_layout()
        if self._find_dialog is not None:
            self._find_dialog.close()
        self.pipeline.cancel()
        self.jobs.cancel_all()  # the run, and any import, export or analysis under way
        if not self.jobs.busy:
            self.project.close()
        # else the app waits for the cancelled jobs, then closes the project (and releases the lock)
        super().closeEvent(event)

    async def shutdown(self) -> None:
        """After the window closed: wait for a cancelled run, then release the lock."""
        self.pipeline.cancel()
        await self.pipeline.wait()
        await self.jobs.shutdown()  # every other job (import, export, analysis …) too
        self.project.close()
