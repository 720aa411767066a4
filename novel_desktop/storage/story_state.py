"""The story state: its snapshots by version, the changelog, state patches and the rebuild after an edit."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import func
from sqlmodel import Session, col, select

from novel_desktop.domain.common import iso_now
from novel_desktop.domain.records import RebuildReport
from novel_desktop.domain.state_ops import apply_foreshadow_updates, apply_patch
from novel_desktop.domain.state_patch import PatchResult
from novel_desktop.storage import layout
from novel_desktop.storage.history import rollback_marks, state_removed
from novel_desktop.storage.repository import Repository, StoreError, dumps, empty_state
from novel_desktop.storage.tables import (
    ChangelogRow,
    ChapterRow,
    DocumentRow,
    StateSnapshotRow,
    SummaryRow,
)


class StateRepository(Repository):
    """Every state version the novel went through, and how it got there."""

    def state_version(self) -> int:
        with self._read() as s:
            v = s.exec(select(func.max(StateSnapshotRow.state_version))).one()
            return int(v or 0)

    def current_state(self) -> dict[str, Any]:
        with self._read() as s:
            return latest_state(s)

    def state_at(self, version: int) -> dict[str, Any] | None:
        """The state as it was at ``version`` (one read), or None if that version was never stored."""
        with self._read() as s:
            row = s.get(StateSnapshotRow, version)
            return json.loads(row.content) if row else None

    def state_versions(self) -> list[int]:
        with self._read() as s:
            return list(
                s.exec(select(StateSnapshotRow.state_version).order_by(col(StateSnapshotRow.state_version)))
            )

    def changelog(self, since_version: int = 0) -> list[dict[str, Any]]:
        """Changelog entries with ``state_version`` above ``since_version``, in order."""
        with self._read() as s:
            rows = s.exec(
                select(ChangelogRow)
                .where(func.coalesce(ChangelogRow.state_version, 0) > since_version)
                .order_by(col(ChangelogRow.id))
            )
            return [json.loads(r.content) for r in rows]

    def apply_state_patch(self, patch: dict[str, Any] | str) -> PatchResult:
        """Validate and merge a state patch now (``novel state apply``), in one transaction.

        Raises :class:`~novel_desktop.domain.state_patch.PatchRejected` for a patch that cannot be applied.
        """
        with self._write() as s:
            result = apply_patch(latest_state(s), patch)
            store_patch_result(s, result)
            return result

    # ------------------------------------------------------------------ rebuild (§10.8)
    def rebuild_state(
        self,
        chapter: int,
        *,
        summary_markdown: str | None,
        patch: dict[str, Any] | None,
        storyline_memory: tuple[str, str] | None = None,
    ) -> RebuildReport:
        """Replace chapter ``chapter``'s summary and state delta, then replay the later chapters' deltas.

        The state before the chapter is the newest snapshot recorded for chapter - 1; the new delta is applied
        to it, then each later chapter's recorded ops (its newest changelog group) in order. The whole new
        chain is stored as new versions, so every earlier state stays readable. A later chapter is reported
        as disagreeing when one of its ops no longer applies, or when it touches an entity whose state the
        edit changed; those chapters stay marked ``needs_rebuild``, the others are marked consistent again.
        """
        with self._write() as s:
            if s.get(ChapterRow, chapter) is None:
                raise StoreError(f"第 {chapter} 章不存在 (chapter {chapter} does not exist)")
            base = state_for_chapter(s, chapter - 1)
            if base is None:
                raise StoreError(
                    f"找不到第 {chapter - 1} 章之后的状态快照，无法从第 {chapter} 章重建 "
                    f"(no state recorded after chapter {chapter - 1})"
                )
            groups = changelog_by_chapter(s)
            old_after = state_for_chapter(s, chapter)
            version = int(latest_state(s).get("state_version", 0))
            report = RebuildReport(chapter, int(base.get("state_version", 0)), version)
            now = iso_now()

            chain: list[tuple[int, dict[str, Any], PatchResult]] = []
            state = base
            new_ops = list((patch or {}).get("ops") or [])
            for c in [chapter, *sorted(k for k in groups if k > chapter)]:
                ops = new_ops if c == chapter else groups[c]
                result = apply_patch(
                    state,
                    {"chapter": c, "base_state_version": int(state.get("state_version", 0)), "ops": ops},
                    now=now,
                )
                if result.dropped:
                    reasons = [f"{d.index}: {d.reason}" for d in result.dropped]
                    if c == chapter:
                        report.dropped_ops.extend(reasons)
                    else:
                        report.disagreeing.setdefault(c, []).extend(f"状态 op 不再适用：{r}" for r in reasons)
                chain.append((c, state, result))
                state = result.state
                if c == chapter:
                    report.changed_paths = _changed_entities(old_after or base, state)

            changed = set(report.changed_paths)
            for c, _before, result in chain[1:]:
                touched = {_entity_of(str(op.path)) for op in result.applied}
                overlap = sorted(touched & changed)
                if overlap:
                    report.disagreeing.setdefault(c, []).append(f"依赖被改动的状态：{'、'.join(overlap)}")

            # Store the chain as fresh versions after the newest one.
            for c, _before, result in chain:
                version += 1
                new_state = {**result.state, "state_version": version}
                s.add(
                    StateSnapshotRow(
                        state_version=version, chapter=c, content=dumps(new_state), created_at=now
                    )
                )
                for entry in result.changelog:
                    line = {
                        **entry,
                        "state_version": version,
                        "base_state_version": version - 1,
                        "rebuild_of": chapter,
                    }
                    s.add(
                        ChangelogRow(
                            state_version=version, chapter=c, content=json.dumps(line, ensure_ascii=False)
                        )
                    )
                if result.foreshadow_updates:
                    row = s.get(DocumentRow, layout.GLOBAL_FORESHADOWING)
                    doc = json.loads(row.content) if row else {"foreshadowing": []}
                    updated = apply_foreshadow_updates(doc, result.foreshadow_updates, c)
                    s.merge(
                        DocumentRow(path=layout.GLOBAL_FORESHADOWING, content=dumps(updated), updated_at=now)
                    )
            report.state_version = version

            if summary_markdown is not None:
                s.merge(SummaryRow(chapter=chapter, content=summary_markdown, updated_at=now))
            if storyline_memory is not None:
                s.merge(
                    DocumentRow(
                        path=layout.memory_path(storyline_memory[0]),
                        content=storyline_memory[1],
                        updated_at=now,
                    )
                )
            for ch in s.exec(select(ChapterRow).where(col(ChapterRow.number) >= chapter)):
                ch.status = "needs_rebuild" if ch.number in report.disagreeing else "committed"
                if ch.number == chapter:
                    ch.source_hash = ch.content_hash
                s.add(ch)
            return report


# ---------------------------------------------------------------------- helpers used inside transactions
def latest_state(s: Session) -> dict[str, Any]:
    row = s.exec(
        select(StateSnapshotRow).order_by(col(StateSnapshotRow.state_version).desc()).limit(1)
    ).first()
    data: dict[str, Any] = json.loads(row.content) if row else empty_state()
    return data


def state_for_chapter(s: Session, chapter: int) -> dict[str, Any] | None:
    """The newest state recorded after ``chapter`` (chapter 0: the state before the first chapter); a state
    of a chapter a rollback removed since does not count."""
    marks = rollback_marks(s)
    row = s.exec(
        select(StateSnapshotRow)
        .where(StateSnapshotRow.chapter == chapter)
        .order_by(col(StateSnapshotRow.state_version).desc())
        .limit(1)
    ).first()
    if row is not None and state_removed(marks, chapter, row.state_version):
        row = None
    if row is None and chapter == 0:
        row = s.exec(select(StateSnapshotRow).order_by(col(StateSnapshotRow.state_version)).limit(1)).first()
    return json.loads(row.content) if row else None


def changelog_by_chapter(s: Session) -> dict[int, list[dict[str, Any]]]:
    """Each chapter's newest group of applied ops (a rebuild's group supersedes the original). The groups of
    chapters a rollback removed (written before it) are left out: they are kept for the record only."""
    marks = rollback_marks(s)
    newest: dict[int, int] = {}
    groups: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for row in s.exec(select(ChangelogRow).order_by(col(ChangelogRow.id))):
        if row.chapter is None or row.state_version is None:
            continue
        if state_removed(marks, row.chapter, row.state_version):
            continue
        entry = json.loads(row.content)
        key = (row.chapter, row.state_version)
        groups.setdefault(key, [])
        if entry.get("op") is not None:
            groups[key].append({k: entry[k] for k in ("op", "path", "value", "detail") if k in entry})
        newest[row.chapter] = max(newest.get(row.chapter, -1), row.state_version)
    return {c: groups[(c, v)] for c, v in newest.items()}


def _entity_of(path: str) -> str:
    """``characters.lin-feng.location`` → ``characters.lin-feng``; a foreshadowing id stays as it is."""
    parts = path.split(".")
    return ".".join(parts[:2])


def _changed_entities(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Entities (``category.id``) whose recorded state differs between two states."""
    changed: list[str] = []
    for category in ("characters", "items", "locations", "factions", "world_state"):
        old, new = before.get(category) or {}, after.get(category) or {}
        if category == "world_state":
            changed += [f"world_state.{k}" for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
            continue
        changed += [f"{category}.{k}" for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
    old_fs, new_fs = (
        set(before.get("active_foreshadowing") or []),
        set(after.get("active_foreshadowing") or []),
    )
    changed += sorted(old_fs ^ new_fs)
    return changed


def store_patch_result(s: Session, result: PatchResult, chapter: int | None = None) -> None:
    """Snapshot the new state, append the changelog, and apply foreshadowing updates to global.json."""
    version = int(result.state["state_version"])
    now = iso_now()
    s.add(
        StateSnapshotRow(
            state_version=version,
            chapter=chapter if chapter is not None else result.state.get("last_updated_chapter"),
            content=dumps(result.state),
            created_at=now,
        )
    )
    for entry in result.changelog:
        s.add(
            ChangelogRow(
                state_version=version,
                chapter=entry.get("chapter"),
                content=json.dumps(entry, ensure_ascii=False),
            )
        )
    if result.foreshadow_updates:
        row = s.get(DocumentRow, layout.GLOBAL_FORESHADOWING)
        doc = json.loads(row.content) if row else {"foreshadowing": []}
        fs_chapter = chapter if chapter is not None else int(result.state.get("last_updated_chapter") or 0)
        updated = apply_foreshadow_updates(doc, result.foreshadow_updates, fs_chapter)
        s.merge(DocumentRow(path=layout.GLOBAL_FORESHADOWING, content=dumps(updated), updated_at=now))
