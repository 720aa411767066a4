"""The historical rebuild (seed 001 §10.8, issue 15 points 1 and 4).

Rebuilding from chapter k starts from the state after chapter k-1. Chapter k and every later chapter whose
text is stale are re-summarized, each against the novel as it was when it was written (its point's
documents: memory, volume outline, contracts, characters, ledger) overlaid with what this rebuild re-derived
for the chapters before it; the other chapters replay their recorded ops. All model calls happen first and
write nothing to the novel (their results wait in staging, so a restarted rebuild does not pay twice); then
the whole chain is written in one transaction (:meth:`NovelStore.write_rebuild`), which also runs the cascade
check: the later chapters whose recorded summaries and ops contradict the new state.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from typing import Any

from novel_desktop.agents.ports import ChapterAgents, ReadsFacts, SummaryOutput
from novel_desktop.domain.ledger import for_purpose
from novel_desktop.domain.rebuild_chain import replay_step
from novel_desktop.domain.records import RebuildReport, ResummarizedChapter
from novel_desktop.pipeline.contract_lifecycle import contract_changes
from novel_desktop.storage import layout
from novel_desktop.storage.aio import db
from novel_desktop.storage.rebuild import STAGING_PREFIX, ChainChapter, RebuildBasis
from novel_desktop.storage.store import NovelStore, StoreError, content_hash


class HistoricalFacts:
    """The novel as it was when a chapter was written, for the agents' :func:`load_facts` (a ``FactsSource``):
    the documents at a history position with the rebuild's own results laid over them, the re-derived state,
    the summaries (new ones for the chain's earlier chapters) and the checkpoint at the chapter's volume."""

    def __init__(
        self,
        documents: dict[str, str],
        *,
        state: dict[str, Any],
        summaries: dict[int, str],
        checkpoint: dict[str, Any],
        meta: dict[str, str],
    ) -> None:
        self.documents = documents
        self.state = state
        self.summaries = summaries
        self._checkpoint = checkpoint
        self._meta = meta

    def document(self, path: str) -> str | None:
        return self.documents.get(path)

    def list_documents(self, prefix: str = "") -> list[str]:
        return sorted(p for p in self.documents if p.startswith(prefix))

    def documents_under(self, prefix: str) -> dict[str, str]:
        return {p: self.documents[p] for p in self.list_documents(prefix)}

    def checkpoint(self) -> dict[str, Any]:
        return dict(self._checkpoint)

    def meta(self) -> dict[str, str]:
        return dict(self._meta)

    def current_state(self) -> dict[str, Any]:
        return copy.deepcopy(self.state)

    def recent_summaries(self, before: int, n: int = 3) -> list[tuple[int, str]]:
        earlier = sorted((c, t) for c, t in self.summaries.items() if c < before)
        return earlier[-n:] if n > 0 else []


def _summaries(store: NovelStore, chapters: list[ChainChapter]) -> dict[int, str]:
    out = {}
    for c in chapters:
        text = store.summary(c.number)
        if text is not None:
            out[c.number] = text
    return out


def _cache_key(chapter: int, text_hash: str, view: HistoricalFacts) -> str:
    """What a staged Summarizer result was made from: the text, the state and the documents it read."""
    digest = hashlib.sha256()
    for part in (text_hash, json.dumps(view.state, sort_keys=True, ensure_ascii=False)):
        digest.update(part.encode())
    for path in sorted(view.documents):
        digest.update(path.encode() + b"\0" + view.documents[path].encode() + b"\0")
    return f"{STAGING_PREFIX}summary-c{chapter}-{digest.hexdigest()[:24]}.json"


def _cached(store: NovelStore, key: str) -> SummaryOutput | None:
    text = store.staging(key)
    if not text:
        return None
    try:
        data = json.loads(text)
        return SummaryOutput(**data)
    except (TypeError, ValueError):
        return None


def plan_start(basis: RebuildBasis, requested: int) -> tuple[int, list[str]]:
    """Where the rebuild starts: the requested chapter, or the first stale chapter when that is earlier."""
    first = basis.first_stale
    if first is not None and first < requested:
        return first, [
            f"第 {first} 章在第 {requested} 章之前就已过期，重建从第 {first} 章开始 "
            f"(chapter {first} is stale too: the rebuild starts there)"
        ]
    return requested, []


@for_purpose("rebuild")
async def rebuild_from(
    store: NovelStore,
    agents: ChapterAgents,
    chapter: int,
    *,
    on_progress: Callable[[str], None] | None = None,
) -> RebuildReport:
    """Rebuild the story state from chapter ``chapter`` with the history of each chapter's time.

    Raises :class:`StoreError` (nothing changed) for a chapter that does not exist or a Summarizer that
    fails; an LLM error propagates, also with nothing changed.
    """
    progress = on_progress or (lambda _line: None)
    chapters = await db(store.list_chapters)
    if not chapters:
        raise StoreError("这部小说还没有已提交的章节，无法重建 (no committed chapters to rebuild)")
    last = chapters[-1].number
    if chapter < 1 or chapter > last or all(c.number != chapter for c in chapters):
        raise StoreError(
            f"第 {chapter} 章不存在：可重建的章节为第 1-{last} 章 "
            f"(chapter {chapter} does not exist; the novel has chapters 1-{last})"
        )
    basis = await db(store.rebuild_basis, chapter)
    start, notes = plan_start(basis, chapter)
    if start != chapter:
        basis = await db(store.rebuild_basis, start)
    chain = [c for c in basis.chapters if c.number >= start]
    targets = [c for c in chain if c.number == start or c.stale]
    report = RebuildReport(start, int(basis.state.get("state_version", 0)), 0, requested=chapter, notes=notes)
    report.resummarized = [c.number for c in targets]

    summaries = await db(_summaries, store, basis.chapters)
    meta, checkpoint = await db(store.meta), await db(store.checkpoint)
    state, ledger = basis.state, basis.ledger
    overlay: dict[str, str] = {}
    results: dict[int, ResummarizedChapter] = {}
    for c in chain:
        text = await db(store.chapter_text, c.number)
        out: SummaryOutput | None = None
        if c in targets:
            if text is None:
                raise StoreError(f"第 {c.number} 章没有正文，无法重建 (chapter {c.number} has no text)")
            view = await db(_view, store, c, state, ledger, overlay, summaries, checkpoint, meta)
            if c.point is None:
                report.no_history.append(c.number)
            key = _cache_key(c.number, content_hash(text), view)
            out = await db(_cached, store, key)
            if out is None:
                progress(f"重新摘要第 {c.number} 章 (re-summarizing chapter {c.number})")
                reader = agents.reading(view) if isinstance(agents, ReadsFacts) else agents
                brief = await reader.brief(c.number)
                result = await reader.summarize(brief, text)
                report.cost_usd += sum(call.cost_usd for call in result.calls)
                if result.value is None:
                    why = "；".join(result.warnings)
                    raise StoreError(
                        f"第 {c.number} 章的摘要未能生成，小说未改动，可稍后重试"
                        + (f"：{why}" if why else "")
                        + " (the summarizer failed; nothing changed)"
                    )
                out = result.value
                out.storyline_id = out.storyline_id or brief.storyline_id
                await db(store.put_staging, key, json.dumps(out.__dict__, ensure_ascii=False))
            ops = list((out.patch or {}).get("ops") or [])
            results[c.number] = ResummarizedChapter(
                c.number,
                content_hash(text),
                out.summary_markdown,
                ops,
                out.storyline_id,
                out.storyline_memory,
            )
            summaries[c.number] = out.summary_markdown
            if out.storyline_id and out.storyline_memory:
                overlay[layout.memory_path(out.storyline_id)] = out.storyline_memory
        else:
            ops = basis.ops.get(c.number, [])
            # What this chapter's commit wrote into the memories stays what the chapters after it read.
            for path in await db(store.memory_changes, c.number):
                overlay.pop(path, None)
        line = out.storyline_id if out is not None else c.storyline_id
        step = replay_step(state, ledger, c.number, ops, line)
        state, ledger = step.state_after, step.ledger_after

    if report.no_history:
        shown = "、".join(str(n) for n in report.no_history)
        report.notes.append(
            f"第 {shown} 章没有写作时的历史记录（早于历史记录或为导入章节），"
            "按当前的记忆、大纲和契约重新摘要 "
            f"(no history for chapter(s) {shown}: summarized against today's documents)"
        )
    contract_docs = {}
    for n in results:
        changes = await db(contract_changes, store, n)
        if changes.documents:
            contract_docs[n] = changes.documents
    progress("写入重建结果 (writing the rebuild)")
    return await db(
        lambda: store.write_rebuild(start, results, contract_documents=contract_docs, report=report)
    )


def _view(
    store: NovelStore,
    chapter: ChainChapter,
    state: dict[str, Any],
    ledger: dict[str, Any],
    overlay: dict[str, str],
    summaries: dict[int, str],
    checkpoint: dict[str, Any],
    meta: dict[str, str],
) -> HistoricalFacts:
    """The novel as chapter ``chapter`` was written from, with what the rebuild has re-derived so far."""
    position = chapter.point.docs_before if chapter.point is not None else store.history_position()
    documents = store.documents_at(position)
    documents.update(overlay)
    documents[layout.GLOBAL_FORESHADOWING] = json.dumps(ledger, ensure_ascii=False, indent=2) + "\n"
    earlier = {n: t for n, t in summaries.items() if n < chapter.number}
    at = {**checkpoint, "current_volume": chapter.volume or checkpoint.get("current_volume") or 1}
    return HistoricalFacts(documents, state=state, summaries=earlier, checkpoint=at, meta=meta)
