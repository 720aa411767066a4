"""The historical rebuild's reads and its one transaction (seed 001 §10.8, issue 15 points 1 and 4).

:meth:`RebuildRepository.rebuild_basis` reads what the rebuild plans from (the state after the chapter
before the chain, the foreshadowing ledger as it was then, each chapter's recorded ops and point);
:meth:`RebuildRepository.write_rebuild` writes the whole new chain — snapshots, changelog, summaries,
memories, the ledger, the contract updates, each chapter's point and the cascade list — in ONE transaction,
so a crash leaves the novel exactly as before or exactly as after.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session, col, select

from novel_desktop.domain.common import iso_now
from novel_desktop.domain.rebuild_chain import (
    cascade_reasons,
    changed_entities,
    describe_changes,
    entity_names,
    ledger_before,
    replay_step,
)
from novel_desktop.domain.records import ChapterPoint, RebuildReport, ResummarizedChapter
from novel_desktop.storage import layout
from novel_desktop.storage.history import (
    document_at,
    documents_at,
    history_position,
    point_of,
    record_point,
    write_origin,
)
from novel_desktop.storage.repository import Repository, StoreError, dumps, dumps_row
from novel_desktop.storage.story_state import changelog_by_chapter, latest_state, state_for_chapter
from novel_desktop.storage.tables import (
    ChangelogRow,
    ChapterRow,
    DocumentRow,
    StagingRow,
    StateSnapshotRow,
    SummaryRow,
)

#: The advisory list of later chapters that contradict the state after the last rebuild.
CASCADE_DOCUMENT = "state/history/cascade.json"
#: Staging keys of Summarizer results a restarted rebuild reuses (staging is not the novel).
STAGING_PREFIX = "rebuild/"


@dataclass(frozen=True)
class ChainChapter:
    number: int
    volume: int
    storyline_id: str | None
    stale: bool
    point: ChapterPoint | None


@dataclass
class RebuildBasis:
    """What a rebuild from ``start`` plans from."""

    start: int
    chapters: list[ChainChapter]
    state: dict[str, Any]
    ledger: dict[str, Any]
    ops: dict[int, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def first_stale(self) -> int | None:
        return next((c.number for c in self.chapters if c.stale), None)


def chain_chapters(s: Session, start: int) -> list[ChainChapter]:
    rows = s.exec(select(ChapterRow).where(col(ChapterRow.number) >= start).order_by(col(ChapterRow.number)))
    return [
        ChainChapter(
            r.number, r.volume, r.storyline_id, r.content_hash != r.source_hash, point_of(s, r.number)
        )
        for r in rows
    ]


def _ledger_before(s: Session, start: int, point: ChapterPoint | None) -> dict[str, Any]:
    current = _json(s, layout.GLOBAL_FORESHADOWING) or {"foreshadowing": []}
    historical = None
    if point is not None:
        text = document_at(s, layout.GLOBAL_FORESHADOWING, point.docs_before)
        historical = _loads(text) if text else {"foreshadowing": []}
    return ledger_before(current, historical, start)


def _json(s: Session, path: str) -> Any:
    row = s.get(DocumentRow, path)
    return _loads(row.content) if row is not None else None


def _loads(text: str | None) -> Any:
    try:
        return json.loads(text) if text else None
    except json.JSONDecodeError:
        return None


def _character_docs(s: Session) -> list[dict[str, Any]]:
    out = []
    rows = s.exec(select(DocumentRow).where(col(DocumentRow.path).startswith("characters/active/")))
    for row in rows:
        doc = _loads(row.content) if row.path.endswith(".json") else None
        if isinstance(doc, dict):
            doc.setdefault("id", row.path.rsplit("/", 1)[-1].removesuffix(".json"))
            out.append(doc)
    return out


def memory_changes(s: Session, point: ChapterPoint | None) -> dict[str, str]:
    """The storyline memories a chapter's last commit (or rebuild) wrote, as they were right after it."""
    if point is None:
        return {}
    before = documents_at(s, point.docs_before, "storylines/")
    after = documents_at(s, point.docs_after, "storylines/")
    return {p: t for p, t in after.items() if p.endswith("/memory.md") and before.get(p) != t}


