"""The staged chapter in the window (issue 14, item 1): the tree's in-flight chapter and a run that stopped
for the author (手动改) open the draft tab; its 重新评审 and 直接提交 go through the draft controller."""

from __future__ import annotations

from typing import TYPE_CHECKING

from novel_desktop.controllers.draft_controller import DraftController, DraftRefused
from novel_desktop.i18n import tr
from novel_desktop.ui import alerts
from novel_desktop.ui.draft_panel import DraftTab

if TYPE_CHECKING:
    from novel_desktop.ui.main_window import MainWindow


class DraftFlows:
    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.controller = DraftController(window.project, window.pipeline, window)
        #: The chapter the last run stopped at for the author (opened once the run has ended).
        self._paused = 0
        # Connected before the window's own open_chapter: the draft tab replaces the ended run's live tab.
        window.tree.chapter_requested.connect(self._on_tree_chapter_requested)
        pc = window.pipeline
        pc.chapter_paused.connect(self._on_pipeline_chapter_paused)
        pc.chapter_committed.connect(self._on_pipeline_chapter_committed)
        pc.running_changed.connect(self._on_pipeline_running_changed)
        pc.finished.connect(self._on_pipeline_finished)
        window.tree.model.inflight_phase = self.inflight_phase

    def inflight_phase(self) -> str:
        """What the chapter in flight is doing, for the tree: running, awaiting_author or paused."""
        if self.window.pipeline.running:
            return "running"
        draft = self.controller.draft()
        return "awaiting_author" if draft is not None and draft.awaiting_author else "paused"

    # ------------------------------------------------------------------ the tab
    def tab(self) -> DraftTab | None:
        tabs = self.window.tabs
        for i in range(tabs.count()):
            widget = tabs.widget(i)
            if isinstance(widget, DraftTab):
                return widget
        return None

    def open_draft(self) -> DraftTab | None:
        """Open (or refresh and show) the staged chapter's tab; None when nothing is staged or a run is on."""
        w = self.window
        if not w.project.is_open or w.pipeline.running:
            return None
        draft = self.controller.draft()
        if draft is None:
            return None
        w.runs.close_live_tab()  # the run that stopped here streamed into it; the draft tab takes over
        tab = self.tab()
        if tab is not None and tab.number != draft.chapter:
            self._close(tab)
            tab = None
        if tab is None:
            tab = DraftTab(w.project, draft)
            tab.editor.keep = self.controller.keep_text
            kept = self.controller.kept_text(draft.chapter)
            if kept is not None and kept != draft.text:
                tab.editor.restore(kept)
                w.statusBar().showMessage(tr("已恢复你上次没改完的第{n}章").format(n=draft.chapter), 15000)
            tab.editor.counts_changed.connect(w._on_editor_counts_changed)
            tab.rejudge_requested.connect(self._on_tab_rejudge_requested)
            tab.commit_requested.connect(self._on_tab_commit_requested)
            title = tr("第{n}章（待修改）").format(n=draft.chapter)
            index = w._add_tab(tab, title)
            w.tabs.setTabToolTip(
                index, tr("暂存区里的第{n}章：改好后重新评审或直接提交").format(n=draft.chapter)
            )
        else:
            tab.show_draft(draft)
        tab.panel.set_busy(w.project.readonly)
        tab.editor.setReadOnly(w.project.readonly)
        w.center.setCurrentWidget(w.tabs)
        w.tabs.setCurrentWidget(tab)
        tab.editor.setFocus()
        return tab

    def _close(self, tab: DraftTab) -> None:
        tabs = self.window.tabs
        index = tabs.indexOf(tab)
        if index >= 0:
            tabs.removeTab(index)
        tab.deleteLater()

    # ------------------------------------------------------------------ the author's actions
    def _on_tab_rejudge_requested(self, number: int, text: str) -> None:
        w = self.window
        try:
            self.controller.rejudge(number, text)
        except DraftRefused as exc:
            alerts.warning(w, tr("重新评审"), str(exc))
            return
        w.progress_dock.show()

    def _on_tab_commit_requested(self, number: int, text: str) -> None:
        w = self.window
        try:
            stale = self.controller.commit(number, text)
        except DraftRefused as exc:
            alerts.warning(w, tr("直接提交"), str(exc))
            return
        tab = self.tab()
        if tab is not None:
            self._close(tab)
        w.tree.reload()
        w.open_chapter(number)
        message = tr("第{n}章已按现状提交（已标记质量问题）").format(n=number)
        if stale:
            message += tr("；改稿还没有摘要，请重建本章")
        w.statusBar().showMessage(message, 15000)

    # ------------------------------------------------------------------ the pipeline
    def _on_tree_chapter_requested(self, number: int) -> None:
        draft = self.controller.draft()
        if draft is not None and draft.chapter == number:
            self.open_draft()

    def _on_pipeline_chapter_paused(self, chapter: int, message: str) -> None:
        self._paused = chapter
        self.window.statusBar().showMessage(message, 15000)

    def _on_pipeline_chapter_committed(self, chapter: int) -> None:
        tab = self.tab()
        if tab is not None and tab.number == chapter:
            self._close(tab)

    def _on_pipeline_running_changed(self, running: bool) -> None:
        tab = self.tab()
        if tab is not None:
            tab.panel.set_busy(running or self.window.project.readonly)

    def _on_pipeline_finished(self) -> None:
        paused, self._paused = self._paused, 0
        if paused:
            tab = self.open_draft()
            if tab is not None:
                draft = self.controller.draft()
                if draft is not None:
                    tab.show_draft(draft, reload_text=True)
