"""Rollback to a chapter, and the archive of the chapters it removed (issue 15 point 5).

A rollback to chapter ``n`` is ONE transaction: every chapter after ``n`` (and a chapter still in flight)
moves to ``archived_chapters`` with its text, summary, evaluation, log and every revision; the state becomes
the one recorded right after ``n`` (as a new version: old snapshots and the changelog stay for the record,
marked removed by the rollback's point, see ``history.rollback_marks``); the documents the removed chapters'
commits and rebuilds wrote go back to their content at ``n``'s point; the checkpoint returns to ``n``'s volume
position. An archived chapter is never destroyed: it can be read and brought back as the next chapter.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import func
from sqlmodel import Session, col, delete, select

from novel_desktop.domain.common import iso_now
from novel_desktop.domain.records import (
    ArchivedChapter,
    ArchivedChapterInfo,
    ArchivedRevision,
    RollbackPlan,
    RollbackReport,
)
from novel_desktop.domain.text import count_chars
from novel_desktop.storage import layout
from novel_desktop.storage.chapters import REVISION_KINDS, new_revision
from novel_desktop.storage.checkpoint import get_checkpoint, put_checkpoint
from novel_desktop.storage.history import ROLLBACK, document_at, point_of, record_point, write_origin
from novel_desktop.storage.repository import Repository, StoreError, content_hash, dumps, title_of
from novel_desktop.storage.story_state import latest_state, state_for_chapter
from novel_desktop.storage.tables import (
    AnswerRow,
    ArchivedChapterRow,
    ChapterRevisionRow,
    ChapterRow,
    DocumentHistoryRow,
    DocumentRow,
    EvaluationRow,
    PipelineLogRow,
    StagingRow,
    StateSnapshotRow,
    SummaryRow,
)

#: Origins of the document writes a chapter's own derivation made (``commit:12``).
_DERIVED = ("commit", "rebuild", ROLLBACK)
#: The checkpoint fields a rollback takes from the chapter's point: where the volume cycle stood.
_POSITION = ("current_volume", "orchestrator_state", "pending_actions")


class RollbackRefused(StoreError):
    """A rollback or a restore that cannot be done; nothing was changed."""


class RollbackRepository(Repository):
    """Rolling the novel back to a chapter, and the archive of what rollbacks removed."""

    def rollback_plan(self, chapter: int) -> RollbackPlan:
        """What :meth:`rollback_to` would remove; raises :class:`RollbackRefused` when it cannot be done."""
        with self._read() as s:
            return _plan(s, chapter)

    def rollback_to(self, chapter: int, *, on_step: Callable[[str], None] | None = None) -> RollbackReport:
        """Remove every chapter after ``chapter`` into the archive and bring the novel back to exactly where
        it stood right after ``chapter`` was committed (or last rebuilt), in ONE transaction.

        Raises :class:`RollbackRefused` (nothing changed) for a chapter that does not exist, the last chapter
        (nothing to remove), a number below 1, or a chapter with no recorded point (committed before schema
        2): the message names the nearest chapter that can be rolled back to. ``on_step`` is called between
        the steps (tests kill the process there).
        """
        step = on_step or (lambda _name: None)
        with self._write() as s, write_origin(s, f"{ROLLBACK}:{chapter}"):
            plan = _plan(s, chapter)
            point = point_of(s, chapter)
            state = state_for_chapter(s, chapter)
            assert point is not None  # _plan refuses otherwise
            assert state is not None
            now = iso_now()
            rollback_id = _next_rollback_id(s)
            removed = [n for n, _title, _chars in plan.chapters]
            for number in removed:
                _archive_committed(s, number, rollback_id, now)
                step(f"archive:{number}")
            _delete_chapters(s, removed)
            step("chapters")

            staged_rows = list(s.exec(select(StagingRow).where(col(StagingRow.chapter) > chapter)))
            for number in sorted({int(r.chapter or 0) for r in staged_rows}):
                _archive_staged(s, number, [r for r in staged_rows if r.chapter == number], rollback_id, now)
            for row in staged_rows:
                s.delete(row)
            _delete_answers_after(s, chapter)
            step("staging")

            version = int(latest_state(s).get("state_version", 0)) + 1
            s.add(
                StateSnapshotRow(
                    state_version=version,
                    chapter=chapter,
                    content=dumps({**state, "state_version": version}),
                    created_at=now,
                )
            )
            s.flush()
            step("state")

            restored, deleted = _restore_documents(s, chapter, point.docs_after, now)
            step("documents")

            checkpoint = get_checkpoint(s)
            for key in _POSITION:
                if key in point.checkpoint:
                    checkpoint[key] = point.checkpoint[key]
            checkpoint.update(
                last_completed_chapter=chapter,
                inflight_chapter=None,
                pipeline_stage=point.checkpoint.get("pipeline_stage") or "committed",
                last_checkpoint_time=now,
            )
            put_checkpoint(s, checkpoint)
            record_point(s, chapter, ROLLBACK, version, point.docs_before)
            step("checkpoint")
            return RollbackReport(
                to_chapter=chapter,
                rollback_id=rollback_id,
                removed=removed,
                removed_chars=plan.chars,
                staged_chapter=plan.staged_chapter,
                state_version=version,
                restored_documents=restored,
                deleted_documents=deleted,
            )

    # ------------------------------------------------------------------ the archive
    def archived_chapters(self) -> list[ArchivedChapterInfo]:
        """Every archived chapter, newest rollback first, then by chapter."""
        with self._read() as s:
            rows = s.exec(
                select(ArchivedChapterRow).order_by(
                    col(ArchivedChapterRow.rollback_id).desc(), col(ArchivedChapterRow.chapter)
                )
            )
            return [_info(r) for r in rows]

    def archived_chapter(self, archive_id: int) -> ArchivedChapter:
        """One archived chapter in full; raises :class:`RollbackRefused` for an unknown id."""
        with self._read() as s:
            row = _archived_row(s, archive_id)
            revisions = [
                ArchivedRevision(
                    str(r.get("kind", "")),
                    str(r.get("content", "")),
                    count_chars(str(r.get("content", ""))),
                    str(r.get("created_at", "")),
                    str(r.get("note", "")),
                )
                for r in _revisions_of(row)
            ]
            return ArchivedChapter(_info(row), row.content, row.summary, revisions)

    def restore_archived(self, archive_id: int) -> ArchivedChapterInfo:
        """Bring archived chapter ``archive_id`` back as the next chapter, in ONE transaction.

        Only when its number is ``last_completed_chapter + 1`` and no chapter is in flight. It is committed
        with its text and revisions and status ``needs_rebuild`` (stale: a rebuild derives its state); the
        archive row keeps ``restored_at``. Raises :class:`RollbackRefused` otherwise, changing nothing.
        """
        with self._write() as s:
            row = _archived_row(s, archive_id)
            checkpoint = get_checkpoint(s)
            last = int(checkpoint.get("last_completed_chapter") or 0)
            newest = s.exec(select(func.max(ChapterRow.number))).one()
            last = max(last, int(newest or 0))
            if row.restored_at is not None:
                raise RollbackRefused(
                    f"已移除的第 {row.chapter} 章（#{archive_id}）已于 {row.restored_at} 恢复过，不能再恢复 "
                    f"(archived chapter #{archive_id} was already restored)"
                )
            if row.chapter != last + 1:
                raise RollbackRefused(
                    f"只能把第 {last + 1} 章恢复为下一章，已移除的 #{archive_id} 是第 {row.chapter} 章 "
                    f"(only chapter {last + 1} can be restored as the next chapter; #{archive_id} is "
                    f"chapter {row.chapter})"
                )
            inflight = checkpoint.get("inflight_chapter")
            staged = s.exec(select(StagingRow).where(col(StagingRow.chapter) > last)).first()
            if inflight is not None or staged is not None:
                raise RollbackRefused(
                    f"第 {inflight or last + 1} 章正在写作中，请先完成或放弃它再恢复 "
                    f"(chapter {inflight or last + 1} is in flight; finish or discard it first)"
                )
            now = iso_now()
            chapter = ChapterRow(
                number=row.chapter,
                volume=row.volume,
                title=row.title or title_of(row.content),
                storyline_id=row.storyline_id,
                status="needs_rebuild",
                committed_at=now,
                updated_at=now,
            )
            s.add(chapter)
            s.flush()
            current: ChapterRevisionRow | None = None
            for r in _revisions_of(row):
                kind = str(r.get("kind", ""))
                rev = new_revision(
                    row.chapter,
                    kind if kind in REVISION_KINDS else "revision",
                    str(r.get("content", "")),
                    str(r.get("created_at") or now),
                    str(r.get("note", "")),
                )
                s.add(rev)
                current = rev
            if current is None or current.content != row.content:
                current = new_revision(row.chapter, "manual", row.content, now, "从存档恢复")
                s.add(current)
            s.flush()
            chapter.current_revision_id = current.id
            chapter.chars = current.chars
            chapter.content_hash = content_hash(row.content)
            chapter.source_hash = ""  # no state was derived from it: stale until rebuilt
            s.add(chapter)
            if row.summary is not None:
                s.add(
                    SummaryRow(
                        chapter=row.chapter,
                        content=row.summary,
                        storyline_id=row.storyline_id,
                        updated_at=now,
                    )
                )
            if row.evaluation is not None:
                s.add(_evaluation_row(row.chapter, row.evaluation, now))
            if row.pipeline_log is not None:
                s.add(_log_row(row.chapter, row.pipeline_log, now))
            checkpoint.update(
                last_completed_chapter=row.chapter,
                inflight_chapter=None,
                pipeline_stage="committed",
                last_checkpoint_time=now,
            )
            put_checkpoint(s, checkpoint)
            row.restored_at = now
            s.add(row)
            s.flush()
            return _info(row)


# ---------------------------------------------------------------------- helpers used inside transactions
def _refuse(message: str) -> RollbackRefused:
    return RollbackRefused(message)


def _plan(s: Session, chapter: int) -> RollbackPlan:
    if chapter < 1:
        raise _refuse(f"章节号必须是正整数：{chapter} (the chapter number must be 1 or more)")
    rows = list(s.exec(select(ChapterRow).order_by(col(ChapterRow.number))))
    numbers = [r.number for r in rows]
    if chapter not in numbers:
        last = numbers[-1] if numbers else 0
        raise _refuse(
            f"第 {chapter} 章不存在（已有 {len(numbers)} 章，最后一章是第 {last} 章） "
            f"(chapter {chapter} does not exist)"
        )
    later = [r for r in rows if r.number > chapter]
    if not later:
        raise _refuse(
            f"第 {chapter} 章已是最后一章，没有可移除的章节 "
            f"(chapter {chapter} is the last one: nothing to remove)"
        )
    if not _can_return_to(s, chapter):
        candidates = [n for n in numbers[:-1] if _can_return_to(s, n)]
        if candidates:
            nearest = min(candidates, key=lambda n: (abs(n - chapter), -n))
            hint = f"最近可回滚到第 {nearest} 章 (the nearest chapter you can roll back to is {nearest})"
        else:
            hint = "没有可回滚到的章节 (no chapter can be rolled back to)"
        raise _refuse(
            f"第 {chapter} 章没有记录提交时的状态（旧版本提交或导入的章节），无法精确回滚到它；{hint} "
            f"(chapter {chapter} has no recorded point)"
        )
    staged = s.exec(
        select(StagingRow.chapter).where(
            col(StagingRow.chapter) > chapter,
            col(StagingRow.kind).in_(REVISION_KINDS),
        )
    ).all()
    staged_numbers = sorted({int(n) for n in staged if n is not None} - set(numbers))
    return RollbackPlan(
        chapter,
        [(r.number, r.title, r.chars) for r in later],
        staged_numbers[0] if staged_numbers else None,
    )


def _can_return_to(s: Session, chapter: int) -> bool:
    return point_of(s, chapter) is not None and state_for_chapter(s, chapter) is not None


def _next_rollback_id(s: Session) -> int:
    return int(s.exec(select(func.max(ArchivedChapterRow.rollback_id))).one() or 0) + 1


def _archive_committed(s: Session, number: int, rollback_id: int, now: str) -> ArchivedChapterRow:
    chapter = s.get(ChapterRow, number)
    assert chapter is not None
    revisions = list(
        s.exec(
            select(ChapterRevisionRow)
            .where(ChapterRevisionRow.chapter == number)
            .order_by(col(ChapterRevisionRow.id))
        )
    )
    current = next((r for r in revisions if r.id == chapter.current_revision_id), None)
    summary, evaluation, log = (
        s.get(SummaryRow, number),
        s.get(EvaluationRow, number),
        s.get(PipelineLogRow, number),
    )
    row = ArchivedChapterRow(
        rollback_id=rollback_id,
        chapter=number,
        volume=chapter.volume,
        title=chapter.title,
        storyline_id=chapter.storyline_id,
        content=current.content if current else (revisions[-1].content if revisions else ""),
        summary=summary.content if summary else None,
        evaluation=evaluation.content if evaluation else None,
        pipeline_log=log.content if log else None,
        revisions=json.dumps(
            [
                {"kind": r.kind, "content": r.content, "created_at": r.created_at, "note": r.note}
                for r in revisions
            ],
            ensure_ascii=False,
        ),
        removed_at=now,
    )
    s.add(row)
    return row


def _archive_staged(
    s: Session, number: int, rows: Sequence[StagingRow], rollback_id: int, now: str
) -> ArchivedChapterRow | None:
    """Archive an in-flight chapter's staged texts (its draft, versions and final text), if it has any."""
    by_path = {r.path: r for r in rows}
    texts: list[StagingRow] = []
    if layout.draft_path(number) in by_path:
        texts.append(by_path[layout.draft_path(number)])
    versions: list[tuple[int, StagingRow]] = []
    for path, row in by_path.items():
        v = layout.version_of(path)
        if v is not None and v[0] == number:
            versions.append((v[1], row))
    texts += [row for _k, row in sorted(versions, key=lambda kv: kv[0])]
    if layout.chapter_path(number) in by_path:
        texts.append(by_path[layout.chapter_path(number)])
    if not texts:
        return None
    final = texts[-1].content
    summary = by_path.get(layout.summary_path(number))
    evaluation = by_path.get(layout.evaluation_path(number))
    log = by_path.get(layout.log_path(number))
    archived = ArchivedChapterRow(
        rollback_id=rollback_id,
        chapter=number,
        volume=int(get_checkpoint(s).get("current_volume") or 1),
        title=title_of(final),
        content=final,
        summary=summary.content if summary else None,
        evaluation=evaluation.content if evaluation else None,
        pipeline_log=log.content if log else None,
        revisions=json.dumps(
            [
                {
                    "kind": r.kind if r.kind in REVISION_KINDS else "draft",
                    "content": r.content,
                    "created_at": r.updated_at,
                    "note": "未提交（写作中被移除）",
                }
                for r in texts
            ],
            ensure_ascii=False,
        ),
        removed_at=now,
        staged=True,
    )
    s.add(archived)
    return archived


