"""The judge's issues as suggestions, for the window (issue 14, item 7).

:meth:`SuggestionsController.request` asks the fix suggester for edits to a chapter as a job of the pipeline
controller's runner (with its session: settings, client, agents), and reports them with ``ready`` — or says
why not with ``failed``. The window shows them in :mod:`novel_desktop.ui.suggestions_view`, where the author
accepts or rejects each; accepted ones change the editor's text, which is saved as any edit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Signal

from novel_desktop.controllers.jobs import Job
from novel_desktop.controllers.pipeline_controller import PipelineController
from novel_desktop.domain.suggestions import ChapterSuggestion
from novel_desktop.i18n import tr


@dataclass
class ChapterSuggestions:
    """What the window shows: the chapter, the judge's findings, the suggestions found in the text."""

    chapter: int
    issues: list[str]
    suggestions: list[ChapterSuggestion]
    dropped: list[str] = field(default_factory=list)
    cost_usd: float = 0.0


class SuggestionsController(QObject):
    """Fetches a chapter's suggestions in the background; one request at a time."""

    #: A :class:`ChapterSuggestions`.
    ready = Signal(object)
    failed = Signal(str)
    busy_changed = Signal(bool)

    def __init__(self, pipeline: PipelineController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.pipeline = pipeline
        self._job: Job | None = None

    @property
    def busy(self) -> bool:
        return self._job is not None and self._job.running

    def request(self, chapter: int, *, fresh: bool = False) -> bool:
        """Start fetching chapter ``chapter``'s suggestions; False when one is already being fetched."""
        if self.busy:
            return False
        job = self.pipeline.jobs.run(
            "suggest",
            lambda _job: self._fetch(int(chapter), fresh),
            title=tr("第{n}章修改建议").format(n=chapter),
        )
        self._job = job
        job.succeeded.connect(self._on_job_succeeded)
        job.failed.connect(self.failed.emit)
        job.finished.connect(lambda: self.busy_changed.emit(False))
        self.busy_changed.emit(True)
        return True

    async def _fetch(self, chapter: int, fresh: bool) -> ChapterSuggestions:
        from novel_desktop.pipeline.suggestions import chapter_suggestions

        settings = await self.pipeline._prepare()
        async with self.pipeline._session(settings) as session:
            found = await chapter_suggestions(
                self.pipeline.project.store, session.agents.judge, chapter, fresh=fresh
            )
        return ChapterSuggestions(
            found.chapter,
            found.issues,
            found.suggestions,
            [*found.dropped, *found.warnings],
            found.cost_usd,
        )

    def _on_job_succeeded(self, result: Any) -> None:
        if isinstance(result, ChapterSuggestions):
            self.ready.emit(result)
