"""``NovelStore``: the repositories of one ``.novel`` file behind one object.

Sessions are short (one per method); every write runs in one ``BEGIN IMMEDIATE`` transaction. Writing needs
the file opened with ``write=True``, which holds the single-writer lock until :meth:`NovelStore.close`.
The store is synchronous: the asyncio pipeline calls it through ``asyncio.to_thread``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, func
from sqlmodel import Session, col, delete, select

from novel_desktop.domain.common import iso_now
from novel_desktop.domain.state_ops import (
    PatchRejected,
    PatchResult,
    apply_foreshadow_updates,
    apply_patch,
    record_ops_skip,
)
from novel_desktop.domain.text import count_chars
from novel_desktop.storage import layout, lock
from novel_desktop.storage.engine import make_engine, writer
from novel_desktop.storage.migrations import SchemaError, current_version, file_version, migrate
from novel_desktop.storage.tables import (
    AnswerRow,
    ChangelogRow,
    ChapterRevisionRow,
    ChapterRow,
    CheckpointRow,
    DocumentRow,
    EvaluationRow,
    ExtraFileRow,
    MetaRow,
    PipelineLogRow,
    StagingRow,
    StateSnapshotRow,
    SummaryRow,
)

PLATFORMS = ("qidian", "tomato", "jjwxc", "web")
REVISION_KINDS = ("draft", "refined", "manual", "revision", "imported")
OPS_SKIP_KEY = "ops_skip_count"


class StoreError(Exception):
    """A request the store refuses, with a message for the author."""


class ReadOnlyError(StoreError):
    """A write to a novel opened read-only."""


def default_checkpoint() -> dict[str, Any]:
    """The checkpoint of a new novel (seed 004 §9.2)."""
    return {
        "last_completed_chapter": 0,
        "current_volume": 1,
        "orchestrator_state": "INIT",
        "pipeline_stage": None,
        "inflight_chapter": None,
        "pending_actions": [],
        "last_checkpoint_time": iso_now(),
    }


def empty_state() -> dict[str, Any]:
    """``current-state.json`` before the first chapter."""
    return {
        "schema_version": 1,
        "state_version": 0,
        "last_updated_chapter": 0,
        "characters": {},
        "items": {},
        "locations": {},
        "factions": {},
        "world_state": {},
        "active_foreshadowing": [],
    }


def dumps(data: Any) -> str:
    """JSON as the project writes it: UTF-8 Chinese, two-space indent, trailing newline."""
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


_TITLE_RE = re.compile(r"^\s*#{1,6}\s*(.+?)\s*$")


def title_of(text: str) -> str:
    """The chapter title: its first Markdown heading, else its first non-empty line (trimmed)."""
    for line in text.splitlines():
        if not line.strip():
            continue
        m = _TITLE_RE.match(line)
        return (m.group(1) if m else line.strip())[:80]
    return ""


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
    needs_rebuild: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("title")
        data.pop("needs_rebuild")
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


class NovelStore:
    """One open ``.novel`` file."""

    def __init__(self, path: Path, engine: Engine, held: lock.LockInfo | None) -> None:
        self.path = path
        self.engine = engine
        self._lock = held
        self.backup_path: Path | None = None

    # ------------------------------------------------------------------ opening and closing
    @classmethod
    def create(
        cls,
        path: str | Path,
        *,
        title: str,
        genre: str | None = None,
        platform: str = "web",
    ) -> NovelStore:
        """Create a new novel file, open for writing. An existing file is never overwritten."""
        p = Path(path)
        if p.exists():
            raise StoreError(f"文件已存在，不会覆盖：{p} (file exists, not overwritten)")
        if not title.strip():
            raise StoreError("书名不能为空 (title must not be empty)")
        if platform not in PLATFORMS:
            raise StoreError(f"未知平台 {platform!r}，可选：{', '.join(PLATFORMS)} (unknown platform)")
        if not p.parent.exists():
            raise StoreError(f"目录不存在：{p.parent} (folder does not exist)")
        engine = make_engine(p)
        try:
            migrate(engine, p)
            now = iso_now()
            with Session(writer(engine)) as s, s.begin():
                for key, value in {
                    "title": title.strip(),
                    "genre": genre or "",
                    "platform": platform,
                    "created_at": now,
                    OPS_SKIP_KEY: "0",
                }.items():
                    s.add(MetaRow(key=key, value=value))
                s.add(CheckpointRow(id=1, content=dumps(default_checkpoint())))
                s.add(
                    StateSnapshotRow(state_version=0, chapter=0, content=dumps(empty_state()), created_at=now)
                )
            held = lock.acquire(engine, purpose="write")
        except Exception:
            engine.dispose()
            for suffix in ("", "-wal", "-shm"):
                Path(f"{p}{suffix}").unlink(missing_ok=True)
            raise
        return cls(p, engine, held)

    @classmethod
    def open(cls, path: str | Path, *, write: bool = True) -> NovelStore:
        """Open an existing novel. ``write=True`` takes the single-writer lock and migrates old files."""
        p = Path(path)
        if not p.is_file():
            raise StoreError(f"找不到小说文件：{p} (no such novel file)")
        with p.open("rb") as fh:
            if fh.read(16) != b"SQLite format 3\x00":
                raise StoreError(f"不是 novel_desktop 的小说文件：{p} (not a .novel file)")
        engine = make_engine(p)
        try:
            version = file_version(engine)
            if version == 0:
                raise StoreError(f"不是 novel_desktop 的小说文件：{p} (not a .novel file)")
            held: lock.LockInfo | None = None
            backup: Path | None = None
            if write:
                held = lock.acquire(engine, purpose="write")
                try:
                    backup = migrate(engine, p)
                except Exception:
                    lock.release(engine, held.token)
                    raise
            elif version != current_version():
                if version > current_version():
                    migrate(engine, p)  # raises SchemaError with the explanation
                raise SchemaError(
                    f"此文件需要升级数据格式（{version} → {current_version()}），请以写入方式打开一次 "
                    "(open it for writing once to upgrade it)"
                )
        except Exception:
            engine.dispose()
            raise
        store = cls(p, engine, held)
        store.backup_path = backup
        return store

    @property
    def writable(self) -> bool:
        return self._lock is not None

    def close(self) -> None:
        """Release the lock (if held) and close the file."""
        if self._lock is not None:
            lock.release(self.engine, self._lock.token)
            self._lock = None
        self.engine.dispose()

    def __enter__(self) -> NovelStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ sessions
    def _read(self) -> Session:
        return Session(self.engine)

    @contextmanager
    def _write(self) -> Iterator[Session]:
        """One write transaction (``BEGIN IMMEDIATE`` … ``COMMIT``); any exception rolls it all back."""
        if self._lock is None:
            raise ReadOnlyError("这部小说以只读方式打开，不能修改 (the novel is open read-only)")
        with Session(writer(self.engine), expire_on_commit=False) as session, session.begin():
            yield session

    # ------------------------------------------------------------------ meta
    def meta(self) -> dict[str, str]:
        with self._read() as s:
            return {row.key: row.value for row in s.exec(select(MetaRow))}

    def set_meta(self, key: str, value: str) -> None:
        with self._write() as s:
            s.merge(MetaRow(key=key, value=value))

    # ------------------------------------------------------------------ checkpoint
    def checkpoint(self) -> dict[str, Any]:
        with self._read() as s:
            row = s.get(CheckpointRow, 1)
            data: dict[str, Any] = json.loads(row.content) if row else default_checkpoint()
            return data

    def save_checkpoint(self, data: dict[str, Any]) -> None:
        with self._write() as s:
            _put_checkpoint(s, data)

    def update_checkpoint(self, **changes: Any) -> dict[str, Any]:
        """Change some checkpoint fields (and the time) in one transaction; return the new checkpoint."""
        with self._write() as s:
            row = s.get(CheckpointRow, 1)
            data: dict[str, Any] = json.loads(row.content) if row else default_checkpoint()
            data.update(changes)
            data["last_checkpoint_time"] = iso_now()
            _put_checkpoint(s, data)
            return data

    # ------------------------------------------------------------------ documents
    def document(self, path: str) -> str | None:
        with self._read() as s:
            row = s.get(DocumentRow, path)
            return row.content if row else None

    def document_json(self, path: str) -> Any:
        text = self.document(path)
        return json.loads(text) if text is not None else None

    def put_document(self, path: str, content: str) -> None:
        kind, _ = layout.classify(path)
        if kind is not layout.Kind.DOCUMENT:
            raise StoreError(f"{path} 不是项目文档路径 (not a project document path)")
        with self._write() as s:
            s.merge(DocumentRow(path=path, content=content, updated_at=iso_now()))

    def list_documents(self, prefix: str = "") -> list[str]:
        with self._read() as s:
            stmt = (
                select(DocumentRow.path)
                .where(col(DocumentRow.path).startswith(prefix))
                .order_by(col(DocumentRow.path))
            )
            return list(s.exec(stmt))

    def delete_document(self, path: str) -> None:
        with self._write() as s:
            row = s.get(DocumentRow, path)
            if row:
                s.delete(row)

    # ------------------------------------------------------------------ chapters
    def list_chapters(self) -> list[ChapterInfo]:
        with self._read() as s:
            rows = s.exec(select(ChapterRow).order_by(col(ChapterRow.number)))
            return [
                ChapterInfo(
                    r.number,
                    r.volume,
                    r.title,
                    r.status,
                    r.chars,
                    r.storyline_id,
                    r.committed_at,
                    r.updated_at,
                )
                for r in rows
            ]

    def chapter_text(self, number: int) -> str | None:
        with self._read() as s:
            row = s.get(ChapterRow, number)
            if row is None or row.current_revision_id is None:
                return None
            rev = s.get(ChapterRevisionRow, row.current_revision_id)
            return rev.content if rev else None

    def revisions(self, number: int) -> list[RevisionInfo]:
        """Every revision of a chapter, oldest first."""
        with self._read() as s:
            rows = s.exec(
                select(ChapterRevisionRow)
                .where(ChapterRevisionRow.chapter == number)
                .order_by(col(ChapterRevisionRow.id))
            )
            return [RevisionInfo(r.id or 0, r.chapter, r.kind, r.chars, r.created_at, r.note) for r in rows]

    def revision_text(self, revision_id: int) -> str | None:
        with self._read() as s:
            rev = s.get(ChapterRevisionRow, revision_id)
            return rev.content if rev else None

    def save_manual_edit(self, number: int, text: str, note: str = "") -> list[int]:
        """Keep the author's edit as a new ``manual`` revision.

        When the text changed, the chapter and every later committed chapter are marked ``needs_rebuild``
        (their summaries and state were derived from the old text); the marked chapter numbers are returned.
        An unchanged text writes nothing and returns ``[]``.
        """
        with self._write() as s:
            row = s.get(ChapterRow, number)
            if row is None:
                raise StoreError(f"第 {number} 章不存在 (chapter {number} does not exist)")
            digest = content_hash(text)
            if digest == row.content_hash:
                return []
            now = iso_now()
            rev = ChapterRevisionRow(
                chapter=number,
                kind="manual",
                content=text,
                chars=count_chars(text),
                created_at=now,
                note=note,
            )
            s.add(rev)
            s.flush()
            row.current_revision_id = rev.id
            row.chars = rev.chars
            row.content_hash = digest
            row.title = title_of(text) or row.title
            row.updated_at = now
            s.add(row)
            marked = list(s.exec(select(ChapterRow.number).where(col(ChapterRow.number) >= number)))
            for later in s.exec(select(ChapterRow).where(col(ChapterRow.number) >= number)):
                later.status = "needs_rebuild"
                s.add(later)
            return sorted(marked)

    def mark_rebuilt(self, number: int) -> None:
        """The chapter's summary and state agree with its text again."""
        with self._write() as s:
            row = s.get(ChapterRow, number)
            if row is not None:
                row.status = "committed"
                s.add(row)

    # ------------------------------------------------------------------ summaries, evaluations, logs
    def summary(self, number: int) -> str | None:
        with self._read() as s:
            row = s.get(SummaryRow, number)
            return row.content if row else None

    def recent_summaries(self, before: int, n: int = 3) -> list[tuple[int, str]]:
        """The ``n`` summaries of the chapters just before ``before``, oldest first."""
        with self._read() as s:
            rows = s.exec(
                select(SummaryRow)
                .where(col(SummaryRow.chapter) < before)
                .order_by(col(SummaryRow.chapter).desc())
                .limit(n)
            )
            return sorted((r.chapter, r.content) for r in rows)

    def evaluation(self, number: int) -> dict[str, Any] | None:
        with self._read() as s:
            row = s.get(EvaluationRow, number)
            return json.loads(row.content) if row else None

    def pipeline_log(self, number: int) -> dict[str, Any] | None:
        with self._read() as s:
            row = s.get(PipelineLogRow, number)
            return json.loads(row.content) if row else None

    # ------------------------------------------------------------------ state
    def state_version(self) -> int:
        with self._read() as s:
            v = s.exec(select(func.max(StateSnapshotRow.state_version))).one()
            return int(v or 0)

    def current_state(self) -> dict[str, Any]:
        with self._read() as s:
            return _latest_state(s)

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

        Raises :class:`~novel_desktop.domain.state_ops.PatchRejected` for a patch that cannot be applied.
        """
        with self._write() as s:
            result = apply_patch(_latest_state(s), patch)
            _store_patch_result(s, result)
            return result

    # ------------------------------------------------------------------ staging
    def put_staging(self, path: str, content: str, *, chapter: int | None = None, kind: str = "") -> None:
        """Write one staged pipeline output, keyed like ``state/chapter-048-delta.json``."""
        with self._write() as s:
            s.merge(
                StagingRow(
                    path=path,
                    chapter=chapter if chapter is not None else layout.staged_chapter(path),
                    kind=kind,
                    content=content,
                    updated_at=iso_now(),
                )
            )

    def staging(self, path: str) -> str | None:
        with self._read() as s:
            row = s.get(StagingRow, path)
            return row.content if row else None

    def staging_kind(self, path: str) -> str | None:
        with self._read() as s:
            row = s.get(StagingRow, path)
            return row.kind if row else None

    def list_staging(self, chapter: int | None = None) -> list[str]:
        with self._read() as s:
            stmt = select(StagingRow.path).order_by(col(StagingRow.path))
            if chapter is not None:
                stmt = stmt.where(StagingRow.chapter == chapter)
            return list(s.exec(stmt))

    def delete_staging(self, path: str) -> None:
        """Drop one staged output (a summary made stale by a revision, …)."""
        with self._write() as s:
            row = s.get(StagingRow, path)
            if row is not None:
                s.delete(row)

    def clear_staging(self, chapter: int | None = None) -> None:
        """Drop staged outputs (of one chapter, or all)."""
        with self._write() as s:
            stmt = delete(StagingRow)
            if chapter is not None:
                stmt = stmt.where(col(StagingRow.chapter) == chapter)
            s.exec(stmt)

    # ------------------------------------------------------------------ NOVEL_ASK answers
    def answer(self, answer_path: str) -> str | None:
        with self._read() as s:
            row = s.get(AnswerRow, answer_path)
            return row.content if row else None

    def put_answer(self, answer_path: str, content: str) -> None:
        with self._write() as s:
            s.merge(AnswerRow(answer_path=answer_path, content=content, updated_at=iso_now()))

    def delete_answer(self, answer_path: str) -> None:
        """Forget an answer so that the gate asks again (seed 000: 需要重做 gate 时删除 AnswerSpec)."""
        with self._write() as s:
            row = s.get(AnswerRow, answer_path)
            if row:
                s.delete(row)

    def list_answers(self) -> list[str]:
        with self._read() as s:
            return list(s.exec(select(AnswerRow.answer_path).order_by(col(AnswerRow.answer_path))))

    # ------------------------------------------------------------------ extra files
    def put_extra_file(self, path: str, data: bytes) -> None:
        """Keep a file the seed layout does not name (front matter of an imported manuscript, …)."""
        with self._write() as s:
            s.merge(ExtraFileRow(path=path, data=data))

    def extra_file(self, path: str) -> bytes | None:
        with self._read() as s:
            row = s.get(ExtraFileRow, path)
            return row.data if row else None

    def list_extra_files(self) -> list[str]:
        with self._read() as s:
            return list(s.exec(select(ExtraFileRow.path).order_by(col(ExtraFileRow.path))))

    # ------------------------------------------------------------------ commit (§10.4)
    def commit_chapter(
        self,
        number: int,
        *,
        volume: int | None = None,
        storyline_id: str | None = None,
        on_step: Callable[[str], None] | None = None,
    ) -> CommitResult:
        """Move chapter ``number`` from staging into the novel, in ONE transaction (seed 001 §10.4).

        Staged inputs: the text ``chapters/chapter-NNN.md`` (required; its staging ``kind`` is the revision
        kind), the first draft ``chapters/chapter-NNN.draft.md``, the summary, the state delta, the
        evaluation, the pipeline log and any ``storylines/<id>/memory.md`` staged for this chapter.
        The commit stores the revisions, summary, evaluation and log, merges the delta into the state (ops
        that fail validation are dropped with reasons; a patch that cannot be applied at all is skipped and
        counted, §10.6), updates ``foreshadowing/global.json`` and the storyline memories, advances the
        checkpoint and clears the chapter's staging. A crash at any point leaves the novel as before.
        ``on_step`` is called between the steps (tests use it to kill the process mid-commit).
        """
        step = on_step or (lambda _name: None)
        with self._write() as s:
            staged = {r.path: r for r in s.exec(select(StagingRow).where(StagingRow.chapter == number))}
            text_row = staged.get(layout.chapter_path(number))
            if text_row is None:
                raise StoreError(
                    f"第 {number} 章没有暂存的正文，无法提交 (no staged text for chapter {number})"
                )
            now = iso_now()
            checkpoint = _get_checkpoint(s)
            vol = volume if volume is not None else int(checkpoint.get("current_volume") or 1)

            # 1. the chapter and its revisions
            chapter = s.get(ChapterRow, number) or ChapterRow(number=number, committed_at=now)
            chapter.volume = vol
            chapter.storyline_id = storyline_id or chapter.storyline_id
            s.add(chapter)
            s.flush()
            # The history in the order it was written: the first draft, each judged text a revision
            # replaced and each revision, then the final text. Of two equal texts in a row only the later is
            # kept (a draft the refiner left alone is stored once, as refined).
            history: list[tuple[str, str]] = []
            draft_row = staged.get(layout.draft_path(number))
            if draft_row is not None:
                history.append(("draft", draft_row.content))
            versions = sorted(
                (
                    (v[1], row)
                    for path, row in staged.items()
                    if (v := layout.version_of(path)) and v[0] == number
                ),
                key=lambda kv: kv[0],
            )
            for _, row in versions:
                history.append((row.kind if row.kind in REVISION_KINDS else "revision", row.content))
            final_kind = text_row.kind if text_row.kind in REVISION_KINDS else "refined"
            history.append((final_kind, text_row.content))
            kept = [h for h, after in itertools.pairwise(history) if after[1] != h[1]]
            for kind, content in kept:
                s.add(_revision(number, kind, content, now))
            final = _revision(number, final_kind, text_row.content, now)
            s.add(final)
            s.flush()
            chapter.current_revision_id = final.id
            chapter.chars = final.chars
            chapter.content_hash = content_hash(text_row.content)
            chapter.title = title_of(text_row.content)
            chapter.status = "committed"
            chapter.committed_at = now
            chapter.updated_at = now
            s.add(chapter)
            step("chapter")

            # 2. summary
            summary_row = staged.get(layout.summary_path(number))
            if summary_row is not None:
                s.merge(
                    SummaryRow(
                        chapter=number, content=summary_row.content, storyline_id=storyline_id, updated_at=now
                    )
                )
            step("summary")

            # 3. state delta, validated (§10.6)
            state_version = int(_latest_state(s).get("state_version", 0))
            applied, dropped, skipped, recommend = 0, [], None, False
            delta_row = staged.get(layout.delta_path(number))
            if delta_row is not None:
                try:
                    result = apply_patch(_latest_state(s), delta_row.content)
                except PatchRejected as exc:
                    skipped = exc.reason
                    count, recommend = record_ops_skip(int(_meta(s, OPS_SKIP_KEY) or 0))
                    s.merge(MetaRow(key=OPS_SKIP_KEY, value=str(count)))
                else:
                    _store_patch_result(s, result, chapter=number)
                    state_version = int(result.state["state_version"])
                    applied = len(result.applied)
                    dropped = [f"{d.index}: {d.reason}" for d in result.dropped]
            step("state")

            # 4. evaluation and pipeline log
            eval_row = staged.get(layout.evaluation_path(number))
            if eval_row is not None:
                data = json.loads(eval_row.content)
                overall = data.get("overall")
                s.merge(
                    EvaluationRow(
                        chapter=number,
                        content=eval_row.content,
                        overall=float(overall) if isinstance(overall, int | float) else None,
                        recommendation=data.get("recommendation"),
                        updated_at=now,
                    )
                )
            log_row = staged.get(layout.log_path(number))
            if log_row is not None:
                cost = json.loads(log_row.content).get("total_cost_usd")
                s.merge(
                    PipelineLogRow(
                        chapter=number,
                        content=log_row.content,
                        total_cost_usd=float(cost) if isinstance(cost, int | float) else None,
                        updated_at=now,
                    )
                )
            step("evaluation")

            # 5. storyline memories
            for path, row in staged.items():
                if path.startswith("storylines/") and path.endswith("/memory.md"):
                    s.merge(DocumentRow(path=path, content=row.content, updated_at=now))
            step("memory")

            # 6. checkpoint, then staging cleared
            checkpoint.update(
                last_completed_chapter=max(number, int(checkpoint.get("last_completed_chapter") or 0)),
                pipeline_stage="committed",
                inflight_chapter=None,
                last_checkpoint_time=now,
            )
            _put_checkpoint(s, checkpoint)
            for row in staged.values():
                s.delete(row)
            step("checkpoint")
            return CommitResult(number, state_version, applied, dropped, skipped, recommend)

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
            base = _state_for_chapter(s, chapter - 1)
            if base is None:
                raise StoreError(
                    f"找不到第 {chapter - 1} 章之后的状态快照，无法从第 {chapter} 章重建 "
                    f"(no state recorded after chapter {chapter - 1})"
                )
            groups = _changelog_by_chapter(s)
            old_after = _state_for_chapter(s, chapter)
            version = int(_latest_state(s).get("state_version", 0))
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
                s.add(ch)
            return report

    # ------------------------------------------------------------------ status
    def status(self) -> StatusReport:
        cp = self.checkpoint()
        with self._read() as s:
            count, chars = s.exec(
                select(func.count(col(ChapterRow.number)), func.sum(ChapterRow.chars))
            ).one()
            mean = s.exec(select(func.avg(EvaluationRow.overall))).one()
            stale = list(
                s.exec(
                    select(ChapterRow.number)
                    .where(ChapterRow.status == "needs_rebuild")
                    .order_by(col(ChapterRow.number))
                )
            )
            state = _latest_state(s)
            title = _meta(s, "title") or ""
            fs_row = s.get(DocumentRow, layout.GLOBAL_FORESHADOWING)
        open_fs = 0
        if fs_row is not None:
            try:
                items = json.loads(fs_row.content).get("foreshadowing", [])
                open_fs = sum(
                    1 for i in items if isinstance(i, dict) and i.get("status") in ("planted", "advanced")
                )
            except (json.JSONDecodeError, AttributeError):
                open_fs = 0
        return StatusReport(
            title=title,
            current_volume=int(cp.get("current_volume") or 1),
            last_completed_chapter=int(cp.get("last_completed_chapter") or 0),
            orchestrator_state=str(cp.get("orchestrator_state") or "INIT"),
            pipeline_stage=cp.get("pipeline_stage"),
            inflight_chapter=cp.get("inflight_chapter"),
            chapters=int(count or 0),
            total_chars=int(chars or 0),
            mean_score=round(float(mean), 2) if mean is not None else None,
            open_foreshadowing=open_fs,
            state_version=int(state.get("state_version", 0)),
            needs_rebuild=stale,
        )


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


# ---------------------------------------------------------------------- helpers used inside transactions
def _meta(s: Session, key: str) -> str | None:
    row = s.get(MetaRow, key)
    return row.value if row else None


def _get_checkpoint(s: Session) -> dict[str, Any]:
    row = s.get(CheckpointRow, 1)
    data: dict[str, Any] = json.loads(row.content) if row else default_checkpoint()
    return data


def _put_checkpoint(s: Session, data: dict[str, Any]) -> None:
    s.merge(CheckpointRow(id=1, content=dumps(data)))


def _latest_state(s: Session) -> dict[str, Any]:
    row = s.exec(
        select(StateSnapshotRow).order_by(col(StateSnapshotRow.state_version).desc()).limit(1)
    ).first()
    data: dict[str, Any] = json.loads(row.content) if row else empty_state()
    return data


def _state_for_chapter(s: Session, chapter: int) -> dict[str, Any] | None:
    """The newest state recorded after ``chapter`` (chapter 0: the state before the first chapter)."""
    row = s.exec(
        select(StateSnapshotRow)
        .where(StateSnapshotRow.chapter == chapter)
        .order_by(col(StateSnapshotRow.state_version).desc())
        .limit(1)
    ).first()
    if row is None and chapter == 0:
        row = s.exec(select(StateSnapshotRow).order_by(col(StateSnapshotRow.state_version)).limit(1)).first()
    return json.loads(row.content) if row else None


def _changelog_by_chapter(s: Session) -> dict[int, list[dict[str, Any]]]:
    """Each chapter's newest group of applied ops (a rebuild's group supersedes the original)."""
    newest: dict[int, int] = {}
    groups: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for row in s.exec(select(ChangelogRow).order_by(col(ChangelogRow.id))):
        if row.chapter is None or row.state_version is None:
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


def _revision(chapter: int, kind: str, text: str, now: str) -> ChapterRevisionRow:
    return ChapterRevisionRow(
        chapter=chapter, kind=kind, content=text, chars=count_chars(text), created_at=now
    )


def _store_patch_result(s: Session, result: PatchResult, chapter: int | None = None) -> None:
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
