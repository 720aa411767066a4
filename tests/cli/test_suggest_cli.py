"""The judge's issues as suggestions, through ``novel suggest`` against the fake Messages API (issue 14, item 7):
the suggestions are shown with ids, kept with the chapter's text, and ``--apply`` applies exactly the chosen
ones as a manual edit (revision kept, later chapters marked for rebuild)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.storage.store import NovelStore
from tests.fakes.anthropic_server import FakeAnthropicServer

FIRST = "入秋以后，青石镇的雨就没停过。"
SECOND = "“谁家的篓子？”他朝前堂喊了一声。"


def suggestions_json() -> str:
    return json.dumps(
        {
            "suggestions": [
                {
                    "original": FIRST,
                    "replacement": "入秋以后，青石镇的雨下了整整半个月。",
                    "reason": "开篇给出时间跨度",
                    "issue": "结尾情绪落点偏平",
                },
                {
                    "original": SECOND,
                    "replacement": "“这是谁家的篓子？”他扯着嗓子朝前堂喊。",
                    "reason": "喊声更有力",
                    "issue": "结尾情绪落点偏平",
                },
                {"original": "原文里没有这句话", "replacement": "随便", "reason": "", "issue": ""},
            ]
        },
        ensure_ascii=False,
    )


def test_suggest_lists_then_applies_only_the_chosen_ones(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.set_default("reviser", suggestions_json())
    assert main(["suggest", str(novel), "1", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [s["id"] for s in shown["suggestions"]] == ["S1", "S2"]
    assert shown["issues"] == ["问题：结尾情绪落点偏平"]
    assert len(shown["dropped"]) == 1 and "找不到" in shown["dropped"][0]
    request = fake.requests_for("reviser")[0].body
    assert "结尾情绪落点偏平" in request["messages"][0]["content"]
    with NovelStore.open(novel, write=False) as store:
        calls = store.model_calls()
        # the on-demand call's cost is recorded in the ledger, as chapter 1's
        assert [(c.role, c.purpose, c.chapter, c.status) for c in calls] == [("reviser", "suggest", 1, "ok")]
        assert calls[0].cost_usd > 0 and store.cost_total().cost_usd == calls[0].cost_usd
        before = store.chapter_text(1)
        revisions = len(store.revisions(1))

    assert main(["suggest", str(novel), "1"]) == 0  # shown again from what was kept: no new call
    out = capsys.readouterr().out
    assert "[S1]" in out and "[S2]" in out and "雨下了整整半个月" in out
    assert len(fake.requests_for("reviser")) == 1

    assert main(["suggest", str(novel), "1", "--apply", "s2"]) == 0
    out = capsys.readouterr().out
    assert "已采纳 applied: S2" in out and "需要重建" in out
    with NovelStore.open(novel, write=False) as store:
        text = store.chapter_text(1)
        assert text == before.replace(SECOND, "“这是谁家的篓子？”他扯着嗓子朝前堂喊。")
        assert FIRST in text  # S1 was not chosen
        assert len(store.revisions(1)) == revisions + 1
        assert {c.number: c.status for c in store.list_chapters()} == {1: "needs_rebuild", 2: "needs_rebuild"}
    assert len(fake.requests_for("reviser")) == 1


def test_suggest_bad_input_changes_nothing(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.set_default("reviser", suggestions_json())
    assert main(["suggest", str(novel), "9"]) == 1
    assert "第 9 章不存在" in capsys.readouterr().err
    assert main(["suggest", str(novel), "1", "--apply", "S7"]) == 1
    assert "没有这些建议：S7" in capsys.readouterr().err
    with NovelStore.open(novel, write=False) as store:
        assert all(c.status != "needs_rebuild" for c in store.list_chapters())


def test_suggest_apply_all(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.set_default("reviser", suggestions_json())
    assert main(["suggest", str(novel), "1", "--apply-all", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["applied"] == ["S1", "S2"]
    with NovelStore.open(novel, write=False) as store:
        text = store.chapter_text(1)
    assert FIRST not in text and SECOND not in text
