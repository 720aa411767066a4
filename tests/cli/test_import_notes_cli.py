"""``novel import-text`` reports the same unsure places as the window's preview (issue 19 point 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.storage.store import NovelStore
from tests.conftest import FIXTURES

HEADINGS = FIXTURES / "manuscripts" / "headings"


def test_the_dry_run_marks_unsure_chapters_and_lists_why(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import-text", str(HEADINGS / "traditional.big5.txt"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "编码 encoding: big5" in out
    lines = out.splitlines()
    assert any(line.startswith(" !1  第一章 燈下") for line in lines)
    assert any(line.startswith(" !2  第二章 夜客") for line in lines)
    assert out.count("已合并为一章") == 3
    assert "「第二章」与下一行「夜客」合为一个标题「第二章 夜客」" in out
    assert "「第四章」与下一行「歸途」合为一个标题「第四章 歸途」" in out


def test_json_carries_the_notes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import-text", str(HEADINGS / "simplified.gb18030.txt"), "--dry-run", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["encoding"] == "gb18030"
    assert [(n["kind"], n["chapter"]) for n in data["notes"]] == [
        ("merged_heading", 1),
        ("merged_heading", 3),
        ("merged_heading", 5),
        ("joined_heading", 2),
        ("joined_heading", 4),
    ]


def test_a_guessed_encoding_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "short.txt"
    path.write_bytes("第一章 开".encode("gb18030"))
    main(["import-text", str(path), "--dry-run"])
    assert "文件编码是推测的（gb18030）" in capsys.readouterr().out


def test_the_imported_novel_has_clean_chapters(tmp_path: Path) -> None:
    target = tmp_path / "雨夜燈.novel"
    assert main(["import-text", str(HEADINGS / "traditional.big5.txt"), str(target), "--yes"]) == 0
    store = NovelStore.open(target)
    try:
        texts = [store.chapter_text(n) or "" for n in range(1, 6)]
    finally:
        store.close()
    assert texts[0].startswith("# 第一章 燈下\n\n　　雨從傍晚開始下")
    assert texts[1].startswith("# 第二章 夜客\n\n　　三更時分")
    assert all("-----" not in t and "＊＊＊" not in t and "☆☆☆" not in t for t in texts)
