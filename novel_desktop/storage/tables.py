"""SQLModel tables of a ``.novel`` file.

JSON documents are stored as the text they were given (``content``), so that a seed project folder survives
an import/export round trip byte for byte; the few columns next to them are indexes for queries.
"""

from __future__ import annotations

from sqlmodel import Field, SQLModel


class MetaRow(SQLModel, table=True):
    """Key/value facts about the file: schema version, title, genre, platform, counters."""

    __tablename__ = "meta"
    key: str = Field(primary_key=True)
    value: str


class CheckpointRow(SQLModel, table=True):
    """The one ``.checkpoint.json`` of the novel (id is always 1)."""

    __tablename__ = "checkpoint"
    id: int = Field(default=1, primary_key=True)
    content: str


class DocumentRow(SQLModel, table=True):
    """A project file of the seed layout that has no table of its own (brief, world, characters, volumes…).

    ``path`` is the project-relative POSIX path the seed gives it, e.g. ``world/rules.json``.
    """

    __tablename__ = "documents"
    path: str = Field(primary_key=True)
    content: str
    updated_at: str


class ChapterRow(SQLModel, table=True):
    """A committed chapter; its text is the current revision."""

    __tablename__ = "chapters"
    number: int = Field(primary_key=True)
    volume: int = Field(default=1, index=True)
    title: str = ""
    storyline_id: str | None = None
    #: ``committed`` or ``needs_rebuild`` (text changed after the state was derived from it).
    status: str = "committed"
    current_revision_id: int | None = None
    chars: int = 0
    content_hash: str = ""
    #: Hash of the text the chapter's summary and state ops were derived from (schema 2). A chapter whose
    #: ``content_hash`` differs (edited, replaced, imported without a summary) is stale: the state no longer
    #: follows from its text.
    source_hash: str = ""
    committed_at: str = ""
    updated_at: str = ""


class ChapterRevisionRow(SQLModel, table=True):
    """Every text a chapter has had: draft, refined, manual, revision, imported. None is ever overwritten."""

    __tablename__ = "chapter_revisions"
    id: int | None = Field(default=None, primary_key=True)
    chapter: int = Field(foreign_key="chapters.number", index=True)
    kind: str
    content: str
    chars: int = 0
    created_at: str
    note: str = ""


class SummaryRow(SQLModel, table=True):
    """``summaries/chapter-NNN-summary.md``."""

    __tablename__ = "summaries"
    chapter: int = Field(foreign_key="chapters.number", primary_key=True)
    content: str
    storyline_id: str | None = None
    updated_at: str = ""


class EvaluationRow(SQLModel, table=True):
    """``evaluations/chapter-NNN-eval.json`` (the judge's verdict that counted)."""

    __tablename__ = "evaluations"
    chapter: int = Field(foreign_key="chapters.number", primary_key=True)
    content: str
    overall: float | None = None
    recommendation: str | None = None
    updated_at: str = ""


class PipelineLogRow(SQLModel, table=True):
    """``logs/chapter-NNN-log.json``: per-stage model, tokens, duration, cost."""

    __tablename__ = "pipeline_logs"
    chapter: int = Field(primary_key=True)
    content: str
    total_cost_usd: float | None = None
    updated_at: str = ""


class StateSnapshotRow(SQLModel, table=True):
    """The whole ``current-state.json`` as it was at each ``state_version``; the newest is current."""

    __tablename__ = "state_snapshots"
    state_version: int = Field(primary_key=True)
    chapter: int | None = None
    content: str
    created_at: str


class ChangelogRow(SQLModel, table=True):
    """One line of ``state/changelog.jsonl``: an applied op, kept as the text it was written as."""

    __tablename__ = "changelog"
    id: int | None = Field(default=None, primary_key=True)
    state_version: int | None = Field(default=None, index=True)
    chapter: int | None = Field(default=None, index=True)
    content: str


class StagingRow(SQLModel, table=True):
    """Pipeline output not yet committed (``staging/…`` of the seed, minus NOVEL_ASK answers)."""

    __tablename__ = "staging"
    path: str = Field(primary_key=True)
    chapter: int | None = Field(default=None, index=True)
    kind: str = ""
    content: str
    updated_at: str