class RebuildRepository(Repository):
    """Reading what a rebuild needs and writing its chain."""

    def rebuild_basis(self, start: int) -> RebuildBasis:
        """The chapters (all of them, to find the first stale one), the state after ``start - 1``, the
        ledger before ``start`` and every chapter's recorded ops. Raises :class:`StoreError` for a chapter
        that does not exist."""
        with self._read() as s:
            if s.get(ChapterRow, start) is None:
                raise StoreError(f"第 {start} 章不存在 (chapter {start} does not exist)")
            chapters = chain_chapters(s, 1)
            base = state_for_chapter(s, start - 1)
            if base is None:
                raise StoreError(
                    f"找不到第 {start - 1} 章之后的状态快照，无法从第 {start} 章重建 "
                    f"(no state recorded after chapter {start - 1})"
                )
            point = next((c.point for c in chapters if c.number == start), None)
            return RebuildBasis(
                start, chapters, base, _ledger_before(s, start, point), changelog_by_chapter(s)
            )

    def memory_changes(self, chapter: int) -> dict[str, str]:
        """The storyline memories chapter ``chapter``'s last commit or rebuild wrote."""
        with self._read() as s:
            return memory_changes(s, point_of(s, chapter))

    def cascade(self) -> dict[int, list[str]]:
        """The later chapters the last rebuild found contradicting the new state, with why."""
        with self._read() as s:
            return cascade_list(s)

    def write_rebuild(
        self,
        start: int,
        resummarized: Mapping[int, ResummarizedChapter],
        *,
        contract_documents: Mapping[int, Mapping[str, str]] | None = None,
        report: RebuildReport | None = None,
    ) -> RebuildReport:
        """Write the rebuild from chapter ``start`` in ONE transaction and return its report.

        Each chapter from ``start`` on, in order: the re-summarized ones get their new ops, summary and
        storyline memory; the others replay their recorded ops (those that no longer apply are dropped and the
        chapter goes on the cascade list) and write back the memories their commit wrote. Every chapter gets a
        new snapshot, changelog lines with ``rebuild_of``, the re-derived ledger, ``source_hash`` =
        ``content_hash``, status ``committed`` and a ``rebuild`` point (``docs_before`` kept from its previous
        point). The cascade list goes to :data:`CASCADE_DOCUMENT`; the Summarizer results kept in staging are
        dropped.
        """
        contract_documents = contract_documents or {}
        report = report or RebuildReport(start, 0, 0)
        report.requested = report.requested or start
        with self._write() as s, write_origin(s, f"rebuild:{start}"):
            rows = {r.number: r for r in s.exec(select(ChapterRow).where(col(ChapterRow.number) >= start))}
            if start not in rows:
                raise StoreError(f"第 {start} 章不存在 (chapter {start} does not exist)")
            for c, given in resummarized.items():
                row = rows.get(c)
                if row is None or row.content_hash != given.content_hash:
                    raise StoreError(
                        f"第 {c} 章的正文在重建期间被改动，未写入任何内容，请重新重建 "
                        f"(chapter {c} changed during the rebuild)"
                    )
            docs_start = history_position(s)
            base = state_for_chapter(s, start - 1)
            if base is None:
                raise StoreError(
                    f"找不到第 {start - 1} 章之后的状态快照 (no state after chapter {start - 1})"
                )
            chapters = chain_chapters(s, start)
            ledger = _ledger_before(s, start, chapters[0].point)
            groups = changelog_by_chapter(s)
            names = entity_names(latest_state(s), _character_docs(s))
            version = int(latest_state(s).get("state_version", 0))
            report.chapter, report.base_version = start, int(base.get("state_version", 0))
            report.disagreeing = {}
            now = iso_now()

            # The memories as they stand now (the author may have edited one since the last chapter), and
            # as the last chapter left them: a memory this rebuild rewrites ends as the author left it.
            memories_now = documents_at(s, docs_start, "storylines/")
            last = chapters[-1].point
            memories_last = documents_at(s, last.docs_after, "storylines/") if last is not None else {}
            touched: dict[str, bool] = {}  # memory path → written last by a re-summarized chapter
            state, old_before = base, base
            for chapter in chapters:
                c = chapter.number
                out = resummarized.get(c)
                old_after = state_for_chapter(s, c) or old_before
                ops = list(out.ops) if out is not None else groups.get(c, [])
                line = out.storyline_id if out is not None else chapter.storyline_id
                step = replay_step(state, ledger, c, ops, line, now=now)
                dropped = [f"{d.index}: {d.reason}" for d in step.result.dropped]
                if out is not None:
                    report.dropped_ops += [f"第{c}章 {d}" for d in dropped]
                else:
                    summary_row = s.get(SummaryRow, c)
                    reasons = cascade_reasons(
                        c,
                        summary=summary_row.content if summary_row else "",
                        ops=ops,
                        dropped=dropped,
                        old_before=old_before,
                        new_before=state,
                        ledger=ledger,
                        names=names,
                    )
                    if reasons:
                        report.disagreeing[c] = reasons
                version += 1
                new_state = {**step.state_after, "state_version": version}
                report.changes[c] = describe_changes(old_after, new_state, names)
                if c == report.requested:
                    report.changed_paths = changed_entities(old_after, new_state)
                _store_step(s, c, version, new_state, step.result.changelog, start, now)
                if step.ledger_after != _json(s, layout.GLOBAL_FORESHADOWING):
                    s.merge(
                        DocumentRow(
                            path=layout.GLOBAL_FORESHADOWING, content=dumps(step.ledger_after), updated_at=now
                        )
                    )
                documents: dict[str, str] = dict(contract_documents.get(c) or {})
                if out is not None:
                    s.merge(
                        SummaryRow(chapter=c, content=out.summary_markdown, storyline_id=line, updated_at=now)
                    )
                    if line and out.storyline_memory:
                        documents[layout.memory_path(line)] = out.storyline_memory
                        touched[layout.memory_path(line)] = True
                else:
                    # A replayed chapter's memory, as its commit wrote it, follows a rewritten one.
                    restored = {p: t for p, t in memory_changes(s, chapter.point).items() if p in touched}
                    documents.update(restored)
                    touched.update(dict.fromkeys(restored, False))
                for path, content in documents.items():
                    current = s.get(DocumentRow, path)
                    if current is None or current.content != content:
                        s.merge(DocumentRow(path=path, content=content, updated_at=now))
                row = rows[c]
                row.source_hash = row.content_hash
                row.status = "committed"
                s.add(row)
                docs_before = chapter.point.docs_before if chapter.point is not None else docs_start
                record_point(s, c, "rebuild", version, docs_before)
                state, ledger, old_before = step.state_after, step.ledger_after, old_after
            report.state_version = version
            for path, by_new_summary in touched.items():
                edited = memories_now.get(path) != memories_last.get(path)
                if not by_new_summary and edited and path in memories_now:
                    s.merge(DocumentRow(path=path, content=memories_now[path], updated_at=now))

            cascade = {
                "rebuild_of": start,
                "created_at": now,
                "chapters": {str(c): r for c, r in sorted(report.disagreeing.items())},
            }
            s.merge(DocumentRow(path=CASCADE_DOCUMENT, content=dumps(cascade), updated_at=now))
            for staged in s.exec(select(StagingRow).where(col(StagingRow.path).startswith(STAGING_PREFIX))):
                s.delete(staged)
            return report


