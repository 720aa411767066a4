"""``novel check``: the periodic checks due after the last chapter, run on demand, answered from a file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.storage.store import NovelStore
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.pipeline.test_on_demand import _commit_more


@pytest.fixture
def novel(seed_novel: Path) -> Path:
    """《青石问道》 with chapters 1-5 committed: the quality brief and the drift check are due."""
    with NovelStore.open(seed_novel) as store:
        _commit_more(store, 5)
    return seed_novel


def test_check_runs_the_due_checks_once(
    novel: Path, fake: FakeAnthropicServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"quality brief": {"brief_action": "继续"}}, ensure_ascii=False), "utf-8")
    args = ["check", str(novel), "--answers-file", str(answers), "--non-interactive"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "第 1-5 章质量简报" in out and "文风" in out
    with NovelStore.open(novel, write=False) as store:
        assert store.answer("staging/novel-ask/quality-brief-005.answers.json") is not None
    # Each check runs once per period: a second run finds nothing due and asks nothing.
    assert main(args) == 0
    assert "第 5 章没有到期的检查" in capsys.readouterr().out
    assert fake.requests == []  # no audit is due at chapter 5: no model was called


def test_a_brief_answered_回看_stops_with_exit_1(
    novel: Path, fake: FakeAnthropicServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"quality brief": {"brief_action": "回看"}}, ensure_ascii=False), "utf-8")
    assert main(["check", str(novel), "--answers-file", str(answers), "--non-interactive"]) == 1
    assert "已暂停" in capsys.readouterr().out
