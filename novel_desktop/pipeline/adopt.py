"""接续已有书稿 (issue 19 point 1): an imported manuscript read by the agents so that 续写 can go on.

1. :func:`estimate` (no model call): the chapters still to read, the tokens and the cost at the configured
   models' prices, shown before anything starts;
2. :func:`read_book`: each chapter read by the book reader (the summarizer's fast model) into a note, with a
   bounded synopsis of the chapters before; the note and the chapter's summary are written in one transaction
   keyed by the chapter's content hash (storage/adoption.py), so a cancel, an error or a kill after chapter k
   resumes at k+1 and never pays twice, and a chapter edited since is read again;
3. :func:`~novel_desktop.pipeline.adopt_synthesis.settle_book`: the notes synthesised into world rules,
   characters with contracts, storylines, open foreshadowing, story state and a style profile from the book's
   own chapters, each offered for approval; the novel is marked adopted at the end.

:func:`adopt` runs all of it. The checkpoint is not moved: it already stands after the last imported chapter
(``VOL_PLANNING``), so 规划 and 续写 go on from there with the summaries, characters, rules and style.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from novel_desktop.agents.adopt import (
    CHAPTER_TOKENS,
    NOTE_OUTPUT_TOKENS,
    READER,
    READER_ROLE,
    SYNOPSIS_TOKENS,
    SYNTHESIS,
    SYNTHESIS_OUTPUT_TOKENS,
    SYNTHESIS_ROLE,
    AdoptAgents,
    fixed_tokens,
    reader_context,
)
from novel_desktop.agents.context import estimate_tokens
from novel_desktop.agents.ports import CallRecord, PlanningAgents
from novel_desktop.domain.adoption import ChapterNote, synopsis
from novel_desktop.domain.ledger import attributed, for_purpose
from novel_desktop.domain.phrase import Phrase, phrase_text
from novel_desktop.llm.errors import LLMError
from novel_desktop.llm.roles import AgentRole
from novel_desktop.llm.settings import LLMSettings
from novel_desktop.pipeline.interaction import InteractionManager
from novel_desktop.storage.adoption import chapter_hashes, read_notes, save_note
from novel_desktop.storage.aio import db
from novel_desktop.storage.manuscript_import import REPORT_FILE
from novel_desktop.storage.store import NovelStore

#: Meta key: "done" once the author went through the whole adoption.
ADOPT_META = "adopted"
ADOPT_PURPOSE = "adopt"
#: Style samples taken from the book itself (first, middle and last chapters), each cut to this many tokens.
STYLE_SAMPLES = 3
STYLE_SAMPLE_TOKENS = 3_000
STYLE_OUTPUT_TOKENS = 1_500

#: ``on_progress(done, total, message)``.
Progress = Callable[[int, int, str], None]


class AdoptError(Exception):
    """The adoption stopped; ``message`` says why and what is kept, in Chinese; ``phrase`` is it as a template
    and its values (domain/phrase.py), for the window's language."""

    def __init__(self, template: str, **values: Any) -> None:
        self.phrase: Phrase = (template, values)
        self.message = phrase_text(self.phrase)
        super().__init__(self.message)


# ---------------------------------------------------------------------------- where the novel stands
def is_imported(store: NovelStore) -> bool:
    """Whether the novel came from an imported manuscript (its import report is kept)."""
    return store.extra_file(REPORT_FILE) is not None


def is_adopted(store: NovelStore) -> bool:
    return store.meta().get(ADOPT_META) == "done"


def adopt_needed(store: NovelStore) -> bool:
    """An imported novel the agents have not read yet (the start page recommends 接续已有书稿)."""
    return is_imported(store) and not is_adopted(store)


def pending_chapters(store: NovelStore) -> list[int]:
    """The chapters without a note of their current text (never read, or edited since)."""
    notes = read_notes(store)
    return [n for n, h in chapter_hashes(store).items() if notes.get(n, ("", {}))[0] != h]


def stored_notes(store: NovelStore) -> list[ChapterNote]:
    """The notes of the chapters whose text is still the one read, in chapter order."""
    hashes = chapter_hashes(store)
    out = []
    for n, (digest, data) in sorted(read_notes(store).items()):
        if hashes.get(n) == digest:
            try:
                out.append(ChapterNote.model_validate({**data, "chapter": n}))
            except ValidationError:
                continue
    return out


# ---------------------------------------------------------------------------- 1. the estimate
@dataclass
class AdoptEstimate:
    """What the adoption will read and cost, before anything starts."""

    chapters: int
    to_read: list[int]
    input_tokens: int
    output_tokens: int
    cost_usd: float
    reader_model: str
    synthesis_model: str
    #: Models without a price in the settings (their calls count as 0 in the cost).
    unpriced: list[str] = field(default_factory=list)

    @property
    def already(self) -> int:
        return self.chapters - len(self.to_read)

    def lines(self) -> list[str]:
        """The estimate as the author reads it (CLI and window alike)."""
        span = f"第 {self.to_read[0]}-{self.to_read[-1]} 章" if self.to_read else "无"
        out = [
            f"共 {self.chapters} 章；待分析 {len(self.to_read)} 章（{span}），已分析 {self.already} 章",
            f"预计输入约 {self.input_tokens:,} tokens，输出约 {self.output_tokens:,} tokens",
            f"预计费用约 ${self.cost_usd:.2f}"
            f"（逐章阅读：{self.reader_model}；归纳设定：{self.synthesis_model}）",
        ]
        if self.unpriced:
            out.append(f"价格表里没有 {'、'.join(self.unpriced)}，其费用按 0 计")
        return out


