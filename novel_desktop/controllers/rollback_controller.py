"""Rollback to a chapter and the archive of removed chapters, for the window (issue 15 point 5).

The same powers as ``novel rollback`` / ``novel archive``: what a rollback would remove (:meth:`plan`), the
rollback itself, and the archive's list, one chapter in full, and restoring one as the next chapter.
Refusals (no novel, read-only, a run going on, a target or restore the store refuses, a locked file) raise
:class:`RollbackDenied` with the author's message; nothing is changed then.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from novel_desktop.controllers.pipeline_controller import PipelineController
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.records import ArchivedChapter, ArchivedChapterInfo, RollbackPlan, RollbackReport
from novel_desktop.i18n import tr


class RollbackDenied(Exception):
    """The rollback or restore could not be done; the message is for the author. Nothing was changed."""


class RollbackController(QObject):
    """Rolls the open novel back and reads and restores its archive."""

    #: A rollback removed these chapters (the window closes their editors).
    rolled_back = Signal(list)
    #: An archived chapter came back as chapter N.
    restored = Signal(int)

    def __init__(
        self, project: ProjectController, pipeline: PipelineController, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.project = project
        self.pipeline = pipeline

    def _check(self, *, write: bool) -> None:
        if not self.project.is_open:
            raise RollbackDenied(tr("没有打开的小说"))
        if write and self.project.readonly:
            raise RollbackDenied(tr("小说是只读打开的，不能回滚或恢复章节"))
        if write and self.pipeline.running:
            raise RollbackDenied(tr("正在运行，等它结束后再回滚或恢复章节"))

    def plan(self, chapter: int) -> RollbackPlan:
        """What a rollback to ``chapter`` would remove."""
        from novel_desktop.storage.store import StoreError

        self._check(write=True)
        try:
            return self.project.store.rollback_plan(chapter)
        except StoreError as exc:
            raise RollbackDenied(str(exc)) from None

    def rollback(self, chapter: int) -> RollbackReport:
        """Roll back to ``chapter`` (one transaction); the window's tree and status follow."""
        from novel_desktop.storage.store import StoreError

        self._check(write=True)
        try:
            report = self.project.store.rollback_to(chapter)
        except StoreError as exc:
            raise RollbackDenied(str(exc)) from None
        self.rolled_back.emit(list(report.removed))
        self.project.notify_pipeline_commit()  # chapters_changed + status_changed
        return report

    def archived(self) -> list[ArchivedChapterInfo]:
        self._check(write=False)
        return self.project.store.archived_chapters()

    def archived_chapter(self, archive_id: int) -> ArchivedChapter:
        from novel_desktop.storage.store import StoreError

        self._check(write=False)
        try:
            return self.project.store.archived_chapter(archive_id)
        except StoreError as exc:
            raise RollbackDenied(str(exc)) from None

    def restore(self, archive_id: int) -> ArchivedChapterInfo:
        """Bring archived chapter ``archive_id`` back as the next chapter (stale until rebuilt)."""
        from novel_desktop.storage.store import StoreError

        self._check(write=True)
        try:
            info = self.project.store.restore_archived(archive_id)
        except StoreError as exc:
            raise RollbackDenied(str(exc)) from None
        self.restored.emit(info.chapter)
        self.project.notify_pipeline_commit()
        return info
