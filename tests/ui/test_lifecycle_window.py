"""The whole lifecycle in the window, against the fake server: from an empty file, the start page's
recommendation runs the quick start (setup, world, characters, style from a sample picked in the dialog,
three trial chapters, their review, the plan of volume 1), 续写 writes chapters 4-10 with the quality briefs,
the drift checks and the audit, the volume review leads to volume 2's plan, and 续写 writes its first
chapter. Every question is a real AskDialog over the window, answered by clicking as an author would."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import qasync
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox
from pytestqt.qtbot import QtBot

from novel_desktop.config import AppSettings
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore
from novel_desktop.ui.ask_dialog import AskDialog
from novel_desktop.ui.chapter_editor import ChapterTab
from novel_desktop.ui.main_window import MainWindow
from novel_desktop.ui.proposal_dialog import ProposalDialog
from tests.e2e.lifecycle_replies import STYLE_SAMPLE, answers, plan_json, script_planning
from tests.fakes.anthropic_server import FakeAnthropicServer

pytestmark = pytest.mark.usefixtures("gui_thread_gc")


@pytest.fixture
def fake(fake: FakeAnthropicServer) -> FakeAnthropicServer:
    """The UI tests' fake server, with the planning agents' replies and two volume plans."""
    script_planning(fake)
    fake.script("plot_architect", plan_json(1, 4, 10), plan_json(2, 11, 20))
    return fake


class DialogAnswerer:
    """Answers each AskDialog that opens over the window from the answers file's topics, by clicking."""

    def __init__(self, window: MainWindow, by_topic: dict[str, dict[str, Any]]) -> None:
        self.window = window
        self.by_topic = by_topic
        self.topics: list[str] = []
        self.errors: list[str] = []
        window.pipeline.question_asked.connect(lambda _r: QTimer.singleShot(30, self.answer))

    def answer(self) -> None:
        proposals = [d for d in self.window.findChildren(ProposalDialog) if d.isVisible()]
        if proposals:
            self._review(proposals[-1])
            return
        dialogs = [d for d in self.window.findChildren(AskDialog) if d.isVisible()]
        if not dialogs:
            QTimer.singleShot(30, self.answer)  # not shown yet
            return
        dialog = dialogs[-1]
        topic = dialog.spec.topic
        self.topics.append(topic)
        if not dialog.isModal():
            self.errors.append(f"{topic}: not modal")
        for qid, value in self.by_topic.get(topic, {}).items():
            edit = dialog.text_edit(qid)
            if edit is not None:
                edit.setPlainText(str(value))
            elif qid in dialog.boxes:
                for label in value if isinstance(value, list) else [value]:
                    dialog.option_button(qid, label).click()
        if not dialog.ok_button.isEnabled():
            self.errors.append(f"{topic}: 确定 disabled")
        dialog.ok_button.click()

    def _review(self, dialog: ProposalDialog) -> None:
        """A proposal's review: its forms are shown (not an AskDialog); 接受 unless the topic says otherwise
        (``review_action`` 重新生成 with ``changes``)."""
        topic = dialog.spec.topic
        self.topics.append(topic)
        if not dialog.isModal():
            self.errors.append(f"{topic}: not modal")
        wanted = self.by_topic.get(topic, {})
        if wanted.get("review_action") == "重新生成":
            dialog.changes_edit.setPlainText(str(wanted.get("changes") or "重来"))
            dialog.regenerate_button.click()
        else:
            dialog.accept_button.click()
        if dialog.isVisible():
            self.errors.append(f"{topic}: {dialog.error_label.text()}")


def run(qloop: qasync.QEventLoop, window: MainWindow, start: Callable[[], None], timeout: float = 90) -> None:
    """Click something that starts a run, and wait for the run to end."""

    async def main() -> None:
        done = asyncio.get_running_loop().create_future()

        def finished() -> None:
            if not done.done():
                done.set_result(None)

        window.pipeline.finished.connect(finished)
        try:
            start()
            await asyncio.wait_for(done, timeout)
        finally:
            window.pipeline.finished.disconnect(finished)

    qloop.run_until_complete(main())


