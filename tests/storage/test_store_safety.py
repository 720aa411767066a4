"""Read-only opens never write; failures a user can cause are StoreErrors naming the file; journal choice."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlalchemy.exc
from sqlmodel import Session

from novel_desktop.storage import engine as engine_module
from novel_desktop.storage.engine import filesystem_type, is_network_file_system
from novel_desktop.storage.store import (
    CorruptNovelError,
    DiskFullError,
    NovelStore,
    ReadOnlyError,
    ReadOnlyFileError,
    StoreError,
)


def _journal(path: Path) -> str:
    con = sqlite3.connect(path)
    try:
        return str(con.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        con.close()


def _delete_mode_novel(novel_path: Path) -> Path:
    NovelStore.create(novel_path, title="书").close()
    con = sqlite3.connect(novel_path)
    con.execute("PRAGMA journal_mode=DELETE")
    con.close()
    return novel_path


# ---------------------------------------------------------------------------- read-only
def test_reading_never_changes_the_journal_mode_nor_takes_the_lock(novel_path: Path) -> None:
    _delete_mode_novel(novel_path)
    with NovelStore.open(novel_path, readonly=True) as store:
        assert store.readonly and not store.writable and store.journal is None
        assert store.status().title == "书"
        with NovelStore.open(novel_path, write=True) as writer_store:  # no lock was taken
            assert writer_store.writable
    # The writer switched the file to WAL; switch it back and read again: still DELETE afterwards.
    con = sqlite3.connect(novel_path)
    con.execute("PRAGMA journal_mode=DELETE")
    con.close()
    with NovelStore.open(novel_path, write=False) as store:
        store.list_chapters()
    assert _journal(novel_path) == "delete"
    assert not Path(f"{novel_path}-wal").exists()


def test_a_read_only_file_is_read_with_no_wal_or_shm_beside_it(
    novel_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    NovelStore.create(novel_path, title="书").close()
    monkeypatch.setattr(engine_module, "can_write", lambda _p: False)
    with NovelStore.open(novel_path, readonly=True) as store:
        assert store.status().title == "书"
        assert not Path(f"{novel_path}-wal").exists()
        assert not Path(f"{novel_path}-shm").exists()


def test_writing_through_a_read_only_store_names_the_file(novel_path: Path) -> None:
    NovelStore.create(novel_path, title="书").close()
    with NovelStore.open(novel_path, readonly=True) as store, pytest.raises(ReadOnlyError) as info:
        store.put_document("brief.md", "x")
    assert str(novel_path) in str(info.value)
    assert "只读" in str(info.value)


def test_a_read_only_file_opened_for_writing_is_refused_with_what_to_do(
    novel_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    NovelStore.create(novel_path, title="书").close()
    monkeypatch.setattr("novel_desktop.storage.store.can_write", lambda _p: False)
    with pytest.raises(ReadOnlyFileError) as info:
        NovelStore.open(novel_path, write=True)
    assert str(novel_path) in str(info.value) and "只读方式打开" in str(info.value)


# ---------------------------------------------------------------------------- failures
@pytest.mark.parametrize(
    "content",
    [b"", b"hello, this is not a database at all", b"SQLite format 3\x00" + b"\xff" * 200],
    ids=["empty", "text", "garbage-after-header"],
)
def test_a_file_that_is_not_a_novel_is_a_store_error(novel_path: Path, content: bytes) -> None:
    novel_path.write_bytes(content)
    for write in (False, True):
        with pytest.raises(StoreError) as info:
            NovelStore.open(novel_path, write=write)
        assert str(novel_path) in str(info.value)
        assert "sqlalchemy" not in str(info.value).lower()


def test_a_truncated_novel_is_reported_corrupt(novel_path: Path) -> None:
    with NovelStore.create(novel_path, title="书") as store:
        for n in range(1, 40):
            store.put_document(f"research/note-{n}.md", "资料" * 2000)
    data = novel_path.read_bytes()
    novel_path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptNovelError) as info, NovelStore.open(novel_path, readonly=True) as store:  # noqa: PT012
        for name in store.list_documents("research/"):
            store.document(name)
    assert str(novel_path) in str(info.value) and "备份" in str(info.value)


def _full(*_a: object, **_k: object) -> None:
    raise sqlalchemy.exc.OperationalError("INSERT", {}, sqlite3.OperationalError("database or disk is full"))


def test_a_full_disk_is_a_store_error_and_nothing_changes(
    store: NovelStore, novel_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.put_document("brief.md", "原来的简介")
    monkeypatch.setattr(Session, "merge", _full)
    with pytest.raises(DiskFullError) as info:
        store.put_document("brief.md", "新的简介")
    message = str(info.value)
    assert str(novel_path) in message and "磁盘已满" in message
    assert "OperationalError" not in message and "sqlalchemy" not in message.lower()
    monkeypatch.undo()
    assert store.document("brief.md") == "原来的简介"


def test_a_full_disk_while_creating_leaves_no_file(novel_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Session, "add", _full)
    with pytest.raises(DiskFullError):
        NovelStore.create(novel_path, title="书")
    assert list(novel_path.parent.iterdir()) == []


# ---------------------------------------------------------------------------- WAL only on local disks
def test_mount_table_lookup_finds_the_longest_mount_point(tmp_path: Path) -> None:
    mounts = tmp_path / "mounts"
    mounts.write_text(
        "/dev/sda1 / ext4 rw 0 0\n"
        "server:/export /mnt/nas nfs4 rw 0 0\n"
        "user@host:/ /mnt/my\\040ssh fuse.sshfs rw 0 0\n",
        encoding="utf-8",
    )
    assert filesystem_type(Path("/mnt/nas/books/a.novel"), mounts) == "nfs4"
    assert filesystem_type(Path("/mnt/my ssh/a.novel"), mounts) == "fuse.sshfs"
    assert filesystem_type(Path("/home/a.novel"), mounts) == "ext4"
    assert filesystem_type(Path("/mnt/nasty/a.novel"), mounts) == "ext4"
    for network in ("nfs", "nfs4", "cifs", "smb3", "fuse.sshfs", "9p"):
        assert is_network_file_system(network)
    for local in ("ext4", "btrfs", "xfs", "tmpfs", "fuse.portal", None):
        assert not is_network_file_system(local)


def test_a_novel_on_a_network_file_system_uses_a_rollback_journal_and_says_so(
    novel_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_module, "filesystem_type", lambda _p, *_a: "nfs4")
    with NovelStore.create(novel_path, title="书") as store:
        assert store.journal is not None
        assert store.journal.mode == "DELETE" and "nfs4" in store.journal.reason
        store.put_document("brief.md", "x")
        assert not Path(f"{novel_path}-wal").exists()
    assert _journal(novel_path) == "delete"
    monkeypatch.undo()
    with NovelStore.open(novel_path, write=True) as store:
        assert store.journal is not None and store.journal.mode == "WAL"
    assert _journal(novel_path) == "wal"


def test_every_storage_message_has_an_english_translation() -> None:
    import ast
    import json

    import novel_desktop.storage as storage_pkg
    from novel_desktop.paths import resource

    catalogue: dict[str, str] = {}  # the app merges every catalogue file, as here
    for path in sorted(resource("i18n", "en").glob("*.json")):
        catalogue.update(json.loads(path.read_text(encoding="utf-8")))
    sources: list[str] = []
    for module in sorted(Path(storage_pkg.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tr" and node.args:
                arg = node.args[0]
                assert isinstance(arg, ast.Constant) and isinstance(arg.value, str), ast.dump(arg)
                sources.append(arg.value)
    assert len(sources) > 20
    missing = sorted(set(sources) - set(catalogue))
    assert missing == []


def test_errors_follow_the_selected_language(novel_path: Path) -> None:
    from novel_desktop import i18n

    novel_path.write_bytes(b"not a novel")
    i18n.set_language("en")
    try:
        with pytest.raises(CorruptNovelError, match="damaged or not a novel file") as info:
            NovelStore.open(novel_path, readonly=True)
        assert str(novel_path) in str(info.value)
    finally:
        i18n.set_language("zh")


def test_a_read_only_copy_with_commits_still_in_its_wal_shows_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    source = tmp_path / "src" / "n.novel"
    source.parent.mkdir()
    with NovelStore.create(source, title="书") as store:
        store.put_document("brief.md", "旧")
        con = sqlite3.connect(source)
        con.execute("PRAGMA wal_autocheckpoint=0")
        con.execute("UPDATE documents SET content = '新' WHERE path = 'brief.md'")
        con.commit()
        # A snapshot as a kill -9 leaves it: the last commit lives only in the -wal.
        copy = tmp_path / "copy" / "n.novel"
        copy.parent.mkdir()
        shutil.copy(source, copy)
        shutil.copy(f"{source}-wal", f"{copy}-wal")
        con.close()
    assert Path(f"{copy}-wal").stat().st_size > 0
    monkeypatch.setattr(engine_module, "can_write", lambda _p: False)
    with NovelStore.open(copy, readonly=True) as ro:
        assert ro.document("brief.md") == "新"


def test_devices_are_never_read() -> None:
    from novel_desktop.storage.folder import read_capped

    with pytest.raises(StoreError, match="不是普通文件"):
        read_capped(Path("/dev/zero"), "zero")


def test_a_full_disk_while_closing_is_a_store_error(
    novel_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from novel_desktop.storage import lock

    store = NovelStore.create(novel_path, title="书")
    monkeypatch.setattr(lock, "release", _full)
    with pytest.raises(DiskFullError, match="磁盘已满"):
        store.close()
    assert not store.writable


def test_reading_a_writable_novel_leaves_no_journal_files_beside_it(novel_path: Path) -> None:
    """`novel status` and every reading command open read-only; after they close, nothing is left beside the
    novel (a mode=ro connection could not remove the -wal/-shm it made, so they stayed after every read)."""
    NovelStore.create(novel_path, title="读", genre=None, platform="web").close()
    before = novel_path.read_bytes()
    with NovelStore.open(novel_path, readonly=True) as store:
        assert store.status().title == "读"
    assert sorted(p.name for p in novel_path.parent.iterdir()) == [novel_path.name]
    assert novel_path.read_bytes() == before
