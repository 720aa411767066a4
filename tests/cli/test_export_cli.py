"""``novel export`` as an author runs it: what it prints, the file it writes, its exit codes."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore


@pytest.fixture
def novel(tmp_path: Path) -> Path:
    path = tmp_path / "我的小说.novel"
    with NovelStore.create(path, title="剑来") as store:
        for n, text in enumerate(
            ["# 第1章 开端\n\n　　少年站在桥头。\n", "# 第2章 夜雨\n\n　　雨下了三天。\n"], 1
        ):
            store.put_staging(layout.chapter_path(n), text, kind="refined")
            store.commit_chapter(n, volume=1)
    return path


def test_export_writes_the_file_and_says_what_it_wrote(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "剑来.txt"
    assert main(["export", str(novel), "--format", "txt", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"已导出 2 章（13 字）到 {out} (exported)"
    assert out.read_text(encoding="utf-8").startswith("第1章 开端\n\n　　少年站在桥头。\n")


def test_format_comes_from_the_file_suffix(novel: Path, tmp_path: Path) -> None:
    out = tmp_path / "剑来.epub"
    assert main(["export", str(novel), str(out)]) == 0
    with zipfile.ZipFile(out) as z:
        assert z.read("mimetype") == b"application/epub+zip"


def test_format_option_wins_over_the_suffix(novel: Path, tmp_path: Path) -> None:
    out = tmp_path / "剑来.text"
    assert main(["export", str(novel), "--format", "md", str(out)]) == 0
    assert out.read_text(encoding="utf-8").startswith("# 剑来\n\n## 第1章 开端\n")


def test_chapters_option_exports_only_that_range(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "第2章.txt"
    assert main(["export", str(novel), "--chapters", "2-", str(out)]) == 0
    assert "已导出 1 章" in capsys.readouterr().out
    assert out.read_text(encoding="utf-8").startswith("第2章 夜雨\n")


@pytest.mark.parametrize(
    ("chapters", "message"), [("二到五", "格式不对"), ("5-2", "起点大于终点"), ("7-9", "没有章节")]
)
def test_bad_or_empty_range_exits_1_and_writes_nothing(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], chapters: str, message: str
) -> None:
    out = tmp_path / "书.txt"
    assert main(["export", str(novel), "--chapters", chapters, str(out)]) == 1
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert not out.exists()


def test_missing_novel_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(tmp_path / "没有.novel"), str(tmp_path / "书.txt")]) == 2
    assert "找不到小说文件" in capsys.readouterr().err


def test_unwritable_output_exits_2(novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(novel), str(tmp_path / "没有这个目录" / "书.txt")]) == 2
    assert "目录不存在" in capsys.readouterr().err


def test_failed_write_exits_2_and_keeps_the_old_export(
    novel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "书.docx"
    out.write_bytes(b"last week's export")

    def disk_full(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    assert main(["export", str(novel), str(out)]) == 2
    assert "无法写入" in capsys.readouterr().err
    assert out.read_bytes() == b"last week's export"


def test_unknown_suffix_without_format_exits_2(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "书.pdf"
    assert main(["export", str(novel), str(out)]) == 2
    assert "--format" in capsys.readouterr().err
    assert not out.exists()


def test_help_is_in_chinese_with_english_terms(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["export", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "导出" in text and "段首空两格" in text
    assert "--chapters" in text and "table of contents" in text
