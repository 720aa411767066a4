"""Runs the chapter pipeline for the window: one asyncio task on the qasync loop, events turned into signals.

The pipeline core is plain asyncio (its store calls already go through ``asyncio.to_thread``), so running it
on the GUI's qasync loop keeps the window responsive without a QThread. This controller owns the task (a
reference is kept so it is neither garbage-collected nor orphaned), answers the pipeline's NOVEL_ASK
questions through an injectable *asker* (the modal :class:`AskDialog` by default), and cancels at once:
``cancel()`` cancels the task and any pending question, and whatever was not committed stays in staging,
where the next run resumes it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

from PySide6.QtCore import QObject, Signal

from novel_desktop.controllers import warm_up
from novel_desktop.controllers.jobs import Job, JobRunner
from novel_desktop.controllers.pipeline_events import emit_chapter_event
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.novel_ask import AnswerSpec, AnswerSpecInvalid
from novel_desktop.domain.novel_ask_answers import validate_answer_spec
from novel_desktop.i18n import paren, tr, tr_phrase, tr_phrases
from novel_desktop.pipeline.interaction import InteractionManager, InteractionRequest
from novel_desktop.storage import layout

log = logging.getLogger(__name__)

#: A question from the pipeline as the window sees it: ``.spec`` (a QuestionSpec), ``.context`` (text).
PipelineQuestion = InteractionRequest
#: The responder interface: answers a question with an AnswerSpec, None when the author cancels; may be a
#: coroutine function. The window installs one that opens AskDialog with ``open()``.
Asker = Callable[[PipelineQuestion], "AnswerSpec | Awaitable[AnswerSpec | None] | None"]


def resumable_stage_name(stage: str) -> str | None:
    """What a chapter stopped at checkpoint ``stage`` has done (Chinese, for tr()), when it waits in staging
    for 续写 to pick it up; None when nothing waits there."""
    from novel_desktop.pipeline.orchestrator import STAGE_DONE

    return STAGE_DONE.get(stage)


def _resumable() -> str:
    return tr("本章未提交，问题解决后再点“续写”会从中断处继续。")


def _rebuild_retry() -> str:
    return tr("重建没有完成，故事状态保持原样，问题解决后可以再次重建。")


def _lifecycle_retry() -> str:
    return tr("已完成的步骤都已保存，问题解决后再点同一个按钮会从中断处继续。")


def _action_retry() -> str:
    return tr("这项操作没有完成，小说保持原样。")


def _with_cost(lines: list[str], cost_usd: float) -> str:
    text = "\n".join(line for line in lines if line)
    return text + (paren(f"${cost_usd:.4f}") if cost_usd else "")


def _rejudged(result: Any) -> str:
    def score(value: float | None) -> str:
        return "—" if value is None else f"{value:.1f}"

    return tr("第{n}章 重新评审：{old} → {new} 分").format(
        n=result.chapter, old=score(result.old_overall), new=score(result.new_overall)
    )


#: Lifecycle steps the window runs through the Orchestrator (start page, 写作 menu).
LIFECYCLE_ACTIONS = ("quick_start", "plan", "review", "check")
#: On-demand actions (the 故事 menu).
ON_DEMAND_ACTIONS = (
    "add_character",
    "retire_character",
    "extend_world",
    "add_storyline",
    "import_research",
    "rejudge",
    "reevaluate",
)


class PipelineController(QObject):
    """Owns the running pipeline task; turns pipeline events into signals; cancels."""

    running_changed = Signal(bool)
    chapter_started = Signal(int, str)  # chapter, stage resumed from ("" for a fresh start)
    stage_started = Signal(int, str)  # chapter, stage value (events.Stage, or "gate")
    text_delta = Signal(int, str)
    text_reset = Signal(int)
    usage_updated = Signal(int, int, int, float)  # chapter, input tokens, output tokens, cost
    gate_decided = Signal(int, str, float, str)  # chapter, action, overall, reason
    gate_issues = Signal(int, list)  # chapter, each violation (with its rule) and issue the gate saw
    chapter_committed = Signal(int)
    #: A queued run drafts the next chapter early (issue 18's pipelining): chapter; then thrown away: why.
    draft_ahead = Signal(int)
    draft_discarded = Signal(int, str)
    #: The chapter stopped for the author (e.g. 手动改 on a low score); the message says what to do.
    chapter_paused = Signal(int, str)
    warning = Signal(int, str)
    #: A NOVEL_ASK question arrived (an InteractionRequest); the asker answers it.
    question_asked = Signal(object)
    #: The author stopped the run (停止, or cancelled a question); nothing half-written was kept.
    cancelled = Signal()
    failed = Signal(str)
    #: A rebuild after a manual edit finished: the RebuildReport as a dict.
    rebuild_finished = Signal(object)
    #: The periodic checks after a chapter (quality brief, style drift, audit): chapter, report, pause.
    checks_reported = Signal(int, str, bool)
    #: Nothing was written: these chapters are stale (rebuild from the first, then write on).
    stale_refused = Signal(list)
    #: The volume's last chapter is written: volume number (the next step is its review).
    volume_finished = Signal(int)
    #: The §8.2 state moved: old, new (orchestrator state names).
    state_changed = Signal(str, str)
    #: A lifecycle step finished (quick start, planning, review, checks, an on-demand action): its report.
    step_finished = Signal(str)
    #: A lifecycle run or an on-demand action ended: its name and what the author should do next.
    lifecycle_finished = Signal(str, str)
    finished = Signal()

    def __init__(
        self,
        project: ProjectController,
        parent: QObject | None = None,
        *,
        asker: Asker | None = None,
        jobs: JobRunner | None = None,
    ) -> None:
        super().__init__(parent)
        self.project = project
        #: The responder: who answers the pipeline's questions (the window installs its dialog; tests a
        #: function). None: every question is cancelled.
        self.asker: Asker | None = asker
        #: Every run is a job of this runner (the window's, so it shows them with the others).
        self.jobs = jobs or JobRunner(self)
        self._job: Job | None = None
        self._interaction: InteractionManager | None = None
        self._chapter = 0
        #: Chapters per volume for the next planning (the window asks the author).
        self.volume_chapters: int | None = None
        #: What the current (or last) run is: "continue", "rebuild", a lifecycle or an on-demand action.
        self.run_name = "continue"
        self.requested_chapters = 1  #: how many chapters the last 续写 asked for

    # ------------------------------------------------------------------ public API
    @property
    def running(self) -> bool:
        return self._job is not None and self._job.running

    @property
    def current_chapter(self) -> int:
        """The chapter the last run worked on (0 before any run)."""
        return self._chapter

    def continue_chapters(self, count: int = 1) -> None:
        """Start writing ``count`` chapters (no-op while running)."""
        if self.running or not self.project.is_open or self.project.readonly:
            return
        self.run_name, self.requested_chapters = "continue", max(1, int(count))
        self._start(self._run_chapters(self.requested_chapters))

    def rebuild(self, chapter: int) -> None:
        """Re-summarize a hand-edited chapter and replay the state; ``rebuild_finished`` reports it."""
        if self.running or not self.project.is_open or self.project.readonly:
            return
        self.run_name = "rebuild"
        self._start(self._run_rebuild(int(chapter)))

    def run_lifecycle(self, action: str) -> None:
        """Run one lifecycle step of seed 004 §8.2 through the Orchestrator, asking through the dialogs:
        ``quick_start`` (setup questions → world → characters → style → 3 trial chapters → review → plan
        volume 1), ``plan`` (plan the current or next volume), ``review`` (the volume review) or ``check``
        (the periodic checks due now). ``lifecycle_finished`` says what to do next."""
        if self.running or not self.project.is_open or self.project.readonly:
            return
        if action not in LIFECYCLE_ACTIONS:
            raise ValueError(f"unknown lifecycle action {action!r}")
        self.run_name = action
        self._start(self._guarded(lambda: self._lifecycle(action), _lifecycle_retry))

    def run_action(self, name: str, /, **params: Any) -> None:
        """Run an on-demand action (seed 004 §6 Layer 3) as the owned task: ``add_character``
        (description), ``retire_character`` (slug, reason), ``extend_world`` (request), ``add_storyline``
        (storyline_id, name, description), ``import_research`` (files), ``rejudge`` (chapter) or
        ``reevaluate`` (chapters). ``lifecycle_finished`` reports the result."""
        if self.running or not self.project.is_open or self.project.readonly:
            return
        if name not in ON_DEMAND_ACTIONS:
            raise ValueError(f"unknown action {name!r}")
        self.run_name = name
        self._start(self._guarded(lambda: self._on_demand(name, params), _action_retry))

    def run_in_session(self, name: str, work: Callable[[Any], Awaitable[None]]) -> bool:
        """Run ``work(session)`` (a NovelSession over the open novel whose questions reach the asker) as this
        controller's job: ``running`` holds, 停止 cancels it, errors ``work`` lets through become ``failed``.
        False (nothing started) while running, closed or read-only. 接续已有书稿 runs this way."""
        if self.running or not self.project.is_open or self.project.readonly:
            return False
        self.run_name = name

        async def in_session() -> None:
            async with self._session(await self._prepare()) as session:
                await work(session)

        self._start(self._guarded(in_session, _lifecycle_retry))
        return True

    async def settings(self) -> Any:
        """The LLM settings a run would use (loaded off the GUI thread; a problem is a ``warning``)."""
        return await self._prepare()

    def cancel(self) -> None:
        """Stop at once; the novel stays as it was (the chapter stays in staging, resumable)."""
        if self._interaction is not None:
            self._interaction.cancel_pending()
        if self._job is not None:
            self._job.cancel()

    async def wait(self) -> None:
        """Wait until the current run (if any) has ended — for shutdown after ``cancel()``."""
        if self._job is not None:
            await self._job.wait()

    # ------------------------------------------------------------------ job plumbing
    def _start(self, coro: Coroutine[Any, Any, None]) -> None:
        async def work(_job: Job) -> None:
            await coro

        job = self.jobs.run(self.run_name, work, title=self.run_name)
        self._job = job
        # Cancelled before its first step, _guarded never ran to say so: the job does.
        job.cancelled.connect(self.cancelled.emit)
        job.finished.connect(lambda: self._on_job_finished(job, coro))
        self.running_changed.emit(True)

    def _on_job_finished(self, job: Job, coro: Coroutine[Any, Any, None]) -> None:
        coro.close()  # a run cancelled before its first step never started it
        if job is not self._job:
            return
        self._interaction = None
        self.running_changed.emit(False)
        self.finished.emit()

    async def _guarded(self, work: Callable[[], Awaitable[None]], after: Callable[[], str]) -> None:
        """Run ``work`` and turn every way it can end into one signal; the task itself never raises.

        ``after`` says what state the novel is left in and how to carry on, appended to every error.
        """
        from novel_desktop.llm.errors import LLMError
        from novel_desktop.pipeline.chapter import PipelineError
        from novel_desktop.pipeline.interaction import AnswersNeeded, GateBlocked, InteractionCancelled
        from novel_desktop.pipeline.stale import StaleChaptersError
        from novel_desktop.storage.store import StoreError

        try:
            await work()
        except asyncio.CancelledError:
            # Cancellation is the author's 停止: report it and end the task normally.
            self._log_cancel()
            self.cancelled.emit()
        except InteractionCancelled:
            self._log_cancel()
            self.cancelled.emit()
        except StaleChaptersError as exc:
            self.stale_refused.emit(exc.chapters)
        except LLMError as exc:
            self.failed.emit(f"{tr_phrase(exc.message_phrase)}\n{after()}")
        except (PipelineError, GateBlocked, AnswersNeeded, StoreError) as exc:
            self.failed.emit(f"{exc}\n{after()}")
        except OSError as exc:
            self.failed.emit(
                tr("读写文件失败：{error}。请检查磁盘空间和权限。").format(error=exc) + "\n" + after()
            )
        except Exception as exc:  # an unexpected bug must not kill the loop; it is logged with its traceback
            log.exception("pipeline run failed")
            self.failed.emit(
                tr("意外错误：{error}。请把日志发给开发者；").format(error=f"{type(exc).__name__}: {exc}")
                + after()
            )

    def _log_cancel(self) -> None:
        log.info("pipeline run cancelled at chapter %s", self._chapter)

    # ------------------------------------------------------------------ continue
    async def _run_chapters(self, count: int) -> None:
        await self._guarded(lambda: self._write(count), _resumable)

    def warm_up(self) -> None:
        """Load the heavy libraries in the background (the window calls this once it is shown), so the first
        续写 starts at once. Harmless to call again; a run awaits the same work."""
        warm_up.pending()

    async def wait_ready(self) -> None:
        """Wait for the background warm-up (starting it if needed)."""
        task = warm_up.pending()
        if task is not None:
            await asyncio.shield(task)

    async def _prepare(self) -> Any:
        """Settings and the slow imports, off the GUI thread."""
        from novel_desktop.llm.settings import load_settings

        await self.wait_ready()
        loaded = await asyncio.to_thread(load_settings)
        if loaded.problem:
            self.warning.emit(0, str(loaded.problem))
        return loaded.settings

    @asynccontextmanager
    async def _session(self, settings: Any) -> AsyncIterator[Any]:
        """A NovelSession over the open project for one run (its client, agents and the interaction manager
        that answers through :meth:`_respond`), whose HTTP client was built in a worker thread: building one
        loads the system's CA certificates into an SSL context, tens of milliseconds the window would
        otherwise freeze for."""
        import anthropic

        from novel_desktop.session import NovelSession

        http = await asyncio.to_thread(anthropic.DefaultAsyncHttpxClient)
        try:
            async with NovelSession(
                self.project.store, settings=settings, http_client=http, responder=self._respond
            ) as session:
                self._interaction = session.interaction
                yield session
        finally:
            await http.aclose()  # also when the client never started (no API key)

    def _volume_written(self) -> int | None:
        """The current volume when its last planned chapter is committed (nothing is in flight), else None."""
        from novel_desktop.pipeline.volume_plan import volume_range

        store = self.project.store
        cp = store.checkpoint()
        volume = int(cp.get("current_volume") or 1)
        rng = volume_range(store, volume)
        in_flight = cp.get("inflight_chapter") is not None and cp.get("pipeline_stage") not in (
            None,
            "committed",
        )
        done = int(cp.get("last_completed_chapter") or 0)
        return volume if rng is not None and done >= rng[1] and not in_flight else None

    def _ready_to_write(self) -> str | None:
        """Refuse (StaleChaptersError) while chapters are stale; what stops 续写 before any model request
        (no outline yet, a quick start not finished); else make WRITING the state the Orchestrator runs."""
        from novel_desktop.domain.checkpoint import OrchestratorState as S
        from novel_desktop.pipeline.orchestrator import effective_state
        from novel_desktop.pipeline.stale import refuse_stale

        store = self.project.store
        refuse_stale(store)
        volume, problem = int(store.checkpoint().get("current_volume") or 1), None
        if store.document(f"{layout.volume_dir(volume)}/outline.md") is None:
            problem = tr("第 {volume} 卷还没有大纲：先“规划卷”（新书先“快速起步”）或在“大纲”页手写。")
            problem = problem.format(volume=volume)
        if problem is None and effective_state(store.checkpoint(), store.meta()) == S.QUICK_START:
            problem = tr("快速起步还没有完成：先在开始页点“继续快速起步”，试写确认后再续写。")
        if problem is None and store.checkpoint().get("orchestrator_state") != S.WRITING:
            # The volume has an outline and chapters left to write (a hand-written outline, a review that was
            # not finished): 续写 writes them, as it always did.
            store.update_checkpoint(orchestrator_state=S.WRITING)
        return problem

    async def _write(self, count: int) -> None:
        """续写: the Orchestrator's writing loop (the same path as ``novel start -n``), up to ``count``
        chapters, stopping at the volume's end, a pause or a chapter left for the author."""
        from novel_desktop.domain.checkpoint import OrchestratorState as S
        from novel_desktop.pipeline.orchestrator import Orchestrator

        finished = await asyncio.to_thread(self._volume_written)
        if finished is not None:
            self.volume_finished.emit(finished)
            return
        problem = await asyncio.to_thread(self._ready_to_write)
        if problem:
            self.failed.emit(problem)
            return
        settings = await self._prepare()
        store = self.project.store
        stops = frozenset({S.VOL_REVIEW, S.VOL_PLANNING, S.INIT, S.QUICK_START})
        async with self._session(settings) as session:
            agents = session.agents
            orchestrator = Orchestrator(
                store, agents.planning, agents.chapter, session.interaction, emit=self._on_event
            )
            summary = await orchestrator.run_until_blocked(max_chapters=count, stop_at=stops)
        last = summary.chapters[-1] if summary.chapters else None
        if last is not None and last.status != "committed":
            self.chapter_paused.emit(last.chapter, last.message)
        elif not summary.blocked:  # the periodic checks' pause was reported (ChecksReported)
            finished = await asyncio.to_thread(self._volume_written)
            if finished is not None:
                self.volume_finished.emit(finished)

    # ------------------------------------------------------------------ lifecycle (§8.2)
    async def _lifecycle(self, action: str) -> None:
        from novel_desktop.domain.checkpoint import OrchestratorState as S
        from novel_desktop.pipeline import checks, volume_plan
        from novel_desktop.pipeline.orchestrator import Orchestrator, recommend

        settings = await self._prepare()
        store = self.project.store
        try:
            async with self._session(settings) as session:
                interaction = session.interaction
                orchestrator = Orchestrator(
                    store,
                    session.agents.planning,
                    session.agents.chapter,
                    interaction,
                    emit=self._on_event,
                    volume_chapters=self.volume_chapters,
                )
                if action == "quick_start":
                    # Through the trial chapters and their review to a confirmed plan of volume 1.
                    await orchestrator.run_until_blocked(max_chapters=0, stop_at=frozenset({S.VOL_REVIEW}))
                elif action == "plan":
                    await asyncio.to_thread(volume_plan.begin_planning, store, None, self.volume_chapters)
                    await orchestrator.run_until_blocked(stop_at=frozenset({S.WRITING, S.VOL_REVIEW, S.INIT}))
                elif action == "review":
                    await asyncio.to_thread(store.update_checkpoint, orchestrator_state=S.VOL_REVIEW)
                    await orchestrator.step()
                else:  # check
                    last, report = await checks.checks_now(
                        store, agents=orchestrator.planning, interaction=interaction
                    )
                    if report is None:
                        self.step_finished.emit(tr("第 {n} 章没有到期的检查。").format(n=last))
                    else:
                        self.checks_reported.emit(last, report.message, report.pause)
        finally:
            self.project.notify_pipeline_commit()  # planning documents and chapters may have changed
        rec = await asyncio.to_thread(recommend, store)
        self.lifecycle_finished.emit(
            action,
            tr("下一步：{label}——{reason}").format(
                label=tr_phrase(rec.label_phrase), reason=tr_phrases(rec.reason_phrases)
            ),
        )

    # ------------------------------------------------------------------ on-demand actions (§6 Layer 3)
    async def _on_demand(self, name: str, params: dict[str, Any]) -> None:
        from novel_desktop.pipeline import on_demand

        store = self.project.store
        if name == "retire_character":
            result = await asyncio.to_thread(
                on_demand.retire_character, store, params["slug"], params.get("reason", "")
            )
            message = result.message
        elif name == "add_storyline":
            result = await asyncio.to_thread(
                lambda: on_demand.add_storyline(
                    store,
                    storyline_id=params["storyline_id"],
                    name=params["name"],
                    description=params.get("description", ""),
                )
            )
            message = result.message
        elif name == "import_research":
            result = await asyncio.to_thread(on_demand.import_research_notes, store, params["files"])
            message = "\n".join([result.message, *result.warnings])
        else:
            message = await self._on_demand_llm(name, params)
        self.project.notify_pipeline_commit()
        self.lifecycle_finished.emit(name, message)

    async def _on_demand_llm(self, name: str, params: dict[str, Any]) -> str:
        """The actions that call a model: CharacterWeaver, WorldBuilder, QualityJudge (one or a batch)."""
        from novel_desktop.pipeline import on_demand

        settings = await self._prepare()
        store = self.project.store
        async with self._session(settings) as session:
            interaction = session.interaction
            if name == "add_character":
                result = await on_demand.add_character(
                    store,
                    description=params["description"],
                    agents=session.agents.planning,
                    interaction=interaction,
                )
                return _with_cost([result.message, *result.warnings], result.cost_usd)
            if name == "extend_world":
                result = await on_demand.extend_world(
                    store, session.agents.planning, params["request"], interaction
                )
                lines, cost = [result.message, *result.warnings], result.cost_usd
                if result.rule_ids:
                    # §6.5.5: the contracts the new or changed rules touch, and the offer to update them.
                    from novel_desktop.pipeline.rule_change import propagate_rule_change

                    impact = await propagate_rule_change(
                        store, session.agents.planning, interaction, result.rule_ids
                    )
                    lines += [impact.message, *impact.warnings]
                    cost += impact.cost_usd
                return _with_cost(lines, cost)
            if name == "rejudge":
                self._chapter = int(params["chapter"])
                judged = await on_demand.rejudge(store, session.agents.judge, self._chapter)
                return _with_cost([_rejudged(judged), *judged.warnings], judged.cost_usd)
            report = await on_demand.batch_reevaluate(
                store, session.agents.judge, list(params["chapters"]), on_progress=self.step_finished.emit
            )
            lines = [report.batch.note, *(_rejudged(r) for r in report.chapters.values())]
            lines += [
                tr("第{n}章 重新评审失败，原评审保留：{reason}").format(n=n, reason=reason)
                for n, reason in report.failed.items()
            ]
            return _with_cost(lines, report.cost_usd)

    # ------------------------------------------------------------------ events → signals
    def _on_event(self, event: Any) -> None:
        if emit_chapter_event(self, event):
            return  # the chapter's events (streamed text above all) come first, without the import below
        from novel_desktop.pipeline.orchestrator import (
            ChecksReported,
            StateChanged,
            StepFinished,
            StepRetrying,
        )

        if isinstance(event, StateChanged):
            self.state_changed.emit(event.old, event.new)
        elif isinstance(event, StepFinished):
            lines = [event.message, *event.warnings]
            self.step_finished.emit(_with_cost(lines, event.cost_usd))
        elif isinstance(event, ChecksReported):
            self.checks_reported.emit(event.chapter, event.message, event.pause)
        elif isinstance(event, StepRetrying):
            self.warning.emit(self._chapter, tr("出错，重试一次：{error}").format(error=event.error))

    # ------------------------------------------------------------------ questions
    async def _respond(self, request: PipelineQuestion) -> AnswerSpec | None:
        """The InteractionManager's responder: the window's asker answers; an invalid answer cancels."""
        self.question_asked.emit(request)
        if self.asker is None:
            log.warning("a question arrived and nobody answers questions: cancelled")
            return None
        try:
            result = self.asker(request)
            answer = await result if inspect.isawaitable(result) else result
        except Exception:
            log.exception("the question dialog failed")
            return None
        if answer is None:
            return None
        problems = validate_answer_spec(request.spec, answer.to_json_dict())
        if problems:
            self.warning.emit(self._chapter, str(AnswerSpecInvalid(problems)))
            return None
        return answer

    # ------------------------------------------------------------------ rebuild
    async def _run_rebuild(self, chapter: int) -> None:
        await self._guarded(lambda: self._rebuild(chapter), _rebuild_retry)

    async def _rebuild(self, chapter: int) -> None:
        from novel_desktop.pipeline.rebuild import rebuild_from

        self._chapter = chapter
        settings = await self._prepare()
        store = self.project.store
        async with self._session(settings) as session:
            report = await rebuild_from(
                store, session.agents.chapter, chapter, on_progress=self.step_finished.emit
            )
        self.project.notify_pipeline_commit()
        self.rebuild_finished.emit(dataclasses.asdict(report))
