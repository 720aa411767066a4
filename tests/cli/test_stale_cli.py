"""No writing past stale chapters on the command line (issue 15 point 3): `novel continue`, `novel start -n`,
`novel next` and `novel advance` refuse while an edited chapter's summary and state are out of date, name the
chapters and the exact rebuild command, and make no model request; after `novel rebuild` writing goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.storage.store import NovelStore
from tests.fakes.anthropic_server import FakeAnthropicServer

EDIT = "# 第3章 开山\n\n　　林风在山门外站了一夜，终究没有进去，转身下了山。\n"


def _write_then_edit_chapter_3(novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["continue", str(novel), "-n", "2", "--non-interactive"]) == 0
    edit = tmp_path / "ch3.md"
    edit.write_text(EDIT, encoding="utf-8")
    assert main(["chapter", str(novel), "3", "--replace", str(edit)]) == 0
    capsys.readouterr()


def _refusal(err: str, novel: Path) -> None:
    assert err.startswith("错误 / error: 第 3-4 章的正文改过，摘要和故事状态已过期")
    assert f"novel rebuild {novel} --from-chapter 3" in err
    assert err.count("\n") == 1  # one line, no traceback


def test_continue_next_and_start_refuse_until_the_rebuild(
    novel: Path, fake: FakeAnthropicServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_then_edit_chapter_3(novel, tmp_path, capsys)
    before = len(fake.requests)

    assert main(["continue", str(novel), "--non-interactive"]) == 1
    _refusal(capsys.readouterr().err, novel)
    assert main(["continue", str(novel), "-n", "3", "--stream", "--non-interactive"]) == 1
    _refusal(capsys.readouterr().err, novel)
    assert main(["next", str(novel)]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    _refusal(out.err, novel)
    assert main(["next", str(novel), "--json"]) == 1
    _refusal(capsys.readouterr().err, novel)
    assert main(["advance", str(novel), "chapter:005:draft"]) == 1
    _refusal(capsys.readouterr().err, novel)
    assert main(["start", str(novel), "-n", "1", "--non-interactive"]) == 1
    assert f"novel rebuild {novel} --from-chapter 3" in capsys.readouterr().err
    assert len(fake.requests) == before  # not one model request
    with NovelStore.open(novel, readonly=True) as store:
        assert [c.number for c in store.list_chapters()] == [1, 2, 3, 4]
        assert store.checkpoint()["pipeline_stage"] == "committed"  # nothing began in staging either
        assert store.list_staging() == []

    # `novel status` says so too, with the command.
    assert main(["status", str(novel)]) == 0
    status = capsys.readouterr().out
    assert "第 3-4 章的正文改过" in status and f"novel rebuild {novel} --from-chapter 3" in status

    assert main(["rebuild", str(novel), "--from-chapter", "3"]) == 0
    capsys.readouterr()
    with NovelStore.open(novel, readonly=True) as store:
        assert store.stale_chapters() == []
    assert main(["next", str(novel)]) == 0
    assert capsys.readouterr().out.strip() == "chapter:005:draft"
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("第5章")
    with NovelStore.open(novel, readonly=True) as store:
        assert [c.number for c in store.list_chapters()] == [1, 2, 3, 4, 5]


def test_a_relative_path_is_named_as_given(
    novel: Path,
    fake: FakeAnthropicServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _write_then_edit_chapter_3(novel, tmp_path, capsys)
    monkeypatch.chdir(novel.parent)
    assert main(["continue", novel.name, "--non-interactive"]) == 1
    err = capsys.readouterr().err
    assert f"请先运行 novel rebuild {novel.name} --from-chapter 3\n" in err