def _store_step(
    s: Session,
    chapter: int,
    version: int,
    state: dict[str, Any],
    changelog: list[dict[str, Any]],
    start: int,
    now: str,
) -> None:
    s.add(StateSnapshotRow(state_version=version, chapter=chapter, content=dumps_row(state), created_at=now))
    for entry in changelog:
        line = {**entry, "state_version": version, "base_state_version": version - 1, "rebuild_of": start}
        s.add(
            ChangelogRow(state_version=version, chapter=chapter, content=json.dumps(line, ensure_ascii=False))
        )


def cascade_list(s: Session) -> dict[int, list[str]]:
    """The cascade list kept in the novel (chapter → reasons)."""
    doc = _json(s, CASCADE_DOCUMENT)
    chapters = doc.get("chapters") if isinstance(doc, dict) else None
    if not isinstance(chapters, dict):
        return {}
    return {
        int(k): [str(r) for r in v] for k, v in chapters.items() if str(k).isdigit() and isinstance(v, list)
    }


def clear_from_cascade(s: Session, chapter: int) -> None:
    """Take a re-judged chapter off the cascade list (inside the re-judging transaction)."""
    doc = _json(s, CASCADE_DOCUMENT)
    if (
        not isinstance(doc, dict)
        or not isinstance(doc.get("chapters"), dict)
        or str(chapter) not in doc["chapters"]
    ):
        return
    doc["chapters"].pop(str(chapter))
    s.merge(DocumentRow(path=CASCADE_DOCUMENT, content=dumps(doc), updated_at=iso_now()))
