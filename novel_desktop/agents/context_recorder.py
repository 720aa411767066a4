"""Recording what each chapter agent's prompt held (the context inspector, issue 16 point 7).

The chapter agents hand every rendered prompt to a :class:`ContextRecorder` before calling the model. The
novel's recorder (:class:`StagedContextRecorder`) stages the chapter's entries as
``logs/chapter-NNN-context.json`` (:func:`novel_desktop.storage.layout.context_path`), so the chapter in
flight can be inspected; the pipeline's commit moves them into the chapter's pipeline log. Agents reading
another source (the historical rebuild) record nothing.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Protocol

from novel_desktop.agents.context import NovelFacts, estimate_tokens
from novel_desktop.agents.context_why import reasons, slot_label
from novel_desktop.agents.templates import RenderedPrompt
from novel_desktop.agents.text_ending import TEXT_ENDING_SECTION, is_text_ending
from novel_desktop.agents.writer_budget import Cut
from novel_desktop.domain.common import iso_now
from novel_desktop.domain.context_record import (
    TEMPLATE_SECTION,
    ContextEntry,
    ContextSection,
    entries_from_json,
    merge_entry,
)
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore

#: The agents whose prompt starts a round (a draft, a rewrite, a revision).
WRITING_AGENTS = ("writer", "reviser")


def build_entry(
    agent: str,
    round_: int,
    prompt: RenderedPrompt,
    *,
    role: str,
    model: str,
    facts: NovelFacts | None,
    cuts: Sequence[Cut] = (),
    budget: int | None = None,
    panel: str = "",
) -> ContextEntry:
    """The record of one prompt: a section per filled slot plus the template's own words, whose tokens add
    up to the prompt's estimate; the budget's cuts marked on their sections (``panel``: the judge's panel
    whose prompt it is, when the chapter is judged by two)."""
    shares = prompt.slot_tokens()
    why = reasons(facts, [s.slot for s in shares])
    by_slot = {c.slot: c for c in cuts}
    total = prompt.tokens
    sections = [
        ContextSection(
            TEMPLATE_SECTION, slot_label(TEMPLATE_SECTION), total - sum(s.tokens for s in shares),
            reasons(None, [TEMPLATE_SECTION])[TEMPLATE_SECTION],
        )
    ]  # fmt: skip
    for share in shares:
        cut = by_slot.get(share.slot)
        ending = _text_ending_tokens(prompt, share.slot, facts, share.uses) if cut is None else 0
        note = ""
        if cut is not None:
            note = f"{cut.note}：原 {cut.before:,} tokens" + (f"，现 {cut.after:,}" if cut.after else "")
        sections.append(
            ContextSection(
                share.slot,
                slot_label(share.slot),
                share.tokens - ending,
                why.get(share.slot, ""),
                cut.status if cut is not None else "",
                note,
            )
        )
        if ending:
            sections.append(
                ContextSection(
                    TEXT_ENDING_SECTION,
                    slot_label(TEXT_ENDING_SECTION),
                    ending,
                    reasons(facts, [TEXT_ENDING_SECTION])[TEXT_ENDING_SECTION],
                )
            )
    return ContextEntry(
        agent=agent,
        round=round_,
        template=prompt.template,
        role=role,
        model=model,
        sections=tuple(sections),
        total_tokens=total,
        budget=budget,
        recorded_at=iso_now(),
        panel=panel,
    )


def _text_ending_tokens(prompt: RenderedPrompt, slot: str, facts: NovelFacts | None, uses: int) -> int:
    """The tokens of ``slot``'s value that are the end of the chapter before's text, not its summary (a
    queued run's early writer, agents/text_ending.py): the inspector shows them as their own section."""
    if slot != "recent_summaries" or facts is None:
        return 0
    value = prompt.values.get(slot, "")
    pieces = [f"第{n}章：{text.strip()}" for n, text in facts.recent if is_text_ending(n, text)]
    tokens = sum(estimate_tokens(piece) * uses for piece in pieces if piece in value)
    return min(tokens, estimate_tokens(value) * uses)


class ContextRecorder(Protocol):
    """Where the chapter agents put each prompt's record."""

    def record(self, chapter: int, entry: ContextEntry) -> None: ...

    def entries(self, chapter: int) -> list[ContextEntry]: ...


class NullRecorder:
    """Records nothing (agents reading the novel as it was, test doubles)."""

    def record(self, chapter: int, entry: ContextEntry) -> None:
        return None

    def entries(self, chapter: int) -> list[ContextEntry]:
        return []


class StagedContextRecorder:
    """Stages the chapter's entries in the novel, next to its other staged outputs.

    The staged JSON is the durable copy (what the inspector, the commit, a resumed run or another recorder
    reads); this recorder also keeps the entries it last wrote, with their text, so that while the staged text
    is still that text it neither parses it again nor merges from a parse: one read of the row and a string
    comparison tell. Anything else (written before a crash, by another recorder) is parsed as before.
    """

    def __init__(self, store: NovelStore) -> None:
        self.store = store
        # Summarizer and refiner, and the two judges, record at once: one read-merge-write at a time.
        self._lock = threading.Lock()
        #: The chapter, the staged text this recorder last wrote for it and that text's entries.
        self._last: tuple[int, str, tuple[ContextEntry, ...]] | None = None

    def entries(self, chapter: int) -> list[ContextEntry]:
        return list(self._staged(chapter))

    def _staged(self, chapter: int) -> tuple[ContextEntry, ...]:
        raw = self.store.staging(layout.context_path(chapter))
        if not raw:
            return ()
        last = self._last
        if last is not None and last[0] == chapter and last[1] == raw:
            return last[2]
        try:
            return tuple(entries_from_json(json.loads(raw)))
        except json.JSONDecodeError:
            return ()

    def record(self, chapter: int, entry: ContextEntry) -> None:
        with self._lock:
            entries = tuple(merge_entry(self._staged(chapter), entry))
            body = json.dumps([e.to_json() for e in entries], ensure_ascii=False, separators=(",", ":"))
            self.store.put_staging(layout.context_path(chapter), body, chapter=chapter)
            self._last = (chapter, body, entries)


def recorder_for(source: object) -> ContextRecorder:
    """The novel's recorder when the agents read a writable novel, else one that records nothing."""
    if isinstance(source, NovelStore) and not source.readonly:
        return StagedContextRecorder(source)
    return NullRecorder()


def current_round(entries: Sequence[ContextEntry]) -> int:
    """The round the chapter is in: the last writer's or reviser's (0 for the first draft)."""
    rounds = [e.round for e in entries if e.agent in WRITING_AGENTS]
    return rounds[-1] if rounds else 0


__all__ = [
    "WRITING_AGENTS",
    "ContextRecorder",
    "NullRecorder",
    "StagedContextRecorder",
    "build_entry",
    "current_round",
    "recorder_for",
]
