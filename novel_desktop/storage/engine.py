"""The SQLAlchemy engine of one ``.novel`` file.

A writable connection runs with foreign keys on and a busy timeout, in WAL mode on a local file system and
with a rollback journal (``DELETE``) on a network one, where WAL's shared memory is unsafe
(:func:`choose_journal` says which and why). pysqlite's own implicit BEGIN is switched off and we emit BEGIN
ourselves (SQLAlchemy's documented recipe), so that a write transaction can be ``BEGIN IMMEDIATE``: it takes
the write lock up front instead of failing when a read turns into a write.

A read-only engine never changes the journal mode and runs ``PRAGMA query_only``. A file that could be written
is opened ``mode=rw``, so that closing the last connection removes the ``-wal``/``-shm`` as usual; one whose
file or folder cannot be written is opened ``mode=ro`` (``immutable=1`` unless committed pages wait in a
``-wal``), so SQLite creates nothing beside it.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import Engine, event
from sqlalchemy.pool import QueuePool
from sqlmodel import create_engine

BUSY_TIMEOUT_MS = 10_000

#: File system types (``/proc/mounts``) where several hosts may share the file: no WAL there.
NETWORK_FILE_SYSTEMS = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb",
        "smb2",
        "smb3",
        "smbfs",
        "ncpfs",
        "afs",
        "coda",
        "9p",
        "ceph",
        "glusterfs",
        "lustre",
        "gpfs",
        "davfs",
        "sshfs",
    }
)
_NETWORK_FUSE = ("sshfs", "glusterfs", "davfs", "rclone", "s3fs", "gcsfuse", "smb", "cifs", "nfs")


@dataclass(frozen=True)
class JournalChoice:
    """The journal mode a writable novel gets, and why (for the CLI and the window to say so)."""

    mode: str
    reason: str
    file_system: str | None = None


def _unescape_mount(field: str) -> str:
    return field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def filesystem_type(path: Path, mounts: Path = Path("/proc/mounts")) -> str | None:
    """The type of the file system holding ``path`` (Linux: the longest mount point in ``/proc/mounts``)."""
    try:
        lines = mounts.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    target = os.path.realpath(path if path.is_dir() else path.parent)
    best, best_type = "", None
    for line in lines:
        parts = line.split()
        if len(parts) < 3:
            continue
        point, fstype = _unescape_mount(parts[1]), parts[2]
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, best_type = point, fstype
    return best_type


def is_network_file_system(fstype: str | None) -> bool:
    if not fstype:
        return False
    if fstype in NETWORK_FILE_SYSTEMS or fstype.startswith("smb"):
        return True
    return fstype.startswith("fuse.") and any(name in fstype for name in _NETWORK_FUSE)


def choose_journal(path: Path) -> JournalChoice:
    """WAL on a local file system, ``DELETE`` (a rollback journal) on a network one."""
    fstype = filesystem_type(path) if sys.platform.startswith("linux") else None
    if is_network_file_system(fstype):
        return JournalChoice(
            "DELETE",
            f"网络文件系统（{fstype}）上不能安全使用 WAL，已改用回滚日志 "
            f"(network file system {fstype}: WAL is unsafe there, using a rollback journal)",
            fstype,
        )
    return JournalChoice("WAL", "本地文件系统，使用 WAL (local file system: WAL)", fstype)


def can_write(path: Path) -> bool:
    """Whether the file and its folder can be written (SQLite writes journals beside the file)."""
    folder = path.parent if str(path.parent) else Path(".")
    if not os.access(folder, os.W_OK):
        return False
    return not path.exists() or os.access(path, os.W_OK)


def _ro_uri(path: Path) -> str:
    if can_write(path):
        # A file we could write is read through an ordinary connection kept query-only: as the last one to
        # close it folds any -wal back and removes the -wal/-shm, so reading leaves nothing beside the novel
        # (a mode=ro connection cannot, and left both behind after every `novel status`).
        return f"file:{quote(str(path.absolute()))}?mode=rw"
    uri = f"file:{quote(str(path.absolute()))}?mode=ro"
    wal = Path(f"{path}-wal")
    pending = wal.exists() and wal.stat().st_size > 0
    if not pending:
        # Nobody can be writing it through this folder: no -wal/-shm are made, none are read. (With
        # committed pages still in a -wal, immutable would hide them: then SQLite reads it read-only.)
        uri += "&immutable=1"
    return uri


def make_engine(path: Path, *, readonly: bool = False, journal: str = "WAL") -> Engine:
    """An engine for the SQLite file at ``path`` (created on first write unless ``readonly``)."""
    if readonly:
        uri = _ro_uri(path)
        engine = create_engine(
            "sqlite://",
            creator=lambda: sqlite3.connect(
                uri, uri=True, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
            ),
            poolclass=QueuePool,
        )
    else:
        engine = create_engine(
            f"sqlite:///{path}",
            connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000},
        )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        if readonly:
            cur.execute("PRAGMA query_only=1")  # a read-only store never writes, whatever the URI allows
        else:
            cur.execute(f"PRAGMA journal_mode={journal}")
            cur.execute("PRAGMA synchronous=NORMAL" if journal == "WAL" else "PRAGMA synchronous=FULL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
        conn.exec_driver_sql(f"BEGIN {mode}")

    return engine


def writer(engine: Engine) -> Engine:
    """The same engine, but each transaction starts with ``BEGIN IMMEDIATE``."""
    return engine.execution_options(sqlite_begin="IMMEDIATE")