class AnswerRow(SQLModel, table=True):
    """A NOVEL_ASK AnswerSpec stored by its ``answer_path``."""

    __tablename__ = "answers"
    answer_path: str = Field(primary_key=True)
    content: str
    updated_at: str


class LockRow(SQLModel, table=True):
    """The single-writer lock (id is always 1): who holds the novel open for writing."""

    __tablename__ = "writer_lock"
    id: int = Field(default=1, primary_key=True)
    token: str
    pid: int
    host: str
    started: str
    chapter: int | None = None
    purpose: str = ""


class ExtraFileRow(SQLModel, table=True):
    """A file of an imported folder that the seed layout does not name: kept byte for byte, and reported."""

    __tablename__ = "extra_files"
    path: str = Field(primary_key=True)
    data: bytes


class DocumentHistoryRow(SQLModel, table=True):
    """Every content a project document has had (schema 2), written by triggers on ``documents``.

    ``content`` is None for a deletion. ``origin`` is what wrote it: ``commit:N``, ``rebuild:N``,
    ``rollback:N`` or "" (the author, planning, an import). The newest row of a path with ``id <= seq`` is
    the document as it was at history position ``seq``.
    """

    __tablename__ = "document_history"
    id: int | None = Field(default=None, primary_key=True)
    path: str = Field(index=True)
    content: str | None = None
    origin: str = ""
    created_at: str = ""


class ChapterPointRow(SQLModel, table=True):
    """Where the novel stood when a chapter's state was (re)derived (schema 2): one row per commit, rebuild
    or rollback of the chapter. The newest row of a chapter is its point.

    ``docs_before`` is the document history position just before the operation wrote anything (the
    documents the chapter was written from), ``docs_after`` the position after it; ``state_version`` the
    state after the chapter; ``checkpoint`` the checkpoint JSON afterwards (volume position).
    """

    __tablename__ = "chapter_points"
    id: int | None = Field(default=None, primary_key=True)
    chapter: int = Field(index=True)
    kind: str
    state_version: int
    docs_before: int = 0
    docs_after: int = 0
    checkpoint: str = ""
    created_at: str = ""


class ModelCallRow(SQLModel, table=True):
    """One model call's tokens and cost (schema 2), whatever it was for and however it ended.

    ``chapter`` is the chapter it worked on (None for planning outside a chapter); ``purpose`` the step
    (write, summarize, judge, rejudge, plan, quick_start, rebuild …); ``status`` ok, failed or cancelled.
    """

    __tablename__ = "model_calls"
    id: int | None = Field(default=None, primary_key=True)
    created_at: str
    chapter: int | None = Field(default=None, index=True)
    role: str = ""
    model: str = ""
    purpose: str = ""
    status: str = "ok"
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float = 0.0
    duration_ms: int = 0
    attempts: int = 1


class ArchivedChapterRow(SQLModel, table=True):
    """A chapter a rollback removed (schema 2): its text, summary, evaluation, log and every revision, kept
    so it can be listed, read and restored. ``rollback_id`` groups the chapters one rollback removed."""

    __tablename__ = "archived_chapters"
    id: int | None = Field(default=None, primary_key=True)
    rollback_id: int = Field(index=True)
    chapter: int
    volume: int = 1
    title: str = ""
    storyline_id: str | None = None
    content: str
    summary: str | None = None
    evaluation: str | None = None
    pipeline_log: str | None = None
    #: JSON list of {"kind", "content", "created_at", "note"}: the chapter's revisions, oldest first.
    revisions: str = "[]"
    removed_at: str = ""
    restored_at: str | None = None
    #: True for a chapter that was in flight (staged, never committed) when it was removed.
    staged: bool = False


#: Tables schema version 2 adds.
SCHEMA_V2_TABLES = [DocumentHistoryRow, ChapterPointRow, ModelCallRow, ArchivedChapterRow]

#: Tables of schema version 1, in creation order. Later versions add their tables in their own migration.
SCHEMA_V1_TABLES = [
    MetaRow,
    CheckpointRow,
    DocumentRow,
    ChapterRow,
    ChapterRevisionRow,
    SummaryRow,
    EvaluationRow,
    PipelineLogRow,
    StateSnapshotRow,
    ChangelogRow,
    StagingRow,
    AnswerRow,
    LockRow,
    ExtraFileRow,
]
