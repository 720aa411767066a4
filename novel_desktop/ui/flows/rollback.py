"""回滚到此章 and 已移除的章节 in the window (issue 15 point 5): the tree's chapter menu asks to roll back, a
confirmation names what goes (and that it stays in the archive), the window follows (tree, status, the
removed chapters' editors closed); the archive view lists, shows and restores removed chapters."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction

from novel_desktop.controllers.rollback_controller import RollbackController, RollbackDenied
from novel_desktop.domain.records import RollbackPlan
from novel_desktop.i18n import join_list, tr
from novel_desktop.ui import alerts
from novel_desktop.ui.archive_view import ArchiveView

if TYPE_CHECKING:
    from novel_desktop.ui.main_window import MainWindow


def confirmation_text(plan: RollbackPlan) -> str:
    """What the confirmation says: the chapters that go, their chars, and that they stay in the archive."""
    names = join_list(tr("第{n}章").format(n=n) for n, _title, _chars in plan.chapters)
    text = tr("将移除 {names}（共 {count} 章，{chars} 字）").format(
        names=names, count=len(plan.chapters), chars=f"{plan.chars:,}"
    )
    if plan.staged_chapter:
        text += tr("，以及写作中的第{n}章").format(n=plan.staged_chapter)
    text += tr("。\n\n它们会保留在“已移除的章节”里，可以随时查看或恢复。") + tr(
        "状态、故事线记忆、伏笔和卷进度将回到第{n}章刚写完时的样子。"
    ).format(n=plan.to_chapter)
    return text


class RollbackFlows:
    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.controller = RollbackController(window.project, window.pipeline, window)
        self.view: ArchiveView | None = None
        window.tree.rollback_requested.connect(self.rollback_to)
        self.controller.rolled_back.connect(self._on_controller_rolled_back)
        self.archive_action = QAction(tr("已移除的章节…"), window)
        self.archive_action.setObjectName("ArchiveAction")
        self.archive_action.setStatusTip(tr("回滚移除的章节：查看、恢复"))
        self.archive_action.triggered.connect(lambda _checked=False: self.show_archive())
        window.story_menu.addSeparator()
        window.story_menu.addAction(self.archive_action)

    # ------------------------------------------------------------------ 回滚到此章
    def rollback_to(self, chapter: int) -> None:
        w = self.window
        try:
            plan = self.controller.plan(chapter)
        except RollbackDenied as exc:
            alerts.warning(w, tr("回滚到第{n}章").format(n=chapter), str(exc))
            return
        alerts.confirm(
            w,
            tr("回滚到第{n}章").format(n=chapter),
            confirmation_text(plan),
            lambda yes: self._on_confirmed(chapter, yes),
            default=False,
        )

    def _on_confirmed(self, chapter: int, yes: bool) -> None:
        if not yes:
            return
        w = self.window
        w.save_all()  # an unsaved edit of a chapter that goes is kept with it in the archive
        try:
            report = self.controller.rollback(chapter)
        except RollbackDenied as exc:
            alerts.warning(w, tr("回滚到第{n}章").format(n=chapter), str(exc))
            return
        message = tr("已回滚到第{n}章：移除 {count} 章（{chars} 字），可在“故事 → 已移除的章节”里查看或恢复")
        count, chars = len(report.removed), f"{report.removed_chars:,}"
        w.statusBar().showMessage(message.format(n=chapter, count=count, chars=chars), 20000)
        if self.view is not None and self.view.isVisible():
            self._refresh()

    def _on_controller_rolled_back(self, removed: list[int]) -> None:
        w = self.window
        # The author's own action: the tree and the counts follow at once (a commit's notice comes later).
        w.tree.reload()
        w._update_status()
        for number in removed:
            tab = w.chapter_tab(number)
            if tab is not None:  # saved before the rollback: its text is in the archive now
                w._on_tabs_close_requested(w.tabs.indexOf(tab))
        draft = w.runs.drafts.tab()
        if draft is not None and draft.number > w.project.checkpoint().get("last_completed_chapter", 0):
            w._on_tabs_close_requested(w.tabs.indexOf(draft))

    # ------------------------------------------------------------------ 已移除的章节
    def show_archive(self) -> ArchiveView | None:
        view = self._refresh()
        if view is None:
            return None
        if view.isVisible():
            view.raise_()  # already open behind the window: bring it forward
        view.show()
        return view

    def _refresh(self) -> ArchiveView | None:
        w = self.window
        try:
            chapters = self.controller.archived()
        except RollbackDenied as exc:
            alerts.warning(w, tr("已移除的章节"), str(exc))
            return None
        if self.view is None:
            self.view = ArchiveView(w)
            self.view.chapter_selected.connect(self._on_view_chapter_selected)
            self.view.restore_requested.connect(self._on_view_restore_requested)
        last = max((c.number for c in w.project.chapters()), default=0)
        self.view.show_archive(chapters, last + 1)
        return self.view

    def _on_view_chapter_selected(self, archive_id: int) -> None:
        if self.view is None:
            return
        try:
            self.view.show_chapter(self.controller.archived_chapter(archive_id))
        except RollbackDenied as exc:
            alerts.warning(self.view, tr("已移除的章节"), str(exc))

    def _on_view_restore_requested(self, archive_id: int) -> None:
        w = self.window
        try:
            info = self.controller.restore(archive_id)
        except RollbackDenied as exc:
            alerts.warning(self.view or w, tr("恢复章节"), str(exc))
            return
        self._refresh()
        w.tree.reload()
        w._update_status()
        w.open_chapter(info.chapter)
        w.statusBar().showMessage(
            tr("已恢复第{n}章；它需要重建（写作 → 重建）才能继续写").format(n=info.chapter), 20000
        )
