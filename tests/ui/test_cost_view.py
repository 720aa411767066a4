"""Honest totals in the real window: the pipeline dock's tokens and cost move while a chapter streams, the
status bar shows the novel's total from the cost ledger, and the tree's chapter tooltip the chapter's cost."""

from __future__ import annotations

import re

import pytest
import qasync
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from novel_desktop.ui.cost_label import CostLabel
from novel_desktop.ui.main_window import MainWindow
from tests.e2e.replies import writer_text
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.ui.shots import save_shot
from tests.ui.test_lifecycle_window import run

pytestmark = pytest.mark.usefixtures("gui_thread_gc")

_USAGE = re.compile(r"本章：输入 ([\d,]+) · 输出 ([\d,]+) tokens · \$([\d.]+)")


def _figures(text: str) -> tuple[int, int, float]:
    found = _USAGE.search(text)
    assert found, text
    return int(found[1].replace(",", "")), int(found[2].replace(",", "")), float(found[3])


def test_the_dock_follows_a_streaming_chapter_and_the_status_bar_shows_the_total(
    qtbot: QtBot, qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer
) -> None:
    status = window.statusBar().findChild(CostLabel)
    assert status is not None and status.text() == "总花费 $0.0000"  # nothing spent on this novel yet
    fake.script("chapter_writer", Reply(writer_text(), chunk_size=4, delay=0.01))
    dock = window.pipeline_dock
    seen: list[str] = []  # what the dock's usage line said while the draft streamed
    drafting = [True]
    totals: list[str] = []  # the status bar's total meanwhile

    def on_stage(_chapter: int, stage: str) -> None:
        if stage != "draft":
            drafting[0] = False

    def on_text(_chapter: int, _text: str) -> None:
        if drafting[0]:
            seen.append(dock.usage_label.text())
            totals.append(status.text())
            if len(seen) == 60:
                save_shot(window, "cost_window_streaming")

    window.pipeline.stage_started.connect(on_stage)
    window.pipeline.text_delta.connect(on_text)
    run(qloop, window, window.continue_action.trigger)

    figures = [_figures(text) for text in dict.fromkeys(seen)]
    assert len(figures) >= 3, "the line changed several times while the chapter streamed"
    live = [f for f in figures if f[0] > 0]
    assert live, "message_start's input tokens and cost show before the draft is finished"
    outputs = [o for _i, o, _c in live]
    assert outputs == sorted(outputs) and outputs[-1] > outputs[0]  # output tokens grow as text arrives
    assert live[-1][2] > live[0][2] > 0
    assert any(t != "总花费 $0.0000" for t in totals), "the total moves while the chapter streams"

    total = window.project.store.cost_total()
    assert total.calls >= 4  # writer, summarizer, refiner, judge
    assert status.text() == f"总花费 ${total.cost_usd:.4f}" and total.cost_usd > 0
    assert "次模型调用" in status.toolTip()
    model = window.tree.model
    tip = model.data(model.chapter_index(3), Qt.ItemDataRole.ToolTipRole)
    chapter = window.project.store.chapter_costs()[3]
    assert f"花费 ${chapter.cost_usd:.4f}（{chapter.calls} 次调用" in tip
    save_shot(window, "cost_window_after")


def test_a_chapters_tooltip_says_what_its_thrown_away_early_drafts_cost(window: MainWindow) -> None:
    from novel_desktop.domain.ledger import DISCARDED_DRAFT, ModelCall

    store = window.project.store
    store.record_model_call(ModelCall("chapter_writer", "m", DISCARDED_DRAFT, "ok", 2, cost_usd=0.031))
    store.record_model_call(ModelCall("chapter_writer", "m", "write", "ok", 2, cost_usd=0.05))
    window.tree.reload()
    model = window.tree.model
    tip = model.data(model.chapter_index(2), Qt.ItemDataRole.ToolTipRole)
    assert "花费 $0.0810（2 次调用" in tip and tip.endswith("其中作废的预写 $0.0310")
    plain = model.data(model.chapter_index(1), Qt.ItemDataRole.ToolTipRole)
    assert "作废" not in plain
