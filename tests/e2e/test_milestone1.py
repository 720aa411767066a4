"""The seed's Milestone 1 on the command line, from nothing: `novel init` → a hand-written outline with
`novel outline set` → `novel continue -n 3` against the fake server → a manual edit → `novel rebuild`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.domain.state import CurrentState
from novel_desktop.storage.store import NovelStore
from tests.e2e.replies import summarizer_json
from tests.fakes.anthropic_server import FakeAnthropicServer

OUTLINE = """# 第一卷 入山

## 第1章 雨夜

林枫在雨夜里埋葬了爷爷，发现爷爷留下的残玉。

## 第2章 山门

林枫持残玉上苍梧宗，守门弟子以年龄拒收。

## 第3章 木牌

执事验玉后发给考核木牌，木牌背面与残玉同纹。
"""


@pytest.fixture
def fresh(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    novel = tmp_path / "新书.novel"
    outline = tmp_path / "outline.md"
    outline.write_text(OUTLINE, encoding="utf-8")
    assert main(["init", str(novel), "--title", "青石问道", "--genre", "玄幻"]) == 0
    capsys.readouterr()
    return novel


def test_continue_without_an_outline_says_how_to_set_one(
    fresh: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["continue", str(fresh), "--non-interactive"]) == 1
    assert "novel outline set" in capsys.readouterr().err
    assert fake.requests == []


def test_outline_set_lists_its_chapters_and_show_prints_it(
    fresh: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outline = tmp_path / "outline.md"
    outline.write_text(OUTLINE, encoding="utf-8")
    assert main(["outline", "set", str(fresh), "--volume", "1", str(outline)]) == 0
    out = capsys.readouterr().out
    assert "第 1–3 章，共 3 节" in out
    assert "第2章 山门" in out
    assert main(["outline", "show", str(fresh)]) == 0
    assert capsys.readouterr().out.strip() == OUTLINE.strip()
    no_sections = tmp_path / "bad.md"
    no_sections.write_text("# 随便写写\n\n没有章节。", encoding="utf-8")
    assert main(["outline", "set", str(fresh), "--volume", "2", str(no_sections)]) == 1
    assert "## 第N章" in capsys.readouterr().err
    assert main(["outline", "show", str(fresh), "--volume", "2"]) == 1


def test_three_chapters_from_a_hand_written_outline_then_a_manual_edit_and_rebuild(
    fresh: Path, tmp_path: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    outline = tmp_path / "outline.md"
    outline.write_text(OUTLINE, encoding="utf-8")
    assert main(["outline", "set", str(fresh), "--volume", "1", str(outline)]) == 0
    capsys.readouterr()

    assert main(["continue", str(fresh), "-n", "3", "--non-interactive"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[:3]] == ["第1章", "第2章", "第3章"]
    assert all(line.endswith("4.2 ✅") and "字" in line for line in lines[:3])
    assert lines[3].startswith("合计 total: $")

    # The outline's section names the chapter; every chapter went through the writer once, and the
    # volume's first and last chapters (1 and 3) were judged a second time by the stronger model.
    assert len(fake.requests_for("chapter_writer")) == 3
    assert len(fake.requests_for("judge_secondary")) == 2
    writer_prompt = json.dumps(fake.requests_for("chapter_writer")[1].body, ensure_ascii=False)
    assert "守门弟子以年龄拒收" in writer_prompt
    assert main(["status", str(fresh), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["chapters"] == status["last_completed_chapter"] == 3
    assert status["pipeline_stage"] == "committed"
    assert status["inflight_chapter"] is None
    assert status["state_version"] == 3
    assert status["total_chars"] > 3 * 1000
    with NovelStore.open(fresh, write=False) as store:
        assert store.chapter_text(2).startswith("# 第2章 山门")
        CurrentState.model_validate(store.current_state())
        assert store.current_state()["characters"]["lin-feng"]["location"] == "苍梧宗山门"

    # The author rewrites chapter 2 by hand: 林枫 goes to 洛阳 instead.
    with NovelStore.open(fresh) as store:
        marked = store.save_manual_edit(2, store.chapter_text(2) + "\n\n　　林枫改了主意，下山去了洛阳。")
    assert marked == [2, 3]
    fake.script("summarizer", summarizer_json(location="洛阳"))
    assert main(["rebuild", str(fresh), "--from-chapter", "2"]) == 0
    out = capsys.readouterr().out
    assert "已从第 2 章重建" in out
    # Per chapter, what the state after it is now: chapter 2 leaves 林枫 in 洛阳; chapter 3's own op moves him
    # back to the mountain gate, so its summary contradicts nothing and the author can write on.
    assert "第2章 状态变化 (changes):\n  - 人物 lin-feng：位置 苍梧宗山门 → 洛阳" in out
    assert "后续章节与新状态一致" in out
    # Three chapters written (the summarizer's two parts each), then chapter 2 re-summarized in one call.
    assert len(fake.requests_for("summarizer")) == 7
    with NovelStore.open(fresh, write=False) as store:
        assert "洛阳" in store.chapter_text(2)
        assert {c.number: c.status for c in store.list_chapters()} == {
            1: "committed",
            2: "committed",
            3: "committed",
        }
        assert store.stale_chapters() == []
        CurrentState.model_validate(store.current_state())
        assert store.state_version() == 5
