"""What every repository of a ``.novel`` file shares: the engine, the writer lock, and short sessions.

Sessions are short (one per method); every write runs in one ``BEGIN IMMEDIATE`` transaction. Writing needs
the file opened with ``write=True``, which holds the single-writer lock until the store is closed.
Also here: the store's errors and the JSON conventions every repository writes with.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session

from novel_desktop.domain.common import iso_now
from novel_desktop.i18n import tr
from novel_desktop.storage import lock
from novel_desktop.storage.engine import JournalChoice, writer
from novel_desktop.storage.errors import ReadOnlyError as ReadOnlyError
from novel_desktop.storage.errors import StoreError as StoreError
from novel_desktop.storage.errors import translate

PLATFORMS = ("qidian", "tomato", "jjwxc", "web")


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


def dumps_row(data: Any) -> str:
    """JSON in a row only the program reads (a state snapshot: every reader parses it): compact, through the
    json module's C encoder; the indented form is the pure-Python one, ~4x slower (0.64 against 0.15 ms for
    the state of a 500-chapter novel, written at each commit and at each chapter of a rebuild)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def title_of(text: str) -> str:
    """The chapter title: its first Markdown heading, else its first non-empty line (trimmed).

    Plain string operations, no regular expression: a heading line with a long run of spaces (an imported
    manuscript's) made the old pattern backtrack for minutes.
    """
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        hashes = len(stripped) - len(stripped.lstrip("#"))
        if hashes:
            body = stripped[min(hashes, 6) :].strip()  # a seventh "#" belongs to the title, as before
            if body:
                return body[:80]
        return stripped[:80]
    return ""


def prefix_bounds(prefix: str) -> tuple[str, str]:
    """``path >= lo AND path < hi`` selects exactly the paths starting with ``prefix`` (and uses the primary
    key's index, where ``LIKE`` would treat ``_`` and ``%`` as wildcards and ignore case)."""
    return prefix, prefix + "\U0010ffff"


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Repository:
    """One open ``.novel`` file: the base of every repository (and of ``NovelStore``, which joins them)."""

    def __init__(
        self,
        path: Path,
        engine: Engine,
        held: lock.LockInfo | None,
        journal: JournalChoice | None = None,
    ) -> None:
        self.path = path
        self.engine = engine
        self._lock = held
        self.backup_path: Path | None = None
        #: The journal mode of a writable store and why (WAL, or DELETE on a network file system);
        #: None for a read-only store, which never changes it.
        self.journal = journal
        self._heartbeat = lock.Heartbeat(engine, held.token) if held is not None else None

    @property
    def writable(self) -> bool:
        return self._lock is not None

    @property
    def readonly(self) -> bool:
        return self._lock is None

    @contextmanager
    def _read(self) -> Iterator[Session]:
        """A read session; what SQLite raises becomes a :class:`StoreError` naming the file."""
        try:
            with Session(self.engine) as session:
                yield session
        except Exception as exc:
            mapped = translate(exc, self.path, writing=False)
            if mapped is None or mapped is exc:
                raise
            raise mapped from exc

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one read-only SQL statement, through a pooled DBAPI connection.

        The hot reads (a document, a staged output, the checkpoint) go through here: an ORM session costs
        about 0.6 ms a call and the pipeline makes dozens of such reads per chapter; this costs about 40 µs.
        Errors are translated as :meth:`_read`'s are; the others are raised as SQLAlchemy's (what the ORM
        raised before, and what callers catch).
        """
        try:
            conn = self.engine.raw_connection()
            try:
                cursor = conn.cursor()
                try:
                    cursor.execute(sql, tuple(params))
                    return [tuple(row) for row in cursor.fetchall()]
                except sqlite3.Error as exc:
                    raise DBAPIError.instance(sql, tuple(params), exc, sqlite3.Error) from exc
                finally:
                    cursor.close()
            finally:
                conn.close()
        except Exception as exc:
            mapped = translate(exc, self.path, writing=False)
            if mapped is None or mapped is exc:
                raise
            raise mapped from exc

    def _value(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """The first column of the first row of a read-only statement, or None when it returns no row."""
        rows = self._rows(sql, params)
        return rows[0][0] if rows else None

    @contextmanager
    def _raw_write(self) -> Iterator[Any]:
        """One small write transaction (``BEGIN IMMEDIATE`` … ``COMMIT``) on a pooled DBAPI connection; yields
        its cursor; any exception rolls it all back. For the pipeline's frequent one-row writes (a staged
        output, the checkpoint), where the ORM's flush and statement compilation cost ~1-10 ms a write."""
        if self._lock is None:
            raise ReadOnlyError(
                tr("{path} 以只读方式打开，不能修改；请以写入方式重新打开").format(path=self.path)
            )
        try:
            conn = self.engine.raw_connection()
            try:
                cursor = conn.cursor()
                try:
                    cursor.execute("BEGIN IMMEDIATE")
                    try:
                        yield cursor
                    except BaseException:
                        with suppress(sqlite3.Error):  # SQLite may have rolled back already
                            cursor.execute("ROLLBACK")
                        raise
                    cursor.execute("COMMIT")
                except sqlite3.Error as exc:
                    raise DBAPIError.instance("", (), exc, sqlite3.Error) from exc
                finally:
                    cursor.close()
            finally:
                conn.close()
        except Exception as exc:
            mapped = translate(exc, self.path)
            if mapped is None or mapped is exc:
                raise
            raise mapped from exc

    @contextmanager
    def _write(self) -> Iterator[Session]:
        """One write transaction (``BEGIN IMMEDIATE`` … ``COMMIT``); any exception rolls it all back."""
        if self._lock is None:
            raise ReadOnlyError(
                tr("{path} 以只读方式打开，不能修改；请以写入方式重新打开").format(path=self.path)
            )
        try:
            with Session(writer(self.engine), expire_on_commit=False) as session, session.begin():
                yield session
        except Exception as exc:
            mapped = translate(exc, self.path)
            if mapped is None or mapped is exc:
                raise
            raise mapped from exc
