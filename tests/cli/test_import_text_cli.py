"""``novel import-text`` as an author runs it: the list shown first, confirmation, --yes, --dry-run --json."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.storage.store import NovelStore
from tests.conftest import CORPUS, FIXTURES

WEB_NOVEL = FIXTURES / "manuscripts" / "web_novel.txt"
AQ = CORPUS / "aq_zhengzhuan_pg25332_excerpt.txt"


class _Terminal(io.StringIO):
    """Standard input typed at a terminal."""

    def isatty(self) -> bool:
        return True


def _type(monkeypatch: pytest.MonkeyPatch, answer: str) -> None:
    monkeypatch.setattr(sys, "stdin", _Terminal(answer))


def test_dry_run_json_prints_the_split_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "新.novel"
    assert main(["import-text", str(WEB_NOVEL), str(target), "--dry-run", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data) == [
        "chapters",
        "volumes",
        "front_matter_chars",
        "trailing_chars",
        "encoding",
        "warnings",
        "notes",
    ]
    assert [set(c) for c in data["chapters"]] == [{"number", "title", "chars"}] * 6
    assert [c["number"] for c in data["chapters"]] == [0, 1, 2, 3, 4, 5]
    assert data["volumes"] == [{"number": 1, "title": "初入仙门"}, {"number": 2, "title": "风起云涌"}]
    assert data["encoding"] == "utf-8"
    assert data["front_matter_chars"] > 0 and data["trailing_chars"] > 0
    assert any("合并为一章" in w for w in data["warnings"])
    assert not target.exists()


def test_dry_run_reports_a_gbk_file_as_gb18030(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "旧稿.txt"
    source.write_bytes("第一章 开端\n　　他来了。\n第三章 终局\n　　他走了。\n".encode("gbk"))
    assert main(["import-text", str(source), "--dry-run", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["encoding"] == "gb18030"
    assert [c["title"] for c in data["chapters"]] == ["第一章 开端", "第三章 终局"]
    assert any("缺少第 2 章" in w for w in data["warnings"])


def test_the_chapter_list_is_shown_before_asking_and_declining_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "新.novel"
    _type(monkeypatch, "n\n")
    assert main(["import-text", str(AQ), str(target)]) == 0
    out = capsys.readouterr().out
    assert "编码 encoding: utf-8" in out
    assert "识别到 9 章" in out
    assert "第二章 優勝記略" in out and "779 字" in out
    assert "前置内容 front matter: 4 字" in out
    assert "写入？[y/N]" in out
    assert "未写入" in out
    assert not target.exists()


@pytest.mark.parametrize("answer", ["y\n", "是\n", "YES\n"])
def test_confirming_writes_the_novel_and_status_agrees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], answer: str
) -> None:
    target = tmp_path / "新.novel"
    _type(monkeypatch, answer)
    assert main(["import-text", str(AQ), str(target), "--genre", "小说"]) == 0
    assert "已导入《阿Ｑ正傳》：9 章" in capsys.readouterr().out

    assert main(["status", str(target), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["chapters"] == 9
    assert status["last_completed_chapter"] == 9
    assert status["total_chars"] == 4260
    assert status["orchestrator_state"] == "VOL_PLANNING"


def test_end_of_input_at_the_question_is_a_no(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "新.novel"
    _type(monkeypatch, "")
    assert main(["import-text", str(AQ), str(target)]) == 0
    assert not target.exists()


def test_without_a_terminal_and_without_yes_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "新.novel"
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    assert main(["import-text", str(AQ), str(target)]) == 1
    assert "--yes" in capsys.readouterr().err
    assert not target.exists()


def test_yes_writes_without_asking_with_the_given_title(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "新.novel"
    assert (
        main(
            [
                "import-text",
                str(WEB_NOVEL),
                str(target),
                "--yes",
                "--title",
                "青云志异",
                "--platform",
                "qidian",
            ]
        )
        == 0
    )
    assert "写入？" not in capsys.readouterr().out
    with NovelStore.open(target, write=False) as store:
        assert store.meta()["title"] == "青云志异"
        assert store.meta()["platform"] == "qidian"
        assert len(store.list_chapters()) == 6
        assert store.extra_file("import/front-matter.txt") is not None


def test_an_existing_target_is_refused_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "旧.novel"
    target.write_bytes(b"old")
    assert main(["import-text", str(AQ), str(target), "--yes"]) == 2
    assert "不会覆盖" in capsys.readouterr().err
    assert target.read_bytes() == b"old"


def test_unreadable_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pdf = tmp_path / "稿.pdf"
    pdf.write_bytes(b"%PDF")
    assert main(["import-text", str(pdf), str(tmp_path / "新.novel"), "--yes"]) == 2
    err = capsys.readouterr().err
    assert "不支持的文件格式" in err and "Traceback" not in err
    assert main(["import-text", str(tmp_path / "没有.txt"), "--dry-run"]) == 2
    assert not (tmp_path / "新.novel").exists()


def test_no_chapters_found_exits_1_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "散文.txt"
    source.write_text("　　一段没有章节标题的文字。\n", encoding="utf-8")
    target = tmp_path / "新.novel"
    assert main(["import-text", str(source), str(target), "--yes"]) == 1
    assert "没有识别到章节" in capsys.readouterr().err
    assert not target.exists()


def test_runs_as_a_process_with_yes(tmp_path: Path) -> None:
    target = tmp_path / "新.novel"
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from novel_desktop.cli import main; sys.exit(main())",
            "import-text",
            str(WEB_NOVEL),
            str(target),
            "--yes",
        ],
        capture_output=True,
        text=True,
        encoding="utf-8",
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "已导入" in proc.stdout
    assert target.exists()
