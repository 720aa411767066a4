"""Plain records the store returns: a chapter's row, a revision, the novel's status, what a commit or a
rebuild did. Views show them; only storage makes them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from novel_desktop.domain.ledger import CostTotals


@dataclass(frozen=True)
class ChapterInfo:
    number: int
    volume: int
    title: str
    status: str
    chars: int
    storyline_id: str | None
    committed_at: str
    updated_at: str


@dataclass(frozen=True)
class RevisionInfo:
    id: int
    chapter: int
    kind: str
    chars: int
    created_at: str
    note: str


@dataclass
class StatusReport:
    """What ``novel status`` shows."""

    title: str
    current_volume: int
    last_completed_chapter: int
    orchestrator_state: str
    pipeline_stage: str | None
    inflight_chapter: int | None
    chapters: int
    total_chars: int
    mean_score: float | None
    open_foreshadowing: int
    state_version: int
    #: The chapters whose summary and state no longer follow from their text: the first one edited (or
    #: imported without a summary) and every chapter after it. Writing on waits for ``novel rebuild``.
    stale_chapters: list[int] = field(default_factory=list)
    #: Every model call's tokens and cost (the ledger): planning, judging again, failed and cancelled calls.
    cost: CostTotals = field(default_factory=CostTotals)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("title")
        data["cost"] = self.cost.to_json()
        return data


@dataclass
class CommitResult:
    """What a chapter commit did."""

    chapter: int
    state_version: int
    applied_ops: int
    dropped_ops: list[str]
    ops_skipped: str | None
    rebuild_recommended: bool


@dataclass
class RebuildReport:
    """What a rebuild after a manual edit did (seed 001 §10.8)."""

    chapter: int
    base_version: int
    state_version: int
    dropped_ops: list[str] = field(default_factory=list)
    #: Later chapters whose recorded ops no longer apply, or that build on state the edit changed.
    disagreeing: dict[int, list[str]] = field(default_factory=dict)
    changed_paths: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ChapterPoint:
    """Where the novel stood when chapter ``chapter``'s state was last (re)derived: by a commit, a rebuild or
    a rollback (``kind``). ``docs_before``/``docs_after`` are document history positions (see
    ``NovelStore.documents_at``), ``checkpoint`` the checkpoint afterwards."""

    chapter: int
    kind: str
    state_version: int
    docs_before: int
    docs_after: int
    checkpoint: dict[str, Any]
    created_at: str
