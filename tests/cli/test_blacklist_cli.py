"""``novel blacklist`` and the AI-phrase list's life (issue 14 item 5, seed 004 §7 黑名单维护): created at
init from the shipped list, the judge's new phrases proposed at commit, accepted or rejected by the author
(or added at once with auto-add), hits per phrase over the committed chapters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novel_desktop.analysis.blacklist import shipped_phrases
from novel_desktop.cli import main
from novel_desktop.storage.store import NovelStore
from tests.e2e.replies import judge_json
from tests.fakes.anthropic_server import FakeAnthropicServer


def _listing(novel: Path, capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    capsys.readouterr()
    assert main(["blacklist", str(novel), *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _file(novel: Path) -> dict:
    with NovelStore.open(novel, write=False) as store:
        return json.loads(store.document("ai-blacklist.json") or "null")


def _judge_finding(*phrases: str) -> str:
    data = json.loads(judge_json(4.2))
    data["new_ai_phrases"] = list(phrases)
    return json.dumps(data, ensure_ascii=False)


def test_a_new_novel_starts_with_the_shipped_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    novel = tmp_path / "新书.novel"
    assert main(["init", str(novel), "--title", "新书"]) == 0
    assert _file(novel)["words"] == shipped_phrases()
    listing = _listing(novel, capsys)
    assert {row["source"] for row in listing["phrases"]} == {"内置"}
    assert len(listing["phrases"]) == len(shipped_phrases())
    assert listing["proposed"] == [] and listing["auto_add"] is False


def test_judge_phrases_are_proposed_then_accepted_rejected_and_counted(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.script("quality_judge", _judge_finding("守门的弟子", "执事", "不禁"))
    assert main(["continue", str(novel), "-n", "1", "--non-interactive"]) == 0
    listing = _listing(novel, capsys)
    # "不禁" is shipped already; the other two wait for the author, with the chapter that found them.
    assert listing["proposed"] == [{"phrase": "守门的弟子", "chapter": 3}, {"phrase": "执事", "chapter": 3}]
    assert "守门的弟子" not in {row["phrase"] for row in listing["phrases"]}

    listing = _listing(novel, capsys, "--accept", "守门的弟子", "--reject", "执事", "--add", "木牌")
    rows = {row["phrase"]: row for row in listing["phrases"]}
    with NovelStore.open(novel, write=False) as store:
        text = "".join(store.chapter_text(n) or "" for n in (1, 2, 3))
    assert rows["守门的弟子"]["source"] == "评审"
    assert rows["守门的弟子"]["hits"] == text.count("守门的弟子") > 0
    assert rows["木牌"]["source"] == "作者" and rows["木牌"]["hits"] == text.count("木牌") > 0
    assert listing["proposed"] == [] and listing["rejected"] == ["执事"]

    # The judge finding a rejected phrase again proposes nothing; with auto-add on, a new one goes straight in.
    assert main(["blacklist", str(novel), "--auto", "on"]) == 0
    fake.script("quality_judge", _judge_finding("执事", "残玉"))
    assert main(["continue", str(novel), "-n", "1", "--non-interactive"]) == 0
    listing = _listing(novel, capsys)
    rows = {row["phrase"]: row for row in listing["phrases"]}
    assert listing["proposed"] == [] and listing["auto_add"] is True
    assert rows["残玉"]["source"] == "评审" and "执事" not in rows
    # The writer of the next chapter is told to avoid the accepted phrases.
    assert main(["continue", str(novel), "-n", "1", "--non-interactive"]) == 0
    sent = json.dumps(fake.requests_for("chapter_writer")[-1].body, ensure_ascii=False)
    assert "守门的弟子" in sent and "木牌" in sent and "re:" not in sent


def test_removing_a_builtin_phrase_records_it_and_bad_requests_change_nothing(
    novel: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listing = _listing(novel, capsys, "--remove", "不禁")
    assert "不禁" not in {row["phrase"] for row in listing["phrases"]}
    assert listing["removed"] == ["仿佛", "不禁"]  # the fixture's author had switched off 仿佛 before
    assert _file(novel)["custom_removed"] == ["仿佛", "不禁"]
    # Adding it back switches it on again.
    listing = _listing(novel, capsys, "--add", "不禁")
    assert listing["removed"] == ["仿佛"] and "不禁" in {row["phrase"] for row in listing["phrases"]}

    before = _file(novel)
    for args, message in (
        (["--accept", "没有提议"], "没有这条待审短语"),
        (["--remove", "从来没有"], "黑名单里没有"),
        (["--add", "  "], "不能为空"),
    ):
        capsys.readouterr()
        assert main(["blacklist", str(novel), *args]) == 1
        err = capsys.readouterr().err
        assert err.startswith("错误 / error:") and message in err
        assert _file(novel) == before


def test_a_locked_novel_is_refused(novel: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _file(novel)
    with NovelStore.open(novel):
        assert main(["blacklist", str(novel), "--add", "眸光微闪"]) == 3
    assert "错误 / error:" in capsys.readouterr().err
    assert _file(novel) == before
