"""`novel draft` and `novel chapter` as an author runs them: the whole 手动改 loop against the fake model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore
from tests.e2e.replies import judge_json
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.lock_holder import held_by_another_writer

EDIT = (
    "# 第3章 开山\n\n　　林风把木牌翻过来，背面的纹路和残玉一模一样。\n\n"
    "　　守门弟子皱眉看了他许久，终于侧身让开：“进去吧，别乱走。”\n"
)


def _answers(tmp_path: Path, choice: str) -> Path:
    path = tmp_path / f"answers-{choice}.json"
    path.write_text(
        json.dumps({"chapter 3 low score": {"low_score_action": choice}}, ensure_ascii=False),
        encoding="utf-8",
    )
    return path


def _pause_for_the_author(novel: Path, fake: FakeAnthropicServer, tmp_path: Path) -> None:
    fake.set_default("quality_judge", judge_json(2.5))
    answers = _answers(tmp_path, "手动改")
    assert main(["continue", str(novel), "--answers-file", str(answers), "--non-interactive"]) == 1


def test_the_whole_manual_edit_loop(
    novel: Path, fake: FakeAnthropicServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _pause_for_the_author(novel, fake, tmp_path)
    assert "⏸" in capsys.readouterr().out

    # The unchanged draft: continue stops at once, asks nothing (no answers file) and calls no model.
    before = len(fake.requests)
    assert main(["continue", str(novel), "--non-interactive"]) == 1
    out = capsys.readouterr()
    assert "第 3 章在等你修改（novel draft" in out.out
    assert "low_score_action" not in out.err
    assert len(fake.requests) == before

    assert main(["draft", str(novel)]) == 0
    shown = capsys.readouterr().out
    assert "第 3 章（暂存区" in shown and "评分 2.5" in shown
    assert "守门弟子脸谱化" in shown and "守门弟子的态度写得更具体" in shown
    assert main(["draft", str(novel), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["chapter"] == 3 and data["awaiting_author"] and data["issues"] == ["守门弟子脸谱化"]
    judged_text = data["text"]

    edit = tmp_path / "第3章改稿.md"
    edit.write_text(EDIT, encoding="utf-8")
    assert main(["draft", str(novel), "--replace", str(edit)]) == 0
    assert "不再调用写作模型" in capsys.readouterr().out

    writers = len(fake.requests_for("chapter_writer")) + len(fake.requests_for("reviser"))
    refiners = len(fake.requests_for("style_refiner"))
    summaries = len(fake.requests_for("summarizer"))
    judges = len(fake.requests_for("quality_judge"))
    fake.set_default("quality_judge", judge_json(4.2))
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    assert "第3章" in capsys.readouterr().out
    assert len(fake.requests_for("chapter_writer")) + len(fake.requests_for("reviser")) == writers
    assert len(fake.requests_for("style_refiner")) == refiners  # the author's text is not restyled
    assert len(fake.requests_for("summarizer")) == summaries + 2  # its two parts
    assert len(fake.requests_for("quality_judge")) == judges + 3  # the judge's three panels
    assert "守门弟子皱眉" in fake.requests_for("quality_judge")[-1].user_text

    with NovelStore.open(novel, readonly=True) as store:
        assert store.chapter_text(3) == EDIT
        history = [store.revision_text(r.id) for r in store.revisions(3)]
        assert judged_text in history and history[-1] == EDIT
        assert store.list_chapters()[2].status == "committed"
    assert main(["draft", str(novel)]) == 1
    assert "暂存区里没有等待修改的章节" in capsys.readouterr().err


def test_draft_commit_commits_as_is_flagged(
    novel: Path, fake: FakeAnthropicServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _pause_for_the_author(novel, fake, tmp_path)
    with NovelStore.open(novel, readonly=True) as store:
        staged = store.staging(layout.chapter_path(3))
    capsys.readouterr()
    assert main(["draft", str(novel), "--commit"]) == 0
    assert "已按现状提交（已标记质量问题）" in capsys.readouterr().out
    with NovelStore.open(novel, readonly=True) as store:
        assert store.chapter_text(3) == staged
        assert store.pipeline_log(3)["gate_decision"] == "force_pass"


def test_draft_with_nothing_staged_and_bad_files(
    novel: Path, fake: FakeAnthropicServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["draft", str(novel)]) == 1
    assert "暂存区里没有等待修改的章节" in capsys.readouterr().err
    _pause_for_the_author(novel, fake, tmp_path)
    with NovelStore.open(novel, readonly=True) as store:
        staged = {p: store.staging(p) for p in store.list_staging()}
    empty = tmp_path / "empty.md"
    empty.write_text(" \n\n", encoding="utf-8")
    gbk = tmp_path / "gbk.md"
    gbk.write_bytes("林风推开山门。".encode("gbk"))
    big = tmp_path / "big.md"
    big.write_bytes(b"a" * 2_000_001)
    capsys.readouterr()
    for bad, why in ((empty, "空"), (gbk, "UTF-8"), (big, "太大"), (tmp_path / "missing.md", "找不到")):
        assert main(["draft", str(novel), "--replace", str(bad)]) == 1
        err = capsys.readouterr().err
        assert err.startswith("错误 / error:") and why in err and err.count("\n") == 1
    with NovelStore.open(novel, readonly=True) as store:
        assert {p: store.staging(p) for p in store.list_staging()} == staged


def test_chapter_read_and_replace_as_the_editor_does(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with NovelStore.open(novel, readonly=True) as store:
        original = store.chapter_text(1)
        revisions = len(store.revisions(1))
    assert main(["chapter", str(novel), "1"]) == 0
    assert capsys.readouterr().out.strip() == original.strip()
    assert main(["chapter", str(novel), "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["chapter"] == 1 and data["text"] == original

    edit = tmp_path / "ch1.md"
    edit.write_text("# 第1章 改过的开头\n\n　　林风醒来时，天已经黑了。\n", encoding="utf-8")
    assert main(["chapter", str(novel), "1", "--replace", str(edit)]) == 0
    out = capsys.readouterr().out
    assert "需要重建的章节：1、2" in out
    with NovelStore.open(novel, readonly=True) as store:
        assert store.chapter_text(1) == edit.read_text(encoding="utf-8")
        assert len(store.revisions(1)) == revisions + 1
        assert original in [store.revision_text(r.id) for r in store.revisions(1)]
        assert store.status().stale_chapters == [1, 2]
    assert main(["chapter", str(novel), "1", "--replace", str(edit)]) == 0
    assert "没有改动" in capsys.readouterr().out


def test_chapter_that_does_not_exist_or_a_bad_file(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit = tmp_path / "ch.md"
    edit.write_text("正文", encoding="utf-8")
    assert main(["chapter", str(novel), "9"]) == 1
    assert "第 9 章不存在" in capsys.readouterr().err
    assert main(["chapter", str(novel), "9", "--replace", str(edit)]) == 1
    assert "第 9 章不存在" in capsys.readouterr().err
    gbk = tmp_path / "gbk.md"
    gbk.write_bytes("林风推开山门。".encode("gbk"))
    assert main(["chapter", str(novel), "1", "--replace", str(gbk)]) == 1
    assert "UTF-8" in capsys.readouterr().err
    with NovelStore.open(novel, readonly=True) as store:
        assert store.status().stale_chapters == []


def test_replacing_in_a_novel_locked_by_another_writer_exits_3(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit = tmp_path / "ch1.md"
    edit.write_text("# 第1章\n\n　　别人正开着这本书。\n", encoding="utf-8")
    with held_by_another_writer(novel):
        assert main(["chapter", str(novel), "1", "--replace", str(edit)]) == 3
        assert main(["draft", str(novel), "--commit"]) == 3
        assert main(["chapter", str(novel), "1"]) == 0  # reading needs no lock
    with NovelStore.open(novel, readonly=True) as store:
        assert "别人正开着" not in store.chapter_text(1)
