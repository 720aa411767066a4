"""``NovelStore``: the repositories of one ``.novel`` file behind one object.

Each group of tables has its repository (chapters, story state, documents, answers, extra files, meta,
checkpoint and staging) and the chapter commit has its module; ``NovelStore`` joins them, opens and closes
the file, and reports the novel's status. Sessions are short (one per method); every write runs in one
``BEGIN IMMEDIATE`` transaction. Writing needs the file opened with ``write=True``, which holds the
single-writer lock until :meth:`NovelStore.close`. The store is synchronous: the asyncio pipeline calls it
through ``asyncio.to_thread``.

This module is storage's public face: the records, errors and JSON helpers callers need are importable here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from sqlmodel import Session, col, select

from novel_desktop.domain.common import iso_now
from novel_desktop.domain.records import (
    ChapterInfo,
    ChapterPoint,
    CommitResult,
    RebuildReport,
    RevisionInfo,
    StatusReport,
)
from novel_desktop.i18n import tr
from novel_desktop.storage import errors, layout, lock
from novel_desktop.storage.chapters import ChapterRepository
from novel_desktop.storage.checkpoint import (
    OPS_SKIP_KEY,
    CheckpointRepository,
    MetaRepository,
)
from novel_desktop.storage.commit import ChapterCommit
from novel_desktop.storage.documents import AnswerRepository, DocumentRepository, ExtraFileRepository
from novel_desktop.storage.engine import can_write, choose_journal, make_engine, writer
from novel_desktop.storage.errors import (
    CorruptNovelError,
    DiskFullError,
    FileTooLargeError,
    NovelBusyError,
    ReadOnlyFileError,
    TargetExistsError,
    UnsafePathError,
)
from novel_desktop.storage.history import HistoryRepository
from novel_desktop.storage.ledger import LedgerRepository
from novel_desktop.storage.migrations import SchemaError, current_version, file_version, migrate
from novel_desktop.storage.rebuild import RebuildRepository
from novel_desktop.storage.repository import (
    PLATFORMS,
    ReadOnlyError,
    StoreError,
    content_hash,
    default_checkpoint,
    dumps,
    empty_state,
    title_of,
)
from novel_desktop.storage.rollback import RollbackRepository
from novel_desktop.storage.story_state import StateRepository
from novel_desktop.storage.tables import (
    ChapterRow,
    CheckpointRow,
    DocumentRow,
    MetaRow,
    StateSnapshotRow,
)

__all__ = [
    "OPS_SKIP_KEY",
    "PLATFORMS",
    "ChapterInfo",
    "ChapterPoint",
    "CommitResult",
    "CorruptNovelError",
    "DiskFullError",
    "FileTooLargeError",
    "NovelBusyError",
    "NovelStore",
    "ReadOnlyError",
    "ReadOnlyFileError",
    "RebuildReport",
    "RevisionInfo",
    "StatusReport",
    "StoreError",
    "TargetExistsError",
    "UnsafePathError",
    "clear_stale_lock",
    "content_hash",
    "default_checkpoint",
    "dumps",
    "empty_state",
    "title_of",
]


class NovelStore(
    MetaRepository,
    CheckpointRepository,
    DocumentRepository,
    AnswerRepository,
    ExtraFileRepository,
    ChapterRepository,
    StateRepository,
    HistoryRepository,
    RebuildRepository,
    LedgerRepository,
    ChapterCommit,
    RollbackRepository,
):
    """One open ``.novel`` file."""

    # ------------------------------------------------------------------ opening and closing
    @classmethod
    def create(
        cls,
        path: str | Path,
        *,
        title: str,
        genre: str | None = None,
        platform: str = "web",
        documents: Mapping[str, str] | None = None,
    ) -> NovelStore:
        """Create a new novel file, open for writing. An existing file is never overwritten.

        ``documents`` (seed paths → text, e.g. the initial ``ai-blacklist.json``) are written in the same
        transaction as the file's metadata.

        Raises :class:`StoreError` (:class:`ReadOnlyFileError` for a folder that cannot be written,
        :class:`DiskFullError` …); a failure leaves no file behind.
        """
        p = Path(path)
        if p.exists() or p.is_symlink():
            raise StoreError(tr("文件已存在，不会覆盖：{path}").format(path=p))
        if not title.strip():
            raise StoreError(tr("书名不能为空"))
        if platform not in PLATFORMS:
            raise StoreError(
                tr("未知平台 {platform}，可选：{choices}").format(
                    platform=platform, choices=", ".join(PLATFORMS)
                )
            )
        if not p.parent.exists():
            raise StoreError(tr("目录不存在：{path}").format(path=p.parent))
        if not can_write(p):
            raise errors.read_only_file(p)
        journal = choose_journal(p)
        engine = make_engine(p, journal=journal.mode)
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
                for doc_path, content in (documents or {}).items():
                    if layout.classify(doc_path)[0] is not layout.Kind.DOCUMENT:
                        raise StoreError(f"{doc_path} 不是项目文档路径 (not a project document path)")
                    s.add(DocumentRow(path=doc_path, content=content, updated_at=now))
            held = lock.acquire(engine, purpose="write")
        except Exception as exc:
            engine.dispose()
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{p}{suffix}").unlink(missing_ok=True)
            mapped = errors.translate(exc, p)
            if mapped is None or mapped is exc:
                raise
            raise mapped from exc
        return cls(p, engine, held, journal)

    @classmethod
    def open(cls, path: str | Path, *, write: bool = True, readonly: bool | None = None) -> NovelStore:
        """Open an existing novel.

        ``write=True`` takes the single-writer lock and migrates old files. ``readonly=True`` (the same as
        ``write=False``) opens the file with SQLite's ``mode=ro``: nothing is written, the journal mode is
        not changed, no lock is taken, and a read-only file or folder can be read. Raises
        :class:`~novel_desktop.storage.lock.ProjectLocked`, :class:`SchemaError` or a :class:`StoreError`
        (:class:`CorruptNovelError`, :class:`ReadOnlyFileError`, :class:`DiskFullError` …) naming the file.
        """
        if readonly is not None:
            write = not readonly
        p = Path(path)
        if not p.is_file():
            raise StoreError(tr("找不到小说文件：{path}").format(path=p))
        try:
            with p.open("rb") as fh:
                header = fh.read(16)
        except OSError as exc:
            raise StoreError(
                tr("无法读取 {path}：{reason}").format(path=p, reason=exc.strerror or exc)
            ) from exc
        if header != b"SQLite format 3\x00":
            raise errors.corrupt(p)
        if write and not can_write(p):
            raise errors.read_only_file(p)
        journal = choose_journal(p) if write else None
        engine = make_engine(p, readonly=not write, journal=journal.mode if journal else "WAL")
        try:
            version = file_version(engine)
            if version == 0:
                raise StoreError(tr("不是 novel_desktop 的小说文件：{path}").format(path=p))
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
        except Exception as exc:
            engine.dispose()
            mapped = errors.translate(exc, p, writing=write)
            if mapped is None or mapped is exc:
                raise
            raise mapped from exc
        store = cls(p, engine, held, journal)
        store.backup_path = backup
        return store

    def close(self) -> None:
        """Stop the heartbeat, release the lock (if held) and close the file."""
        if self._heartbeat is not None:
            self._heartbeat.stop()
            self._heartbeat = None
        try:
            if self._lock is not None:
                lock.release(self.engine, self._lock.token)
        except Exception as exc:
            # A lock left behind by a failed release is ours (this host, this pid): once this process
            # exits, the next writer takes it over without asking.
            mapped = errors.translate(exc, self.path)
            if mapped is None or mapped is exc:
                raise
            raise mapped from exc
        finally:
            self._lock = None
            self.engine.dispose()

    def __enter__(self) -> NovelStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ status
    def status(self) -> StatusReport:
        cp = self.checkpoint()
        # Plain queries (the window asks on every open and after each chapter): ~2 ms, not ~15 via the ORM.
        count, chars = self._rows("SELECT COUNT(number), SUM(chars) FROM chapters")[0]
        mean = self._value("SELECT AVG(overall) FROM evaluations")
        stale = self.stale_chapters()
        cost = self.cost_total()
        state = self.current_state()
        title = self.meta().get("title") or ""
        fs_text = self.document(layout.GLOBAL_FORESHADOWING)
        open_fs = 0
        if fs_text is not None:
            try:
                items = json.loads(fs_text).get("foreshadowing", [])
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
            stale_chapters=stale,
            cost=cost,
        )

    def stale_chapters(self) -> list[int]:
        """The chapters whose summary and state no longer follow from their text (:func:`stale_chapters`).

        Asked before every chapter is written: two indexed queries in SQLite, not 500 rows through the ORM."""
        first = self._value(
            "SELECT MIN(number) FROM chapters WHERE status = 'needs_rebuild' OR content_hash != source_hash"
        )
        if first is None:
            return []
        rows = self._rows("SELECT number FROM chapters WHERE number >= ? ORDER BY number", (first,))
        return [int(n) for (n,) in rows]


def stale_chapters(s: Session) -> list[int]:
    """The stale chapters: the first chapter whose text is not the one its summary and state ops came from
    (edited, replaced, imported without a summary, or marked ``needs_rebuild``), and every chapter after it —
    each of those was derived from a state the stale one no longer supports."""
    columns = (ChapterRow.number, ChapterRow.status, ChapterRow.content_hash, ChapterRow.source_hash)
    rows = s.exec(select(*columns).order_by(col(ChapterRow.number))).all()
    first = next((n for n, status, text, source in rows if status == "needs_rebuild" or text != source), None)
    return [] if first is None else [n for n, *_ in rows if n >= first]


def clear_stale_lock(path: str | Path, *, force: bool = False) -> lock.LockInfo | None:
    """Clear a stale writer lock of the novel at ``path`` (after the author confirmed it); return it."""
    p = Path(path)
    engine = make_engine(p, journal=choose_journal(p).mode)
    try:
        return lock.clear_stale(engine, force=force)
    finally:
        engine.dispose()
