"""The story state: its snapshots by version, the changelog and state patches (the rebuild: ``rebuild``)."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import func
from sqlmodel import Session, col, select

from novel_desktop.domain.common import iso_now
from novel_desktop.domain.state_ops import apply_foreshadow_updates, apply_patch
from novel_desktop.domain.state_patch import PatchResult
from novel_desktop.storage import layout
from novel_desktop.storage.history import rollback_marks, state_removed
from novel_desktop.storage.repository import Repository, dumps, empty_state
from novel_desktop.storage.tables import (
    ChangelogRow,
    DocumentRow,
    StateSnapshotRow,
)


class StateRepository(Repository):
    """Every state version the novel went through, and how it got there."""

    def state_version(self) -> int:
        with self._read() as s:
            v = s.exec(select(func.max(StateSnapshotRow.state_version))).one()
            return int(v or 0)

    def current_state(self) -> dict[str, Any]:
        content = self._value("SELECT content FROM state_snapshots ORDER BY state_version DESC LIMIT 1")
        data: dict[str, Any] = json.loads(content) if content is not None else empty_state()
        return data

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
