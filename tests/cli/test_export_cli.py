"""``novel export`` as an author runs it: what it prints, the file it writes, its exit codes."""

from __future__ import annotations

import os
import sqlite3
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
    assert main(["export", str(novel), "--force", str(out)]) == 2
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


def test_an_existing_out_is_kept_and_the_message_says_to_add_force(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "书.txt"
    out.write_text("上周的导出", encoding="utf-8")
    assert main(["export", str(novel), str(out)]) == 2
    err = capsys.readouterr().err
    assert "--force" in err and str(out) in err
    assert "internal error" not in err
    assert out.read_text(encoding="utf-8") == "上周的导出"


def test_force_replaces_an_existing_out(novel: Path, tmp_path: Path) -> None:
    out = tmp_path / "书.txt"
    out.write_text("上周的导出", encoding="utf-8")
    assert main(["export", str(novel), "--force", str(out)]) == 0
    assert out.read_text(encoding="utf-8").startswith("第1章 开端\n")


@pytest.mark.parametrize("force", [[], ["--force"]])
@pytest.mark.parametrize("spelling", ["same", "relative", "symlink", "hardlink"])
def test_the_novel_itself_is_never_the_output(
    novel: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    spelling: str,
    force: list[str],
) -> None:
    before = novel.read_bytes()
    if spelling == "same":
        out = str(novel)
    elif spelling == "relative":
        monkeypatch.chdir(tmp_path)
        out = f"./{novel.name}"
    elif spelling == "symlink":
        (tmp_path / "link.txt").symlink_to(novel)
        out = str(tmp_path / "link.txt")
    else:
        os.link(novel, tmp_path / "hard.txt")
        out = str(tmp_path / "hard.txt")
    assert main(["export", str(novel), "--format", "txt", *force, out]) == 2
    err = capsys.readouterr().err
    assert "小说文件" in err and "internal error" not in err
    assert novel.read_bytes() == before
    with NovelStore.open(novel, readonly=True) as store:
        assert store.chapter_text(1) == "# 第1章 开端\n\n　　少年站在桥头。\n"


def test_a_read_only_out_is_refused_even_with_force(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "书.txt"
    out.write_text("定稿", encoding="utf-8")
    out.chmod(0o444)
    assert main(["export", str(novel), "--force", str(out)]) == 2
    assert "只读" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == "定稿"


def test_a_damaged_chapter_is_a_warning_and_the_rest_exports(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    connection = sqlite3.connect(novel)
    with connection:
        connection.execute(
            "UPDATE chapter_revisions SET content = CAST(x'2320e7acac32e7aba020e5a49ce99ba80a0ae99ba8ff0a' AS TEXT)"
            " WHERE id = (SELECT current_revision_id FROM chapters WHERE number = 2)"
        )
    connection.close()
    out = tmp_path / "书.txt"
    assert main(["export", str(novel), str(out)]) == 0
    captured = capsys.readouterr()
    assert "已导出 2 章" in captured.out
    assert "警告 warning" in captured.err and "第 2 章" in captured.err
    assert "少年站在桥头" in out.read_text(encoding="utf-8")


def test_export_folder_refuses_a_non_empty_folder_without_force(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "备份"
    folder.mkdir()
    (folder / "旧.txt").write_text("旧", encoding="utf-8")
    assert main(["export-folder", str(novel), str(folder)]) == 2
    assert "--force" in capsys.readouterr().err
    assert [p.name for p in folder.iterdir()] == ["旧.txt"]
    assert main(["export-folder", str(novel), "--force", str(folder)]) == 0
    assert (folder / "chapters" / "chapter-001.md").is_file()
    assert not (folder / "旧.txt").exists()


def test_export_folder_never_writes_into_the_novel(novel: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = novel.read_bytes()
    assert main(["export-folder", str(novel), "--force", str(novel)]) == 2
    assert "internal error" not in capsys.readouterr().err
    assert novel.read_bytes() == before


def test_export_folder_prints_what_it_refused_to_write(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    connection = sqlite3.connect(novel)
    with connection:
        connection.execute("INSERT INTO extra_files (path, data) VALUES ('../escaped.txt', x'78')")
    connection.close()
    folder = tmp_path / "a" / "out"
    folder.parent.mkdir()
    assert main(["export-folder", str(novel), str(folder)]) == 0
    err = capsys.readouterr().err
    assert "已跳过 skipped: ../escaped.txt" in err and "警告 warning" in err
    assert not (tmp_path / "a" / "escaped.txt").exists()
