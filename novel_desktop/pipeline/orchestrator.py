"""The orchestrator: seed 004 §8.2's state machine over the whole novel lifecycle, and the state-aware
recommendation that ``/novel:start`` (§2.2) — the start page and ``novel start`` — shows first.

::

    INIT → QUICK_START → VOL_PLANNING → WRITING ⟲ (each chapter: write → summarize/refine → gate → [revise])
                                          ↓ (the volume's last chapter)
                                      VOL_REVIEW → VOL_PLANNING (the next volume)

:meth:`Orchestrator.step` reads the checkpoint (a cold start, §8.1), does the one next thing and records the
transition; :meth:`Orchestrator.run_until_blocked` steps until the author must act (a pause, a chapter left
for a manual edit) or a chapter budget is spent. It asks only through the :class:`InteractionManager` and
reports through typed events, so the same object runs under the GUI's qasync loop and under the CLI.
Errors are retried once (§8.2 任意 → ERROR_RETRY); a second failure stops with the checkpoint saved, and
the next run resumes where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from novel_desktop.agents.ports import ChapterAgents, PlanningAgents
from novel_desktop.domain.checkpoint import OrchestratorState as S
from novel_desktop.domain.phrase import Phrase, phrase_text
from novel_desktop.domain.phrase import say as _say
from novel_desktop.llm.errors import LLMError
from novel_desktop.pipeline import checks, quick_start, trial_plan, volume_plan, volume_review
from novel_desktop.pipeline.adopt import adopt_needed
from novel_desktop.pipeline.ahead import AheadWriter
from novel_desktop.pipeline.chapter import ChapterOutcome, ChapterPipeline, PipelineError
from novel_desktop.pipeline.events import PipelineEvent
from novel_desktop.pipeline.interaction import InteractionManager
from novel_desktop.pipeline.quick_start import QUICK_START_META, TRIAL_CHAPTERS, StyleChoice
from novel_desktop.pipeline.stale import chapter_span, refuse_stale
from novel_desktop.pipeline.steps import LifecycleError, StepReport, ask
from novel_desktop.storage.aio import db
from novel_desktop.storage.store import NovelStore, StoreError


# ---------------------------------------------------------------------------- events
@dataclass(frozen=True)
class StateChanged:
    """The §8.2 state moved (``old`` → ``new``)."""

    old: str
    new: str


@dataclass(frozen=True)
class StepFinished:
    """A lifecycle step finished: what it did, in the state it ran in, and what its LLM calls cost."""

    state: str
    message: str
    cost_usd: float
    input_tokens: int
    output_tokens: int
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChecksReported:
    """The periodic checks after a chapter (brief, drift, audit) and whether they pause the loop."""

    chapter: int
    message: str
    pause: bool


@dataclass(frozen=True)
class StepRetrying:
    """A step failed; it is tried once more (§8.2 ERROR_RETRY)."""

    state: str
    error: str


OrchestratorEvent = StateChanged | StepFinished | ChecksReported | StepRetrying | PipelineEvent

_RETRYABLE = (LLMError, LifecycleError, PipelineError, StoreError)


# ---------------------------------------------------------------------------- recommendation (§2.2)
def render(phrases: tuple[Phrase, ...], sep: str = "；") -> str:
    """The phrases as one Chinese text."""
    return sep.join(phrase_text(phrase) for phrase in phrases)


@dataclass(frozen=True)
class Recommendation:
    """What ``/novel:start`` recommends: the state, the recommended action and the menu (2-4 options).

    ``label_phrase`` and ``reason_phrases`` are the label and the reason as templates with their values (for a
    translated window); ``label`` and ``reason`` are the Chinese text."""

    state: str
    action: str
    label_phrase: Phrase
    reason_phrases: tuple[Phrase, ...]
    extra_options: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        return render((self.label_phrase,))

    @property
    def reason(self) -> str:
        return render(self.reason_phrases)

    @property
    def options(self) -> tuple[tuple[str, str], ...]:
        """The menu: the recommended step first, then the others."""
        return ((self.label, f"推荐：{self.reason}"), *self.extra_options)


#: What an in-flight chapter has finished, by its pipeline stage, as the author reads it.
STAGE_DONE = {"drafting": "开始写作", "drafted": "初稿完成", "refined": "润色完成", "judged": "评审完成"}


def effective_state(checkpoint: dict[str, Any], meta: dict[str, str]) -> str:
    """The §8.2 state the novel is in. Trial chapters run through the chapter pipeline, which records
    WRITING, so while the quick start's trial is open the state is QUICK_START whatever the stage says."""
    state = str(checkpoint.get("orchestrator_state") or S.INIT)
    if state in (S.WRITING, S.CHAPTER_REWRITE, S.ERROR_RETRY) and meta.get(QUICK_START_META) == "trial":
        return S.QUICK_START
    if state in (S.CHAPTER_REWRITE, S.ERROR_RETRY):
        return S.WRITING
    return state


