"""Transactions the pipeline needs beyond a chapter commit: starting a trial over, pruning the state, and
replacing a chapter's verdict. Each is one SQLite transaction: a crash leaves the old or the new, never half.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlmodel import Session

from novel_desktop.domain.common import iso_now
from novel_desktop.storage.engine import writer
from novel_desktop.storage.history import ROLLBACK, history_position, record_point, write_origin
from novel_desktop.storage.rebuild import clear_from_cascade
from novel_desktop.storage.rollback import archive_and_drop
from novel_desktop.storage.store import NovelStore, dumps, empty_state
from novel_desktop.storage.tables import DocumentRow, EvaluationRow, PipelineLogRow, StateSnapshotRow


def drop_chapters(store: NovelStore, chapters: Sequence[int]) -> int:
    """Move ``chapters`` (with their summaries, evaluations, revisions and logs) to the archive, where they
    stay readable and restorable, and start the state over as a new empty version (old snapshots stay for
    the record; a rollback point at chapter 0 marks what was derived from the removed chapters). Returns the
    new state version."""
    version = store.state_version() + 1
    numbers = list(chapters)
    now = iso_now()
    with Session(writer(store.engine)) as s, s.begin(), write_origin(s, f"{ROLLBACK}:0"):
        docs_before = history_position(s)
        archive_and_drop(s, numbers, now)
        s.add(
            StateSnapshotRow(
                state_version=version,
                chapter=0,
                content=dumps({**empty_state(), "state_version": version}),
                created_at=now,
            )
        )
        record_point(s, 0, ROLLBACK, version, docs_before)
    return version


def rewrite_state_snapshot(store: NovelStore, state_version: int, state: dict[str, Any]) -> bool:
    """Replace the content of snapshot ``state_version`` in place (a pruned state keeps its version).

    False when there is no such snapshot."""
    with Session(writer(store.engine)) as s, s.begin():
        row = s.get(StateSnapshotRow, state_version)
        if row is None:
            return False
        row.content = dumps(state)
        s.add(row)
    return True


def apply_document_changes(
    store: NovelStore,
    put: dict[str, str],
    remove: Sequence[str] = (),
    *,
    state: dict[str, Any] | None = None,
) -> None:
    """Write ``put``, delete ``remove`` and (when given) replace the newest state snapshot's content with
    ``state`` (same version), all in one transaction: the volume review's cleanup is all or nothing."""
    now = iso_now()
    with Session(writer(store.engine)) as s, s.begin():
        for path, content in put.items():
            s.merge(DocumentRow(path=path, content=content, updated_at=now))
        for path in remove:
            row = s.get(DocumentRow, path)
            if row is not None:
                s.delete(row)
        if state is not None:
            snap = s.get(StateSnapshotRow, int(state.get("state_version", 0)))
            if snap is not None:
                snap.content = dumps(state)
                s.add(snap)


def replace_evaluation(
    store: NovelStore, chapter: int, evaluation: dict[str, Any], *, how: str, model: str, cost_usd: float
) -> dict[str, Any] | None:
    """Store a new evaluation of a committed chapter; the old one moves into its pipeline log.

    The log gains a ``previous_evaluations`` entry (the old verdict in full, with when and why it was
    replaced) and a stage line for the call; a chapter on the last rebuild's cascade list leaves it (it has
    been judged against the new state). One transaction. Returns the old evaluation, if any.
    """
    now = iso_now()
    data = {**evaluation, "chapter": chapter}
    overall = data.get("overall")
    with Session(writer(store.engine), expire_on_commit=False) as s, s.begin():
        clear_from_cascade(s, chapter)
        old_row = s.get(EvaluationRow, chapter)
        old = json.loads(old_row.content) if old_row else None
        log_row = s.get(PipelineLogRow, chapter)
        log: dict[str, Any] = (
            json.loads(log_row.content) if log_row else {"chapter": chapter, "started_at": now}
        )
        history = list(log.get("previous_evaluations") or [])
        if old is not None:
            history.append({"replaced_at": now, "replaced_by": how, "evaluation": old})
        log["previous_evaluations"] = history
        log.setdefault("stages", []).append(
            {
                "name": how,
                "model": model,
                "input_tokens": 0,
                "output_tokens": 0,
                "duration_ms": 0,
                "cost_usd": round(cost_usd, 6),
            }
        )
        total = float(log.get("total_cost_usd") or 0.0) + cost_usd
        log["total_cost_usd"] = round(total, 6)
        s.merge(
            EvaluationRow(
                chapter=chapter,
                content=json.dumps(data, ensure_ascii=False, indent=2),
                overall=float(overall) if isinstance(overall, int | float) else None,
                recommendation=data.get("recommendation"),
                updated_at=now,
            )
        )
        s.merge(
            PipelineLogRow(
                chapter=chapter,
                content=json.dumps(log, ensure_ascii=False, indent=2),
                total_cost_usd=round(total, 6),
                updated_at=now,
            )
        )
    return old if isinstance(old, dict) else None


__all__ = ["drop_chapters", "replace_evaluation", "rewrite_state_snapshot"]
