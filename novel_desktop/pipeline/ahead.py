"""A queued run's pipelining (issue 18): chapter N+1's writer starts as soon as chapter N's text is final.

N's text is final once its first refiner pass is applied (:meth:`AheadWriter.after_refine`; a resumed N
whose refined text was staged before the process stopped starts it before its judge, and a polished N
again with the polished text, :meth:`AheadWriter.text_final`). N+1's writer does not wait for N's
summarizer: it reads the novel as committed before N, with the end of N's final text in place of N's
summary (:class:`TextOverlay`), while N's summarizer, judge, gate and commit run beside it. Nothing of N+1
is staged while N is in flight — the checkpoint keeps one chapter in flight, so a crash loses only the
early draft's cost, never the novel's consistency. The early draft lives in memory (:class:`PreparedDraft`,
its context records in a :class:`BufferedRecorder`).

When N commits, the chapter pipeline takes the draft (:meth:`AheadWriter.take`) at the entry of N+1 (the
"rebase"): it is used only if N's committed text is the text its writer read and everything else it read —
all but what N's commit adds from N's summarizer: N's summary, the state and foreshadowing N changes, the
memory of N's storyline — is what N+1's writer would read now (:func:`writer_view`). Then it is staged as if
the writer had just finished (:func:`stage_prepared`) and N+1 goes on with length, summary, refine and
judge as usual, all of which read the novel as committed, N's summary and state included. Otherwise — N
sent back, polished into another text, paused for the author, failed, the run stopped, a periodic check
changed what the writer reads — the draft is thrown away with
:class:`~novel_desktop.pipeline.events.DraftDiscarded`; its cost stays in the ledger under N+1.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import time
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from novel_desktop.agents.context import NovelFacts, load_facts
from novel_desktop.agents.context_recorder import recorder_for
from novel_desktop.agents.ports import (
    AgentResult,
    CallRecord,
    ChapterAgents,
    ChapterBrief,
    WriteMode,
    WritesAhead,
)
from novel_desktop.agents.text_ending import text_in_place_of_summary
from novel_desktop.domain.context_record import ContextEntry
from novel_desktop.domain.ledger import DISCARDED_DRAFT, WRITE_AHEAD, Label, attributed, default_purpose
from novel_desktop.domain.refine import RefineEdits, apply_edits
from novel_desktop.domain.summary import ChapterSummary
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


class TextOverlay:
    """The novel as committed before chapter ``after``, with ``after``'s final text in place of its summary:
    what chapter ``after + 1``'s early writer reads (a ``FactsSource`` for :func:`load_facts`).

    ``after``'s summary, state change and storyline memory are not made yet when its text is final; the
    writer reads the end of the text among the recent summaries instead, and the state, memories and
    foreshadowing as they are before ``after``. Every read is kept, so what it answers does not change when
    ``after`` commits in the middle of the early draft."""

    def __init__(self, store: NovelStore, after: int, text: str) -> None:
        self._store = store
        self.after = after
        self.text = text
        #: What the overlay was made from: the same text means the same early draft still holds.
        self.basis = content_hash(text)
        self._docs: dict[str, str | None] = {}
        self._lists: dict[str, list[str]] = {}
        self._under: dict[str, dict[str, str]] = {}
        self._recent: dict[tuple[int, int], list[tuple[int, str]]] = {}
        self._state = store.current_state()
        cp = store.checkpoint()
        cp.update(last_completed_chapter=after, inflight_chapter=None, pipeline_stage="committed")
        self._checkpoint = cp
        self._meta = store.meta()

    def document(self, path: str) -> str | None:
        if path not in self._docs:
            self._docs[path] = self._store.document(path)
        return self._docs[path]

    def list_documents(self, prefix: str = "") -> list[str]:
        if prefix not in self._lists:
            self._lists[prefix] = self._store.list_documents(prefix)
        return list(self._lists[prefix])

    def documents_under(self, prefix: str) -> dict[str, str]:
        if prefix not in self._under:
            self._under[prefix] = self._store.documents_under(prefix)
        return dict(self._under[prefix])

    def checkpoint(self) -> dict[str, Any]:
        return dict(self._checkpoint)

    def meta(self) -> dict[str, str]:
        return dict(self._meta)

    def current_state(self) -> dict[str, Any]:
        return copy.deepcopy(self._state)

    def recent_summaries(self, before: int, n: int = 3) -> list[tuple[int, str]]:
        if (before, n) not in self._recent:
            found = dict(self._store.recent_summaries(before, n))
            if self.after < before:
                found[self.after] = text_in_place_of_summary(self.after, self.text)
            self._recent[(before, n)] = sorted(found.items())[-n:] if n > 0 else []
        return list(self._recent[(before, n)])


def writer_view(facts: NovelFacts, after: int, lines: Collection[str | None]) -> NovelFacts:
    """``facts`` less what chapter ``after``'s commit adds from its summarizer (its summary, the state and
    foreshadowing it changes, the memory of its storyline: any of ``lines``): the facts an early draft read
    through a :class:`TextOverlay` and the facts read after the commit agree on the rest, or the draft is
    stale."""
    return replace(
        facts,
        recent=[(n, t) for n, t in facts.recent if n != after],
        state={},
        state_version=0,
        global_foreshadowing=[],
        memories={k: v for k, v in facts.memories.items() if k not in lines},
    )


def summary_line(markdown: str | None, chapter: int) -> str | None:
    """The storyline a committed summary names: the line whose memory that chapter's commit wrote (the
    summarizer's ``storyline_id``, which may name a line the chapter's brief did not, e.g. in a novel with no
    storylines set up)."""
    if not markdown:
        return None
    try:
        return ChapterSummary.from_markdown(markdown, chapter).storyline_id
    except (ValueError, TypeError):  # a hand-written summary that does not parse: no line to excuse
        return None


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
    #: The content hash of the text of ``after`` the draft was written from.
    basis: str
    #: The storyline of ``after`` (its commit changes that line's memory).
    line: str | None
    task: asyncio.Task[PreparedDraft]
    #: The purpose its calls' ledger rows are written with (``WRITE_AHEAD`` until it is adopted or dropped).
    label: Label


class AheadWriter:
    """Drafts the next chapter of a queued run early. The chapter pipeline wraps each first refiner pass in
    :meth:`after_refine`, calls :meth:`text_final` before a resumed chapter's judge and after a polish, and
    :meth:`take` at the entry of a fresh chapter;
    the orchestrator passes it every pipeline event (:meth:`observe`) and calls :meth:`discard` when a chapter
    stops the run and :meth:`close` when the run ends.

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
        self._dropped: list[asyncio.Future[Any]] = []
        #: Ledger rows of dropped drafts being relabelled (:meth:`_relabel`).
        self._relabels: list[asyncio.Future[None]] = []

    # ------------------------------------------------------------------ hooks of the chapter pipeline
    async def after_refine(
        self, brief: ChapterBrief, text: str, refining: Awaitable[AgentResult[RefineEdits]]
    ) -> AgentResult[RefineEdits]:
        """Wraps the first refiner pass of ``brief``'s chapter (``text``: the draft it edits): once its edits
        are in, the chapter's text is final and the next chapter can be drafted from it, while this chapter's
        summarizer, judge, gate and commit go on."""
        result = await refining
        edits = result.value.edits if result.value is not None else []
        final = apply_edits(text, edits).text if edits else text  # what the pipeline stages as "refined"
        await self._start(brief, final)
        return result

    async def text_final(self, brief: ChapterBrief, text: str) -> None:
        """Chapter ``brief.chapter``'s final text is ``text`` (a resumed chapter about to be judged, or a
        polished one about to commit): draft the next chapter from it, unless a draft from the same text is
        under way (one from an earlier text is thrown away)."""
        await self._start(brief, text)

    async def _start(self, brief: ChapterBrief, text: str) -> None:
        n = brief.chapter
        job = self._job
        if job is not None and job.after == n and job.basis == content_hash(text):
            return  # a resumed or retried chapter with the same text: the draft under way holds
        try:
            if not await self._allow(n):
                return
            overlay = await db(TextOverlay, self.store, n, text)
        except Exception:  # the early draft is an optimisation: chapter n goes on, n + 1 is written later
            log.warning("could not start drafting chapter %d early", n + 1, exc_info=True)
            return
        job = self._job
        if job is not None and job.after == n and job.basis == overlay.basis:
            return  # started meanwhile from the same text
        if job is not None:
            changed = f"第 {n} 章的正文已改变" if job.after == n else f"第 {job.after + 1} 章的预写没有用上"
            self.discard(f"{changed}，预写的第 {job.after + 1} 章作废")
        # A dropped draft's rows are relabelled before a new draft of the same chapter writes any.
        await self._relabelled()
        nxt = n + 1
        self._emit(DraftAhead(nxt))
        label = Label(WRITE_AHEAD)
        task = asyncio.ensure_future(self._write(overlay, nxt, label))
        self._job = _Job(n, overlay.basis, brief.storyline_id, task, label)

    async def _write(self, overlay: TextOverlay, n: int, label: Label) -> PreparedDraft:
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
            with attributed(label, chapter=n, watch=live.watch):
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
        """The early draft of chapter ``n`` if it still holds for the novel as committed now, else None: the
        chapter before committed the very text the draft's writer read, and everything else the writer read
        (all but what that commit adds from its summarizer) is what it would read now."""
        job = self._job
        if job is None or job.after + 1 != n:
            if job is not None:
                self.discard(f"第 {job.after + 1} 章的预写没有用上")
            await self._relabelled()
            return None
        self._job = None
        # The novel as the chapter before left it, read while the draft may still stream.
        now = asyncio.ensure_future(db(self._committed, job.after, n))
        try:
            prepared = await job.task
        except asyncio.CancelledError:  # the run was stopped while it waited for the draft
            now.cancel()
            self._thrown(job, "续写已停止，预写的章节作废")
            raise
        except Exception as exc:  # the chapter is written the usual way, which reports its own failure
            now.cancel()
            await self._thrown_away(job, f"第 {n} 章预写失败：{exc}")
            return None
        text, facts, committed_line = await now
        if text is None or content_hash(text) != job.basis:
            await self._thrown_away(job, f"第 {job.after} 章提交的正文与预写时读到的不同，重新写作")
            return None
        read, lines = prepared.facts, {job.line, committed_line}
        if (
            read is not None
            and facts is not None
            and writer_view(read, n - 1, lines) != writer_view(facts, n - 1, lines)
        ):
            changed = f"第 {job.after} 章提交后，第 {n} 章要读的设定与预写时不同，重新写作"
            await self._thrown_away(job, changed)
            return None
        # Adopted: its calls are the chapter's writing, in the ledger as a writer's call made now would be.
        job.label.value = default_purpose("chapter_writer")
        try:
            await db(self.store.relabel_calls, n, WRITE_AHEAD, job.label.value)
        except Exception:  # the rows keep WRITE_AHEAD (still an early draft's); the chapter goes on
            log.warning("could not relabel chapter %d's adopted early draft in the ledger", n, exc_info=True)
        return prepared

    def _committed(self, after: int, n: int) -> tuple[str | None, NovelFacts | None, str | None]:
        """Chapter ``after``'s committed text, the facts chapter ``n``'s writer reads now, and the storyline
        whose memory ``after``'s commit wrote (its summary's)."""
        text = self.store.chapter_text(after)
        line = summary_line(self.store.summary(after), after)
        return text, (load_facts(self.store, n) if isinstance(self.agents, WritesAhead) else None), line

    def discard(self, reason: str) -> None:
        """Throw the early draft away (its task cancelled if it is still streaming)."""
        job, self._job = self._job, None
        if job is None:
            return
        job.task.cancel()
        self._dropped.append(job.task)
        self._thrown(job, reason)

    def _thrown(self, job: _Job, reason: str) -> None:
        """``job``'s draft is thrown away: its calls are a discarded draft's in the ledger (the rows written
        from now on at once, those written before once its task has ended: :meth:`_relabel`)."""
        job.label.value = DISCARDED_DRAFT
        self._relabels.append(asyncio.ensure_future(self._relabel(job)))
        self._emit(DraftDiscarded(job.after + 1, reason))

    async def _thrown_away(self, job: _Job, reason: str) -> None:
        self._thrown(job, reason)
        await self._relabelled()

    async def _relabel(self, job: _Job) -> None:
        await asyncio.wait([job.task])  # its last rows are written (the end of a call it was making)
        await db(self.store.relabel_calls, job.after + 1, WRITE_AHEAD, DISCARDED_DRAFT)

    async def _relabelled(self) -> None:
        """Wait for the dropped drafts' ledger rows to be relabelled (a failure is logged: the rows keep
        ``WRITE_AHEAD``, which still tells an early draft)."""
        pending, self._relabels = self._relabels, []
        for relabel in pending:
            try:
                await relabel
            except Exception:
                log.warning("could not relabel a dropped early draft's ledger rows", exc_info=True)

    async def close(self, reason: str) -> None:
        """The run ends: drop what is left and wait for the cancelled drafts to stop."""
        self.discard(reason)
        tasks, self._dropped = self._dropped, []
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
        await self._relabelled()


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
