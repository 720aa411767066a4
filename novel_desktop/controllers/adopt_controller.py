"""接续已有书稿 in the window (issue 19 point 1): the estimate, then the adoption run as the pipeline
controller's job (:meth:`PipelineController.run_in_session`), so ``running`` holds while it goes on, 停止
cancels it, and its approvals reach the same proposal and ask dialogs the quick start uses.

Signals: ``progress(done, total, text)`` (``done`` counts the chapters analysed in the whole book, so a
resumed run goes on from where the last one stopped), ``finished(AdoptSummary)``, ``failed(str)`` (why, in
Chinese, with what is kept) and ``cancelled(str)`` (what is kept and where the next run resumes). A stop or
an error keeps every chapter read.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Signal

from novel_desktop.controllers.pipeline_controller import PipelineController
from novel_desktop.i18n import tr, tr_n, tr_phrase, tr_phrases

log = logging.getLogger(__name__)

#: The pipeline controller's run name of the adoption.
RUN_NAME = "adopt"


@dataclass(frozen=True)
class AdoptSummary:
    """What the finished adoption stored, and the start page's next step."""

    characters: int
    rules: int
    storylines: int
    foreshadowing: int
    next_step: str
    messages: list[str] = field(default_factory=list)


def _count(store: Any, path: str, key: str) -> int:
    data = store.document_json(path)
    items = data.get(key) if isinstance(data, dict) else None
    return len(items) if isinstance(items, list) else 0


def kept_message(store: Any) -> str:
    """How many chapters are analysed and where the next run goes on (after a stop or an error)."""
    from novel_desktop.pipeline.adopt import pending_chapters

    pending = pending_chapters(store)
    done = len(store.list_chapters()) - len(pending)
    if not pending:
        return tr_n("全部 {done} 章都已分析；再次运行会接着确认设定。", done).format(done=done)
    return tr("已分析的 {done} 章已保存；再次运行会从第 {next} 章继续。").format(done=done, next=pending[0])


def progress_text(pending: list[int], done: int, message: str) -> str:
    """The progress line in the window's language. The pipeline's own line (for the CLI) is Chinese: "待分析
    N 章" before the first chapter, then "第 n 章已分析：<the note's summary>", the summary in the book's own
    words, kept as it is."""
    if done == 0:
        count = len(pending)
        return tr_n("待分析 {n} 章", count).format(n=count) if count else tr("所有章节都已分析")
    chapter = pending[done - 1] if done <= len(pending) else done
    summary = message.partition("：")[2]
    return tr("第 {n} 章已分析：{summary}").format(n=chapter, summary=summary) if summary else message


class AdoptController(QObject):
    #: The estimate (an AdoptEstimate) asked for by :meth:`request_estimate`.
    estimate_ready = Signal(object)
    progress = Signal(int, int, str)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal(str)

    def __init__(self, pipeline: PipelineController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.pipeline = pipeline
        #: Whether the pipeline's current run is this controller's adoption.
        self.active = False
        pipeline.cancelled.connect(self._on_pipeline_cancelled)
        pipeline.failed.connect(self._on_pipeline_failed)
        pipeline.finished.connect(self._on_pipeline_finished)

    def needed(self) -> bool:
        """Whether the open novel is an imported one not analysed yet (the start page recommends it)."""
        from novel_desktop.pipeline.adopt import adopt_needed

        project = self.pipeline.project
        return project.is_open and adopt_needed(project.store)

    def available(self) -> bool:
        """Whether the open novel came from an imported manuscript (the menu's 接续已有书稿 applies)."""
        from novel_desktop.pipeline.adopt import is_imported

        project = self.pipeline.project
        return project.is_open and is_imported(project.store)

    async def estimate(self) -> Any:
        """The estimate (chapters to analyse and analysed, tokens, cost, the models, those without a price),
        an :class:`~novel_desktop.pipeline.adopt.AdoptEstimate`; no model call."""
        from novel_desktop.pipeline.adopt import estimate

        settings = await self.pipeline.settings()
        return await asyncio.to_thread(estimate, self.pipeline.project.store, settings)

    def request_estimate(self) -> None:
        """Compute the estimate as a job; ``estimate_ready`` (or ``failed``) reports it."""
        job = self.pipeline.jobs.run("adopt_estimate", lambda _job: self.estimate(), title=tr("接续已有书稿"))
        job.succeeded.connect(self.estimate_ready.emit)
        job.failed.connect(self.failed.emit)

    def start(self) -> bool:
        """Run the adoption (False, nothing started, while the pipeline runs or the novel is read-only)."""
        started = self.pipeline.run_in_session(RUN_NAME, self._run)
        self.active = started
        return started

    def stop(self) -> None:
        if self.active:
            self.pipeline.cancel()

    async def _run(self, session: Any) -> None:
        from novel_desktop.llm.errors import LLMError
        from novel_desktop.pipeline.adopt import AdoptError, adopt, pending_chapters
        from novel_desktop.pipeline.approval import ApprovalError
        from novel_desktop.pipeline.interaction import AnswersNeeded, GateBlocked

        store = self.pipeline.project.store
        pending = await asyncio.to_thread(pending_chapters, store)
        total = len(await asyncio.to_thread(store.list_chapters))
        offset = total - len(pending)

        def on_progress(done: int, _total: int, message: str) -> None:
            self.progress.emit(offset + done, total, progress_text(pending, done, message))

        try:
            agents = session.agents
            report = await adopt(
                store, agents.adopt, agents.planning, session.interaction, on_progress=on_progress
            )
        except (AdoptError, LLMError, ApprovalError, AnswersNeeded, GateBlocked) as exc:
            if isinstance(exc, AdoptError):
                why = tr_phrase(exc.phrase)
            elif isinstance(exc, LLMError):
                why = tr_phrase(exc.message_phrase)
            else:
                why = str(exc)
            kept = await asyncio.to_thread(kept_message, store)
            self.failed.emit(why if isinstance(exc, AdoptError) else f"{why}\n{kept}")
            return
        finally:
            self.pipeline.project.notify_pipeline_commit()
        summary = await asyncio.to_thread(self._summary, report.messages)
        self.finished.emit(summary)

    def _summary(self, messages: list[str]) -> AdoptSummary:
        from novel_desktop.pipeline.orchestrator import recommend

        store = self.pipeline.project.store
        rec = recommend(store)
        return AdoptSummary(
            characters=sum(p.endswith(".json") for p in store.list_documents("characters/active/")),
            rules=_count(store, "world/rules.json", "rules"),
            storylines=_count(store, "storylines/storylines.json", "storylines"),
            foreshadowing=_count(store, "foreshadowing/global.json", "foreshadowing"),
            next_step=tr("下一步：{label}——{reason}").format(
                label=tr_phrase(rec.label_phrase), reason=tr_phrases(rec.reason_phrases)
            ),
            messages=list(messages),
        )

    # ------------------------------------------------------------------ how the pipeline's run ended
    def _on_pipeline_cancelled(self) -> None:
        if self.active and self.pipeline.project.is_open:
            self.cancelled.emit(kept_message(self.pipeline.project.store))

    def _on_pipeline_failed(self, message: str) -> None:
        if self.active:  # an error _run did not expect (a file error, a bug): the dialog shows it too
            self.failed.emit(message)

    def _on_pipeline_finished(self) -> None:
        self.active = False


__all__ = ["RUN_NAME", "AdoptController", "AdoptSummary", "kept_message", "progress_text"]
