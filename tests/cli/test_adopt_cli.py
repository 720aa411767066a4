"""``novel adopt`` end to end against the fake Messages API: the estimate printed before any request, the
confirmation (refused without a terminal, skipped by --yes), progress per chapter, the approvals from an
answers file, the resume after a failure, and ``novel continue`` afterwards writing with the book's
characters and its last chapter's summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.storage.store import NovelStore
from tests.e2e.lifecycle_replies import plan_json
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.pipeline.adopt_book import accept_all, imported_book, note_json, script_adoption


@pytest.fixture
def answers(tmp_path: Path) -> Path:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(accept_all(), ensure_ascii=False), encoding="utf-8")
    return path


def test_without_yes_and_without_a_terminal_only_the_estimate_is_printed(
    tmp_path: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    novel = imported_book(tmp_path)
    assert main(["start", str(novel), "--non-interactive"]) == 0
    assert "接续已有书稿" in capsys.readouterr().out
    assert main(["adopt", str(novel)]) == 1
    captured = capsys.readouterr()
    assert "共 6 章；待分析 6 章（第 1-6 章），已分析 0 章" in captured.out
    assert "预计费用约 $" in captured.out
    assert "--yes" in captured.err
    assert fake.requests == []


def test_adopt_then_continue(
    tmp_path: Path, fake: FakeAnthropicServer, answers: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    novel = imported_book(tmp_path)
    fake.script("summarizer", *(note_json(n) for n in (1, 2)), Reply.http_error(500, message="坏了"))
    fake.script("summarizer", Reply.http_error(500, message="坏了"), Reply.http_error(500, message="坏了"))
    args = ["adopt", str(novel), "--yes", "--answers-file", str(answers), "--non-interactive"]
    assert main(args) == 1
    captured = capsys.readouterr()
    assert "[2/6] 第 2 章已分析" in captured.out
    assert "第 3 章分析失败" in captured.err and "已分析的 2 章已保存" in captured.err
    before = len(fake.requests_for("summarizer"))

    script_adoption(fake, range(3, 7))
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "待分析 4 章（第 3-6 章），已分析 2 章" in out
    assert "[4/4] 第 6 章已分析" in out and "接续分析完成" in out
    assert len(fake.requests_for("summarizer")) == before + 4
    with NovelStore.open(novel, write=False) as store:
        assert store.document_json("characters/active/lin-feng.json")["name"] == "林枫"
        assert store.meta()["adopted"] == "done"

    # 规划 (the next step the start page names), then 续写: chapter 7, written with the book's characters
    # and chapter 6's summary.
    fake.script("plot_architect", plan_json(1, 7, 9))
    plan = answers.with_name("plan.json")
    plan.write_text(json.dumps({"volume plan": {"review_action": "接受"}}), encoding="utf-8")
    assert (
        main(["plan", str(novel), "--chapters", "9", "--answers-file", str(plan), "--non-interactive"]) == 0
    )
    assert main(["continue", str(novel), "-n", "1", "--non-interactive"]) == 0
    writer = fake.requests_for("chapter_writer")[0]
    prompt = writer.user_text + json.dumps(writer.system_blocks, ensure_ascii=False)
    assert "第6章摘要：林枫来到残玉" in prompt
    assert "林枫" in prompt and "倔强，不低头求人" in prompt
    with NovelStore.open(novel, write=False) as store:
        assert [c.number for c in store.list_chapters()][-1] == 7
