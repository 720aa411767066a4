"""The single-writer lock of a novel file (seed 001 §10.7, adapted to one SQLite file).

The seed's ``mkdir .novel.lock`` becomes one row written inside a ``BEGIN IMMEDIATE`` transaction, which is
just as atomic. The row says who holds the lock (host, pid, since when); a ``meta`` entry beside it, written
in the same transaction, adds the holder's process start time and a heartbeat that a background thread
refreshes every :data:`HEARTBEAT_INTERVAL` while the lock is held (no schema change, so older files and
read-only opens are unaffected).

A holder is *stale* when it cannot still be writing:
- on this host, at once when its pid no longer runs, or runs but started at another time (a reused pid;
  Linux reads ``/proc/<pid>/stat``, elsewhere the start time is unknown and only the pid is checked).
  :func:`acquire` takes such a lock over without asking;
- on another host, only when its heartbeat is older than :data:`REMOTE_STALE_AFTER` (10 minutes, five missed
  heartbeats). That lock is reported stale and cleared only when asked (``novel unlock``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import socket
import sqlite3
import sys
import threading
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session

from novel_desktop.i18n import tr, tr_n
from novel_desktop.storage.engine import writer
from novel_desktop.storage.tables import LockRow, MetaRow

#: How often a held lock's heartbeat is refreshed.
HEARTBEAT_INTERVAL = timedelta(seconds=60)
#: A lock from another host whose heartbeat is older than this is stale.
REMOTE_STALE_AFTER = timedelta(minutes=10)
#: The meta key holding ``{"token", "proc_start", "heartbeat"}`` of the current holder.
LOCK_META = "writer_lock"


def _fmt(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S %z")


@dataclass(frozen=True)
class LockInfo:
    """Who holds the lock."""

    token: str
    pid: int
    host: str
    started: datetime
    chapter: int | None
    purpose: str
    proc_start: int | None = None
    heartbeat: datetime | None = None
    #: The stale lock of a dead process on this host that :func:`acquire` replaced, if any.
    replaced: LockInfo | None = None

    @property
    def last_seen(self) -> datetime:
        return self.heartbeat or self.started

    def describe(self) -> str:
        return tr("主机 {host} 上的进程 pid {pid}，开始于 {since}，最近心跳 {beat}").format(
            host=self.host, pid=self.pid, since=_fmt(self.started), beat=_fmt(self.last_seen)
        )


class ProjectLocked(Exception):
    """The novel is already open for writing elsewhere."""

    def __init__(self, holder: LockInfo, stale: bool) -> None:
        self.holder = holder
        self.stale = stale
        hint = (
            tr_n(
                "持有者已超过 {minutes} 分钟没有心跳，确认它已退出后可清除：novel unlock <文件>",
                int(REMOTE_STALE_AFTER.total_seconds() // 60),
            ).format(minutes=int(REMOTE_STALE_AFTER.total_seconds() // 60))
            if stale
            else tr("请先关闭另一个窗口或命令")
        )
        super().__init__(
            tr("这部小说正被另一个进程写入：{holder}。{hint}").format(holder=holder.describe(), hint=hint)
        )


def process_start_time(pid: int) -> int | None:
    """The start time of process ``pid`` in clock ticks since boot (Linux), or None when unknown."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after its closing one.
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        return int(fields[19])  # field 22 of proc(5); fields[0] is field 3
    except (IndexError, ValueError):
        return None


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_stale(info: LockInfo, now: datetime | None = None) -> bool:
    """Whether the holder of ``info`` is gone (see the module docstring)."""
    now = now or datetime.now(UTC)
    if info.host == socket.gethostname():
        return not _same_process_alive(info)
    return now - info.last_seen > REMOTE_STALE_AFTER


def _same_process_alive(info: LockInfo) -> bool:
    if not _pid_alive(info.pid):
        return False
    if info.proc_start is None:
        return True
    now_start = process_start_time(info.pid)
    return now_start is None or now_start == info.proc_start


