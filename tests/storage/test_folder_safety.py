"""Folder export and import stay inside the chosen folder, never touch the novel, never read unbounded."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest
from sqlmodel import Session

from novel_desktop.storage import atomic
from novel_desktop.storage.engine import writer
from novel_desktop.storage.folder import export_folder, import_folder
from novel_desktop.storage.store import (
    FileTooLargeError,
    NovelStore,
    StoreError,
    TargetExistsError,
    UnsafePathError,
)
from novel_desktop.storage.tables import AnswerRow, DocumentRow, ExtraFileRow, MetaRow, StagingRow
from tests.conftest import FIXTURES

SEED_PROJECT = FIXTURES / "seed_project"


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _crafted(store: NovelStore, outside: Path) -> None:
    """Stored names that try to leave the export folder."""
    with Session(writer(store.engine)) as s, s.begin():
        s.add(ExtraFileRow(path="../escaped.txt", data=b"x"))
        s.add(ExtraFileRow(path=str(outside / "absolute.txt"), data=b"x"))
        s.add(ExtraFileRow(path="notes/../../up.txt", data=b"x"))
        s.add(ExtraFileRow(path="notes/ok.txt", data=b"kept"))
        s.add(DocumentRow(path="../../doc.md", content="x", updated_at="2024-01-01"))
        s.add(AnswerRow(answer_path="../answer.json", content="{}", updated_at="2024-01-01"))
        s.add(StagingRow(path="../../staged.md", content="x", updated_at="2024-01-01"))
        s.merge(MetaRow(key="folder_dirs", value=json.dumps(["../dir-out", "/abs-dir", "ok-dir"])))


def test_a_crafted_novel_exports_nothing_outside_the_folder(store: NovelStore, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    _crafted(store, outside)
    base = tmp_path / "a" / "b"
    base.mkdir(parents=True)
    before = set(tmp_path.rglob("*"))
    report = export_folder(store, base / "out")
    created = set(tmp_path.rglob("*")) - before
    assert all(p.is_relative_to(base / "out") for p in created), created
    assert (base / "out" / "notes" / "ok.txt").read_bytes() == b"kept"
    assert (base / "out" / "ok-dir").is_dir()
    assert sorted(report.skipped) == sorted(
        [
            "../escaped.txt",
            str(outside / "absolute.txt"),
            "notes/../../up.txt",
            "../../doc.md",
            "../answer.json",
            "staging/../../staged.md",
        ]
    )
    assert len(report.warnings) == 6 and all("拒绝" in w for w in report.warnings)
    assert list(outside.iterdir()) == []


def test_unsafe_extra_file_names_are_refused_when_stored(store: NovelStore) -> None:
    for bad in ("../x", "/etc/x", "a/../../x", "a\\..\\x", "C:x", ""):
        with pytest.raises(StoreError):
            store.put_extra_file(bad, b"x")
    store.put_extra_file("import/ok.txt", b"x")
    assert store.extra_file("import/ok.txt") == b"x"


def _project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    shutil.copytree(SEED_PROJECT, folder)
    return folder


def test_import_skips_symlinks_and_never_reads_outside(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("私密内容", encoding="utf-8")
    secret_dir = tmp_path / "secret-dir"
    secret_dir.mkdir()
    (secret_dir / "inner.md").write_text("私密", encoding="utf-8")
    (folder / "link.txt").symlink_to(secret)
    (folder / "world" / "linked.md").symlink_to(secret)
    (folder / "linked-dir").symlink_to(secret_dir)
    (folder / "zero").symlink_to("/dev/zero")
    report = import_folder(folder, tmp_path / "n.novel")
    assert {"link.txt", "world/linked.md", "linked-dir/", "zero"} <= set(report.skipped)
    assert sum("符号链接" in w for w in report.warnings) == 4
    with NovelStore.open(tmp_path / "n.novel", readonly=True) as store:
        assert store.extra_file("link.txt") is None
        assert store.document("world/linked.md") is None
        assert store.extra_file("linked-dir/inner.md") is None
        assert store.extra_file("zero") is None


@pytest.mark.timeout(20)
def test_import_skips_a_fifo_and_a_socket_without_hanging(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    os.mkfifo(folder / "pipe")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(folder / "sock"))
        report = import_folder(folder, tmp_path / "n.novel")
    finally:
        sock.close()
    assert {"pipe", "sock"} <= set(report.skipped)
    assert sum("不是普通文件" in w for w in report.warnings) == 2


def test_a_file_over_the_cap_is_refused_by_name_and_nothing_is_written(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    big = folder / "huge.bin"
    with big.open("wb") as fh:  # sparse: large on paper, nothing on disk
        fh.truncate(65 * 1024 * 1024)
    novel = tmp_path / "n.novel"
    with pytest.raises(FileTooLargeError, match=r"huge\.bin.*64 MB"):
        import_folder(folder, novel)
    assert not novel.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_the_cap_can_be_set_per_call(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    (folder / "notes.txt").write_bytes(b"x" * 2048)
    with pytest.raises(FileTooLargeError, match=r"notes\.txt"):
        import_folder(folder, tmp_path / "n.novel", max_file_bytes=1024)


# ---------------------------------------------------------------------------- the novel is never an output
def test_export_refuses_the_novel_itself_by_any_spelling(store: NovelStore, novel_path: Path) -> None:
    original = novel_path.read_bytes()
    link = novel_path.parent / "link.novel"
    link.symlink_to(novel_path)
    hard = novel_path.parent / "hard.novel"
    os.link(novel_path, hard)
    spellings = [
        novel_path,
        novel_path.parent / "." / novel_path.name,
        novel_path.parent / "sub" / ".." / novel_path.name,
        link,
        hard,
        Path(f"{novel_path}-wal"),
        Path(f"{novel_path}-shm"),
        novel_path.parent,  # a folder holding the novel: replacing it would delete the novel
        novel_path.parent.parent,
    ]
    (novel_path.parent / "sub").mkdir()
    for out in spellings:
        with pytest.raises(UnsafePathError):
            export_folder(store, out, force=True)
    assert novel_path.read_bytes() == original
    assert store.status().title == "测试小说"


def test_a_non_empty_folder_is_replaced_only_with_force(store: NovelStore, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("作者的文件", encoding="utf-8")
    with pytest.raises(TargetExistsError, match="--force"):
        export_folder(store, out)
    assert (out / "mine.txt").read_text(encoding="utf-8") == "作者的文件"
    report = export_folder(store, out, force=True)
    assert not (out / "mine.txt").exists()
    assert (out / ".checkpoint.json").is_file() and report.files > 0
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")] == []


def test_an_empty_folder_is_used_without_force(store: NovelStore, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    export_folder(store, tmp_path / "out")
    assert (tmp_path / "out" / ".checkpoint.json").is_file()


def test_a_full_disk_leaves_no_half_folder_and_the_retry_succeeds(
    store: NovelStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import builtins

    from novel_desktop.storage.store import DiskFullError

    real_open = builtins.open
    calls = {"n": 0}

    def full_open(file: object, mode: str = "r", *args: object, **kwargs: object) -> object:
        if mode == "xb":
            calls["n"] += 1
            if calls["n"] == 2:
                raise OSError(28, "No space left on device")
        return real_open(file, mode, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(builtins, "open", full_open)
    out = tmp_path / "out"
    with pytest.raises(DiskFullError, match="磁盘已满"):
        export_folder(store, out)
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")] == []
    monkeypatch.setattr(builtins, "open", real_open)
    export_folder(store, out)
    assert (out / ".checkpoint.json").is_file()


def test_what_a_dead_exporter_left_is_removed_by_the_retry(store: NovelStore, tmp_path: Path) -> None:
    out = tmp_path / "out"
    dead = atomic.temp_sibling(out, "export").name.replace(f"-{os.getpid()}-", "-999999999-")
    (tmp_path / dead).mkdir()
    (tmp_path / dead / "half.md").write_text("半个", encoding="utf-8")
    export_folder(store, out)
    assert not (tmp_path / dead).exists()
    assert (out / ".checkpoint.json").is_file()


def test_a_read_only_novel_in_a_read_only_folder_exports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    novel = tmp_path / "ro" / "n.novel"
    novel.parent.mkdir()
    import_folder(SEED_PROJECT, novel)
    monkeypatch.setattr("novel_desktop.storage.engine.can_write", lambda _p: False)
    os.chmod(novel, 0o444)
    os.chmod(novel.parent, 0o555)
    try:
        with NovelStore.open(novel, readonly=True) as store:
            export_folder(store, tmp_path / "out")
        assert sorted(p.name for p in novel.parent.iterdir()) == ["n.novel"]
    finally:
        os.chmod(novel.parent, 0o755)
        os.chmod(novel, 0o644)
    exported = _tree(tmp_path / "out")
    original = _tree(SEED_PROJECT)
    assert all(exported[p] == original[p] for p in original)
