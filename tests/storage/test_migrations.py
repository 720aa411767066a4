"""Schema versions: ordered migrations, a backup before migrating, refusal of newer files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import Connection, text

from novel_desktop.storage import migrations
from novel_desktop.storage.migrations import SchemaError
from novel_desktop.storage.store import NovelStore


def _add_column(conn: Connection) -> None:
    conn.execute(text("ALTER TABLE chapters ADD COLUMN pov TEXT"))


def _broken(conn: Connection) -> None:
    conn.execute(text("ALTER TABLE chapters ADD COLUMN pov TEXT"))
    raise RuntimeError("migration bug")


def test_opening_an_older_file_backs_it_up_then_migrates(
    novel_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    NovelStore.create(novel_path, title="旧书").close()
    base = migrations.current_version()
    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, _add_column])
    with NovelStore.open(novel_path, write=True) as store:
        assert store.meta()["schema_version"] == str(base + 1)
        assert store.backup_path is not None and store.backup_path.is_file()
        assert f".bak-v{base}-" in store.backup_path.name
        with store.engine.connect() as conn:
            cols = [r[1] for r in conn.exec_driver_sql("PRAGMA table_info(chapters)")]
        assert "pov" in cols
    con = sqlite3.connect(store.backup_path)
    meta = dict(con.execute("SELECT key, value FROM meta"))
    con.close()
    assert (meta["schema_version"], meta["title"]) == (str(base), "旧书")


def test_a_failing_migration_leaves_the_file_as_it_was(
    novel_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    NovelStore.create(novel_path, title="旧书").close()
    released = list(migrations.MIGRATIONS)
    monkeypatch.setattr(migrations, "MIGRATIONS", [*released, _broken])
    with pytest.raises(RuntimeError, match="migration bug"):
        NovelStore.open(novel_path, write=True)
    monkeypatch.setattr(migrations, "MIGRATIONS", released)
    with NovelStore.open(novel_path, write=True) as store:  # the lock was released, the schema untouched
        assert store.meta()["schema_version"] == str(len(released))
        with store.engine.connect() as conn:
            cols = [r[1] for r in conn.exec_driver_sql("PRAGMA table_info(chapters)")]
        assert "pov" not in cols


def test_a_file_from_a_newer_program_is_refused(novel_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    released = list(migrations.MIGRATIONS)
    monkeypatch.setattr(migrations, "MIGRATIONS", [*released, _add_column])
    NovelStore.create(novel_path, title="新书").close()
    monkeypatch.setattr(migrations, "MIGRATIONS", released)
    for write in (True, False):
        with pytest.raises(SchemaError, match="请升级"):
            NovelStore.open(novel_path, write=write)


def test_read_only_open_of_an_old_file_asks_for_one_write_open(
    novel_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    NovelStore.create(novel_path, title="旧书").close()
    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, _add_column])
    with pytest.raises(SchemaError, match="写入方式打开"):
        NovelStore.open(novel_path, write=False)
