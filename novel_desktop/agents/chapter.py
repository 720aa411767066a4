"""The chapter agents over the LLM client: ChapterWriter, Summarizer, StyleRefiner, QualityJudge, reviser.

Each agent renders its template (``prompts/``) from the novel's facts, calls its role's model, and parses the
output into domain models. This implements :class:`~novel_desktop.agents.ports.ChapterAgents`.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar, cast

from pydantic import BaseModel, Field

from novel_desktop.agents import facts as fact_sheet
from novel_desktop.agents.calls import call_record, structured_call, system_blocks
from novel_desktop.agents.context import WRITER_BUDGET_TOKENS, FactsSource, NovelFacts, load_facts
from novel_desktop.agents.context_recorder import (
    WRITING_AGENTS,
    ContextRecorder,
    NullRecorder,
    build_entry,
    current_round,
    recorder_for,
)
from novel_desktop.agents.continuation import MAX_CONTINUATIONS, stream_whole
from novel_desktop.agents.judge import finish_evaluation
from novel_desktop.agents.judge_panels import PANEL_TASKS, PANELS, PanelReply, merge_panels
from novel_desktop.agents.ports import (
    AgentResult,
    ChapterBrief,
    RefineFocus,
    RevisionOrder,
    SummaryOutput,
    WriteMode,
)
from novel_desktop.agents.review_prefix import PrefixGate, review_system, review_turn
from novel_desktop.agents.shared_build import SharedBuild
from novel_desktop.agents.summary_parts import SUMMARY_PARTS, MemoryReply, part_context
from novel_desktop.agents.templates import RenderedPrompt, render_template
from novel_desktop.agents.writer_budget import Cut, fit_writer_prompt
from novel_desktop.domain.common import SeedModel
from novel_desktop.domain.evaluation import Evaluation
from novel_desktop.domain.ledger import attributed
from novel_desktop.domain.outline import section_title
from novel_desktop.domain.platforms import body_chars, length_task, platform_profile, writer_max_tokens
from novel_desktop.domain.refine import MAX_CHANGE_RATIO, RefineEdits
from novel_desktop.domain.summary import ChapterSummary, cross_reference
from novel_desktop.llm.client import LLMClient
from novel_desktop.llm.roles import AgentRole
from novel_desktop.llm.structured import call_structured

_HINTS_BLOCK = re.compile(r"\n*```(?:json)?\s*\n(\{.*?\})\s*\n```\s*\Z", re.S)
_HEADING = re.compile(r"^\s*#\s*第")


F = TypeVar("F", bound=Callable[..., Coroutine[Any, Any, Any]])
M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


async def _settled(notes: list[asyncio.Future[None]], call: Awaitable[T]) -> T:
    """``call``'s result once ``notes`` (records written meanwhile, :meth:`LLMChapterAgents._note`) are
    written too: a record that failed fails the call as :meth:`LLMChapterAgents._note` would have; a call that
    failed or was cancelled still waits for its records, so none is written after the stage has ended."""
    try:
        result = await call
    finally:
        await asyncio.wait(notes)
        for note in notes:  # a failed record is seen (and raised below when the call succeeded)
            if not note.cancelled():
                note.exception()
    for note in notes:
        note.result()
    return result


def _on_chapter(fn: F) -> F:
    """The method's model calls are the brief's chapter's in the cost ledger (whoever calls it: the chapter
    pipeline, a rebuild, a re-judge)."""

    @functools.wraps(fn)
    async def inner(self: Any, brief: ChapterBrief, *args: Any, **kwargs: Any) -> Any:
        with attributed(chapter=brief.chapter):
            return await fn(self, brief, *args, **kwargs)

    return cast(F, inner)


class SummarizerReply(SeedModel):
    """The Summarizer's JSON (prompts/summarizer.md)."""

    chapter: int | None = None
    storyline_id: str | None = None
    summary: str = Field(min_length=1)
    patch: dict[str, Any] | None = None
    foreshadowing: list[Any] = Field(default_factory=list)
    storyline_memory: str | None = None
    cross_references: list[Any] = Field(default_factory=list)
    leak_risk: str = "low"


