"""A queued run's pipelining (issue 18): chapter N+1's writer starts while chapter N is refined and judged.

N+1's writer reads N's summary, state delta and storyline memory, never N's text; so it starts as soon as
N's summary is made (:meth:`AheadWriter.after_summary`; a resumed N whose summary was staged before the
process stopped starts it before its judge, :meth:`AheadWriter.text_final`). While N is refined, judged and
gated, N+1 is drafted from the novel *as it will be once N commits*: the committed documents and state with
N's summary, state delta, foreshadowing updates and storyline memory laid over them
(:class:`StagedOverlay`). Nothing of N+1 is staged while N is in flight — the checkpoint keeps one
chapter in flight, so a crash loses only the early draft's cost, never the novel's consistency. The early
draft lives in memory (:class:`PreparedDraft`, its context records in a :class:`BufferedRecorder`).

When N commits, the chapter pipeline takes the draft (:meth:`AheadWriter.take`) at the entry of N+1: it is
used only if the facts it was written from equal the facts N+1's writer would read now from the committed
novel (the "rebase"); then it is staged as if the writer had just finished (:func:`stage_prepared`) and the
chapter goes on with length, summary, refine and judge as usual. Otherwise — N sent back, paused for the
author, failed, the run stopped, a periodic check changed what the writer reads — the draft is thrown away
with :class:`~novel_desktop.pipeline.events.DraftDiscarded`; its cost stays in the ledger under N+1.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from novel_desktop.agents.context import NovelFacts, load_facts
from novel_desktop.agents.context_recorder import recorder_for
from novel_desktop.agents.ports import (
    AgentResult,
    CallRecord,
    ChapterAgents,
    ChapterBrief,
    SummaryOutput,
    WriteMode,
    WritesAhead,
)
from novel_desktop.domain.context_record import ContextEntry
from novel_desktop.domain.ledger import attributed
from novel_desktop.domain.state_ops import apply_foreshadow_updates, apply_patch
from novel_desktop.domain.state_patch import PatchRejected
from novel_desktop.pipeline.events import (
    DraftAhead,
    DraftDiscarded,
    GateDecided,
    PipelineEvent,
    Stage,
    StageFinished,
    StageStarted,
    TextDelta,
    TextReset,
)
from novel_desktop.pipeline.live_usage import LiveUsage, stage_rows, stage_totals
from novel_desktop.storage import layout
from novel_desktop.storage.aio import db
from novel_desktop.storage.store import NovelStore, content_hash

if TYPE_CHECKING:
    from novel_desktop.pipeline.chapter import ChapterOutcome, ChapterPipeline

log = logging.getLogger(__name__)


class StagedOverlay:
    """The novel as it will be once chapter ``after`` commits, for :func:`load_facts` (a ``FactsSource``).

    Built (and every read kept) while ``after`` is still in flight, so what it answers does not change when
    the commit lands in the middle of the early draft."""

    def __init__(
        self,
        store: NovelStore,
        after: int,
        *,
        summary: str | None,
        delta: str | None,
        memories: dict[str, str],
    ) -> None:
        self._store = store
        self.after = after
        self._docs: dict[str, str | None] = {}
        self._lists: dict[str, list[str]] = {}
        self._under: dict[str, dict[str, str]] = {}
        self._recent: dict[tuple[int, int], list[tuple[int, str]]] = {}
        self._summary = summary
        #: What the overlay was made from: the same basis means the same early draft still holds.
        self.basis = content_hash(json.dumps([summary, delta, sorted(memories.items())], ensure_ascii=False))
        self._overrides = dict(memories)
        state = store.current_state()
        if delta:
            try:
                result = apply_patch(state, delta)
            except PatchRejected:
                pass  # the commit skips it too: the state stays as it is
            else:
                state = result.state
                if result.foreshadow_updates:
                    raw = store.document(layout.GLOBAL_FORESHADOWING)
                    doc = json.loads(raw) if raw else {"foreshadowing": []}
                    doc = apply_foreshadow_updates(doc, result.foreshadow_updates, after)
                    self._overrides[layout.GLOBAL_FORESHADOWING] = json.dumps(doc, ensure_ascii=False)
        self._state = state
        cp = store.checkpoint()
        cp.update(last_completed_chapter=after, inflight_chapter=None, pipeline_stage="committed")
        self._checkpoint = cp
        self._meta = store.meta()

    @classmethod
    def from_staging(cls, store: NovelStore, after: int) -> StagedOverlay:
        """The overlay of what ``after``'s summarizer staged (a resumed chapter)."""
        staged = {path: store.staging(path) for path in store.list_staging(after)}
        memories = {p: c for p, c in staged.items() if c is not None and _is_memory(p)}
        summary, delta = staged.get(layout.summary_path(after)), staged.get(layout.delta_path(after))
        return cls(store, after, summary=summary, delta=delta, memories=memories)

    @classmethod
    def from_summary(cls, store: NovelStore, brief: ChapterBrief, out: SummaryOutput) -> StagedOverlay:
        """The overlay of a summary just made, before it is staged (what the pipeline will stage of it)."""
        delta = json.dumps(out.patch, ensure_ascii=False) if out.patch is not None else None
        line = out.storyline_id or brief.storyline_id
        memories = {layout.memory_path(line): out.storyline_memory} if out.storyline_memory and line else {}
        return cls(store, brief.chapter, summary=out.summary_markdown, delta=delta, memories=memories)

    def document(self, path: str) -> str | None:
        if path in self._overrides:
            return self._overrides[path]
        if path not in self._docs:
            self._docs[path] = self._store.document(path)
        return self._docs[path]

    def list_documents(self, prefix: str = "") -> list[str]:
        if prefix not in self._lists:
            self._lists[prefix] = self._store.list_documents(prefix)
        extra = {p for p in self._overrides if p.startswith(prefix)}
        return sorted(set(self._lists[prefix]) | extra)

    def documents_under(self, prefix: str) -> dict[str, str]:
        """The store's documents under ``prefix`` with the staged chapter's overrides laid over them."""
        if prefix not in self._under:
            self._under[prefix] = self._store.documents_under(prefix)
        found = dict(self._under[prefix])
        found.update({p: text for p, text in self._overrides.items() if p.startswith(prefix)})
        return dict(sorted(found.items()))

    def checkpoint(self) -> dict[str, Any]:
        return dict(self._checkpoint)

    def meta(self) -> dict[str, str]:
        return dict(self._meta)

    def current_state(self) -> dict[str, Any]:
        return copy.deepcopy(self._state)

    def recent_summaries(self, before: int, n: int = 3) -> list[tuple[int, str]]:
        if (before, n) not in self._recent:
            found = dict(self._store.recent_summaries(before, n))
            if self._summary is not None and self.after < before:
                found[self.after] = self._summary
            self._recent[(before, n)] = sorted(found.items())[-n:] if n > 0 else []
        return list(self._recent[(before, n)])


