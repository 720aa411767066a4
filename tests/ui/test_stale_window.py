"""Stale chapters in the real window against the fake server (issue 15 points 2-3): the tree marks them, the
重建 bar shows them (also right after opening a novel) and its button rebuilds; 续写 asks 先重建 / 取消 first —
取消 sends nothing, 先重建 rebuilds from the first stale chapter and then writes the chapter asked for."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import qasync
from pytestqt.qtbot import QtBot

from novel_desktop.config import AppSettings
from novel_desktop.controllers.pipeline_controller import PipelineController
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.ui.main_window import MainWindow
from tests.fakes.alerts import RecordingAlerts
from tests.fakes.anthropic_server import FakeAnthropicServer

pytestmark = pytest.mark.usefixtures("gui_thread_gc")

EDIT = "\n\n　　林风在山门外站了一夜，终究没有进去。"


def run_until(qloop: qasync.QEventLoop, start: Callable[[], None], signal: Any, timeout: float = 60) -> None:
    """Start something from inside the running loop and wait until ``signal`` fires (or a run fails)."""

    async def main() -> None:
        done = asyncio.get_running_loop().create_future()

        def fired(*_args: Any) -> None:
            if not done.done():
                done.set_result(None)

        signal.connect(fired)
        try:
            start()
            await asyncio.wait_for(done, timeout)
        finally:
            signal.disconnect(fired)

    qloop.run_until_complete(main())


def _chapter_3_written_then_edited(qloop: qasync.QEventLoop, window: MainWindow) -> None:
    project = window.project
    run_until(qloop, lambda: window.runs.continue_chapters(1), window.pipeline.finished)
    assert [c.number for c in project.chapters()] == [1, 2, 3]
    assert project.save_chapter(3, project.chapter_text(3) + EDIT) == [3]


def test_continue_asks_first_and_cancel_sends_nothing(
    qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer, alerts: RecordingAlerts
) -> None:
    _chapter_3_written_then_edited(qloop, window)
    tree = window.tree.model
    assert tree.node(tree.chapter_index(3)).status == "needs_rebuild"
    bar = window.runs.stale.bar
    assert bar.isVisible() and "第 3 章需要重建" in bar.label.text()

    before = len(fake.requests)
    alerts.answer = False  # 取消
    window.continue_action.trigger()
    kind, title, text = alerts.shown[-1]
    assert (kind, title) == ("confirm", "需要先重建")
    assert "第 3 章的正文改过" in text and "从第 3 章起重建" in text
    assert alerts.labels[-1] == ("先重建", "取消")
    assert not window.pipeline.running
    assert len(fake.requests) == before
    assert [c.number for c in window.project.chapters()] == [1, 2, 3]


def test_rebuild_first_then_the_chapter_is_written(
    qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer, alerts: RecordingAlerts
) -> None:
    _chapter_3_written_then_edited(qloop, window)
    summaries, writes = len(fake.requests_for("summarizer")), len(fake.requests_for("chapter_writer"))
    order: list[str] = []
    window.pipeline.rebuild_finished.connect(lambda _r: order.append("rebuilt"))
    window.pipeline.chapter_committed.connect(lambda n: order.append(f"committed {n}"))
    alerts.answer = True  # 先重建
    run_until(qloop, window.continue_action.trigger, window.pipeline.chapter_committed, timeout=90)
    assert order == ["rebuilt", "committed 4"]
    assert alerts.labels[-1] == ("先重建", "取消")
    # The rebuild re-summarized chapter 3 (one call), then chapter 4 was written, summarized (the
    # summarizer's two parts) and committed.
    assert len(fake.requests_for("summarizer")) == summaries + 3
    assert len(fake.requests_for("chapter_writer")) == writes + 1
    assert [c.number for c in window.project.chapters()] == [1, 2, 3, 4]
    assert window.project.status().stale_chapters == []
    qloop.run_until_complete(window.pipeline.wait())
    assert not window.runs.stale.bar.isVisible()


def test_the_pipeline_refuses_too_and_the_window_asks(
    qloop: qasync.QEventLoop, project: ProjectController, fake: FakeAnthropicServer
) -> None:
    """The controller's own refusal (a 续写 that reaches it while chapters are stale) makes no request."""
    project.save_chapter(2, project.chapter_text(2) + EDIT)
    controller = PipelineController(project)
    refused: list[list[int]] = []
    failed: list[str] = []
    controller.stale_refused.connect(refused.append)
    controller.failed.connect(failed.append)
    run_until(qloop, lambda: controller.continue_chapters(1), controller.finished)
    assert refused == [[2]] and failed == []
    assert fake.requests == []


def test_the_tree_and_the_bar_show_chapters_stale_by_their_text_on_opening(
    qtbot: QtBot, seed_novel: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Chapter 1's text is not the one its summary came from (changed while the window did not hold it).
    con = sqlite3.connect(seed_novel)
    con.execute("UPDATE chapters SET source_hash = 'another text' WHERE number = 1")
    con.commit()
    con.close()
    win = MainWindow(settings=AppSettings())
    qtbot.addWidget(win)
    win.resize(1366, 768)
    win.show()
    assert win.open_novel(seed_novel, remember=False)
    win.show_workspace()
    tree = win.tree.model
    assert [tree.node(tree.chapter_index(n)).status for n in (1, 2)] == ["stale", "stale"]
    bar = win.runs.stale.bar
    assert bar.isVisible() and "第 1-2 章需要重建" in bar.label.text()
    bar.grab().save(str(tmp_path / "stale-bar.png"))
    started: list[int] = []
    monkeypatch.setattr(win.pipeline, "rebuild", started.append)
    bar.rebuild_button.click()
    assert started == [1]
    # 稍后 puts it away until the stale chapters change.
    bar.later_button.click()
    assert not bar.isVisible()
    win.runs.stale.refresh()
    assert not bar.isVisible()
    win.close_novel()
    assert not bar.isVisible()


def test_the_dock_continue_meets_the_pipeline_refusal_and_asks_the_same(
    qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer, alerts: RecordingAlerts
) -> None:
    window.project.save_chapter(2, window.project.chapter_text(2) + EDIT)
    alerts.answer = False  # 取消
    window.pipeline_dock.count_box.setValue(3)
    run_until(qloop, lambda: window.pipeline.continue_chapters(3), window.pipeline.finished)
    assert alerts.shown[-1][:2] == ("confirm", "需要先重建") and alerts.labels[-1] == ("先重建", "取消")
    assert window.pipeline.requested_chapters == 3
    assert fake.requests == []
