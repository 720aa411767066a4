"""On-demand commands as an author runs them, against the fake Messages API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.storage.store import NovelStore
from tests.e2e.replies import judge_json
from tests.fakes.anthropic_server import BATCH_ROLE, FakeAnthropicServer


def test_character_add_from_profile_and_retire(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "wang.json"
    profile.write_text(json.dumps({"id": "wang-er", "name": "王二"}, ensure_ascii=False), encoding="utf-8")
    assert main(["character", "add", str(novel), "--profile", str(profile)]) == 0
    assert "已新增角色 王二" in capsys.readouterr().out
    assert main(["character", "retire", str(novel), "wang-er", "--reason", "离开青石镇"]) == 0
    assert "characters/retired/wang-er.json" in capsys.readouterr().out
    with NovelStore.open(novel, write=False) as store:
        assert store.document("characters/active/wang-er.json") is None
    assert main(["character", "retire", str(novel), "wang-er"]) == 1
    assert "找不到" in capsys.readouterr().err


def test_storyline_add_and_research_import(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["storyline", "add", str(novel), "chixia_plot", "--name", "赤霞阴谋", "--type", "conspiracy"])
        == 0
    )
    assert "已新增故事线 赤霞阴谋" in capsys.readouterr().out
    note = tmp_path / "官制.md"
    note.write_text("# 官制\n\n县令管一县。\n", encoding="utf-8")
    assert main(["research", "import", str(novel), str(note)]) == 0
    assert "research/官制.md" in capsys.readouterr().out


def test_world_extend_non_interactive_stops_on_a_conflict(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    decision = {
        "type": "requires_user_decision",
        "recommendation": "保留 W-002",
        "options": ["保留 W-002", "放弃这项需求"],
        "rationale": "与 W-002 冲突",
    }
    fake.set_default("world_builder", json.dumps(decision, ensure_ascii=False))
    assert main(["world", "extend", str(novel), "镇上有灵脉", "--non-interactive"]) == 1
    err = capsys.readouterr().err
    assert "需要回答的问题" in err and "world-extend-" in err


def test_judge_prints_old_and_new_score(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.set_default("quality_judge", judge_json(3.0))
    assert main(["judge", str(novel), "--chapter", "1"]) == 0
    out = capsys.readouterr().out
    assert "第1章 重新评审" in out and "→ 3.00" in out and "原评审保留" in out


def test_reevaluate_with_batch_reports_half_price(
    novel: Path,
    fake: FakeAnthropicServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import novel_desktop.llm.batches as batches

    real = batches.run_batch

    async def fast(*args: object, **kwargs: object) -> batches.BatchReport:
        kwargs["first_poll_s"] = 0.01
        return await real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("novel_desktop.agents.judge.run_batch", fast)
    fake.set_default(BATCH_ROLE, judge_json(4.0))
    assert main(["reevaluate", str(novel), "--chapters", "1-2", "--batch"]) == 0
    out = capsys.readouterr().out
    assert "50%" in out and "半价" in out
    assert "第1章" in out and "第2章" in out


def test_reevaluate_rejects_missing_chapters(novel: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reevaluate", str(novel), "--chapters", "1-9"]) == 2
    assert "不存在" in capsys.readouterr().err
