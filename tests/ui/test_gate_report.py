"""The gate's low-score question in the real window shows the staged chapter's full quality report beside
its choices (scores per dimension, the gate's path, required fixes, issues, the AI-phrase density), and the
window's quality panel turns to that chapter, against the fake server."""

from __future__ import annotations

import os
from typing import Any

import pytest
import qasync
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel

from novel_desktop.domain.evaluation import DIMENSION_WEIGHTS
from novel_desktop.ui.ask_dialog import AskDialog
from novel_desktop.ui.gate_report import low_score_chapter
from novel_desktop.ui.main_window import MainWindow
from novel_desktop.ui.quality_panel import QualityPanel
from tests.e2e.replies import judge_json
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.ui.shots import save_shot
from tests.ui.test_lifecycle_window import run

pytestmark = pytest.mark.usefixtures("gui_thread_gc")


class ReportReader:
    """Reads the report of the low-score dialog when it opens, then answers 手动改."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.seen: dict[str, Any] = {}
        window.pipeline.question_asked.connect(lambda _r: QTimer.singleShot(30, self.read))

    def read(self) -> None:
        dialogs = [d for d in self.window.findChildren(AskDialog) if d.isVisible()]
        if not dialogs:
            QTimer.singleShot(30, self.read)
            return
        dialog = dialogs[-1]
        report = dialog.report
        seen = self.seen
        seen["topic"] = dialog.spec.topic
        seen["is_panel"] = isinstance(report, QualityPanel)
        if isinstance(report, QualityPanel):
            seen["chapter"] = report.chapter
            seen["overall"] = report.evaluation.overall if report.evaluation else None
            seen["dimensions"] = list(report.dimension_order)
            seen["picker_hidden"] = report.picker_row.isHidden()
            seen["texts"] = " ".join(label.text() for label in report.findChildren(QLabel))
            seen["fixes"] = [label.text() for label in report.fix_labels]
        window_panel = self.window.quality_panel
        seen["window_panel"] = window_panel.chapter if isinstance(window_panel, QualityPanel) else None
        if os.environ.get("NOVEL_SHOTS"):
            save_shot(dialog, "gate-dialog-report")
        dialog.option_button("low_score_action", "手动改").click()
        dialog.ok_button.click()


def test_the_low_score_question_shows_the_staged_chapters_full_report(
    qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer
) -> None:
    fake.set_default("quality_judge", judge_json(2.5))
    reader = ReportReader(window)
    run(qloop, window, window.continue_action.trigger)
    seen = reader.seen
    assert seen["topic"] == "chapter 3 low score"
    assert seen["is_panel"], "the dialog shows the chapter's quality report, not only the issue list"
    assert seen["chapter"] == 3 and seen["overall"] == 2.5
    assert seen["dimensions"] == list(DIMENSION_WEIGHTS)  # a score per dimension
    assert seen["picker_hidden"]
    texts = seen["texts"]
    assert "暂存稿，尚未提交" in texts
    assert "AI 用语" in texts and "处/千字" in texts
    assert "守门弟子脸谱化" in texts  # the judge's issue
    assert "细节具体，推进清楚" in texts  # a dimension's reason
    assert any("守门弟子的态度写得更具体" in fix for fix in seen["fixes"])
    # The window's own quality panel is not left on an older chapter.
    assert seen["window_panel"] == 3


def test_other_questions_get_no_report() -> None:
    assert low_score_chapter("chapter 12 low score") == 12
    assert low_score_chapter("quality brief") is None
    assert low_score_chapter("") is None
