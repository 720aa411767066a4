"""A draft is complete or it is not committed (issue 16 point 1): `novel continue` against the fake model."""

from __future__ import annotations

from pathlib import Path

import pytest

from novel_desktop.agents.chapter import split_writer_output
from novel_desktop.cli import main
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore
from tests.e2e.replies import judge_json, summarizer_json, writer_text
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply

FULL = writer_text()
#: Cut mid-sentence, well inside the chapter.
CUT = FULL.index("他停下来喘气", len(FULL) // 3) + 3


def test_a_truncated_draft_is_continued_and_committed_whole(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    # The continuation repeats the cut-off sentence's start and the heading, as models do.
    fake.script(
        "chapter_writer",
        Reply.truncated(FULL[:CUT]),
        Reply("# 第3章 开山\n\n" + FULL[CUT - 12 :], chunk_size=40),
    )
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    assert "✅" in capsys.readouterr().out

    first, second = fake.requests_for("chapter_writer")
    messages = second.body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[0] == first.body["messages"][0]
    assert messages[1]["content"] == FULL[:CUT].rstrip()  # the text so far goes back as it was
    assert "接着写" in messages[2]["content"] and "不要重复" in messages[2]["content"]
    assert FULL[CUT - 8 : CUT] in messages[2]["content"]  # quoting where it stopped

    body, _hints = split_writer_output(FULL, 3, "开山")
    with NovelStore.open(novel, write=False) as store:
        text = store.chapter_text(3)
        log = store.pipeline_log(3)
    assert text.count("# 第3章") == 1
    assert "```json" not in text
    # Both parts, once each: the committed chapter is the whole draft (with the refiner's one edit).
    assert text.replace("哼了一声", "嘴角勾起一抹冷笑", 1) == body
    assert [s["name"] for s in log["stages"]][:2] == ["draft", "draft"]  # both calls are billed


def test_a_draft_cut_off_three_times_commits_nothing(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    # Cut off three times in a row, twice: the run tries the chapter once more (§8.2 ERROR_RETRY).
    fake.script("chapter_writer", *(Reply.truncated(FULL[: 400 * k]) for k in (1, 2, 3, 1, 2, 3)))
    assert main(["continue", str(novel), "--non-interactive"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("截断：第 3 章正文连续 3 次达到输出长度上限，未提交")
    assert any(line.startswith("  ! 出错，重试一次：截断：第 3 章正文") for line in err)
    assert len(fake.requests_for("chapter_writer")) == 6
    assert not fake.requests_for("summarizer") and not fake.requests_for("quality_judge")
    with NovelStore.open(novel, write=False) as store:
        assert store.status().chapters == 2
        assert store.staging(layout.chapter_path(3)) is None  # nothing truncated was staged
        assert store.checkpoint()["pipeline_stage"] == "drafting"  # resumable

    # The next run starts the chapter over and commits a whole draft.
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    with NovelStore.open(novel, write=False) as store:
        assert store.status().chapters == 3
        assert store.chapter_text(3).rstrip().endswith(FULL.split("\n\n```json")[0].rstrip()[-20:])


def test_a_truncated_revision_commits_nothing(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.script("quality_judge", judge_json(3.2), judge_json(3.2))  # the retry (§8.2) is sent back again
    fake.script("reviser", *(Reply.truncated(FULL[:500]) for _ in range(6)))
    assert main(["continue", str(novel), "--non-interactive"]) == 1
    assert capsys.readouterr().err.splitlines()[-1].startswith("截断：第 3 章修订稿连续 3 次")
    with NovelStore.open(novel, write=False) as store:
        assert store.status().chapters == 2
        assert store.checkpoint()["pipeline_stage"] == "drafting"


def test_a_truncated_judge_reply_is_not_used(novel: Path, fake: FakeAnthropicServer) -> None:
    # A complete-looking 4.6 verdict that stopped at max_tokens must not pass the chapter; the repair's
    # 3.2 is what the gate sees (a revision follows).
    fake.script("quality_judge", Reply.truncated(judge_json(4.6)), judge_json(3.2), judge_json(4.3))
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    with NovelStore.open(novel, write=False) as store:
        assert store.pipeline_log(3)["scores"] == [3.2, 4.3]
    assert len(fake.requests_for("reviser")) == 1


def test_a_truncated_summary_is_not_used(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.script(
        "summarizer",
        Reply.truncated(summarizer_json("被截断的地点")),
        Reply.truncated(summarizer_json("也被截断的地点")),
    )
    assert main(["continue", str(novel), "--non-interactive"]) == 0
    assert "摘要未能生成" in capsys.readouterr().err
    with NovelStore.open(novel, write=False) as store:
        location = store.current_state()["characters"]["lin-feng"].get("location")
    assert location not in ("被截断的地点", "也被截断的地点")
