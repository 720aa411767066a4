"""The SQLAlchemy engine of one ``.novel`` file.

Every connection runs in WAL mode with foreign keys on and a busy timeout. pysqlite's own implicit BEGIN is
switched off and we emit BEGIN ourselves (SQLAlchemy's documented recipe), so that a write transaction can be
``BEGIN IMMEDIATE``: it takes the write lock up front instead of failing when a read turns into a write.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, event
from sqlmodel import create_engine

BUSY_TIMEOUT_MS = 10_000


def make_engine(path: Path) -> Engine:
    """An engine for the SQLite file at ``path`` (the file is created on first write)."""
    engine = create_engine(
        f"sqlite:///{path}",
        connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000},
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
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
