"""Schema versions and ordered migrations.

The file's version is ``meta.schema_version``. Before any migration runs, the file is copied with SQLite's
backup API (consistent even in WAL mode) next to it, so a failed or unwanted upgrade can be undone by hand.
Each migration runs in its own transaction together with the version bump.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Connection, Engine, text
from sqlmodel import SQLModel

from novel_desktop.domain.ledger import BEFORE_LEDGER
from novel_desktop.storage.engine import writer
from novel_desktop.storage.tables import SCHEMA_V1_TABLES, SCHEMA_V2_TABLES


class SchemaError(Exception):
    """The file cannot be used by this version of the program."""


def _create_v1(conn: Connection) -> None:
    # Today's table classes: a new file's chapters table already has schema 2's column.
    SQLModel.metadata.create_all(conn, tables=[t.__table__ for t in SCHEMA_V1_TABLES])  # type: ignore[attr-defined]


#: Who wrote a document: the meta row a multi-step operation (a chapter commit, a rebuild, a rollback) sets
#: for the length of its transaction, read by the history triggers.
WRITE_ORIGIN_KEY = "write_origin"
_ORIGIN = f"COALESCE((SELECT value FROM meta WHERE key = '{WRITE_ORIGIN_KEY}'), '')"
_NOW = "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"

_HISTORY_TRIGGERS = (
    f"""CREATE TRIGGER documents_history_insert AFTER INSERT ON documents BEGIN
        INSERT INTO document_history(path, content, origin, created_at)
        VALUES (new.path, new.content, {_ORIGIN}, {_NOW});
    END""",
    f"""CREATE TRIGGER documents_history_update AFTER UPDATE ON documents
    WHEN old.content IS NOT new.content OR old.path IS NOT new.path BEGIN
        INSERT INTO document_history(path, content, origin, created_at)
        SELECT old.path, NULL, {_ORIGIN}, {_NOW} WHERE old.path IS NOT new.path;
        INSERT INTO document_history(path, content, origin, created_at)
        VALUES (new.path, new.content, {_ORIGIN}, {_NOW});
    END""",
    f"""CREATE TRIGGER documents_history_delete AFTER DELETE ON documents BEGIN
        INSERT INTO document_history(path, content, origin, created_at)
        VALUES (old.path, NULL, {_ORIGIN}, {_NOW});
    END""",
)


def _history_v2(conn: Connection) -> None:
    """Schema 2: the source hash of each chapter's state, the document history (kept by triggers, so no
    write path can forget it), each chapter's point, the model-call ledger (seeded from what schema 1 kept of
    the costs, so the novel's total stays the same) and the rollback archive."""
    cols = {row[1] for row in conn.exec_driver_sql("PRAGMA table_info(chapters)")}
    if "source_hash" not in cols:  # a file made by schema 1's program (a new file gets the column at once)
        conn.execute(text("ALTER TABLE chapters ADD COLUMN source_hash VARCHAR NOT NULL DEFAULT ''"))
    # What is committed and consistent was derived from its current text; a chapter waiting for its rebuild
    # was not (its source is unknown, so it stays stale).
    conn.execute(
        text("UPDATE chapters SET source_hash = content_hash WHERE status = 'committed' AND source_hash = ''")
    )
    SQLModel.metadata.create_all(conn, tables=[t.__table__ for t in SCHEMA_V2_TABLES])  # type: ignore[attr-defined]
    conn.execute(
        text(
            "INSERT INTO document_history(path, content, origin, created_at) "
            "SELECT path, content, 'migration', updated_at FROM documents ORDER BY path"
        )
    )
    for statement in _HISTORY_TRIGGERS:
        conn.exec_driver_sql(statement)
    _seed_ledger(conn)


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _seed_ledger(conn: Connection) -> None:
    """Schema 1 kept costs in each chapter's pipeline log and planning calls in the meta row
    ``planning_usage``: one ``before-ledger`` row each, so the totals read from the ledger alone stay honest
    across the upgrade. ``planning_usage`` goes (the ledger records those calls now)."""
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    rows: list[dict[str, object]] = []
    logs = conn.execute(text("SELECT chapter, content, total_cost_usd FROM pipeline_logs ORDER BY chapter"))
    for chapter, content, total in logs:
        try:
            stages = json.loads(content).get("stages") or []
        except (json.JSONDecodeError, AttributeError, TypeError):
            stages = []
        stages = [s for s in stages if isinstance(s, dict)]

        def tokens(key: str, stages: list[dict[str, object]] = stages) -> int:
            return int(sum(_number(s.get(key)) for s in stages))

        cost = float(total) if total is not None else sum(_number(s.get("cost_usd")) for s in stages)
        rows.append(
            {
                "chapter": chapter,
                "input": tokens("input_tokens"),
                "output": tokens("output_tokens"),
                "write": tokens("cache_creation_input_tokens"),
                "read": tokens("cache_read_input_tokens"),
                "cost": cost,
                "attempts": max(1, len(stages)),
            }
        )
    planning = conn.execute(text("SELECT value FROM meta WHERE key = 'planning_usage'")).first()
    if planning is not None:
        try:
            usage = json.loads(planning[0])
        except (json.JSONDecodeError, TypeError):
            usage = {}
        if isinstance(usage, dict):
            rows.append(
                {
                    "chapter": None,
                    "input": int(_number(usage.get("input_tokens"))),
                    "output": int(_number(usage.get("output_tokens"))),
                    "write": 0,
                    "read": 0,
                    "cost": _number(usage.get("cost_usd")),
                    "attempts": 1,
                }
            )
        conn.execute(text("DELETE FROM meta WHERE key = 'planning_usage'"))
    for row in rows:
        conn.execute(
            text(
                "INSERT INTO model_calls(created_at, chapter, role, model, purpose, status, input_tokens,"
                " output_tokens, cache_creation_input_tokens, cache_read_input_tokens, cost_usd, duration_ms,"
                " attempts) VALUES (:now, :chapter, '', '', :purpose, 'ok', :input, :output, :write, :read,"
                " :cost, 0, :attempts)"
            ),
            {**row, "now": now, "purpose": BEFORE_LEDGER},
        )


