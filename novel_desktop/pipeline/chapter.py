"""One chapter through the seed pipeline (004 §6 Layer 2b, §6.5.6, §8.2; 001 §10.4).

ChapterWriter (streamed) → Summarizer ∥ StyleRefiner → QualityJudge (twice on key chapters, the lower score
counts) → gate → [polish | revise ≤2 | ask the author] → commit in one transaction.

Every stage writes its output to staging and advances the checkpoint's ``pipeline_stage`` before the next
starts, so killing the process at any point and running again resumes from the last finished stage using
what staging holds. Nothing reaches the novel's chapters, summaries, state or evaluations until the commit.
The store is synchronous; every call to it goes through a worker thread so the event loop stays free.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from novel_desktop.agents.ports import (
    AgentResult,
    CallRecord,
    ChapterAgents,
    ChapterBrief,
    DraftTruncated,
    RefineFocus,
    RevisionOrder,
    WriteMode,
)
from novel_desktop.domain.evaluation import Evaluation
from novel_desktop.domain.gate import GateAction, GateDecision
from novel_desktop.domain.ledger import attributed
from novel_desktop.domain.polish import remaining_budget, style_points
from novel_desktop.domain.refine import RefineOutcome, apply_edits
from novel_desktop.domain.text import count_chars
from novel_desktop.pipeline.ahead import AheadWriter, stage_prepared
from novel_desktop.pipeline.commit_documents import stage_commit_documents
from novel_desktop.pipeline.context_records import staged_context
from novel_desktop.pipeline.events import (
    ChapterCommitted,
    ChapterStarted,
    GateDecided,
    PipelineEvent,
    PipelineWarning,
    Stage,
    StageFinished,
    StageStarted,
    TextDelta,
    TextReset,
    UsageUpdated,
)
from novel_desktop.pipeline.interaction import InteractionManager, resolve_gate
from novel_desktop.pipeline.length import fit_length
from novel_desktop.pipeline.live_usage import LiveUsage, stage_rows, stage_totals
from novel_desktop.pipeline.polish import record_edits
from novel_desktop.pipeline.stale import refuse_stale
from novel_desktop.pipeline.verdict import (
    SECONDARY_EVAL,
    Verdict,
    awaiting_unchanged,
    low_score_spec,
    save_staged_notes,
    staged_notes,
    staged_verdict,
    waiting_message,
)
from novel_desktop.storage import layout
from novel_desktop.storage.aio import db
from novel_desktop.storage.store import NovelStore, content_hash

T = TypeVar("T")


class PipelineError(Exception):
    """A stage could not produce what the next one needs; the chapter stays staged and resumable."""


@dataclass
class ChapterOutcome:
    """How a chapter ended this run."""

    chapter: int
    status: str  # "committed" | "awaiting_author"
    chars: int = 0
    scores: list[float] = field(default_factory=list)
    revisions: int = 0
    flagged: bool = False
    cost_usd: float = 0.0
    warnings: list[str] = field(default_factory=list)
    message: str = ""
    #: What the checks in code found at the last gate (one line each, see GateIssue.line).
    issues: list[str] = field(default_factory=list)

    def line(self) -> str:
        """The seed's one-line report: ``第49章 3050字 4.1 ✅`` or ``第50章 2890字 3.2→修订→3.6 ✅``."""
        score = "→修订→".join(f"{s:.1f}" for s in self.scores) if self.scores else "—"
        if self.status != "committed":
            return f"第{self.chapter}章 {self.chars}字 {score} ⏸ {self.message}"
        mark = "⚠️ 已标记" if self.flagged else "✅"
        return f"第{self.chapter}章 {self.chars}字 {score} {mark}"