def recommend(store: NovelStore | None) -> Recommendation:
    """The seed's state-aware recommendation (§2.2): no project → 创建新项目; volume unfinished → 继续写作;
    volume finished → 规划新卷; plus what the quick start, a pause, a hand edit or a review needs."""
    extra = (
        ("质量回顾", "运行到期的质量简报、文风漂移和一致性检查"),
        ("导入研究资料", "novel research import"),
    )
    if store is None:
        return Recommendation(S.INIT, "create", _say("创建新项目"), (_say("还没有这部小说"),))
    cp, meta = store.checkpoint(), store.meta()
    state = effective_state(cp, meta)
    volume = int(cp.get("current_volume") or 1)
    last = int(cp.get("last_completed_chapter") or 0)
    reason: list[Phrase] = []
    if state == S.VOL_PLANNING and adopt_needed(store):
        action, label = "adopt", _say("接续已有书稿")
        reason.append(_say("导入的 {last} 章还没有分析：人物、设定、故事线和文风都还空着", last=last))
    elif state == S.INIT:
        action, label = "quick_start", _say("创建新项目")
        reason.append(_say("回答题材、主角、冲突和平台，生成设定并试写 3 章"))
    elif state == S.QUICK_START:
        action, label = "quick_start", _say("继续快速起步")
        reason.append(_say("设定、文风或试写尚未完成"))
    elif state == S.VOL_PLANNING:
        action, label = "plan", _say("规划第 {volume} 卷", volume=volume)
        reason.append(_say("当前卷已完成或尚未规划"))
    elif state == S.VOL_REVIEW:
        action, label = "review", _say("第 {volume} 卷卷末回顾", volume=volume)
        reason.append(_say("本卷已写完，回顾后规划下一卷"))
    else:
        pending = [p for p in cp.get("pending_actions") or [] if isinstance(p, dict)]
        rng = volume_plan.volume_range(store, volume)
        stale = store.status().stale_chapters
        if stale:
            # A hand edit made the summaries and the state of these chapters stale (001 §10.8): writing on
            # would build on a state that no longer matches the text.
            action, label = "rebuild", _say("重建第 {first} 章起的故事状态", first=stale[0])
            reason.append(
                _say(
                    "第 {chapters} 章手改过，摘要和故事状态需要重建，之后再续写",
                    chapters=chapter_span(stale),
                )
            )
        elif pending:
            action, label = "continue", _say("继续写作")
            window = pending[-1].get("window")
            reason.append(_say("一致性检查发现严重问题（{window}），修正后再继续", window=window))
        elif rng is not None and last >= rng[1]:
            action, label = "review", _say("第 {volume} 卷卷末回顾", volume=volume)
            reason.append(_say("本卷已写完"))
        else:
            action, label = "continue", _say("继续写作")
            if rng is None:
                reason.append(_say("第 {volume} 卷写到第 {last} 章", volume=volume, last=last))
            else:
                total = rng[1] - rng[0] + 1
                written = min(max(0, last - rng[0] + 1), total)
                reason.append(
                    _say(
                        "第 {volume} 卷已写 {written}/{total} 章（第 {start}-{end} 章）",
                        volume=volume, written=written, total=total, start=rng[0], end=rng[1],
                    )
                )  # fmt: skip
            inflight, stage = cp.get("inflight_chapter"), str(cp.get("pipeline_stage") or "")
            if inflight is not None and stage in STAGE_DONE:
                # A cold start (§8.1): the author should know nothing was lost and what 续写 will do.
                reason.append(
                    _say(
                        "第 {chapter} 章上次停在“{stage}”，续写会从那里接着做",
                        chapter=inflight, stage=STAGE_DONE[stage],
                    )
                )  # fmt: skip
    return Recommendation(state, action, label, tuple(reason), extra)


