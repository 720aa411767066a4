"""The 续写 queue in the real window against the fake server (issue 18): N chapters queued from the dock, a row
per chapter with its state, the notification when the queue ends or a gate needs the author, and the early
draft's rows (DraftAhead / DraftDiscarded, emitted by hand here: the core's pipelining emits them for real)."""

from __future__ import annotations

import asyncio

import pytest
import qasync
from pytestqt.qtbot import QtBot

from novel_desktop.domain.novel_ask import AnswerSpec
from novel_desktop.domain.novel_ask_answers import build_answer_spec
from novel_desktop.pipeline.interaction import InteractionRequest
from novel_desktop.ui.main_window import MainWindow
from novel_desktop.ui.queue_panel import QueuePanel
from tests.e2e.replies import judge_json
from tests.fakes.anthropic_server import FakeAnthropicServer

pytestmark = pytest.mark.usefixtures("gui_thread_gc")


def answer_recommended(request: InteractionRequest) -> AnswerSpec:
    answers = {q.id: q.default for q in request.spec.questions if q.default is not None}
    return build_answer_spec(request.spec, answers, answered_by="novel_desktop")


def manual_edit(request: InteractionRequest) -> AnswerSpec:
    return build_answer_spec(request.spec, {"low_score_action": "手动改"}, answered_by="novel_desktop")


def run_queue(qloop: qasync.QEventLoop, window: MainWindow, count: int) -> list[str]:
    """Queue ``count`` chapters with the dock's count box and 续写 button; the status bar's messages."""
    shown: list[str] = []
    window.statusBar().messageChanged.connect(shown.append)

    async def main() -> None:
        done = asyncio.get_running_loop().create_future()
        window.pipeline.finished.connect(lambda: done.done() or done.set_result(None))
        window.pipeline_dock.count_box.setValue(count)
        window.pipeline_dock.continue_button.click()
        await asyncio.wait_for(done, 60)

    qloop.run_until_complete(main())
    return shown


def test_queueing_three_chapters_commits_three_and_shows_three_committed_rows(
    qtbot: QtBot, qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer
) -> None:
    window.pipeline.asker = answer_recommended  # chapter 5's quality brief asks; the author takes 继续
    queue = window.pipeline_dock.queue
    seen: list[dict[int, str]] = []
    window.pipeline.stage_started.connect(lambda *_: seen.append(queue.states()))
    shown = run_queue(qloop, window, 3)
    assert [c.number for c in window.project.chapters()] == [1, 2, 3, 4, 5]
    assert queue.states() == {3: "已提交", 4: "已提交", 5: "已提交"}
    assert [queue.rows[n].bar.value() for n in (3, 4, 5)] == [4, 4, 4]
    # While chapter 3 was written the other two waited in the queue.
    assert seen[0] == {3: "写作中", 4: "排队中", 5: "排队中"}
    assert any(states.get(4) == "评审中" for states in seen)
    # No tray offscreen: the status bar says the queue ended, how many chapters and what they cost.
    title, text = window.runs.notifier.messages[-1]
    assert title == "续写结束" and text.startswith("写完 3/3 章，花费 $")
    assert f"{title}：{text}" in shown


def test_a_gate_that_needs_the_author_notifies_and_stops_the_queue(
    qtbot: QtBot, qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer
) -> None:
    fake.set_default("quality_judge", judge_json(2.5))
    window.pipeline.asker = manual_edit  # the low score's question: the author will edit it by hand
    shown = run_queue(qloop, window, 3)
    assert [c.number for c in window.project.chapters()] == [1, 2]
    queue = window.pipeline_dock.queue
    assert queue.states() == {3: "等待作者", 4: "已停止", 5: "已停止"}
    title, text = window.runs.notifier.messages[-1]
    assert title == "续写等待你的决定" and text.startswith("第 3 章：") and "暂存区" in text
    assert f"{title}：{text}" in shown
    assert not any(t == "续写结束" for t, _ in window.runs.notifier.messages)  # stopped, not ended


def test_an_early_draft_and_its_discarding_update_their_row(qtbot: QtBot, window: MainWindow) -> None:
    p, queue = window.pipeline, window.pipeline_dock.queue
    queue.start_queue(3, 3)
    p.chapter_started.emit(3, "")
    p.stage_started.emit(3, "judge")
    p.draft_ahead.emit(4)  # chapter 4 is drafted while chapter 3 is judged
    p.stage_started.emit(4, "draft")
    p.text_delta.emit(4, "天色微明。")
    assert queue.states() == {3: "评审中", 4: "预写中", 5: "排队中"}
    p.gate_decided.emit(3, "revise", 3.1, "节奏拖沓")
    p.draft_discarded.emit(4, "第 3 章被退回修订，早稿作废")
    assert queue.states() == {3: "已退回", 4: "早稿作废", 5: "排队中"}
    assert "第 3 章被退回修订" in queue.rows[4].state_label.text()
    p.stage_started.emit(3, "revise")
    p.chapter_committed.emit(3)
    p.chapter_started.emit(4, "")
    assert queue.states() == {3: "已提交", 4: "写作中", 5: "排队中"}


def test_stop_marks_the_unwritten_rows_stopped(qtbot: QtBot, window: MainWindow) -> None:
    queue: QueuePanel = window.pipeline_dock.queue
    queue.start_queue(3, 2)
    window.pipeline.chapter_committed.emit(3)
    window.pipeline.chapter_started.emit(4, "")
    window.pipeline.cancelled.emit()
    assert queue.states() == {3: "已提交", 4: "已停止"}


def test_the_early_draft_streams_into_its_own_tab_once_its_turn_comes(
    qtbot: QtBot, window: MainWindow
) -> None:
    p, dock = window.pipeline, window.pipeline_dock
    p.running_changed.emit(True)
    p.chapter_started.emit(3, "")
    p.stage_started.emit(3, "draft")
    p.text_delta.emit(3, "第三章的正文。")
    p.stage_started.emit(3, "judge")
    p.draft_ahead.emit(4)
    p.stage_started.emit(4, "draft")
    p.text_delta.emit(4, "第四章抢先写下的开头。")
    live = window.runs.live
    assert live is not None
    live.flush()
    # Chapter 4's early text stays out of chapter 3's tab, and the dock's stage bar stays on chapter 3.
    assert live.toPlainText() == "第三章的正文。"
    assert [s.state for s in dock.steps][:3] == ["done", "done", "current"]
    p.chapter_committed.emit(3)
    p.chapter_started.emit(4, "")
    p.text_delta.emit(4, "接着写。")
    live = window.runs.live
    assert live is not None and live.chapter == 4
    live.flush()
    assert live.toPlainText() == "第四章抢先写下的开头。接着写。"
    assert window.tabs.tabText(window.tabs.indexOf(live)) == "第4章（生成中）"
    assert dock.steps[0].state == "current"  # chapter 4 is being written