def _is_memory(path: str) -> bool:
    return path.startswith("storylines/") and path.endswith("/memory.md")


class BufferedRecorder:
    """Keeps an early draft's context records in memory until the draft is adopted (a ContextRecorder)."""

    def __init__(self) -> None:
        self.kept: list[tuple[int, ContextEntry]] = []

    def record(self, chapter: int, entry: ContextEntry) -> None:
        self.kept.append((chapter, entry))

    def entries(self, chapter: int) -> list[ContextEntry]:
        return [e for c, e in self.kept if c == chapter]


@dataclass
class PreparedDraft:
    """An early draft of ``chapter``, written from ``facts`` (None: the agents read no facts)."""

    chapter: int
    text: str
    calls: list[CallRecord]
    warnings: list[str]
    facts: NovelFacts | None
    records: BufferedRecorder = field(default_factory=BufferedRecorder)
    duration_ms: int = 0


@dataclass
class _Job:
    after: int
    basis: str
    task: asyncio.Task[PreparedDraft]


class AheadWriter:
    """Drafts the next chapter of a queued run early. The chapter pipeline wraps each summarizer call in
    :meth:`after_summary`, calls :meth:`text_final` before a judge and :meth:`take` at the entry of a fresh
    chapter; the orchestrator passes it every pipeline event (:meth:`observe`) and calls :meth:`discard`
    when a chapter stops the run and :meth:`close` when the run ends.

    ``allow(n)`` says whether chapter ``n + 1`` may be drafted while ``n`` is judged (the queue goes on past
    ``n`` and ``n + 1`` is in the same volume)."""

    def __init__(
        self,
        store: NovelStore,
        agents: ChapterAgents,
        emit: Callable[[PipelineEvent], None],
        allow: Callable[[int], Awaitable[bool]],
    ) -> None:
        self.store = store
        self.agents = agents
        self._emit = emit
        self._allow = allow
        self._job: _Job | None = None
        self._dropped: list[asyncio.Task[PreparedDraft]] = []

    # ------------------------------------------------------------------ hooks of the chapter pipeline
    async def after_summary(
        self, brief: ChapterBrief, summary: Awaitable[AgentResult[SummaryOutput]]
    ) -> AgentResult[SummaryOutput]:
        """Wraps the summarizer of ``brief``'s chapter: once its summary is made, the next chapter can be
        drafted (its writer reads the summary, the state delta and the memory, never this chapter's text),
        while this chapter's refine and judge go on."""
        result = await summary
        if result.value is not None:
            out = result.value
            await self._start(brief.chapter, lambda: StagedOverlay.from_summary(self.store, brief, out))
        return result

    async def text_final(self, n: int) -> None:
        """Chapter ``n``'s text and summary are staged and about to be judged: draft ``n + 1`` now, unless a
        draft from the same summary is under way (a resumed chapter gets its draft here)."""
        await self._start(n, lambda: StagedOverlay.from_staging(self.store, n))

    async def _start(self, n: int, overlay_of: Callable[[], StagedOverlay]) -> None:
        try:
            if not await self._allow(n):
                return
            overlay = await db(overlay_of)
        except Exception:  # the early draft is an optimisation: chapter n goes on, n + 1 is written later
            log.warning("could not start drafting chapter %d early", n + 1, exc_info=True)
            return
        job = self._job
        if job is not None:
            if job.after == n and job.basis == overlay.basis:
                return  # a resumed or retried chapter with the same summary: the draft under way holds
            changed = f"第 {n} 章的摘要已改变" if job.after == n else f"第 {job.after + 1} 章的预写没有用上"
            self.discard(f"{changed}，预写的第 {job.after + 1} 章作废")
        nxt = n + 1
        self._emit(DraftAhead(nxt))
        task = asyncio.ensure_future(self._write(overlay, nxt))
        self._job = _Job(n, overlay.basis, task)

    async def _write(self, overlay: StagedOverlay, n: int) -> PreparedDraft:
        records = BufferedRecorder()
        facts: asyncio.Future[NovelFacts | None]
        if isinstance(self.agents, WritesAhead):
            agents = self.agents.ahead(overlay, records)
            # What the writer reads, for the check at adoption; off the writer's way (reads are shared).
            facts = asyncio.ensure_future(db(load_facts, overlay, n))
        else:  # agents that read no facts (test doubles) write as they always do
            agents, facts = self.agents, asyncio.get_running_loop().create_future()
            facts.set_result(None)
        live = LiveUsage(n, self._emit)
        try:
            with attributed(chapter=n, watch=live.watch):
                brief = await agents.brief(n)
                self._emit(StageStarted(n, Stage.DRAFT))
                started = time.monotonic()
                result: AgentResult[str] = await agents.write(
                    brief,
                    mode=WriteMode.DRAFT,
                    previous=None,
                    revision=None,
                    on_text=lambda t: self._emit(TextDelta(n, Stage.DRAFT, t)),
                    on_reset=lambda: self._emit(TextReset(n, Stage.DRAFT)),
                )
            read = await facts
        finally:
            facts.cancel()
        duration = int((time.monotonic() - started) * 1000)
        self._emit(
            StageFinished(
                n,
                Stage.DRAFT,
                duration,
                sum(c.input_tokens for c in result.calls),
                sum(c.output_tokens for c in result.calls),
                sum(c.cost_usd for c in result.calls),
            )
        )
        if not result.value or not result.value.strip():
            raise RuntimeError(f"第 {n} 章预写没有产出正文 (the writer returned no text)")
        calls, warnings = list(result.calls), list(result.warnings)
        return PreparedDraft(n, result.value, calls, warnings, read, records, duration)

    def observe(self, event: PipelineEvent) -> None:
        """The pipeline's events as they happen: a chapter sent back by its gate drops the draft after it."""
        job = self._job
        sent_back = (isinstance(event, GateDecided) and event.action in ("revise", "rewrite")) or (
            isinstance(event, StageStarted) and event.stage is Stage.REVISE  # the author chose 自动修订
        )
        if sent_back and job is not None and event.chapter == job.after:
            self.discard(f"第 {job.after} 章被退回修订，预写的第 {job.after + 1} 章作废")

    async def take(self, n: int) -> PreparedDraft | None:
        """The early draft of chapter ``n`` if it is still good for the novel as committed now, else None."""
        job = self._job
        if job is None or job.after + 1 != n:
            if job is not None:
                self.discard(f"第 {job.after + 1} 章的预写没有用上")
            return None
        self._job = None
        # The facts N+1's writer reads now (from the novel as N left it), while the draft may still stream.
        now = asyncio.ensure_future(db(load_facts, self.store, n))
        try:
            prepared = await job.task
        except asyncio.CancelledError:  # the run was stopped while it waited for the draft
            now.cancel()
            self._emit(DraftDiscarded(n, "续写已停止，预写的章节作废"))
            raise
        except Exception as exc:  # the chapter is written the usual way, which reports its own failure
            now.cancel()
            self._emit(DraftDiscarded(n, f"第 {n} 章预写失败：{exc}"))
            return None
        if prepared.facts is not None and prepared.facts != await now:
            self._emit(
                DraftDiscarded(n, f"第 {job.after} 章提交后，第 {n} 章要读的设定与预写时不同，重新写作")
            )
            return None
        now.cancel()
        return prepared

    def discard(self, reason: str) -> None:
        """Throw the early draft away (its task cancelled if it is still streaming)."""
        job, self._job = self._job, None
        if job is None:
            return
        job.task.cancel()
        self._dropped.append(job.task)
        self._emit(DraftDiscarded(job.after + 1, reason))

    async def close(self, reason: str) -> None:
        """The run ends: drop what is left and wait for the cancelled drafts to stop."""
        self.discard(reason)
        tasks, self._dropped = self._dropped, []
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task


async def stage_prepared(
    pipeline: ChapterPipeline,
    brief: ChapterBrief,
    notes: dict[str, Any],
    prepared: PreparedDraft,
    outcome: ChapterOutcome,
) -> str:
    """Stage an adopted early draft as if the writer had just finished: its calls in the chapter's notes
    (the pipeline log), its text as the first draft, its prompt records, the stage "drafted"."""
    n = brief.chapter
    store = pipeline.store
    recorder = recorder_for(store)
    for chapter, entry in prepared.records.kept:
        await db(recorder.record, chapter, entry)
    for w in prepared.warnings:
        pipeline._say(n, outcome.warnings, w)
    notes["stages"].extend(stage_rows(Stage.DRAFT.value, prepared.calls))
    if pipeline._live is not None and pipeline._live.chapter == n:
        pipeline._live.start_from(*stage_totals(notes["stages"]))
    text = prepared.text
    await db(store.put_staging, layout.draft_path(n), text, chapter=n, kind="draft")
    await db(store.put_staging, layout.chapter_path(n), text, chapter=n, kind="draft")
    await pipeline._save_notes(n, notes)
    await pipeline._stage(n, "drafted")
    return text