#: ``MIGRATIONS[i]`` brings a file from version ``i`` to ``i + 1``. Append; never edit a released step.
MIGRATIONS: list[Callable[[Connection], None]] = [_create_v1, _history_v2]


def current_version() -> int:
    """The schema version this program writes."""
    return len(MIGRATIONS)


def file_version(engine: Engine) -> int:
    """The schema version of the file (0 for an empty file)."""
    with engine.connect() as conn:
        # sqlite_master directly: SQLAlchemy's inspector costs several ms, and every open asks twice.
        if (
            conn.exec_driver_sql("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").first()
            is None
        ):
            return 0
        row = conn.execute(text("SELECT value FROM meta WHERE key = 'schema_version'")).first()
        return int(row[0]) if row else 0


def backup_file(db_path: Path, version: int) -> Path:
    """Copy the database to ``<name>.bak-v<version>-<timestamp>`` and return the copy's path."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = db_path.with_name(f"{db_path.name}.bak-v{version}-{stamp}")
    src = sqlite3.connect(db_path)
    try:
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()
    return target


def migrate(engine: Engine, db_path: Path) -> Path | None:
    """Bring the file to :func:`current_version`; return the backup made first, if any was needed.

    A file newer than this program raises :class:`SchemaError` and is left untouched.
    """
    have = file_version(engine)
    want = current_version()
    if have > want:
        raise SchemaError(
            f"此文件的数据格式版本为 {have}，本程序只支持到 {want}，请升级 novel_desktop "
            f"(file schema {have} is newer than this program's {want})"
        )
    if have == want:
        return None
    backup = backup_file(db_path, have) if have > 0 else None
    for version in range(have, want):
        with writer(engine).begin() as conn:
            MIGRATIONS[version](conn)
            conn.execute(
                text("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', :v)"),
                {"v": str(version + 1)},
            )
    return backup