def _aware(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _info(row: LockRow, meta: MetaRow | None) -> LockInfo:
    proc_start: int | None = None
    heartbeat: datetime | None = None
    if meta is not None:
        try:
            extra = json.loads(meta.value)
            if isinstance(extra, dict) and extra.get("token") == row.token:
                ps = extra.get("proc_start")
                proc_start = ps if isinstance(ps, int) else None
                hb = extra.get("heartbeat")
                heartbeat = _aware(hb) if isinstance(hb, str) else None
        except (json.JSONDecodeError, ValueError):
            pass
    return LockInfo(
        row.token, row.pid, row.host, _aware(row.started), row.chapter, row.purpose, proc_start, heartbeat
    )


def _meta_value(token: str, proc_start: int | None, beat: datetime) -> str:
    return json.dumps(
        {"token": token, "proc_start": proc_start, "heartbeat": beat.isoformat(timespec="seconds")}
    )


def acquire(engine: Engine, purpose: str = "write", chapter: int | None = None) -> LockInfo:
    """Take the lock or raise :class:`ProjectLocked` naming the holder.

    The lock of a dead process on this host is taken over at once (the result's ``replaced`` names it).
    """
    # Plain SQL in one BEGIN IMMEDIATE transaction: every open of a novel takes the lock, and the ORM's first
    # statements on a new engine cost more than the rest of the open.
    conn = engine.raw_connection()
    try:
        cur = conn.cursor()
        try:
            cur.execute("BEGIN IMMEDIATE")
            try:
                result = _acquire_in(cur, purpose, chapter)
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    cur.execute("ROLLBACK")
                raise
            cur.execute("COMMIT")
            return result
        except sqlite3.Error as exc:
            raise DBAPIError.instance("", (), exc, sqlite3.Error) from exc
        finally:
            cur.close()
    finally:
        conn.close()


def _acquire_in(cur: Any, purpose: str, chapter: int | None) -> LockInfo:
    found = cur.execute(
        "SELECT token, pid, host, started, chapter, purpose FROM writer_lock WHERE id = 1"
    ).fetchone()
    replaced: LockInfo | None = None
    if found is not None:
        token, pid_, host, started, chapter_, purpose_ = found
        row = LockRow(
            id=1, token=token, pid=pid_, host=host, started=started, chapter=chapter_, purpose=purpose_
        )
        value = cur.execute("SELECT value FROM meta WHERE key = ?", (LOCK_META,)).fetchone()
        holder = _info(row, MetaRow(key=LOCK_META, value=value[0]) if value is not None else None)
        stale = is_stale(holder)
        if not (stale and holder.host == socket.gethostname()):
            raise ProjectLocked(holder, stale)
        cur.execute("DELETE FROM writer_lock WHERE id = 1")
        replaced = holder
    now = datetime.now(UTC)
    pid = os.getpid()
    proc_start = process_start_time(pid)
    new = LockRow(
        id=1,
        token=uuid.uuid4().hex,
        pid=pid,
        host=socket.gethostname(),
        started=now.isoformat(timespec="seconds"),
        chapter=chapter,
        purpose=purpose,
    )
    meta = MetaRow(key=LOCK_META, value=_meta_value(new.token, proc_start, now))
    cur.execute(
        "INSERT INTO writer_lock (id, token, pid, host, started, chapter, purpose)"
        " VALUES (1, ?, ?, ?, ?, ?, ?)",
        (new.token, new.pid, new.host, new.started, new.chapter, new.purpose),
    )
    cur.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (meta.key, meta.value))
    return dataclasses.replace(_info(new, meta), replaced=replaced)


def refresh(engine: Engine, token: str) -> bool:
    """Renew the heartbeat of the lock ``token``; False when we no longer hold it."""
    with Session(writer(engine)) as session, session.begin():
        row = session.get(LockRow, 1)
        if row is None or row.token != token:
            return False
        old = _info(row, session.get(MetaRow, LOCK_META))
        session.merge(MetaRow(key=LOCK_META, value=_meta_value(token, old.proc_start, datetime.now(UTC))))
        return True


def release(engine: Engine, token: str) -> None:
    """Give the lock back, if we still hold it."""
    with Session(writer(engine)) as session, session.begin():
        row = session.get(LockRow, 1)
        if row is not None and row.token == token:
            session.delete(row)
            meta = session.get(MetaRow, LOCK_META)
            if meta is not None:
                session.delete(meta)


def clear_stale(engine: Engine, *, force: bool = False) -> LockInfo | None:
    """Remove a stale lock (or any lock with ``force``); return what was removed.

    A live holder is never removed without ``force``: :class:`ProjectLocked` is raised instead.
    """
    with Session(writer(engine)) as session, session.begin():
        row = session.get(LockRow, 1)
        if row is None:
            return None
        meta = session.get(MetaRow, LOCK_META)
        holder = _info(row, meta)
        if not force and not is_stale(holder):
            raise ProjectLocked(holder, stale=False)
        session.delete(row)
        if meta is not None:
            session.delete(meta)
        return holder


class Heartbeat:
    """A daemon thread that refreshes a held lock every :data:`HEARTBEAT_INTERVAL` until stopped."""

    def __init__(self, engine: Engine, token: str, interval: timedelta = HEARTBEAT_INTERVAL) -> None:
        self._engine = engine
        self._token = token
        self._interval = interval.total_seconds()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="novel-lock-heartbeat", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            # A busy or full disk misses one beat; the next one tries again.
            with contextlib.suppress(Exception):
                if not refresh(self._engine, self._token):
                    return

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=BUSY_JOIN_SECONDS)


#: How long closing waits for a heartbeat write in progress.
BUSY_JOIN_SECONDS = 15.0
