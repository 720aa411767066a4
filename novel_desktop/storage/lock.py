"""The single-writer lock of a novel file (seed 001 §10.7, adapted to one SQLite file).

The seed's ``mkdir .novel.lock`` becomes one row written inside a ``BEGIN IMMEDIATE`` transaction, which is
just as atomic. A holder whose process is gone is *stale*: on this host that is a pid that no longer runs (at
any age: nothing can still be writing); a holder on another host cannot be checked, so it counts as gone
once it is older than 30 minutes, the seed's rule. A stale lock is reported, and cleared only when asked.
"""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine
from sqlmodel import Session

from novel_desktop.storage.engine import writer
from novel_desktop.storage.tables import LockRow

STALE_AFTER = timedelta(minutes=30)


@dataclass(frozen=True)
class LockInfo:
    """Who holds the lock."""

    token: str
    pid: int
    host: str
    started: datetime
    chapter: int | None
    purpose: str

    def describe(self) -> str:
        started = self.started.astimezone().strftime("%Y-%m-%d %H:%M:%S %z")
        return (
            f"进程 pid {self.pid}，主机 {self.host}，开始于 {started} "
            f"(pid {self.pid} on {self.host} since {started})"
        )


class ProjectLocked(Exception):
    """The novel is already open for writing elsewhere."""

    def __init__(self, holder: LockInfo, stale: bool) -> None:
        self.holder = holder
        self.stale = stale
        hint = (
            "持有者进程已不存在（僵尸锁），确认后可清除：novel unlock <文件> "
            "(the holder is gone; clear the stale lock with: novel unlock <file>)"
            if stale
            else "请先关闭另一个窗口或命令 (close the other window or command first)"
        )
        super().__init__(f"这部小说正被另一个进程写入：{holder.describe()}。{hint}")


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
        return not _pid_alive(info.pid)
    return now - info.started > STALE_AFTER


def _info(row: LockRow) -> LockInfo:
    started = datetime.fromisoformat(row.started)
    if started.tzinfo is None:
        started = started.replace(tzinfo=UTC)
    return LockInfo(row.token, row.pid, row.host, started, row.chapter, row.purpose)


def acquire(engine: Engine, purpose: str = "write", chapter: int | None = None) -> LockInfo:
    """Take the lock or raise :class:`ProjectLocked` naming the holder."""
    with Session(writer(engine)) as session, session.begin():
        row = session.get(LockRow, 1)
        if row is not None:
            holder = _info(row)
            raise ProjectLocked(holder, is_stale(holder))
        now = datetime.now(UTC)
        new = LockRow(
            id=1,
            token=uuid.uuid4().hex,
            pid=os.getpid(),
            host=socket.gethostname(),
            started=now.isoformat(timespec="seconds"),
            chapter=chapter,
            purpose=purpose,
        )
        session.add(new)
        return _info(new)


def release(engine: Engine, token: str) -> None:
    """Give the lock back, if we still hold it."""
    with Session(writer(engine)) as session, session.begin():
        row = session.get(LockRow, 1)
        if row is not None and row.token == token:
            session.delete(row)


def clear_stale(engine: Engine, *, force: bool = False) -> LockInfo | None:
    """Remove a stale lock (or any lock with ``force``); return what was removed.

    A live holder is never removed without ``force``: :class:`ProjectLocked` is raised instead.
    """
    with Session(writer(engine)) as session, session.begin():
        row = session.get(LockRow, 1)
        if row is None:
            return None
        holder = _info(row)
        if not force and not is_stale(holder):
            raise ProjectLocked(holder, stale=False)
        session.delete(row)
        return holder
