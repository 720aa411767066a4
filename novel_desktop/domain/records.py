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
    """What a rebuild after a manual edit did (seed 001 §10.8, issue 15).

    ``chapter`` is the chapter the rebuild started from (``requested`` the one asked for: an earlier stale
    chapter comes first). Each re-summarized chapter was summarized against the novel as it was when it was
    written (``no_history``: chapters with no recorded point, summarized against today's documents).
    """

    chapter: int
    base_version: int
    state_version: int
    #: Ops of the re-summarized chapters that did not apply (``第3章 0: …``).
    dropped_ops: list[str] = field(default_factory=list)
    #: The cascade check: later chapters whose recorded summary or ops contradict the new state, with why.
    disagreeing: dict[int, list[str]] = field(default_factory=dict)
    #: Entities (``items.bronze-key``) whose state after the requested chapter changed.
    changed_paths: list[str] = field(default_factory=list)
    requested: int = 0
    resummarized: list[int] = field(default_factory=list)
    #: Per chapter of the chain, what changed in the state after it compared with before the rebuild
    #: (readable Chinese: ``物品 青铜钥匙：持有者 林风 → 已不存在``).
    changes: dict[int, list[str]] = field(default_factory=dict)
    no_history: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cost_usd: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """The report as JSON (chapter keys as strings, as JSON objects need)."""
        data = asdict(self)
        for key in ("disagreeing", "changes"):
            data[key] = {str(k): v for k, v in sorted(data[key].items())}
        return data


@dataclass
class ResummarizedChapter:
    """A chapter's new summary and state ops from the Summarizer, for the rebuild's one transaction."""

    chapter: int
    #: The hash of the text summarized: the rebuild refuses to store it if the text changed meanwhile.
    content_hash: str
    summary_markdown: str
    ops: list[Any]
    storyline_id: str | None = None
    storyline_memory: str | None = None


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


@dataclass(frozen=True)
class RollbackPlan:
    """What a rollback to chapter ``to_chapter`` would remove (shown before the author confirms)."""

    to_chapter: int
    #: (chapter, title, chars) of each committed chapter after ``to_chapter``, in order.
    chapters: list[tuple[int, str, int]]
    #: The chapter in flight (staged, not committed) that goes too, if any.
    staged_chapter: int | None = None

    @property
    def chars(self) -> int:
        return sum(chars for _n, _title, chars in self.chapters)


@dataclass
class RollbackReport:
    """What a rollback did: the chapters moved to the archive, the state and documents restored."""

    to_chapter: int
    rollback_id: int
    removed: list[int]
    removed_chars: int
    staged_chapter: int | None
    state_version: int
    #: Documents put back to their content right after ``to_chapter`` / deleted (they did not exist then).
    restored_documents: list[str] = field(default_factory=list)
    deleted_documents: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ArchivedChapterInfo:
    """A chapter a rollback (or a trial reset) removed, as the archive lists it."""

    id: int
    rollback_id: int
    chapter: int
    volume: int
    title: str
    chars: int
    removed_at: str
    restored_at: str | None
    #: True for a chapter that was still in flight (staged, never committed) when it was removed.
    staged: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ArchivedRevision:
    kind: str
    content: str
    chars: int
    created_at: str
    note: str


@dataclass(frozen=True)
class ArchivedChapter:
    """One archived chapter in full: its text, summary and every revision (oldest first)."""

    info: ArchivedChapterInfo
    content: str
    summary: str | None
    revisions: list[ArchivedRevision]