def estimate(store: NovelStore, settings: LLMSettings) -> AdoptEstimate:
    """Tokens and cost of :func:`adopt` from here (no model call): every pending chapter's prompt (the
    template, a full synopsis, the chapter), the synthesis over all notes, and the style analysis."""
    pending = pending_chapters(store)
    chapters = store.list_chapters()
    reader_in = reader_out = 0
    fixed = fixed_tokens(READER)
    texts = store.chapter_texts() if pending else {}
    for n in pending:
        text = texts.get(n, "")
        reader_in += fixed + SYNOPSIS_TOKENS + min(estimate_tokens(text), CHAPTER_TOKENS)
        reader_out += NOTE_OUTPUT_TOKENS
    synth_in = fixed_tokens(SYNTHESIS) + min(24_000, len(chapters) * 250 + 2_000)
    style_in = STYLE_SAMPLES * STYLE_SAMPLE_TOKENS + 2_000
    totals: list[tuple[str, int, int]] = [
        (settings.model_for(READER_ROLE), reader_in, reader_out),
        (settings.model_for(SYNTHESIS_ROLE), synth_in, SYNTHESIS_OUTPUT_TOKENS),
        (settings.model_for(AgentRole.style_analyzer), style_in, STYLE_OUTPUT_TOKENS),
    ]
    cost, unpriced = 0.0, []
    for model, tin, tout in totals:
        price = settings.price_for(model)
        if price is None:
            unpriced.append(model)
            continue
        cost += (tin * price.input + tout * price.output) / 1_000_000
    return AdoptEstimate(
        chapters=len(chapters),
        to_read=pending,
        input_tokens=sum(t[1] for t in totals),
        output_tokens=sum(t[2] for t in totals),
        cost_usd=cost,
        reader_model=totals[0][0],
        synthesis_model=totals[1][0],
        unpriced=list(dict.fromkeys(unpriced)),
    )


# ---------------------------------------------------------------------------- 2. reading the book
@dataclass
class ReadReport:
    read: list[int] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _failed(chapter: int, why: str | Phrase, done: int) -> AdoptError:
    if done:
        return AdoptError(
            "第 {chapter} 章分析失败：{why}。已分析的 {done} 章已保存，再次运行会从第 {chapter} 章继续",
            chapter=chapter,
            why=why,
            done=done,
        )
    template = "第 {chapter} 章分析失败：{why}。再次运行会从第 {chapter} 章继续"
    return AdoptError(template, chapter=chapter, why=why)


@for_purpose(ADOPT_PURPOSE)
async def read_book(
    store: NovelStore, agents: AdoptAgents, *, on_progress: Progress | None = None
) -> ReadReport:
    """Read every pending chapter into a note (each its own transaction); raises :class:`AdoptError` on a
    model error or an unreadable reply, with the chapters read so far kept."""
    pending = await db(pending_chapters, store)
    notes = await db(stored_notes, store)
    total, report = len(pending), ReadReport()
    if on_progress:
        on_progress(0, total, f"待分析 {total} 章" if total else "所有章节都已分析")
    for done, n in enumerate(pending):
        text = await db(store.chapter_text, n) or ""
        digest = (await db(chapter_hashes, store)).get(n, "")
        before = [x for x in notes if x.chapter < n]
        try:
            with attributed(chapter=n):
                result = await agents.read(reader_context(n, synopsis(before), text))
        except LLMError as exc:
            raise _failed(n, exc.phrase, done) from None
        report.calls += result.calls
        report.warnings += result.warnings
        if result.value is None:
            raise _failed(n, "模型的笔记无法解析", done)
        note = result.value.model_copy(update={"chapter": n})
        line = next(iter(note.storylines), None)
        saved = await db(
            save_note,
            store,
            n,
            digest,
            note.to_json_dict(),
            summary=note.summary,
            storyline_id=line if line and line.replace("_", "").replace("-", "").isalnum() else None,
        )
        if not saved:
            raise AdoptError("第 {n} 章在分析时被改过；再次运行会重新读这一章", n=n)
        notes = [x for x in notes if x.chapter != n] + [note]
        notes.sort(key=lambda x: x.chapter)
        report.read.append(n)
        if on_progress:
            on_progress(done + 1, total, f"第 {n} 章已分析：{note.summary[:40]}")
    return report


# ---------------------------------------------------------------------------- all of it
@dataclass
class AdoptReport:
    read: list[int]
    messages: list[str]
    written: list[str]
    calls: list[CallRecord]
    warnings: list[str]

    @property
    def cost_usd(self) -> float:
        return sum(c.cost_usd for c in self.calls)


@for_purpose(ADOPT_PURPOSE)
async def adopt(
    store: NovelStore,
    agents: AdoptAgents,
    planning: PlanningAgents,
    interaction: InteractionManager,
    *,
    on_progress: Progress | None = None,
) -> AdoptReport:
    """Read the book (resuming), then offer what it holds for approval and mark the novel adopted."""
    from novel_desktop.pipeline.adopt_synthesis import settle_book

    read = await read_book(store, agents, on_progress=on_progress)
    settled = await settle_book(store, agents, planning, interaction)
    return AdoptReport(
        read.read,
        settled.messages,
        settled.written,
        read.calls + settled.calls,
        read.warnings + settled.warnings,
    )


__all__ = [
    "ADOPT_META",
    "AdoptError",
    "AdoptEstimate",
    "AdoptReport",
    "adopt",
    "adopt_needed",
    "estimate",
    "is_adopted",
    "is_imported",
    "pending_chapters",
    "read_book",
    "stored_notes",
]
