"""Opening a novel file: creation, the settings of the SQLite file, read-only opening."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from novel_desktop.storage.migrations import current_version
from novel_desktop.storage.store import NovelStore, ReadOnlyError, StoreError


def test_new_novel_is_one_wal_sqlite_file_with_foreign_keys(store: NovelStore, novel_path: Path) -> None:
    assert novel_path.is_file()
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    meta = store.meta()
    assert meta["title"] == "测试小说"
    assert meta["genre"] == "玄幻"
    assert meta["platform"] == "qidian"
    assert meta["schema_version"] == str(current_version())
    cp = store.checkpoint()
    assert cp["last_completed_chapter"] == 0
    assert cp["orchestrator_state"] == "INIT"
    assert cp["pipeline_stage"] is None


def test_create_never_overwrites_and_checks_its_input(
    store: NovelStore, novel_path: Path, tmp_path: Path
) -> None:
    with pytest.raises(StoreError, match="已存在"):
        NovelStore.create(novel_path, title="另一部")
    with pytest.raises(StoreError, match="书名"):
        NovelStore.create(tmp_path / "a.novel", title="  ")
    with pytest.raises(StoreError, match="平台"):
        NovelStore.create(tmp_path / "b.novel", title="书", platform="douyin")
    assert not (tmp_path / "a.novel").exists()
    assert not (tmp_path / "b.novel").exists()


def test_open_refuses_what_is_not_a_novel(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="找不到"):
        NovelStore.open(tmp_path / "missing.novel")
    text = tmp_path / "notes.novel"
    text.write_text("第一章", encoding="utf-8")
    with pytest.raises(StoreError, match="不是"):
        NovelStore.open(text)
    other = tmp_path / "other.novel"
    sqlite3.connect(other).execute("CREATE TABLE t(x)").connection.commit()
    with pytest.raises(StoreError, match="不是"):
        NovelStore.open(other)


def test_read_only_store_refuses_writes(store: NovelStore, novel_path: Path) -> None:
    with NovelStore.open(novel_path, write=False) as ro:
        assert ro.meta()["title"] == "测试小说"
        with pytest.raises(ReadOnlyError, match="只读"):
            ro.put_staging("chapters/chapter-001.md", "x")
