"""The context inspector for the window (issue 16 point 7): what each agent's prompt held for a chapter.

The same records as ``novel context``: the staged ones for the chapter in flight, else the committed
chapter's (kept in its pipeline log). Refusals (no novel open, a chapter never written) raise
:class:`ContextDenied` with the author's message.
"""

from __future__ import annotations

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.context_record import ChapterContext
from novel_desktop.i18n import tr
from novel_desktop.pipeline.context_records import ContextUnavailable, chapter_context


class ContextDenied(Exception):
    """There is nothing to inspect; the message is for the author."""


class ContextController:
    """Reads the open novel's context records."""

    def __init__(self, project: ProjectController) -> None:
        self.project = project

    def chapters(self) -> list[int]:
        """The chapters that can be inspected: the committed ones and the one in flight."""
        if not self.project.is_open:
            return []
        numbers = {c.number for c in self.project.chapters()}
        cp = self.project.checkpoint()
        if cp.get("inflight_chapter") and cp.get("pipeline_stage") not in (None, "committed"):
            numbers.add(int(cp["inflight_chapter"]))
        return sorted(numbers)

    def chapter(self, number: int) -> ChapterContext:
        """What chapter ``number``'s prompts held (see :func:`chapter_context`)."""
        if not self.project.is_open:
            raise ContextDenied(tr("没有打开的小说"))
        try:
            return chapter_context(self.project.store, number)
        except ContextUnavailable as exc:
            raise ContextDenied(tr("第{n}章还没有写，没有上下文记录").format(n=number)) from exc
