"""``novel next / instructions / validate / advance`` as an executor's adapter runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.domain.novel_ask import InstructionPacket
from novel_desktop.storage.store import NovelStore
from tests.e2e.replies import PARAGRAPHS

TEXT = "# 第3章 开山\n\n" + "\n\n".join(PARAGRAPHS * 2) + "\n"


def test_next_prints_the_step_and_json_carries_the_packet(
    novel: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["next", str(novel)]) == 0
    assert capsys.readouterr().out.strip() == "chapter:003:draft"
    assert main(["next", str(novel), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["step"] == "chapter:003:draft"
    assert InstructionPacket.model_validate(data["packet"]).step == "chapter:003:draft"


def test_instructions_prints_a_valid_packet(novel: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["instructions", str(novel), "chapter:003:draft"]) == 0
    packet = InstructionPacket.model_validate(json.loads(capsys.readouterr().out))
    assert packet.agent.name == "chapter-writer"
    assert packet.expected_outputs[0].path == "staging/chapters/chapter-003.md"


def test_unknown_step_exits_2(novel: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["instructions", str(novel), "chapter:3"]) == 2
    assert "无法识别的步骤" in capsys.readouterr().err


def test_validate_and_advance_through_an_exported_folder(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "project"
    assert main(["export-folder", str(novel), str(folder), "--skeleton"]) == 0
    capsys.readouterr()

    assert main(["validate", str(novel), "chapter:003:draft", "--folder", str(folder)]) == 1
    assert "缺少必需的输出文件" in capsys.readouterr().err
    assert main(["validate", str(novel), "chapter:003:draft", "--folder", str(folder), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] is False
    assert report["problems"][0]["field"] == "staging/chapters/chapter-003.md"

    (folder / "staging/chapters/chapter-003.md").write_text(TEXT, encoding="utf-8")
    assert main(["validate", str(novel), "chapter:003:draft", "--folder", str(folder)]) == 0
    assert "校验通过" in capsys.readouterr().out
    assert main(["advance", str(novel), "chapter:003:draft", "--folder", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "已导入 imported: staging/chapters/chapter-003.md" in out
    assert "下一步 next: chapter:003:summarize" in out
    with NovelStore.open(novel, write=False) as store:
        assert store.checkpoint()["pipeline_stage"] == "drafted"


def test_advance_out_of_order_is_refused(novel: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["advance", str(novel), "chapter:003:commit"]) == 1
    assert "chapter:003:draft" in capsys.readouterr().err


def test_missing_novel_or_folder_exits_2(novel: Path, tmp_path: Path) -> None:
    assert main(["validate", str(tmp_path / "无.novel"), "chapter:003:draft"]) == 2
    assert main(["validate", str(novel), "chapter:003:draft", "--folder", str(tmp_path / "无")]) == 2