def test_empty_file_to_volume_two_in_the_window(
    qtbot: QtBot,
    qloop: qasync.QEventLoop,
    fake: FakeAnthropicServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    novel = tmp_path / "青石问道.novel"
    NovelStore.create(novel, title="青石问道").close()
    sample = tmp_path / "样本.txt"
    sample.write_text(STYLE_SAMPLE, encoding="utf-8")

    window = MainWindow(settings=AppSettings())
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.show()
    assert window.open_novel(novel, remember=False)
    failures: list[str] = []
    window.pipeline.failed.connect(failures.append)
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: QMessageBox.StandardButton.Ok)

    # The author's answers: the CLI test's answers file, plus the style picked from a sample file.
    by_topic = answers()
    answerer = DialogAnswerer(window, by_topic)
    chapter_counts: list[str] = []

    def get_int(_parent: Any, title: str, label: str, value: int, *_a: Any, **_k: Any) -> tuple[int, bool]:
        chapter_counts.append(f"{label}={value}")
        return 10, True

    monkeypatch.setattr(QInputDialog, "getInt", staticmethod(get_int))
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(lambda *a, **k: ([str(sample)], "")))

    def pick_style_sample() -> None:
        dialog = next((d for d in window.findChildren(AskDialog) if d.isVisible()), None)
        if dialog is not None and dialog.spec.topic == "style source":
            box = dialog.boxes["sample_files"]
            assert box.browse_button is not None
            box.browse_button.click()  # the file dialog (patched) fills the path in

    by_topic["style source"] = {"style_source": "我的样本"}
    window.pipeline.question_asked.connect(lambda _r: QTimer.singleShot(10, pick_style_sample))

    # 1. The start page recommends the quick start for the empty novel; one click runs it to volume 1's plan.
    window.show_start_page()
    assert window.start_page.recommend_button.text() == "创建新项目"
    run(qloop, window, window.start_page.recommend_button.click)
    assert failures == [] and answerer.errors == []
    # What the agents invented is reviewed before it is stored: the world, the characters, the storylines,
    # the trial chapters' plan (outline and contracts) and volume 1's plan.
    assert answerer.topics == [
        "novel setup",
        "world review",
        "characters review",
        "storylines review",
        "style source",
        "volume_plan review",
        "quick start review",
        "volume plan",
    ]
    assert chapter_counts == ["第 1 卷计划写多少章？=30"]
    assert [c.number for c in window.project.chapters()] == [1, 2, 3]
    assert window.project.checkpoint()["orchestrator_state"] == "WRITING"
    assert window.project.document("volumes/vol-01/outline.md") is not None
    profile = window.project.document_json("style-profile.json")
    assert profile["source_type"] == "original"  # measured from the picked sample
    assert "卷规划" in "\n".join(window.pipeline_dock.log_lines())

    # 2. 续写 7 章: chapters 4-10, the briefs after 5 and 10, drift and the audit; it stops at the volume end.
    monkeypatch.setattr(QInputDialog, "getInt", staticmethod(lambda *a, **k: (7, True)))
    run(qloop, window, window.continue_n_action.trigger, timeout=180)
    assert failures == [] and answerer.errors == []
    assert [c.number for c in window.project.chapters()] == list(range(1, 11))
    assert answerer.topics[8:] == ["quality brief", "quality brief"]
    log = "\n".join(window.pipeline_dock.log_lines())
    assert "第 1-5 章质量简报" in log and "第 6-10 章质量简报" in log
    assert "第 1 卷已写完" in log
    assert len(fake.requests_for("consistency_auditor")) == 1
    # Each new chapter took the place of the one before in the tabs: one tab, the last chapter.
    tabs = [window.tabs.widget(i) for i in range(window.tabs.count())]
    assert [t.number for t in tabs if isinstance(t, ChapterTab)] == [10]
    window.show_start_page()
    assert window.start_page.recommend_button.text() == "第 1 卷卷末回顾"

    # 3. The review (its question sets volume 2 to 10 chapters), then volume 2's plan, then its first chapter.
    run(qloop, window, window.start_page.recommend_button.click)
    assert failures == []
    assert answerer.topics[-1] == "volume review"
    assert window.project.document("volumes/vol-01/review.md") is not None
    window.show_start_page()
    assert window.start_page.recommend_button.text() == "规划第 2 卷"
    monkeypatch.setattr(QInputDialog, "getInt", staticmethod(get_int))
    run(qloop, window, window.start_page.recommend_button.click)
    assert failures == []
    assert answerer.topics[-1] == "volume plan"
    assert chapter_counts[-1] == "第 2 卷计划写多少章？=10"
    run(qloop, window, window.continue_action.trigger)
    assert failures == [] and answerer.errors == []

    with NovelStore.open(novel, write=False) as store:
        cp = store.checkpoint()
        assert (cp["current_volume"], cp["last_completed_chapter"], cp["orchestrator_state"]) == (
            2,
            11,
            "WRITING",
        )
        assert [c.volume for c in store.list_chapters()] == [1] * 10 + [2]
        assert store.document_json("volumes/vol-02/volume.json")["chapter_start"] == 11
        assert store.answer("staging/novel-ask/quality-brief-010.answers.json") is not None
        assert json.loads(store.extra_file("audits/audit-001-010.json"))["findings"]
        assert store.document_json(layout.contract_path(2, 11)) is not None
    assert len(fake.requests_for("plot_architect")) == 2
    assert len(fake.requests_for("chapter_writer")) == 11