def _delete_chapters(s: Session, numbers: Sequence[int]) -> None:
    if not numbers:
        return
    for table in (SummaryRow, EvaluationRow, ChapterRevisionRow):
        s.exec(delete(table).where(col(table.chapter).in_(numbers)))
    s.exec(delete(PipelineLogRow).where(col(PipelineLogRow.chapter).in_(numbers)))
    s.exec(delete(ChapterRow).where(col(ChapterRow.number).in_(numbers)))


def _delete_answers_after(s: Session, chapter: int) -> None:
    """The NOVEL_ASK answers given about a removed chapter (a low-score decision …) must not answer the
    questions of the chapter written in its place."""
    for row in s.exec(select(AnswerRow)):
        number = layout.staged_chapter(row.answer_path)
        if number is not None and number > chapter:
            s.delete(row)


def _removed_origin(origin: str, chapter: int) -> bool:
    kind, _, number = origin.partition(":")
    return kind in _DERIVED and number.isdigit() and int(number) > chapter


def _follows_chapters(path: str) -> bool:
    """A document that says where the story stands after the last chapter: a storyline memory, the ledger."""
    return path == layout.GLOBAL_FORESHADOWING or (
        path.startswith("storylines/") and path.endswith("/memory.md")
    )


def _restore_documents(s: Session, chapter: int, position: int, now: str) -> tuple[list[str], list[str]]:
    """Put every document a removed chapter's commit, rebuild or rollback wrote after ``position`` back to
    its content at ``position`` (deleting one that did not exist then); the storyline memories and the
    foreshadowing ledger, which follow the chapters, go back to it whoever wrote them since."""
    written = s.exec(
        select(DocumentHistoryRow.path, DocumentHistoryRow.origin).where(
            col(DocumentHistoryRow.id) > position
        )
    ).all()
    paths = sorted(
        {
            str(p)
            for p, origin in written
            if _removed_origin(str(origin), chapter) or _follows_chapters(str(p))
        }
    )
    restored: list[str] = []
    deleted: list[str] = []
    for path in paths:
        then = document_at(s, path, position)
        row = s.get(DocumentRow, path)
        if then is None:
            if row is not None:
                s.delete(row)
                deleted.append(path)
        elif row is None or row.content != then:
            s.merge(DocumentRow(path=path, content=then, updated_at=now))
            restored.append(path)
    s.flush()
    return restored, deleted