# ---------------------------------------------------------------------------- the state machine
@dataclass
class StepOutcome:
    """What one :meth:`Orchestrator.step` did."""

    state: str
    next_state: str
    report: StepReport | None = None
    chapter: ChapterOutcome | None = None
    #: The author must act before the loop goes on (a pause, or a chapter left for a manual edit).
    blocked: bool = False

    @property
    def message(self) -> str:
        if self.chapter is not None:
            return self.chapter.line()
        return self.report.message if self.report else ""


@dataclass
class RunSummary:
    """What :meth:`Orchestrator.run_until_blocked` did."""

    steps: list[StepOutcome] = field(default_factory=list)
    chapters: list[ChapterOutcome] = field(default_factory=list)
    blocked: bool = False
    state: str = S.INIT

    @property
    def cost_usd(self) -> float:
        chapters = sum(c.cost_usd for c in self.chapters)
        return chapters + sum(s.report.cost_usd for s in self.steps if s.report is not None)


class Orchestrator:
    """The §8.2 state machine of one open (writable) novel."""

    def __init__(
        self,
        store: NovelStore,
        planning: PlanningAgents,
        chapter_agents: ChapterAgents,
        interaction: InteractionManager,
        *,
        emit: Callable[[OrchestratorEvent], None] | None = None,
        style: StyleChoice | None = None,
        volume_chapters: int | None = None,
    ) -> None:
        self.store = store
        self.planning = planning
        self.interaction = interaction
        self._emit: Callable[[OrchestratorEvent], None] = emit or (lambda _e: None)
        self.pipeline = ChapterPipeline(store, chapter_agents, interaction, emit=self._pipeline_event)
        self.style = style
        self.volume_chapters = volume_chapters

    def _pipeline_event(self, event: PipelineEvent) -> None:
        ahead = self.pipeline.ahead
        if ahead is not None:
            ahead.observe(event)
        self._emit(event)

    async def state(self) -> str:
        """The state the next step starts from."""
        cp = await db(self.store.checkpoint)
        return effective_state(cp, await db(self.store.meta))

    async def _set(self, old: str, new: str, **changes: Any) -> None:
        await db(self.store.update_checkpoint, orchestrator_state=new, **changes)
        if old != new:
            self._emit(StateChanged(old, new))

    def _finished(self, state: str, report: StepReport) -> None:
        self._emit(
            StepFinished(
                state,
                report.message,
                report.cost_usd,
                sum(c.input_tokens for c in report.calls),
                sum(c.output_tokens for c in report.calls),
                tuple(report.warnings),
            )
        )

    async def _volume_end(self, volume: int) -> int | None:
        rng = await db(volume_plan.volume_range, self.store, volume)
        return rng[1] if rng else None

    # ------------------------------------------------------------------ one step
    async def step(self) -> StepOutcome:
        """Do the one next thing the checkpoint calls for, and record the transition."""
        state = await self.state()
        if state == S.INIT:
            report = await quick_start.run_setup(self.store, self.interaction)
            return await self._done(state, S.QUICK_START, report)
        if state == S.QUICK_START:
            return await self._quick_start_step()
        if state == S.VOL_PLANNING:
            cp = await db(self.store.checkpoint)
            volume = int(cp.get("current_volume") or 1)
            if self.volume_chapters is not None:
                params = await db(volume_plan.plan_params, self.store, volume)
                if params.round == 0 and params.chapters != self.volume_chapters:
                    new = volume_plan.PlanParams(self.volume_chapters, params.direction, params.round)
                    await db(volume_plan.set_plan_params, self.store, volume, new)
            report = await volume_plan.plan_volume(self.store, self.planning, self.interaction, volume)
            return await self._done(state, await self.state(), report)
        if state == S.VOL_REVIEW:
            volume = int((await db(self.store.checkpoint)).get("current_volume") or 1)
            review = await volume_review.volume_review(self.store, self.planning, self.interaction, volume)
            self._finished(state, review)
            report = await volume_review.ask_review(self.store, self.planning, self.interaction, volume)
            report.calls = review.calls + report.calls
            report.message = f"{review.message}\n{report.message}"
            outcome = await self._done(state, await self.state(), report)
            outcome.blocked = report.pause
            return outcome
        return await self._writing_step(state)

    async def _done(self, state: str, new: str, report: StepReport) -> StepOutcome:
        if new != state:
            await self._set(state, new)
        self._finished(state, report)
        return StepOutcome(state, new, report, blocked=report.pause)

    async def _quick_start_step(self) -> StepOutcome:
        store, state = self.store, S.QUICK_START
        meta = await db(store.meta)
        if await db(store.document, "world/rules.json") is None:
            report = await quick_start.build_world(store, self.planning, self.interaction)
        elif not await db(store.list_documents, "characters/active/"):
            report = await quick_start.build_characters(store, self.planning, self.interaction)
        elif await db(store.document, "storylines/storyline-spec.json") is None:
            report = await quick_start.build_storylines(store, self.interaction)
        elif await db(store.document, "style-profile.json") is None:
            # The command line's choice holds for the first round; after 调整风格 the author chooses anew.
            choice = self.style if not meta.get(quick_start.ROUND_META) else None
            report = await quick_start.build_style(store, self.planning, self.interaction, choice)
        else:
            cp = await db(store.checkpoint)
            done = int(cp.get("last_completed_chapter") or 0)
            in_flight = cp.get("inflight_chapter") is not None and cp.get("pipeline_stage") not in (
                None,
                "committed",
            )
            if done < TRIAL_CHAPTERS or in_flight:
                return await self._trial_chapter()
            return await self._trial_review()
        return await self._done(state, S.QUICK_START, report)

    async def _trial_chapter(self) -> StepOutcome:
        store = self.store
        await db(refuse_stale, store)
        await trial_plan.prepare_trial(store, self.interaction)
        await db(store.set_meta, QUICK_START_META, "trial")
        outcome = await self.pipeline.run_chapter()
        # The chapter pipeline records WRITING; the trial belongs to the quick start.
        await db(store.update_checkpoint, orchestrator_state=S.QUICK_START, current_volume=1)
        return StepOutcome(
            S.QUICK_START, S.QUICK_START, chapter=outcome, blocked=outcome.status != "committed"
        )

    async def _trial_review(self) -> StepOutcome:
        store = self.store
        lines = []
        for n in range(1, TRIAL_CHAPTERS + 1):
            ev = await db(store.evaluation, n) or {}
            lines.append(f"第{n}章 {ev.get('overall', '—')} 分")
        profile = await db(store.document_json, "style-profile.json") or {}
        style = str(
            profile.get("name") or profile.get("reference_author") or profile.get("source_type") or ""
        )
        answer = await ask(
            store,
            self.interaction,
            quick_start.trial_review_spec(lines, style),
            await db(quick_start.trial_answer_path, store),
            "\n".join(lines),
        )
        choice = answer.answers.get("trial_action")
        if choice == "调整风格":
            await db(quick_start.reset_trial, store, everything=False)
            return await self._done(
                S.QUICK_START, S.QUICK_START, StepReport("重新选择文风，试写章节将按新文风重写")
            )
        if choice == "重来":
            await db(quick_start.reset_trial, store, everything=True)
            return await self._done(S.QUICK_START, S.INIT, StepReport("已清空设定和试写，从题材问题重新开始"))
        await db(store.set_meta, QUICK_START_META, "done")
        report = StepReport("试写确认：作为第 1 卷前 3 章，进入卷规划")
        await self._set(S.QUICK_START, S.VOL_PLANNING, current_volume=1)
        self._finished(S.QUICK_START, report)
        return StepOutcome(S.QUICK_START, S.VOL_PLANNING, report)

    async def _writing_step(self, state: str) -> StepOutcome:
        store = self.store
        cp = await db(store.checkpoint)
        volume = int(cp.get("current_volume") or 1)
        last = int(cp.get("last_completed_chapter") or 0)
        end = await self._volume_end(volume)
        in_flight = cp.get("inflight_chapter") is not None and cp.get("pipeline_stage") not in (
            None,
            "committed",
        )
        if end is None:
            await self._set(state, S.VOL_PLANNING)
            return StepOutcome(state, S.VOL_PLANNING, StepReport(f"第 {volume} 卷还没有大纲，先规划"))
        if last >= end and not in_flight:
            await self._set(state, S.VOL_REVIEW)
            return StepOutcome(state, S.VOL_REVIEW, StepReport(f"第 {volume} 卷已写完，进入卷末回顾"))
        await db(refuse_stale, store)  # before anything changes: not retried, the author must rebuild
        pending = [p for p in cp.get("pending_actions") or [] if isinstance(p, dict)]
        if any(p.get("type") == "consistency_audit" for p in pending):
            # Writing on after an audit pause means the author has dealt with its findings.
            kept = [
                p
                for p in cp.get("pending_actions") or []
                if not isinstance(p, dict) or p.get("type") != "consistency_audit"
            ]
            await db(store.update_checkpoint, pending_actions=kept)
        outcome = await self.pipeline.run_chapter()
        ahead = self.pipeline.ahead
        if outcome.status != "committed":
            if ahead is not None:
                ahead.discard(f"第 {outcome.chapter} 章等待作者处理，预写的第 {outcome.chapter + 1} 章作废")
            return StepOutcome(state, S.WRITING, chapter=outcome, blocked=True)
        report = await checks.after_chapter(
            store, outcome.chapter, agents=self.planning, interaction=self.interaction
        )
        if report.message:
            self._emit(ChecksReported(outcome.chapter, report.message, report.pause))
        if report.pause and ahead is not None:
            n = outcome.chapter
            ahead.discard(f"第 {n} 章后的定期检查需要作者处理，预写的第 {n + 1} 章作废")
        new = await self.state()
        if outcome.chapter >= end and new == S.WRITING:
            await self._set(S.WRITING, S.VOL_REVIEW)
            new = S.VOL_REVIEW
        return StepOutcome(state, new, report if report.message else None, outcome, blocked=report.pause)

    # ------------------------------------------------------------------ the loop
    async def _queue_goes_on(self, n: int, written: int, max_chapters: int) -> bool:
        """Whether a queued run drafts chapter ``n + 1`` while ``n`` is judged (not past the queue, not into
        the next volume, not during the quick start's trial, not before a periodic check)."""
        if written + 1 >= max_chapters or await self.state() != S.WRITING:
            return False
        cp = await db(self.store.checkpoint)
        end = await self._volume_end(int(cp.get("current_volume") or 1))
        # A periodic check due after n may change what n + 1's writer reads (the drift corrections) or
        # pause the run: n + 1 then waits for it, as in a chapter-by-chapter run.
        return end is not None and n < end and not await db(checks.due_checks, self.store, n)

    async def _loop(
        self,
        summary: RunSummary,
        progress: dict[str, int],
        max_chapters: int | None,
        stop_at: frozenset[str],
        max_steps: int,
    ) -> None:
        for _ in range(max_steps):
            state = await self.state()
            summary.state = state
            if state in stop_at:
                break
            if state == S.WRITING and max_chapters is not None and progress["written"] >= max_chapters:
                cp = await db(self.store.checkpoint)
                end = await self._volume_end(int(cp.get("current_volume") or 1))
                if end is None or int(cp.get("last_completed_chapter") or 0) < end:
                    break
            outcome = await self._step_with_retry()
            summary.steps.append(outcome)
            if outcome.chapter is not None:
                summary.chapters.append(outcome.chapter)
                if state == S.WRITING and outcome.chapter.status == "committed":
                    progress["written"] += 1
            if outcome.blocked:
                summary.blocked = True
                break

    async def _step_with_retry(self) -> StepOutcome:
        try:
            return await self.step()
        except _RETRYABLE as exc:
            self._emit(StepRetrying(await self.state(), str(exc)))
            return await self.step()

    async def run_until_blocked(
        self,
        *,
        max_chapters: int | None = None,
        stop_at: frozenset[str] = frozenset(),
        max_steps: int = 10_000,
    ) -> RunSummary:
        """Step until the author must act, ``max_chapters`` chapters (trial chapters not counted) are written
        — it stops before the next chapter, after any review and planning — or a ``stop_at`` state is reached.
        """
        summary = RunSummary()
        progress = {"written": 0}
        if max_chapters is not None and max_chapters > 1:
            # A queued run: the next chapter's writer starts while this one is judged (pipeline/ahead.py).
            self.pipeline.ahead = AheadWriter(
                self.store,
                self.pipeline.agents,
                self._pipeline_event,
                lambda n: self._queue_goes_on(n, progress["written"], max_chapters),
            )
        try:
            await self._loop(summary, progress, max_chapters, stop_at, max_steps)
        finally:
            ahead, self.pipeline.ahead = self.pipeline.ahead, None
            if ahead is not None:
                await ahead.close("续写已停止，预写的章节作废")
        summary.state = await self.state()
        return summary


__all__ = [
    "ChecksReported",
    "Orchestrator",
    "OrchestratorEvent",
    "Phrase",
    "Recommendation",
    "RunSummary",
    "StateChanged",
    "StepFinished",
    "StepOutcome",
    "StepRetrying",
    "effective_state",
    "recommend",
    "render",
]
