"""The pipeline's runs from the window: 续写 (one or N chapters), 重建, and the lifecycle steps (quick start,
volume planning, the volume review, the periodic checks), and what the window says when one ends. The runs
themselves are jobs of the pipeline controller; their questions come as dialogs through its responder."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QInputDialog

from novel_desktop.controllers.turns import next_turn
from novel_desktop.i18n import tr
from novel_desktop.ui import alerts
from novel_desktop.ui.flows.adopt import AdoptFlows
from novel_desktop.ui.flows.drafts import DraftFlows
from novel_desktop.ui.flows.stale import StaleFlows
from novel_desktop.ui.pipeline_dock import LiveDraftView
from novel_desktop.ui.queue_panel import QueueNotifier

if TYPE_CHECKING:
    from novel_desktop.ui.main_window import MainWindow

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
    "adopt": "接续已有书稿",
}


class RunFlows:
    def __init__(self, window: MainWindow) -> None:
        self.window = window
        #: The tab the running chapter streams into, and its chapter.
        self.live: LiveDraftView | None = None
        self.live_chapter = 0
        #: The chapter tab the pipeline opened for its last committed chapter (0: none, or the author's own).
        self.auto_opened = 0
        pc = window.pipeline
        pc.running_changed.connect(self.on_pipeline_running_changed)
        pc.chapter_started.connect(self.on_pipeline_chapter_started)
        pc.chapter_committed.connect(self.on_pipeline_chapter_committed)
        #: What each chapter drafted early (pipelining) streamed before its turn: shown once it starts.
        self.early: dict[int, list[str]] = {}
        pc.text_delta.connect(self._on_pipeline_text_delta)
        pc.stage_started.connect(self._on_pipeline_stage_started)
        pc.text_reset.connect(lambda chapter: self.early.pop(chapter, None))
        pc.draft_discarded.connect(lambda chapter, _why: self.early.pop(chapter, None))
        pc.finished.connect(self.on_pipeline_finished)
        pc.failed.connect(self._on_pipeline_failed)
        pc.rebuild_finished.connect(self._on_pipeline_rebuild_finished)
        pc.lifecycle_finished.connect(self._on_pipeline_lifecycle_finished)
        pc.volume_finished.connect(self._on_pipeline_volume_finished)
        self.drafts = DraftFlows(window)  # the staged chapter after 手动改 (issue 14)
        self.stale = StaleFlows(window)  # the 重建 bar, and 先重建 before 续写 (issue 15)
        #: The tray message (or status bar line) when a 续写 queue ends or a gate needs the author.
        self.notifier = QueueNotifier(window, pc)
        self.adopt = AdoptFlows(window)  # 接续已有书稿 (issue 19 point 1)

    def _read_only(self) -> bool:
        """A read-only novel runs nothing (every run writes); the author is told how to work on a copy."""
        w = self.window
        if not (w.project.is_open and w.project.readonly):
            return False
        alerts.info(
            w,
            tr("只读"),
            tr(
                "{path} 是只读打开的，不能续写、重建或规划。请用“导出…”另存一份，或复制到可写的文件夹再打开。"
            ).format(path=w.project.path),
        )
        return True

    def run_recommended(self, action: str) -> None:
        w = self.window
        if action == "create":
            w.novels.new_novel()
        elif self._read_only():
            return
        elif action == "continue":
            w.show_workspace()
            self.continue_one()
        elif action == "rebuild":
            w.show_workspace()
            self.rebuild_stale()
        elif action == "adopt":
            self.adopt.open()
        else:
            self.run_lifecycle(action)

    def run_lifecycle(self, action: str) -> None:
        """Quick start, volume planning, the volume review or the periodic checks, through the pipeline
        controller; its questions come as dialogs over the window."""
        w = self.window
        if not w.project.is_open or w.pipeline.running or self._read_only():
            return
        w.save_all()
        if action == "quick_start" and w.project.recommendation().state == "INIT":
            count = self._ask_volume_chapters(1)
            if count is None:
                return
            w.project.set_planned_chapters(1, count)
        if action == "review" and w.project.recommendation().action != "review":
            # The review ends the volume and leads to the next one's plan: not by a stray click mid-volume.
            alerts.confirm(
                w,
                tr("卷末回顾"),
                tr("本卷还没有写完。现在回顾会结束本卷，接着规划下一卷。确定现在回顾吗？"),
                lambda yes: self._start_lifecycle(action) if yes else None,
                default=False,
            )
            return
        self._start_lifecycle(action)

    def _start_lifecycle(self, action: str) -> None:
        w = self.window
        w.pipeline.volume_chapters = None
        if action == "plan":
            count = self._ask_volume_chapters(w.project.volume_to_plan())
            if count is None:
                return
            w.pipeline.volume_chapters = count
        w.show_workspace()
        w.progress_dock.show()
        w.pipeline.run_lifecycle(action)

    def _ask_volume_chapters(self, volume: int) -> int | None:
        w = self.window
        count, ok = QInputDialog.getInt(
            w,
            tr("第 {v} 卷").format(v=volume),
            tr("第 {v} 卷计划写多少章？").format(v=volume),
            w.project.planned_chapters(volume),
            1,
            500,
        )
        return count if ok else None

    def continue_one(self) -> None:
        self.continue_chapters(1)

    def continue_many(self) -> None:
        count, ok = QInputDialog.getInt(self.window, tr("续写 N 章"), tr("连续续写的章数："), 3, 1, 50)
        if ok:
            self.continue_chapters(count)

    def continue_chapters(self, count: int) -> None:
        w = self.window
        if not w.project.is_open or w.pipeline.running or self._read_only():
            return
        w.save_all()  # the pipeline reads the chapters the author just edited
        stale = w.project.status().stale_chapters
        if stale:  # never written past: 先重建 or 取消, and nothing is sent before the author chooses
            self.stale.ask(stale, count)
            return
        w.progress_dock.show()
        w.pipeline.continue_chapters(count)

    def request_rebuild(self, chapter: int) -> None:
        w = self.window
        if self._read_only():
            return
        if w.pipeline.running:
            alerts.info(w, tr("正在运行"), tr("续写结束后再重建。"))
            return
        w.save_all()
        w.progress_dock.show()
        w.pipeline.rebuild(chapter)

    def rebuild_stale(self) -> None:
        w = self.window
        if not w.project.is_open:
            return
        w.save_all()
        stale = w.project.status().stale_chapters
        if not stale:
            alerts.info(w, tr("重建"), tr("没有需要重建的章节：摘要和故事状态都与正文一致。"))
            return
        self.request_rebuild(stale[0])

    # ------------------------------------------------------------------ the live draft and the new chapter
    def _ensure_live_tab(self, chapter: int) -> LiveDraftView:
        w = self.window
        if self.live is None or w.tabs.indexOf(self.live) < 0:
            self.live = LiveDraftView(w.pipeline)
            w._add_tab(self.live, "")
        self.live_chapter = chapter
        w.tabs.setTabText(w.tabs.indexOf(self.live), tr("第{n}章（生成中）").format(n=chapter))
        return self.live

    def close_live_tab(self) -> None:
        w = self.window
        if self.live is not None:
            index = w.tabs.indexOf(self.live)
            if index >= 0:
                w.tabs.removeTab(index)
            self.live.deleteLater()
            self.live = None

    def on_pipeline_running_changed(self, running: bool) -> None:
        w = self.window
        w.stop_action.setEnabled(running)
        runs = (
            w.continue_action,
            w.continue_n_action,
            w.rebuild_action,
            w.quick_start_action,
            w.plan_action,
            w.review_action,
            w.check_action,
            w.adopt_action,
        )
        writable = w.project.is_open and not w.project.readonly
        for action in runs:
            action.setEnabled(not running and writable)
        w.story.set_enabled(not running and writable)

    def on_pipeline_chapter_started(self, chapter: int, _resumed: str) -> None:
        w = self.window
        early = "".join(self.early.pop(chapter, []))
        live = self._ensure_live_tab(chapter)
        if live.chapter != chapter or early:
            live.start(chapter, early)
        w.center.setCurrentWidget(w.tabs)
        w.tabs.setCurrentWidget(live)

    def on_pipeline_chapter_committed(self, chapter: int) -> None:
        w = self.window
        # The tree and the quality panel already followed the commit (chapters_changed). Opening the new
        # chapter (an editor, its AI-phrase marks, its report) waits for the next event-loop turn, so the
        # window never freezes for all of it at once.
        self.close_live_tab()
        tab = w.chapter_tab(chapter)
        if tab is not None and not tab.editor.is_modified:
            tab.editor.load()
        next_turn(lambda: self._show_committed(chapter, opened_here=tab is None))

    def _show_committed(self, chapter: int, *, opened_here: bool) -> None:
        w = self.window
        if not w.project.is_open:
            return
        # 续写 N 章 shows each new chapter in turn: the previous one it opened goes, unless the author has
        # been editing it, so fifty chapters do not leave fifty tabs.
        previous = w.chapter_tab(self.auto_opened) if self.auto_opened else None
        if previous is not None and previous.number != chapter and not previous.editor.is_modified:
            index = w.tabs.indexOf(previous)
            if index >= 0:
                w._on_tabs_close_requested(index)
        w.open_chapter(chapter)
        self.auto_opened = chapter if opened_here else 0

    def _on_pipeline_text_delta(self, chapter: int, text: str) -> None:
        if chapter != self.live_chapter:
            self.early.setdefault(chapter, []).append(text)

    def _on_pipeline_stage_started(self, chapter: int, stage: str) -> None:
        if stage in ("draft", "revise") and chapter != self.live_chapter:
            self.early.pop(chapter, None)  # a new text starts

    def on_pipeline_finished(self) -> None:
        w = self.window
        self.early.clear()
        if self.live is not None:
            index = w.tabs.indexOf(self.live)
            if index >= 0:
                w.tabs.setTabText(index, tr("第{n}章（未完成）").format(n=self.live_chapter))
        w.tree.reload()
        w._update_status()

    # ------------------------------------------------------------------ how a run ended
    def _on_pipeline_failed(self, message: str) -> None:
        if self.window.pipeline.run_name == "adopt" and self.adopt.dialog is not None:
            return  # the adoption's dialog says it, with what is kept
        title = tr("{what}没有完成").format(what=tr(RUN_TITLES.get(self.window.pipeline.run_name, "操作")))
        alerts.warning(self.window, title, message)

    def _on_pipeline_rebuild_finished(self, report: dict[str, Any]) -> None:
        from novel_desktop.ui.rebuild_report import show_rebuild_report

        w = self.window
        w.reload_chapters([int(n) for n in report.get("changes") or {}] or [int(report.get("chapter", 0))])
        if self.stale.continues_after_rebuild() and not report.get("disagreeing"):
            # 先重建 then 续写: nothing needs the author's eye, so the writing goes on without a dialog.
            w.statusBar().showMessage(tr("重建完成，后续章节与新状态一致；接着续写"), 10000)
            return
        self.rebuild_report = show_rebuild_report(
            w, report, lambda chapters: w.pipeline.run_action("reevaluate", chapters=list(chapters))
        )

    def _on_pipeline_lifecycle_finished(self, _action: str, message: str) -> None:
        w = self.window
        # Planning writes outlines and contracts, a review archives a volume: views re-read what they show.
        w.tree.reload()
        for path in w.project.outline_paths():
            # The views re-read an outline on this signal, and keep one with unsaved edits as it is.
            w.project.document_changed.emit(path)
        last = message.strip().splitlines()[-1] if message.strip() else ""
        w.statusBar().showMessage(last, 15000)

    def _on_pipeline_volume_finished(self, volume: int) -> None:
        self.window.statusBar().showMessage(
            tr("第 {v} 卷已写完：下一步是卷末回顾（写作 → 卷末回顾）").format(v=volume), 15000
        )