class ChapterPipeline:
    """Runs chapters of one open (writable) novel."""

    def __init__(
        self,
        store: NovelStore,
        agents: ChapterAgents,
        interaction: InteractionManager,
        *,
        emit: Callable[[PipelineEvent], None] | None = None,
    ) -> None:
        self.store = store
        self.agents = agents
        self.interaction = interaction
        self._emit = emit or (lambda _e: None)
        self._live: LiveUsage | None = None
        #: A queued run's early drafting of the next chapter (set by the orchestrator; pipeline/ahead.py).
        self.ahead: AheadWriter | None = None
        #: The judge calls started alongside the summarizer and the refiner, by chapter: (start, tasks).
        self._early_judge: dict[int, tuple[float, list[asyncio.Future[AgentResult[Evaluation]]]]] = {}

    # ------------------------------------------------------------------ helpers
    def _secondary(self, n: int) -> str:
        return SECONDARY_EVAL.format(n=layout.num(n))

    async def _notes(self, n: int) -> dict[str, Any]:
        return await db(staged_notes, self.store, n)

    async def _save_notes(self, n: int, notes: dict[str, Any]) -> None:
        await db(save_staged_notes, self.store, n, notes)

    async def _stage(self, n: int, stage: str, *, rewriting: bool = False) -> None:
        state = "CHAPTER_REWRITE" if rewriting else "WRITING"
        await db(
            self.store.update_checkpoint, inflight_chapter=n, pipeline_stage=stage, orchestrator_state=state
        )

    def _record(
        self, n: int, notes: dict[str, Any], stage: Stage, calls: list[CallRecord], started: float
    ) -> None:
        duration = int((time.monotonic() - started) * 1000)
        notes["stages"].extend(stage_rows(stage.value, calls))
        self._emit(
            StageFinished(
                n,
                stage,
                duration,
                sum(c.input_tokens for c in calls),
                sum(c.output_tokens for c in calls),
                sum(c.cost_usd for c in calls),
            )
        )
        if self._live is not None and self._live.chapter == n:
            self._live.finished()  # this run's calls, as they ended, on top of the earlier stages
        else:
            self._emit(UsageUpdated(n, *stage_totals(notes["stages"])))

    def _warn(self, n: int, outcome_warnings: list[str], result: AgentResult[Any]) -> None:
        for w in result.warnings:
            self._say(n, outcome_warnings, w)

    def _say(self, n: int, outcome_warnings: list[str], message: str) -> None:
        """A warning for the author: kept in the outcome and shown once, as it happens (the CLI and the
        window print the PipelineWarning; neither prints the outcome's warnings again)."""
        outcome_warnings.append(message)
        self._emit(PipelineWarning(n, message))

    # ------------------------------------------------------------------ entry point
    async def next_chapter(self) -> int:
        """The chapter a run would work on: the in-flight one, else the one after the last committed."""
        cp = await db(self.store.checkpoint)
        inflight = cp.get("inflight_chapter")
        if inflight and cp.get("pipeline_stage") not in (None, "committed"):
            return int(inflight)
        return int(cp.get("last_completed_chapter") or 0) + 1

    async def run_chapter(self) -> ChapterOutcome:
        """Write (or resume) the next chapter until it is committed or needs the author; raise
        StaleChaptersError, before any model request, while earlier chapters are stale. Its model calls go
        into the cost ledger as this chapter's; its tokens and cost are emitted live as it streams."""
        await db(refuse_stale, self.store)
        n = await self.next_chapter()
        self._live = LiveUsage(n, self._emit)
        try:
            with attributed(chapter=n, watch=self._live.watch):
                return await self._run_chapter()
        finally:
            self._live = None

    async def _run_chapter(self) -> ChapterOutcome:
        cp = await db(self.store.checkpoint)
        n = await self.next_chapter()
        resumed = cp.get("pipeline_stage") if cp.get("inflight_chapter") == n else None
        notes = await self._notes(n)
        if self._live is not None:
            self._live.start_from(*stage_totals(notes["stages"]))
        text_path = layout.chapter_path(n)
        text = await db(self.store.staging, text_path)
        if resumed == "judged" and awaiting_unchanged(notes, text):
            return ChapterOutcome(
                n, "awaiting_author", count_chars(text or ""), list(notes["scores"]),
                int(notes["revisions"]), message=waiting_message(n),
            )  # fmt: skip
        self._emit(ChapterStarted(n, resumed))
        brief = await self.agents.brief(n)
        outcome = ChapterOutcome(n, "committed", revisions=int(notes["revisions"]))
        pending = notes.get("pending_revision")
        if resumed == "drafting" and text is not None and isinstance(pending, dict):
            # Killed while revising: redo that revision (the stronger model, the judge's fixes) on the text
            # the judge saw, instead of starting the chapter over with a fresh first draft.
            mode = WriteMode(pending.get("mode", WriteMode.REVISE.value))
            order = RevisionOrder.from_json(pending)
            text = await self._draft(brief, notes, mode, text, order, outcome)
            outcome.revisions = int(notes["revisions"])
        elif text is None or resumed in (None, "drafting", "committed"):
            prepared = await self.ahead.take(n) if self.ahead is not None and text is None else None
            await self._save_notes(n, notes)
            if prepared is not None:
                text = await stage_prepared(self, brief, notes, prepared, outcome)
            else:
                text = await self._draft(brief, notes, WriteMode.DRAFT, None, None, outcome)

        while True:
            cp = await db(self.store.checkpoint)
            stage = cp.get("pipeline_stage")
            if stage == "drafted":
                text = await fit_length(self, brief, notes, text, outcome)
                text = await self._summarize_and_refine(brief, notes, text, outcome)
            cp = await db(self.store.checkpoint)
            judged: Verdict | None = None
            if cp.get("pipeline_stage") == "refined":
                if self.ahead is not None:  # a resumed chapter's next one starts here
                    await self.ahead.text_final(brief, text)
                judged = await self._judge(brief, notes, text, outcome)
            # The judge stage's own verdict when it just ran (the gate reads the facts once per round).
            verdict = judged or await self._verdict(n, brief, notes, text)
            decision = verdict.decision
            issue_lines = tuple(verdict.report_lines())
            self._emit(
                GateDecided(
                    n,
                    decision.action.value,
                    verdict.score,
                    decision.reason,
                    int(notes["revisions"]),
                    issue_lines,
                )
            )
            outcome.scores = list(notes["scores"])
            outcome.issues = list(issue_lines)

            action: GateAction | None = decision.action
            if action is GateAction.ASK_USER:
                action = await self._ask_low_score(n, notes, verdict)
                if action is None:
                    notes["manual_asks"] = int(notes["manual_asks"]) + 1
                    notes["awaiting_author"] = content_hash(text)
                    await self._save_notes(n, notes)
                    outcome.status = "awaiting_author"
                    outcome.chars = count_chars(text)
                    outcome.message = "已留在暂存区，等待作者手动修改后提交"
                    outcome.cost_usd = sum(float(s["cost_usd"]) for s in notes["stages"])
                    return outcome
            # The author's own text is never rewritten by the refiner (issue 14): no polish either.
            if action is GateAction.POLISH and not notes["polished"] and not notes.get("author_edited"):
                text = await self._polish(brief, notes, text, verdict, outcome)
                if self.ahead is not None:  # the next chapter's early draft read the text before the polish
                    await self.ahead.text_final(brief, text)
            if action in (GateAction.PASS, GateAction.POLISH, GateAction.FORCE_PASS):
                flagged = decision.flagged or action is GateAction.FORCE_PASS
                return await self._commit(brief, notes, text, decision, flagged, outcome)
            # REVISE or REWRITE: a new text, then summarize, refine and judge it again.
            mode = WriteMode.REWRITE if action is GateAction.REWRITE else WriteMode.REVISE
            notes["revisions"] = int(notes["revisions"]) + 1
            notes["polished"] = False
            order = verdict.revision_order(int(notes["revisions"]))
            order = replace(order, earlier=tuple(notes.get("revised_violations") or ()))
            notes["pending_revision"] = {"mode": mode.value, **order.to_json()}
            await self._save_notes(n, notes)
            text = await self._draft(brief, notes, mode, text, order, outcome)
            outcome.revisions = int(notes["revisions"])

    # ------------------------------------------------------------------ stages
    async def _draft(
        self,
        brief: ChapterBrief,
        notes: dict[str, Any],
        mode: WriteMode,
        previous: str | None,
        revision: RevisionOrder | None,
        outcome: ChapterOutcome,
    ) -> str:
        n = brief.chapter
        stage = Stage.DRAFT if mode is WriteMode.DRAFT else Stage.REVISE
        rewriting = mode is not WriteMode.DRAFT
        await self._stage(n, "drafting", rewriting=rewriting)
        self._emit(StageStarted(n, stage))
        started = time.monotonic()
        try:
            result = await self.agents.write(
                brief,
                mode=mode,
                previous=previous,
                revision=revision,
                on_text=lambda t: self._emit(TextDelta(n, stage, t)),
                on_reset=lambda: self._emit(TextReset(n, stage)),
            )
        except DraftTruncated as exc:  # nothing of a cut-off text is staged; the stage stays "drafting"
            self._record(n, notes, stage, exc.calls, started)
            await self._save_notes(n, notes)
            raise PipelineError(exc.message) from None
        self._warn(n, outcome.warnings, result)
        if not result.value or not result.value.strip():
            raise PipelineError(f"第 {n} 章写作阶段没有产出正文 (the writer returned no text)")
        text = result.value
        self._record(n, notes, stage, result.calls, started)
        done = notes.pop("pending_revision", None)
        if isinstance(done, dict):  # what this revision was asked to fix, for the next round's order
            notes["revised_violations"] = list(done.get("violations") or [])
        author_text = bool(notes.pop("author_edited", None))
        kind = "draft" if mode is WriteMode.DRAFT else "revision"
        # A new text invalidates everything derived from the previous one.
        stale = (layout.summary_path(n), layout.delta_path(n), layout.evaluation_path(n), self._secondary(n))
        for path in stale:
            await db(self.store.delete_staging, path)
        if mode is WriteMode.DRAFT:
            await db(self.store.put_staging, layout.draft_path(n), text, chapter=n, kind="draft")
        else:
            # Keep the judged text this revision replaces and the revision itself: the commit stores both
            # in the chapter's history, so the author can compare what the judge saw with what changed.
            # Each hand edit of the staged draft took two version numbers too (pipeline/draft.py).
            k = 2 * (int(notes["revisions"]) + int(notes.get("manual_edits", 0)))
            judged = layout.version_path(n, k - 1)
            # A revision redone after a crash keeps the judged text staged the first time.
            if previous is not None and await db(self.store.staging, judged) is None:
                judged_kind = "manual" if author_text else "refined"
                await db(self.store.put_staging, judged, previous, chapter=n, kind=judged_kind)
            await db(self.store.put_staging, layout.version_path(n, k), text, chapter=n, kind="revision")
        await db(self.store.put_staging, layout.chapter_path(n), text, chapter=n, kind=kind)
        await self._save_notes(n, notes)
        await self._stage(n, "drafted", rewriting=rewriting)
        return text

    async def _summarize_and_refine(
        self, brief: ChapterBrief, notes: dict[str, Any], text: str, outcome: ChapterOutcome
    ) -> str:
        """Summarizer, StyleRefiner and QualityJudge run at once on the draft (issue 18: the critical path and
        one shared cached prefix): the refiner never changes plot, so the summary and the judgement of the
        draft hold for the refined text; :meth:`_judge` then uses these results."""
        n = brief.chapter
        # The author's replacement text (pipeline/draft.py) is re-summarized and re-judged, never restyled.
        authors = bool(notes.get("author_edited"))
        self._emit(StageStarted(n, Stage.SUMMARIZE))
        if not authors:
            self._emit(StageStarted(n, Stage.REFINE))
        self._emit(StageStarted(n, Stage.JUDGE))
        started = time.monotonic()
        refining = _no_edits() if authors else self.agents.refine(brief, text)
        if self.ahead is not None:  # a queued run: the next chapter's writer starts once the text is final
            refining = self.ahead.after_refine(brief, text, refining)
        judges = [False, True] if brief.key_chapter else [False]
        refine_task = asyncio.ensure_future(refining)  # first: a queued run's next writer waits for it
        tasks = [asyncio.ensure_future(self.agents.summarize(brief, text)), refine_task]
        judging: list[asyncio.Future[AgentResult[Evaluation]]] = [
            asyncio.ensure_future(self.agents.judge(brief, text, secondary=s)) for s in judges
        ]
        try:
            summary, edits = await asyncio.gather(*tasks)
            # The judges go on while the summary and the refined text are staged; _judge awaits them.
            self._early_judge[n] = (started, judging)
            return await self._stage_summary_and_refined(brief, notes, text, outcome, summary, edits, started)
        except BaseException:
            for task in [*tasks, *judging]:
                task.cancel()
            self._early_judge.pop(n, None)
            raise

    async def _stage_summary_and_refined(
        self,
        brief: ChapterBrief,
        notes: dict[str, Any],
        text: str,
        outcome: ChapterOutcome,
        summary: AgentResult[Any],
        edits: AgentResult[Any],
        started: float,
    ) -> str:
        n = brief.chapter
        authors = bool(notes.get("author_edited"))
        self._warn(n, outcome.warnings, summary)
        self._warn(n, outcome.warnings, edits)
        self._record(n, notes, Stage.SUMMARIZE, summary.calls, started)
        if not authors:
            self._record(n, notes, Stage.REFINE, edits.calls, started)

        if summary.value is not None:
            out = summary.value
            await db(self.store.put_staging, layout.summary_path(n), out.summary_markdown, chapter=n)
            if out.patch is not None:
                delta = json.dumps(out.patch, ensure_ascii=False)
                await db(self.store.put_staging, layout.delta_path(n), delta, chapter=n)
            memory_line = out.storyline_id or brief.storyline_id
            if out.storyline_memory and memory_line:
                path = layout.memory_path(memory_line)
                await db(self.store.put_staging, path, out.storyline_memory, chapter=n)
        else:
            self._say(n, outcome.warnings, f"第 {n} 章摘要未能生成，状态本章不更新（可稍后重建）")

        refined = text
        if authors:
            await self._save_notes(n, notes)
            await self._stage(n, "refined")
            return text
        if edits.value is not None and edits.value.edits:
            result = apply_edits(text, edits.value.edits)
            refined = result.text
            record_edits(notes, result)
        else:
            record_edits(notes, RefineOutcome(text))  # a new text: the old one's edits are not its budget
        await db(self.store.put_staging, layout.chapter_path(n), refined, chapter=n, kind="refined")
        await self._save_notes(n, notes)
        await self._stage(n, "refined")
        return refined

    async def _judge(
        self, brief: ChapterBrief, notes: dict[str, Any], text: str, outcome: ChapterOutcome
    ) -> Verdict:
        n = brief.chapter
        judges = [False, True] if brief.key_chapter else [False]
        early = self._early_judge.pop(n, None)
        if early is not None and len(early[1]) == len(judges):
            started, results = early[0], await asyncio.gather(*early[1])
        else:  # resumed after the refined text was staged: judge it now
            self._emit(StageStarted(n, Stage.JUDGE))
            started = time.monotonic()
            results = await asyncio.gather(*(self.agents.judge(brief, text, secondary=s) for s in judges))
        verdicts: dict[str, str] = {}
        for secondary, result in zip(judges, results, strict=True):
            self._warn(n, outcome.warnings, result)
            self._record(n, notes, Stage.JUDGE_SECONDARY if secondary else Stage.JUDGE, result.calls, started)
            if result.value is None:
                raise PipelineError(
                    f"第 {n} 章评审结果无法解析，章节保留在暂存区，可重试 (judge output unusable)"
                )
            path = self._secondary(n) if secondary else layout.evaluation_path(n)
            verdicts[path] = json.dumps(result.value.to_json_dict(), ensure_ascii=False, indent=2)
        await db(self.store.put_stagings, n, verdicts)  # a key chapter's two verdicts in one write
        verdict = await self._verdict(n, brief, notes, text)
        notes["scores"].append(round(verdict.score, 2))
        notes["gate_issues"] = [i.to_json() for i in verdict.issues]
        notes["gate_violations"] = verdict.judge_violation_lines()
        await self._save_notes(n, notes)
        await self._stage(n, "judged")
        return verdict

    async def _verdict(self, n: int, brief: ChapterBrief, notes: dict[str, Any], text: str) -> Verdict:
        verdict = await db(
            staged_verdict,
            self.store,
            n,
            revisions=int(notes["revisions"]),
            text=text,
            secondary=brief.key_chapter,
            facts=brief.facts,
        )
        if verdict is None:
            raise PipelineError(f"第 {n} 章没有评审结果 (no staged evaluation)")
        return verdict

    async def _polish(
        self, brief: ChapterBrief, notes: dict[str, Any], text: str, verdict: Verdict, outcome: ChapterOutcome
    ) -> str:
        """The second polish: the judge's style findings, within what the first pass left of the 15%."""
        n = brief.chapter
        left = remaining_budget(text, notes.get("refine_log") or [])
        focus = RefineFocus(style_points(verdict.evaluation), left)
        self._emit(StageStarted(n, Stage.POLISH))
        started = time.monotonic()
        edits = await self.agents.refine(brief, text, focus=focus)
        self._warn(n, outcome.warnings, edits)
        self._record(n, notes, Stage.POLISH, edits.calls, started)
        if edits.value is not None and edits.value.edits:
            result = apply_edits(text, edits.value.edits, budget=focus.budget)
            text = result.text
            record_edits(notes, result, append=True)
            await db(self.store.put_staging, layout.chapter_path(n), text, chapter=n, kind="refined")
        notes["polished"] = True
        await self._save_notes(n, notes)
        return text

    async def _ask_low_score(self, n: int, notes: dict[str, Any], verdict: Verdict) -> GateAction | None:
        """Seed §6 用户审核点 "低分章节": 自动修订 / 手动改 / 接受, as a NOVEL_ASK question."""
        spec = low_score_spec(n, verdict)
        # One question per revision round and per return from a manual edit, so each is asked afresh.
        rounds = f"r{notes['revisions']}-m{notes['manual_asks']}"
        answer_path = f"staging/novel-ask/chapter-{layout.num(n)}-low-score-{rounds}.answers.json"
        context = "；".join(verdict.evaluation.issues[:3]) or verdict.decision.reason
        answer = await resolve_gate(
            spec,
            answer_path,
            self.interaction,
            load=self.store.answer,
            save=self.store.put_answer,
            context=context,
        )
        choice = answer.answers.get("low_score_action")
        if choice == "接受":
            return GateAction.FORCE_PASS
        if choice == "手动改":
            return None
        return GateAction.REWRITE if verdict.decision.action is GateAction.REWRITE else GateAction.REVISE

    async def _commit(
        self,
        brief: ChapterBrief,
        notes: dict[str, Any],
        text: str,
        decision: GateDecision,
        flagged: bool,
        outcome: ChapterOutcome,
    ) -> ChapterOutcome:
        n = brief.chapter
        self._emit(StageStarted(n, Stage.COMMIT))
        cost = sum(float(s["cost_usd"]) for s in notes["stages"])
        log = {
            "chapter": n,
            "storyline_id": brief.storyline_id,
            "started_at": notes["started_at"],
            "stages": notes["stages"],
            "gate_decision": "force_pass" if flagged else decision.action.value,
            "revisions": int(notes["revisions"]),
            "scores": notes["scores"],
            "refine_edits": notes.get("refine_log", []),
            "gate_issues": notes.get("gate_issues", []),
            "gate_violations": notes.get("gate_violations", []),
            "context": await db(staged_context, self.store, n),
            "total_duration_ms": sum(int(s["duration_ms"]) for s in notes["stages"]),
            "total_cost_usd": round(cost, 6),
        }
        await db(self.store.put_staging, layout.log_path(n), json.dumps(log, ensure_ascii=False, indent=2))
        for msg in await db(stage_commit_documents, self.store, n):
            self._say(n, outcome.warnings, msg)
        result = await db(self.store.commit_chapter, n, volume=brief.volume, storyline_id=brief.storyline_id)
        if result.ops_skipped:
            self._say(n, outcome.warnings, f"第 {n} 章的状态补丁未能应用：{result.ops_skipped}")
            if result.rebuild_recommended:
                self._say(n, outcome.warnings, "状态补丁已累计跳过 3 次，建议重建状态（novel rebuild）")
        for dropped in result.dropped_ops:
            self._say(n, outcome.warnings, f"第 {n} 章丢弃了一个状态 op：{dropped}")
        await db(self.store.update_checkpoint, orchestrator_state="WRITING")
        outcome.chars = count_chars(text)
        outcome.revisions = int(notes["revisions"])
        outcome.flagged = flagged
        outcome.cost_usd = cost
        self._emit(
            ChapterCommitted(
                n,
                outcome.chars,
                outcome.scores[-1] if outcome.scores else None,
                tuple(outcome.scores),
                outcome.revisions,
                flagged,
                cost,
            )
        )
        return outcome


async def _no_edits() -> AgentResult[Any]:
    """The refiner's place when the text is the author's: no edits, no calls."""
    return AgentResult(None)
