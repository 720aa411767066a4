"""接续已有书稿 in the window (issue 19 point 1): the estimate, then the adoption run as the pipeline
controller's job, so its approvals reach the same proposal dialog the quick start uses and 停止 cancels it.

Signals: ``estimate_ready(list[str])`` (the estimate's lines), ``progress(done, total, text)``,
``finished(list[str])`` (what was stored) and ``failed(str)`` (why, in the author's language, with what is
kept). A stop keeps every chapter read; the next run resumes with the next one.
"""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import QObject, Signal

from novel_desktop.controllers.pipeline_controller import PipelineController


class AdoptController(QObject):
    estimate_ready = Signal(list)
    progress = Signal(int, int, str)
    finished = Signal(list)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, pipeline: PipelineController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.pipeline = pipeline
        self._job: Any = None

    def needed(self) -> bool:
        """Whether the open novel is an imported one not analysed yet (the start page shows the action)."""
        from novel_desktop.pipeline.adopt import adopt_needed

        project = self.pipeline.project
        return project.is_open and adopt_needed(project.store)

    async def estimate(self) -> list[str]:
        """The estimate's lines (no model call); also emitted as ``estimate_ready``."""
        from novel_desktop.pipeline.adopt import estimate

        settings = await self.pipeline._prepare()
        est = await asyncio.to_thread(estimate, self.pipeline.project.store, settings)
        lines = est.lines()
        self.estimate_ready.emit(lines)
        return lines

    def start(self) -> None:
        """Run the adoption as a job (nothing when the pipeline is busy or the novel read-only)."""
        if self.pipeline.running or not self.pipeline.project.is_open or self.pipeline.project.readonly:
            return
        self._job = self.pipeline.jobs.run("adopt", lambda _job: self._run(), title="接续已有书稿")

    def stop(self) -> None:
        self.pipeline.cancel()
        if self._job is not None:
            self._job.cancel()

    async def _run(self) -> None:
        from novel_desktop.llm.errors import LLMError
        from novel_desktop.pipeline.adopt import AdoptError, adopt
        from novel_desktop.pipeline.approval import ApprovalError
        from novel_desktop.pipeline.interaction import AnswersNeeded, GateBlocked, InteractionCancelled

        settings = await self.pipeline._prepare()
        store = self.pipeline.project.store
        try:
            async with self.pipeline._session(settings) as session:
                report = await adopt(
                    store,
                    session.agents.adopt,
                    session.agents.planning,
                    session.interaction,
                    on_progress=self.progress.emit,
                )
        except (asyncio.CancelledError, InteractionCancelled):
            self.cancelled.emit()
            return
        except AdoptError as exc:
            self.failed.emit(exc.message)
            return
        except (LLMError, ApprovalError, AnswersNeeded, GateBlocked) as exc:
            self.failed.emit(f"{exc}；已分析的章节已保存，再次运行会继续")
            return
        finally:
            self.pipeline.project.notify_pipeline_commit()
        self.finished.emit(report.messages)


__all__ = ["AdoptController"]