def split_writer_output(text: str, chapter: int, title: str = "") -> tuple[str, str]:
    """The chapter body (starting with its ``# 第N章`` heading) and the trailing JSON hints, if any."""
    hints = ""
    m = _HINTS_BLOCK.search(text)
    if m:
        hints = m.group(1)
        text = text[: m.start()]
    body = text.strip()
    if not _HEADING.match(body):
        body = f"# 第{chapter}章 {title}".rstrip() + "\n\n" + body
    return body + "\n", hints


def writer_prompt(facts: NovelFacts) -> RenderedPrompt:
    """The ChapterWriter prompt within its budget (the benchmark measures its size too)."""
    return fit_writer_prompt(fact_sheet.writer_context(facts))[0]


#: The review prefix's system values and shared values (agents/facts.py).
_ReviewValues = tuple[dict[str, str], dict[str, str]]


class LLMChapterAgents:
    """The agents of one novel, sharing one client; facts are read once per chapter."""

    def __init__(
        self, store: FactsSource, client: LLMClient, *, recorder: ContextRecorder | None = None
    ) -> None:
        self.store = store
        self.client = client
        #: Where each prompt's record goes (the context inspector); the novel's staging by default.
        self.recorder = recorder if recorder is not None else recorder_for(store)
        self._facts: NovelFacts | None = None
        self._hints: dict[int, str] = {}
        self._gate = PrefixGate()
        #: The summarizer as two parts at once (the pipeline's critical path); one whole call when False.
        self.split_summary = True
        #: The review calls' shared values for one chapter's facts and text, built once for all of them.
        self._review_memo: SharedBuild[_ReviewValues] = SharedBuild()
        #: The judge's context (style metrics of the text): one build for both judges of a key chapter.
        self._judge_memo: SharedBuild[dict[str, str]] = SharedBuild()
        #: The chapter's round for the calls on one draft (summarizer, refiner and judges start together): one
        #: read of the staged record for all; forgotten once a writer's or reviser's prompt is recorded.
        self._round_memo: SharedBuild[int] = SharedBuild()

    async def _load(self, chapter: int) -> NovelFacts:
        if self._facts is None or self._facts.chapter != chapter:
            self._facts = await asyncio.to_thread(load_facts, self.store, chapter)
        return self._facts

    def reading(self, source: FactsSource) -> LLMChapterAgents:
        """The same agents (same client) reading their facts from ``source``, not the novel as it is now:
        the historical rebuild gives each re-summarized chapter the novel as it was when it was written."""
        clone = LLMChapterAgents(source, self.client, recorder=NullRecorder())
        clone.split_summary = False  # a rebuild is not on a chapter's critical path: one call is cheaper
        return clone

    def ahead(self, source: FactsSource, recorder: ContextRecorder) -> LLMChapterAgents:
        """The same agents (same client, same writer hints) reading ``source`` and recording to ``recorder``:
        a queued run drafts the next chapter early from the novel as it will be (pipeline/ahead.py)."""
        clone = LLMChapterAgents(source, self.client, recorder=recorder)
        clone._hints = self._hints
        return clone

    def _note(
        self,
        facts: NovelFacts,
        agent: str,
        round_: int,
        prompt: RenderedPrompt,
        role: AgentRole,
        cuts: list[Cut] | None = None,
        panel: str = "",
    ) -> asyncio.Future[None]:
        """Record what ``prompt`` holds for the context inspector: a write in a worker thread, under way once
        this returns. Await it to have the record before the model sees the prompt; the judges send theirs
        meanwhile (nothing their calls do reads the record) and settle it with :func:`_settled`."""
        budget = WRITER_BUDGET_TOKENS if cuts is not None else None
        model = self.client.settings.model_for(role)
        entry = build_entry(
            agent, round_, prompt, role=role.value, model=model, facts=facts, cuts=cuts or (), budget=budget,
            panel=panel,
        )  # fmt: skip
        record = asyncio.ensure_future(asyncio.to_thread(self.recorder.record, facts.chapter, entry))
        if agent in WRITING_AGENTS:  # a new round begins once it is written
            self._forget_round()
            record.add_done_callback(self._forget_round)
        return record

    async def _review_call(
        self,
        facts: NovelFacts,
        role: AgentRole,
        prompt: RenderedPrompt,
        model: type[M],
        what: str,
        text: str,
        *,
        claimed: bool = False,
    ) -> AgentResult[M]:
        """A call after the writer with the shared prefix (agents/review_prefix.py): the agents' instructions,
        the bible, then the chapter; this agent's task last. Waits for a call of the same prefix already
        under way to begin its response, so it reads the prefix instead of writing it again."""
        # Both measure or format the novel (the shared facts count AI phrases and style metrics): CPU work,
        # off the event loop, as the agents' own contexts are.
        system_values, shared = await self._review_values(facts, text)
        system = system_blocks(review_system(system_values))
        async with self._gate.turn(self.client.settings.model_for(role), text, claimed=claimed) as started:
            result = await call_structured(
                self.client,
                role,
                system,
                [review_turn(prompt, text, shared)],
                model,
                what=what,
                on_text=lambda _t: started.set(),
            )
        return AgentResult(
            result.value, [call_record(self.client, r) for r in result.responses], list(result.warnings)
        )

    async def _review_values(self, facts: NovelFacts, text: str) -> _ReviewValues:
        """The review prefix's values for ``facts`` and ``text``: built once (in a worker thread) for the
        refiner, the summarizer's parts and the judge's panels that start together on the same draft."""

        async def build() -> _ReviewValues:
            system = await asyncio.to_thread(fact_sheet.review_system_values, facts)
            return system, await asyncio.to_thread(fact_sheet.review_shared_values, facts, text)

        return await self._review_memo.get(facts, text, build)

    async def _round(self, chapter: int) -> int:
        """The chapter's current round (from the staged record)."""
        facts = await self._load(chapter)
        return await self._round_memo.get(
            facts, "", lambda: asyncio.to_thread(lambda: current_round(self.recorder.entries(chapter)))
        )

    def _forget_round(self, _record: object = None) -> None:
        self._round_memo = SharedBuild()

    # ------------------------------------------------------------------ ChapterAgents
    async def brief(self, chapter: int) -> ChapterBrief:
        self._facts = None
        facts = await self._load(chapter)
        return ChapterBrief(
            chapter=chapter,
            volume=facts.volume,
            storyline_id=facts.storyline_id,
            title=section_title(facts.chapter_outline),
            key_chapter=facts.key_chapter,
            outline=facts.chapter_outline,
            facts=facts,
        )

    @_on_chapter
    async def write(
        self,
        brief: ChapterBrief,
        *,
        mode: WriteMode,
        previous: str | None,
        revision: RevisionOrder | None,
        on_text: Callable[[str], None],
        on_reset: Callable[[], None],
    ) -> AgentResult[str]:
        facts = await self._load(brief.chapter)
        if mode is WriteMode.REVISE and previous:
            order = revision or RevisionOrder()
            prompt = render_template("reviser", fact_sheet.reviser_context(facts, previous, order))
            role = AgentRole.reviser
            await self._note(facts, "reviser", order.round, prompt, role)
        else:
            prompt, cuts = fit_writer_prompt(fact_sheet.writer_context(facts))
            # A rewrite after a score below 2.0 goes to the stronger model (seed: ChapterWriter（Opus）).
            role = AgentRole.reviser if mode is WriteMode.REWRITE else AgentRole.chapter_writer
            round_ = revision.round if revision is not None and mode is WriteMode.REWRITE else 0
            await self._note(facts, "writer", round_, prompt, role, cuts)
        what = "正文" if mode is WriteMode.DRAFT else "修订稿"
        text, calls = await stream_whole(
            self.client,
            role,
            system=system_blocks(prompt.system_blocks),
            user=prompt.user,
            max_tokens=writer_max_tokens(platform_profile(facts.platform)),
            on_text=on_text,
            on_reset=on_reset,
            record=functools.partial(call_record, self.client),
            truncated_message=(
                f"截断：第 {brief.chapter} 章{what}连续 {1 + MAX_CONTINUATIONS} 次达到输出长度上限，未提交；"
                "可缩短本章大纲或调低平台字数目标后重试 (the chapter text was cut off at the output limit)"
            ),
        )
        body, hints = split_writer_output(text, brief.chapter, brief.title)
        self._hints[brief.chapter] = hints
        return AgentResult(body, calls)

    @_on_chapter
    async def summarize(self, brief: ChapterBrief, text: str) -> AgentResult[SummaryOutput]:
        await self._gate.claimer_sent(self.client.settings.model_for(AgentRole.summarizer), text)
        facts = await self._load(brief.chapter)
        # The context's analysis (style metrics, phrase scan) is CPU work: off the event loop.
        hints = self._hints.get(brief.chapter, "")
        context = await asyncio.to_thread(fact_sheet.summarizer_context, facts, text, hints)
        role = AgentRole.summarizer
        if not self.split_summary:
            prompt = render_template("summarizer", context)
            await self._note(facts, "summarizer", await self._round(brief.chapter), prompt, role)
            result = await self._review_call(facts, role, prompt, SummarizerReply, "摘要与状态补丁", text)
            memory = result.value.storyline_memory if result.value is not None else None
        else:
            result, memory = await self._summary_parts(facts, brief.chapter, context, text)
        if result.value is None:
            return AgentResult(None, result.calls, result.warnings)
        reply = result.value
        line = reply.storyline_id or brief.storyline_id
        patch = dict(reply.patch) if reply.patch is not None else None
        if patch is not None:
            # The version and chapter are facts the program knows; the model only copies them.
            patch["chapter"] = brief.chapter
            patch["base_state_version"] = facts.state_version
            patch.setdefault("storyline_id", line)
        summary = ChapterSummary(
            chapter=brief.chapter,
            storyline_id=line,
            text=reply.summary.strip() + "\n",
            # Objects {"storyline_id", "entity"} are stored as "storyline_id:entity"; old bare names stay.
            cross_references=[r.to_text() for r in map(cross_reference, reply.cross_references) if r],
            leak_risk=reply.leak_risk if reply.leak_risk in ("low", "medium", "high") else "medium",
        )
        out = SummaryOutput(
            summary_markdown=summary.to_markdown(),
            patch=patch,
            storyline_id=line,
            storyline_memory=memory,
            cross_references=summary.cross_references,
            leak_risk=summary.leak_risk,
        )
        return AgentResult(out, result.calls, result.warnings)

    async def _summary_parts(
        self, facts: NovelFacts, chapter: int, context: dict[str, str], text: str
    ) -> tuple[AgentResult[SummarizerReply], str | None]:
        """The summarizer as two parts at once over the shared prefix (agents/summary_parts.py): the summary
        and the state patch, and the storyline memory; each reply is shorter, so the stage ends sooner. The
        result carries both parts' calls; a memory part that fails leaves the memory as it was."""
        role = AgentRole.summarizer
        prompts = {p: render_template("summarizer", part_context(context, p)) for p in SUMMARY_PARTS}
        round_ = await self._round(chapter)
        for part in SUMMARY_PARTS:  # each part's prompt, 摘要组 S and M
            await self._note(facts, "summarizer", round_, prompts[part], role, panel=part)
        facts_part, memory_part = await asyncio.gather(
            self._review_call(facts, role, prompts["S"], SummarizerReply, "摘要与状态补丁", text),
            self._review_call(facts, role, prompts["M"], MemoryReply, "故事线记忆", text),
        )
        calls, warnings = (
            [*facts_part.calls, *memory_part.calls],
            [*facts_part.warnings, *memory_part.warnings],
        )
        memory = memory_part.value.storyline_memory if memory_part.value is not None else None
        if memory_part.value is None and facts_part.value is not None:
            warnings.append(f"第 {chapter} 章的故事线记忆未能更新，沿用旧记忆")
        return AgentResult(facts_part.value, calls, warnings), memory

    @_on_chapter
    async def refine(
        self, brief: ChapterBrief, text: str, *, focus: RefineFocus | None = None
    ) -> AgentResult[RefineEdits]:
        # The first pass goes first among the calls on the draft (the others read the prefix it writes): in a
        # queued run the next chapter's writer waits for its edits, nothing waits for the summary or judge.
        model = self.client.settings.model_for(AgentRole.style_refiner)
        claimed = focus is None and self._gate.claim(model, text)
        try:
            return await self._refine(brief, text, focus, claimed)
        finally:
            if claimed:
                self._gate.release(model, text)

    async def _refine(
        self, brief: ChapterBrief, text: str, focus: RefineFocus | None, claimed: bool
    ) -> AgentResult[RefineEdits]:
        facts = await self._load(brief.chapter)
        focus = focus or RefineFocus()
        budget = int(len(text) * MAX_CHANGE_RATIO) if focus.budget is None else focus.budget
        later = focus.budget is not None
        # The context measures the text (style metrics, segmentation): CPU work, off the event loop.
        prompt = await asyncio.to_thread(
            lambda: render_template(
                "style_refiner", fact_sheet.refiner_context(facts, text, budget, focus.points, later=later)
            )
        )
        round_ = await self._round(brief.chapter)
        # The polish is the pass with the judge's points and the budget the first pass left (``later``); the
        # judge now runs beside the first pass, so "has the judge recorded yet" cannot tell them apart.
        await self._note(facts, "polish" if later else "refiner", round_, prompt, AgentRole.style_refiner)
        return await self._review_call(
            facts, AgentRole.style_refiner, prompt, RefineEdits, "润色修改清单", text, claimed=claimed
        )

    @_on_chapter
    async def fit_length(self, brief: ChapterBrief, text: str) -> AgentResult[RefineEdits]:
        """Edits that expand or tighten ``text`` into the platform's length range (no call inside it)."""
        facts = await self._load(brief.chapter)
        task = length_task(platform_profile(facts.platform), body_chars(text))
        if not task:
            return AgentResult(RefineEdits())
        prompt = render_template("length_editor", fact_sheet.length_editor_context(facts, text, task))
        round_ = await self._round(brief.chapter)
        await self._note(facts, "length", round_, prompt, AgentRole.style_refiner)
        return await structured_call(
            self.client, AgentRole.style_refiner, prompt, RefineEdits, what="字数调整修改清单"
        )

    @_on_chapter
    async def judge(self, brief: ChapterBrief, text: str, *, secondary: bool) -> AgentResult[Evaluation]:
        role = AgentRole.judge_secondary if secondary else AgentRole.quality_judge
        await self._gate.claimer_sent(self.client.settings.model_for(role), text)
        facts = await self._load(brief.chapter)
        # The context measures the text (style metrics): off the event loop.
        context = dict(
            await self._judge_memo.get(
                facts, text, lambda: asyncio.to_thread(fact_sheet.judge_context, facts, text)
            )
        )
        weights = platform_profile(facts.platform).weights
        round_ = await self._round(brief.chapter)
        if not secondary:
            return await self._judge_panels(facts, brief.chapter, context, text, round_)
        prompt = render_template("quality_judge", context)
        role = AgentRole.judge_secondary
        note = self._note(facts, "judge2", round_, prompt, role)
        result = await _settled([note], self._review_call(facts, role, prompt, Evaluation, "评审结果", text))
        if result.value is not None:
            result.value = finish_evaluation(result.value, brief.chapter, weights)
        return result

    async def _judge_panels(
        self, facts: NovelFacts, chapter: int, context: dict[str, str], text: str, round_: int
    ) -> AgentResult[Evaluation]:
        """The ordinary judge as three panels at once over the shared prefix, merged into one Evaluation
        (agents/judge_panels.py): each reply is about a third as long, so the judge ends that much sooner."""
        role = AgentRole.quality_judge
        prompts = [
            render_template("quality_judge", {**context, "judge_panel": PANEL_TASKS[p]}) for p in PANELS
        ]
        # Each panel's prompt (评审组 A, B and C) is recorded while the three are sent.
        notes = [
            self._note(facts, "judge", round_, p, role, panel=n) for n, p in zip(PANELS, prompts, strict=True)
        ]
        sent = asyncio.gather(
            *(
                self._review_call(facts, role, prompt, PanelReply, f"评审结果（评审组 {panel}）", text)
                for panel, prompt in zip(PANELS, prompts, strict=True)
            )
        )
        results = await _settled(notes, sent)
        calls = [c for r in results for c in r.calls]
        warnings = [w for r in results for w in r.warnings]
        replies = {panel: r.value for panel, r in zip(PANELS, results, strict=True) if r.value is not None}
        if len(replies) < len(PANELS):
            return AgentResult(None, calls, warnings)
        try:
            merged = merge_panels(replies, chapter, platform_profile(facts.platform).weights)
        except ValueError as exc:
            warnings.append(f"评审结果不完整，各评审组的回复合并不成一份评估：{exc}")
            return AgentResult(None, calls, warnings)
        return AgentResult(merged, calls, warnings)
