"""``novel rollback`` and ``novel archive``: the confirmation, the bad inputs (exit 1, nothing changed), a
locked novel (exit 3), and the archive's list / show / restore."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.storage.store import NovelStore
from tests.storage.test_rollback import write_six


@pytest.fixture
def six(novel_path: Path) -> Path:
    with NovelStore.create(novel_path, title="回滚") as store:
        write_six(store)
    return novel_path


def _chapters(path: Path) -> list[int]:
    with NovelStore.open(path, write=False) as store:
        return [c.number for c in store.list_chapters()]


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_rollback_with_yes(six: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rollback", str(six), "--to-chapter", "4", "--yes", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["removed"] == [5, 6]
    assert "storylines/main/memory.md" in report["restored_documents"]
    assert _chapters(six) == [1, 2, 3, 4]
    assert main(["status", str(six), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["last_completed_chapter"] == 4


def test_without_yes_it_asks_and_no_keeps_everything(
    six: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", _Tty("n\n"))
    assert main(["rollback", str(six), "--to-chapter", "4"]) == 1
    err = capsys.readouterr().err
    assert "将移除 第5章、第6章（共 2 章" in err
    assert "保留在存档里" in err
    assert "回滚到第 4 章？[y/N]" in err
    assert "已取消" in err
    assert _chapters(six) == [1, 2, 3, 4, 5, 6]

    monkeypatch.setattr("sys.stdin", _Tty("y\n"))
    assert main(["rollback", str(six), "--to-chapter", "4"]) == 0
    assert "已回滚到第 4 章：移除 2 章" in capsys.readouterr().out
    assert _chapters(six) == [1, 2, 3, 4]


def test_without_yes_and_without_a_terminal_it_stops(
    six: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert main(["rollback", str(six), "--to-chapter", "4"]) == 1
    assert "--yes" in capsys.readouterr().err
    assert _chapters(six) == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize(
    ("target", "message"),
    [("9", "第 9 章不存在"), ("6", "最后一章"), ("0", "正整数"), ("-1", "正整数")],
)
def test_bad_targets_exit_1_with_one_line(
    six: Path, capsys: pytest.CaptureFixture[str], target: str, message: str
) -> None:
    assert main(["rollback", str(six), f"--to-chapter={target}", "--yes"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("错误 / error: ")
    assert message in err[0]
    assert "未做任何改动" in err[0]
    assert _chapters(six) == [1, 2, 3, 4, 5, 6]


def test_a_novel_locked_by_another_writer_exits_3(six: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with NovelStore.open(six):
        assert main(["rollback", str(six), "--to-chapter", "4", "--yes"]) == 3
        assert main(["archive", str(six), "--restore", "1"]) == 3
    assert "错误 / error" in capsys.readouterr().err
    assert _chapters(six) == [1, 2, 3, 4, 5, 6]


def test_archive_list_show_and_restore(six: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["archive", str(six)]) == 0
    assert "存档里没有章节" in capsys.readouterr().out
    assert main(["rollback", str(six), "--to-chapter", "4", "--yes"]) == 0
    capsys.readouterr()

    assert main(["archive", str(six), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(c["chapter"], c["restored_at"]) for c in listed] == [(5, None), (6, None)]
    five, six_id = listed[0]["id"], listed[1]["id"]

    assert main(["archive", str(six), "--show", str(five)]) == 0
    shown = capsys.readouterr().out
    assert "林风登上第5峰。" in shown
    assert "draft" in shown

    assert main(["archive", str(six), "--restore", str(six_id)]) == 1
    err = capsys.readouterr().err
    assert "只能把第 5 章恢复为下一章" in err
    assert main(["archive", str(six), "--show", "99"]) == 1
    assert "#99" in capsys.readouterr().err

    assert main(["archive", str(six), "--restore", str(five)]) == 0
    assert "novel rebuild" in capsys.readouterr().out
    assert _chapters(six) == [1, 2, 3, 4, 5]
    assert main(["status", str(six), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["stale_chapters"] == [5]
    assert main(["archive", str(six)]) == 0
    assert "已恢复" in capsys.readouterr().out
