"""``novel continue -n K`` runs the window's queued path (the orchestrator with pipeline/ahead.py): the next
chapter's writer starts while the chapter before is judged, the progress says which chapter each line is
about, and a gate that needs the author stops the run with the early draft thrown away. Real .novel, real SDK,
the fake server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.storage.store import NovelStore
from tests.e2e.replies import judge_json, script_defaults, writer_text
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.queued_server import JudgeWaitsForNextWriter


@pytest.fixture
def fake_server() -> Iterator[FakeAnthropicServer]:
    with JudgeWaitsForNextWriter() as server:
        script_defaults(server)
        yield server


def test_continue_n_3_drafts_each_next_chapter_before_the_one_before_is_committed(
    novel: Path, fake: JudgeWaitsForNextWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["continue", str(novel), "-n", "3", "--non-interactive"]) == 0
    captured = capsys.readouterr()
    out, err = captured.out.splitlines(), captured.err
    # Chapter 4's writer request reached the server while chapter 3's judge reply was still held back:
    # chapter 4 was being written before chapter 3 was judged, let alone committed.
    assert fake.judge_saw_writer and all(fake.judge_saw_writer)  # both judge panels may have waited
    assert [line.split()[0] for line in out[:3]] == ["第3章", "第4章", "第5章"]
    assert all(line.endswith("4.2 ✅") for line in out[:3]) and out[3].startswith("合计 total: $")
    assert "第4章 提前开始写作（第3章评审期间）" in err and "第5章 提前开始写作（第4章评审期间）" in err
    assert "  · 第4章 写作" in err  # chapter 4's stage, printed while chapter 3 is the one in flight
    assert err.index("第4章 提前开始写作") < err.index("第4章 开始")
    with NovelStore.open(novel, write=False) as store:
        assert store.checkpoint()["last_completed_chapter"] == 5
        assert store.list_staging() == []
        # One writer call per chapter: nothing drafted early was thrown away or drafted twice.
        assert [[c.role for c in store.model_calls(n)].count("chapter_writer") for n in (3, 4, 5)] == [1] * 3
    assert len(fake.requests_for("chapter_writer")) == 3
    assert "第3章" in fake.requests_for("chapter_writer")[1].user_text  # 4 was written after 3's summary


def test_a_gate_that_needs_the_author_stops_the_queue_and_discards_the_early_draft(
    novel: Path, fake: JudgeWaitsForNextWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.set_default("quality_judge", judge_json(2.5))  # too low to pass or revise: the author must choose
    assert main(["continue", str(novel), "-n", "3", "--non-interactive"]) == 1
    captured = capsys.readouterr()
    assert "low_score_action" in captured.err  # the question it could not ask
    assert "第4章 提前开始写作（第3章评审期间）" in captured.err
    assert "  ! 续写已停止，预写的章节作废" in captured.err
    assert "第3章" not in captured.out  # nothing was committed
    with NovelStore.open(novel, write=False) as store:
        cp = store.checkpoint()
        assert (cp["last_completed_chapter"], cp["inflight_chapter"]) == (2, 3)
        assert store.list_staging(4) == []  # nothing of the thrown-away draft was kept


def test_the_volume_end_stops_the_queue_and_names_the_next_step(
    novel: Path, fake: JudgeWaitsForNextWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.second_writer.set()  # nothing to hold back here
    assert main(["continue", str(novel), "-n", "5", "--non-interactive"]) == 1
    captured = capsys.readouterr()
    assert [line.split()[0] for line in captured.out.splitlines()[:3]] == ["第3章", "第4章", "第5章"]
    assert "第 1 卷已写完（本次写了 3/5 章）" in captured.err and "novel review" in captured.err
    assert "第6章" not in captured.err  # nothing drafted into the next volume
    with NovelStore.open(novel, write=False) as store:
        assert store.checkpoint()["last_completed_chapter"] == 5
        assert store.list_staging() == []


def test_stream_shows_each_chapter_whole_and_in_order(
    novel: Path, fake: JudgeWaitsForNextWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["continue", str(novel), "-n", "2", "--non-interactive", "--stream"]) == 0
    out = capsys.readouterr().out
    draft = writer_text().split("\n\n```json")[0]
    chapter_3, rest = out.split("\n第3章 ", 1)
    chapter_4 = rest.split("\n", 1)[1].split("\n第4章 ", 1)[0]
    # Chapter 4's text, drafted while chapter 3 was judged, comes whole after chapter 3's line, never mixed
    # into chapter 3's.
    assert chapter_3.startswith(draft) and chapter_3.count(draft[:30]) == draft.count(draft[:30])
    assert chapter_4.startswith(draft) and chapter_4.count(draft[:30]) == draft.count(draft[:30])
