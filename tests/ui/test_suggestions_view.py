"""The judge's issues as suggestions in the real window (issue 14, item 7): 按评审意见修改建议 shows them beside
the chapter editor; accepting one and rejecting another leaves the editor with exactly the accepted change,
undoable, and saving keeps it as a manual revision."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QDockWidget
from pytestqt.qtbot import QtBot

from novel_desktop.config import AppSettings
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.ui.main_window import MainWindow
from novel_desktop.ui.suggestions_view import SuggestionsView
from tests.cli.test_suggest_cli import FIRST, SECOND, suggestions_json
from tests.fakes.alerts import RecordingAlerts
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.ui.shots import save_shot

pytestmark = pytest.mark.usefixtures("gui_thread_gc")

NEW_SECOND = "“这是谁家的篓子？”他扯着嗓子朝前堂喊。"


@pytest.fixture
def window(qtbot: QtBot, project: ProjectController) -> MainWindow:
    win = MainWindow(project=project, settings=AppSettings())
    qtbot.addWidget(win)
    win._update_for_project()
    win.show_workspace()
    win.show()
    return win


def _open_view(qloop: qasync.QEventLoop, window: MainWindow) -> SuggestionsView:
    async def main() -> None:
        done = asyncio.get_running_loop().create_future()
        window.story.suggestions.busy_changed.connect(
            lambda busy: busy or done.done() or done.set_result(None)
        )
        window.story.suggest_action.trigger()
        await asyncio.wait_for(done, 60)

    qloop.run_until_complete(main())
    dock = window.findChild(QDockWidget, "SuggestionsDock")
    assert dock is not None and dock.isVisible()
    view = dock.widget()
    assert isinstance(view, SuggestionsView)
    return view


def test_accept_one_reject_another_changes_exactly_the_accepted_passage(
    qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake.set_default("reviser", suggestions_json())
    tab = window.open_chapter(1)
    assert tab is not None
    before = tab.editor.toPlainText()
    view = _open_view(qloop, window)
    assert list(view.cards) == ["S1", "S2"]
    card = view.cards["S2"]
    assert "谁家的篓子" in card.diff.text() and "扯着嗓子" in card.diff.text()
    assert "喊声更有力" in card.reason.text()
    window.resize(1400, 800)
    window.grab().save(str(tmp_path / "suggestions.png"))
    save_shot(view, "suggestions_view")
    save_shot(window, "suggestions_window")

    view.cards["S2"].accept_button.click()
    view.cards["S1"].reject_button.click()
    text = tab.editor.toPlainText()
    assert text == before.replace(SECOND, NEW_SECOND)
    assert FIRST in text
    assert view.cards["S2"].status.text() == "已接受" and view.cards["S1"].status.text() == "已拒绝"
    assert not view.accept_all_button.isEnabled()

    tab.editor.undo()  # one undoable edit
    assert tab.editor.toPlainText() == before
    tab.editor.redo()
    marked = tab.editor.save()
    assert marked == [1, 2]
    # The editor shows the body; the stored chapter keeps its heading line above it.
    assert window.project.chapter_text(1) == "# 第一章 药篓里的残玉\n\n" + before.replace(SECOND, NEW_SECOND)


def test_accept_all_and_a_passage_the_author_changed(
    qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer
) -> None:
    fake.set_default("reviser", suggestions_json())
    tab = window.open_chapter(1)
    assert tab is not None
    view = _open_view(qloop, window)
    # The author rewrites the first sentence by hand before deciding.
    text = tab.editor.toPlainText()
    tab.editor.setPlainText(text.replace(FIRST, "秋雨连绵。"))
    view.accept_all()
    assert view.cards["S1"].state == "missing" and "原文已改动" in view.cards["S1"].status.text()
    assert view.cards["S2"].state == "accepted"
    assert NEW_SECOND in tab.editor.toPlainText()


def test_a_chapter_without_issues_is_explained(
    qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer, alerts: RecordingAlerts
) -> None:
    evaluation = window.project.evaluation(2) or {}
    from novel_desktop.storage.maintenance import replace_evaluation

    replace_evaluation(
        window.project.store,
        2,
        {**evaluation, "issues": [], "required_fixes": [], "violations": []},
        how="test",
        model="test",
        cost_usd=0.0,
    )
    window.open_chapter(2)

    async def main() -> None:
        done = asyncio.get_running_loop().create_future()
        window.story.suggestions.busy_changed.connect(
            lambda busy: busy or done.done() or done.set_result(None)
        )
        window.story.suggest_action.trigger()
        await asyncio.wait_for(done, 60)

    qloop.run_until_complete(main())
    assert any("没有指出问题" in text for _kind, _title, text in alerts.shown)
    assert fake.requests_for("reviser") == []
