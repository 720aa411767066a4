"""The staged chapter after 手动改, for the window (issue 14, item 1): read it, 重新评审, 直接提交.

The window's draft tab reads :meth:`DraftController.draft` and calls :meth:`rejudge` (the author's text
replaces the staged one, then the pipeline runs as 续写 does: re-summarize, re-judge, gate — no writer) or
:meth:`commit` (commit as it stands, flagged). Refusals (a run is going on, nothing staged, an empty or
unchanged text, a read-only or locked novel) raise :class:`DraftRefused` with the author's message; nothing
is changed then.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from novel_desktop.controllers.pipeline_controller import PipelineController
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.draft import StagedDraft
from novel_desktop.i18n import tr


class DraftRefused(Exception):
    """The draft action could not be done; the message is for the author. Nothing was changed."""


class DraftController(QObject):
    """Reads and changes the staged chapter of the open novel."""

    #: The staged text was replaced by the author's (chapter number).
    draft_replaced = Signal(int)
    #: The staged chapter was committed as it stands (chapter number, needs a rebuild).
    draft_committed = Signal(int, bool)

    def __init__(
        self, project: ProjectController, pipeline: PipelineController, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.project = project
        self.pipeline = pipeline

    def draft(self) -> StagedDraft | None:
        """The staged chapter with the judge's issues, or None (no novel, nothing staged)."""
        from novel_desktop.pipeline.draft import staged_draft

        if not self.project.is_open:
            return None
        return staged_draft(self.project.store)

    def kept_text(self, n: int) -> str | None:
        """The author's unfinished edit of staged chapter ``n`` kept when its tab closed, if any."""
        from novel_desktop.pipeline.draft import work_in_progress

        if not self.project.is_open:
            return None
        return work_in_progress(self.project.store, n)

    def keep_text(self, n: int, text: str) -> bool:
        """Keep the author's unfinished edit (the tab closes, the window quits); False when it cannot be
        kept (read-only, a run going on, the chapter no longer staged) — the caller then warns."""
        from novel_desktop.pipeline.draft import keep_work_in_progress
        from novel_desktop.storage.store import StoreError

        if not self.project.is_open or self.project.readonly or self.pipeline.running:
            return False
        draft = self.draft()
        if draft is None or draft.chapter != n:
            return False
        try:
            keep_work_in_progress(self.project.store, n, text)
        except StoreError:
            return False
        return True

    def _writable(self, n: int) -> StagedDraft:
        if not self.project.is_open:
            raise DraftRefused(tr("没有打开的小说"))
        if self.project.readonly:
            raise DraftRefused(tr("小说是只读打开的，不能修改暂存的章节"))
        if self.pipeline.running:
            raise DraftRefused(tr("正在运行，等它结束后再操作暂存的章节"))
        draft = self.draft()
        if draft is None or draft.chapter != n:
            raise DraftRefused(tr("第{n}章已不在暂存区").format(n=n))
        return draft

    def _replace(self, draft: StagedDraft, text: str) -> None:
        from novel_desktop.pipeline.draft import DraftError, replace_staged_text
        from novel_desktop.storage.store import StoreError

        try:
            replace_staged_text(self.project.store, draft.chapter, text)
        except (DraftError, StoreError) as exc:
            raise DraftRefused(str(exc)) from None
        self.draft_replaced.emit(draft.chapter)
        self.project.status_changed.emit()

    def rejudge(self, n: int, text: str) -> None:
        """重新评审: stage the author's ``text`` for chapter ``n`` and run the pipeline as 续写 does.

        An unchanged text that the author already chose 手动改 for is refused (the same question is never
        asked twice about the same draft); an unchanged text already replaced (not yet re-judged) just runs.
        """
        draft = self._writable(n)
        if text != draft.text:
            self._replace(draft, text)
        elif draft.awaiting_author:
            raise DraftRefused(tr("第{n}章还没有改动：先修改正文，再重新评审").format(n=n))
        self.pipeline.continue_chapters(1)

    def commit(self, n: int, text: str) -> bool:
        """直接提交: commit chapter ``n`` with ``text`` as it stands, flagged like 接受.

        Returns whether the chapter needs a rebuild (the author's text has no summary yet).
        """
        from novel_desktop.pipeline.draft import DraftError, commit_as_is
        from novel_desktop.storage.store import StoreError

        draft = self._writable(n)
        if text != draft.text:
            self._replace(draft, text)
        try:
            commit_as_is(self.project.store, n)
        except (DraftError, StoreError) as exc:
            raise DraftRefused(str(exc)) from None
        stale = n in self.project.status().stale_chapters
        self.project.notify_pipeline_commit()
        self.draft_committed.emit(n, stale)
        return stale