def _archived_row(s: Session, archive_id: int) -> ArchivedChapterRow:
    row = s.get(ArchivedChapterRow, archive_id)
    if row is None:
        raise RollbackRefused(f"存档里没有编号 #{archive_id} 的章节 (no archived chapter #{archive_id})")
    return row


def _revisions_of(row: ArchivedChapterRow) -> list[dict[str, Any]]:
    try:
        data = json.loads(row.revisions or "[]")
    except json.JSONDecodeError:
        return []
    return [r for r in data if isinstance(r, dict)] if isinstance(data, list) else []


def _info(row: ArchivedChapterRow) -> ArchivedChapterInfo:
    return ArchivedChapterInfo(
        id=int(row.id or 0),
        rollback_id=row.rollback_id,
        chapter=row.chapter,
        volume=row.volume,
        title=row.title,
        chars=count_chars(row.content),
        removed_at=row.removed_at,
        restored_at=row.restored_at,
        staged=bool(row.staged),
    )


def _evaluation_row(chapter: int, content: str, now: str) -> EvaluationRow:
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        data = {}
    overall = data.get("overall") if isinstance(data, dict) else None
    recommendation = data.get("recommendation") if isinstance(data, dict) else None
    return EvaluationRow(
        chapter=chapter,
        content=content,
        overall=float(overall) if isinstance(overall, int | float) else None,
        recommendation=recommendation if isinstance(recommendation, str) else None,
        updated_at=now,
    )


def _log_row(chapter: int, content: str, now: str) -> PipelineLogRow:
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        data = {}
    cost = data.get("total_cost_usd") if isinstance(data, dict) else None
    return PipelineLogRow(
        chapter=chapter,
        content=content,
        total_cost_usd=float(cost) if isinstance(cost, int | float) else None,
        updated_at=now,
    )


def archive_and_drop(s: Session, numbers: Sequence[int], now: str) -> int:
    """Archive committed chapters ``numbers`` as one batch and delete them (the trial reset); returns the
    batch's rollback id (0 when there was nothing to archive)."""
    existing = [n for n in numbers if s.get(ChapterRow, n) is not None]
    if not existing:
        return 0
    rollback_id = _next_rollback_id(s)
    for number in existing:
        _archive_committed(s, number, rollback_id, now)
    _delete_chapters(s, existing)
    return rollback_id


__all__ = ["RollbackRefused", "RollbackRepository", "archive_and_drop"]
