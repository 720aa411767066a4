"""Failures an author can cause end with exit 2 (3 for a lock) and one line naming the file, never an
internal error; reading commands open the novel read-only; a closed pipe after the work is not an error."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy.exc
import sqlmodel

from novel_desktop.cli import main
from novel_desktop.storage import engine as engine_module
from novel_desktop.storage import layout
from novel_desktop.storage import store as store_module
from novel_desktop.storage.engine import JournalChoice
from novel_desktop.storage.folder import import_folder
from novel_desktop.storage.store import NovelStore
from tests.conftest import FIXTURES
from tests.lock_holder import held_by_another_writer

OUTLINE = "# 第一卷\n\n## 第1章 开端\n\n少年出山。\n"


@pytest.fixture
def novel(tmp_path: Path) -> Path:
    path = tmp_path / "我的小说.novel"
    with NovelStore.create(path, title="剑来") as store:
        for n in (1, 2):
            store.put_staging(layout.chapter_path(n), f"# 第{n}章\n\n　　正文{n}。\n" * 50, kind="refined")
            store.commit_chapter(n, volume=1)
    return path


@pytest.fixture
def outline_file(tmp_path: Path) -> Path:
    path = tmp_path / "大纲.md"
    path.write_text(OUTLINE, encoding="utf-8")
    return path


def _reading_commands(novel: Path, tmp_path: Path) -> list[list[str]]:
    n = str(novel)
    return [
        ["status", n],
        ["status", n, "--json"],
        ["state", "show", n],
        ["outline", "show", n, "--volume", "1"],
        ["export", n, str(tmp_path / "书.txt")],
        ["export-folder", n, str(tmp_path / "备份")],
        ["next", n],
        ["instructions", n, "chapter:003:draft"],
        ["validate", n, "chapter:003:draft"],
    ]


def _assert_one_clear_line(err: str, novel: Path) -> None:
    assert str(novel) in err
    for bad in ("internal error", "内部错误", "Traceback", "sqlalchemy", "sqlite3", "OperationalError"):
        assert bad not in err


@pytest.mark.parametrize("damage", ["random", "truncated"])
def test_a_corrupt_novel_exits_2_naming_the_file(
    novel: Path, tmp_path: Path, outline_file: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    data = novel.read_bytes()
    if damage == "random":
        novel.write_bytes(os.urandom(len(data)))
    else:
        novel.write_bytes(data[: len(data) // 3])
    commands = [
        *_reading_commands(novel, tmp_path),
        ["outline", "set", str(novel), str(outline_file), "--volume", "1"],
    ]
    for argv in commands:
        code = main(argv)
        err = capsys.readouterr().err
        if code == 1 and argv[0] in ("validate", "outline") and str(novel) not in err:
            continue  # refused before the novel was read
        assert code == 2, (argv, err)
        _assert_one_clear_line(err, novel)


def _read_only(monkeypatch: pytest.MonkeyPatch, novel: Path) -> None:
    """A read-only novel in a read-only folder (root may write anything, so access() is told too)."""
    novel.chmod(0o444)
    monkeypatch.setattr(engine_module, "can_write", lambda _p: False)
    monkeypatch.setattr(store_module, "can_write", lambda _p: False)


def test_reading_commands_work_on_a_read_only_novel_and_write_nothing_beside_it(
    novel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with sqlite3.connect(novel) as con:
        con.execute("PRAGMA journal_mode=DELETE")
    con.close()
    before = novel.read_bytes()
    _read_only(monkeypatch, novel)
    for argv in _reading_commands(novel, tmp_path):
        code = main(argv)
        err = capsys.readouterr().err
        assert code in (0, 1), (argv, err)  # validate without outputs is "invalid" (1), not a failure
        assert "internal error" not in err
        assert not Path(f"{novel}-wal").exists() and not Path(f"{novel}-shm").exists(), argv
    assert novel.read_bytes() == before
    with sqlite3.connect(novel) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    con.close()


def test_a_writing_command_on_a_read_only_novel_exits_2_and_says_what_to_do(
    novel: Path, outline_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _read_only(monkeypatch, novel)
    assert main(["outline", "set", str(novel), str(outline_file), "--volume", "1"]) == 2
    err = capsys.readouterr().err
    _assert_one_clear_line(err, novel)
    assert "只读" in err


def test_a_full_disk_during_a_write_exits_2_and_changes_nothing(
    novel: Path, outline_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def full(*_a: object, **_k: object) -> None:
        raise sqlalchemy.exc.OperationalError(
            "COMMIT", {}, sqlite3.OperationalError("database or disk is full")
        )

    monkeypatch.setattr(sqlmodel.Session, "flush", full)
    assert main(["outline", "set", str(novel), str(outline_file), "--volume", "1"]) == 2
    err = capsys.readouterr().err
    _assert_one_clear_line(err, novel)
    assert "磁盘已满" in err
    monkeypatch.undo()
    with NovelStore.open(novel, readonly=True) as store:
        assert store.document(f"{layout.volume_dir(1)}/outline.md") is None


def test_a_novel_locked_by_another_process_exits_3_naming_the_holder(
    novel: Path, outline_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with held_by_another_writer(novel) as holder:
        assert main(["outline", "set", str(novel), str(outline_file), "--volume", "1"]) == 3
        err = capsys.readouterr().err
        assert str(holder.pid) in err or "pid" in err
        assert "internal error" not in err
        assert main(["status", str(novel)]) == 0  # reading needs no lock


def test_a_network_file_system_is_named_once_by_a_writing_command(
    novel: Path, outline_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reason = "网络文件系统 nfs 上不用 WAL，改用回滚日志 (network file system nfs: rollback journal)"
    monkeypatch.setattr(store_module, "choose_journal", lambda _p: JournalChoice("DELETE", reason, "nfs"))
    assert main(["outline", "set", str(novel), str(outline_file), "--volume", "1"]) == 0
    assert capsys.readouterr().err.count(reason) == 1
    assert main(["status", str(novel)]) == 0
    assert reason not in capsys.readouterr().err  # reading changes no journal: nothing to say


def test_a_closed_pipe_after_the_commit_exits_0_and_the_work_stays(tmp_path: Path) -> None:
    novel = tmp_path / "青石问道.novel"
    import_folder(FIXTURES / "seed_project", novel)
    folder = tmp_path / "project"
    assert main(["export-folder", str(novel), str(folder), "--skeleton"]) == 0
    from tests.cli.test_executor_cli import TEXT

    (folder / "staging/chapters/chapter-003.md").write_text(TEXT, encoding="utf-8")
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader (`| head -1`) is gone before anything is printed
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from novel_desktop.cli import main; sys.exit(main(sys.argv[1:]))",
                "advance",
                str(novel),
                "chapter:003:draft",
                "--folder",
                str(folder),
            ],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 0, done.stderr
    assert "internal error" not in done.stderr and "BrokenPipe" not in done.stderr
    with NovelStore.open(novel, readonly=True) as store:
        assert store.checkpoint()["pipeline_stage"] == "drafted"


def test_an_unexpected_error_goes_to_the_capped_private_crash_log_without_the_authors_text(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A bug in a command: one line on stderr with no message text, the details in crash.log (mode 0600, the
    last five crashes, no chapter text past the first 80 characters of a message)."""
    import os
    import stat

    from novel_desktop.cli import main
    from novel_desktop.paths import user_data_dir

    chapter = "林风走进山门，" * 200

    def broken(_args: object) -> int:
        raise RuntimeError(chapter)

    monkeypatch.setattr("novel_desktop.cli.demo.cmd_demo", broken)
    for _ in range(7):
        assert main(["demo", str(tmp_path / "x.novel")]) == 70
    err = capsys.readouterr().err
    assert "RuntimeError" in err and chapter[:100] not in err  # the message is cut to 80 characters
    log = user_data_dir() / "crash.log"
    assert stat.S_IMODE(os.stat(log).st_mode) == 0o600
    text = log.read_text(encoding="utf-8")
    assert text.count("===== crash ") == 5
    assert chapter[:200] not in text
