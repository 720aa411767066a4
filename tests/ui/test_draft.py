"""手动改 in the real window against the fake server: the low-score question answered 手动改 in its dialog, the
staged chapter opened in the draft tab beside the judge's issues, edited, 重新评审 → committed as edited."""

from __future__ import annotations

import pytest
import qasync
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from pytestqt.qtbot import QtBot

from novel_desktop.storage import layout
from novel_desktop.ui.chapter_editor import ChapterTab
from novel_desktop.ui.draft_panel import DraftTab
from novel_desktop.ui.main_window import MainWindow
from tests.e2e.replies import judge_json
from tests.fakes.alerts import RecordingAlerts
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.ui.shots import save_shot
from tests.ui.test_chapter_editor import type_text
from tests.ui.test_lifecycle_window import DialogAnswerer, run

pytestmark = pytest.mark.usefixtures("gui_thread_gc")

ADDED = "守门弟子皱眉看了他许久，终于侧身让开。"


def _writer_requests(fake: FakeAnthropicServer) -> int:
    return len(fake.requests_for("chapter_writer")) + len(fake.requests_for("reviser"))


def _pause(qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer) -> DraftTab:
    fake.set_default("quality_judge", judge_json(2.5))
    answerer = DialogAnswerer(window, {"chapter 3 low score": {"low_score_action": "手动改"}})
    run(qloop, window, window.continue_action.trigger)
    assert answerer.topics == ["chapter 3 low score"] and not answerer.errors
    tab = window.tabs.currentWidget()
    assert isinstance(tab, DraftTab), "the window opens the staged chapter itself"
    return tab


def test_manual_edit_then_rejudge_commits_the_edit(
    qtbot: QtBot, qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer
) -> None:
    tab = _pause(qloop, window, fake)
    assert tab.number == 3
    assert window.tabs.tabText(window.tabs.currentIndex()) == "第3章（待修改）"
    assert not tab.editor.isReadOnly()
    assert tab.editor.stored_text() == window.project.staged_text(3)
    assert tab.editor.title() == "开山" and not tab.editor.toPlainText().startswith("#")
    panel = tab.panel
    assert "评分 2.5" in panel.state.text() and "等你修改" in panel.state.text()
    assert "守门弟子脸谱化" in panel.issues.text()
    assert "守门弟子的态度写得更具体" in panel.fixes.text()
    save_shot(window, "draft-tab")

    # The author edits at the end of the draft.
    tab.editor.moveCursor(QTextCursor.MoveOperation.End)
    tab.editor.setFocus()
    type_text(tab.editor, "\n" + ADDED)
    edited = tab.editor.stored_text()
    assert ADDED in edited and window.project.staged_text(3) != edited  # nothing saved by itself

    writers = _writer_requests(fake)
    refiners = len(fake.requests_for("style_refiner"))
    fake.set_default("quality_judge", judge_json(4.2))
    run(qloop, window, panel.rejudge_button.click)

    assert _writer_requests(fake) == writers, "the writer is not called for the author's text"
    assert len(fake.requests_for("style_refiner")) == refiners
    assert window.project.chapter_text(3) == edited
    # The draft tab went with the commit.
    assert not any(isinstance(window.tabs.widget(i), DraftTab) for i in range(window.tabs.count()))
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), ChapterTab))
    current = window.tabs.currentWidget()
    assert isinstance(current, ChapterTab) and current.number == 3
    assert current.editor.stored_text() == edited


def test_continue_on_an_unchanged_draft_asks_nothing_and_reopens_it(
    qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer, alerts: RecordingAlerts
) -> None:
    tab = _pause(qloop, window, fake)
    window._on_tabs_close_requested(window.tabs.indexOf(tab))
    assert not any(isinstance(window.tabs.widget(i), DraftTab) for i in range(window.tabs.count()))
    before = len(fake.requests)
    answerer = DialogAnswerer(window, {})
    run(qloop, window, window.continue_action.trigger)
    assert answerer.topics == []  # no question
    assert len(fake.requests) == before  # no model call
    assert isinstance(window.tabs.currentWidget(), DraftTab)
    assert "在等你修改" in window.statusBar().currentMessage()

    # 重新评审 without an edit is refused: the same question is not asked about the same text.
    reopened = window.tabs.currentWidget()
    assert isinstance(reopened, DraftTab)
    reopened.panel.rejudge_button.click()
    assert alerts.shown and "还没有改动" in alerts.shown[-1][2]
    assert not window.pipeline.running


def test_the_tree_opens_the_staged_chapter_and_commit_as_is(
    qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer
) -> None:
    tab = _pause(qloop, window, fake)
    tree = window.tree.model
    assert tree.data(tree.chapter_index(3)) == "第3章（待修改）"  # not 生成中: nothing runs
    staged = window.project.staged_text(3)
    window._on_tabs_close_requested(window.tabs.indexOf(tab))
    window.tree.chapter_requested.emit(3)  # a click on the tree's in-flight chapter
    tab = window.tabs.currentWidget()
    assert isinstance(tab, DraftTab) and tab.number == 3
    tab.panel.commit_button.click()
    assert window.project.chapter_text(3) == staged
    assert window.project.pipeline_log(3)["gate_decision"] == "force_pass"
    assert window.project.store.staging(layout.chapter_path(3)) is None
    current = window.tabs.currentWidget()
    assert isinstance(current, ChapterTab) and current.number == 3
    assert "已按现状提交" in window.statusBar().currentMessage()


def test_closing_the_draft_tab_keeps_an_unfinished_edit(
    qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer
) -> None:
    """Closing the tab (or quitting) mid-edit loses nothing: reopening the draft shows the unfinished edit,
    still not re-judged; the staged text itself is unchanged until 重新评审."""
    tab = _pause(qloop, window, fake)
    tree = window.tree.model
    assert tree.data(tree.chapter_index(3)) == "第3章（待修改）"  # not 生成中: nothing runs
    staged = window.project.staged_text(3)
    tab.editor.moveCursor(QTextCursor.MoveOperation.End)
    tab.editor.setFocus()
    type_text(tab.editor, "\n" + ADDED)
    edited = tab.editor.stored_text()
    window._on_tabs_close_requested(window.tabs.indexOf(tab))
    assert window.project.staged_text(3) == staged
    window.tree.chapter_requested.emit(3)
    reopened = window.tabs.currentWidget()
    assert isinstance(reopened, DraftTab) and reopened is not tab
    assert reopened.editor.stored_text() == edited
    assert "恢复" in window.statusBar().currentMessage()
    fake.set_default("quality_judge", judge_json(4.2))
    run(qloop, window, reopened.panel.rejudge_button.click)
    assert window.project.chapter_text(3) == edited
    assert window.project.store.staging("state/chapter-003-author-wip.md") is None


def test_the_english_catalogue_covers_the_draft_tab() -> None:
    import ast
    import json
    import re
    from pathlib import Path

    from novel_desktop.paths import resource

    entries: dict[str, str] = {}
    for path in sorted(resource("i18n", "en").glob("*.json")):
        entries.update(json.loads(path.read_text(encoding="utf-8")))
    root = Path(__file__).resolve().parents[2] / "novel_desktop"
    missing = []
    for name in ("ui/draft_panel.py", "ui/flows/drafts.py", "controllers/draft_controller.py"):
        for m in re.finditer(r'tr\(\s*"((?:[^"\\]|\\.)*)"', (root / name).read_text("utf-8")):
            key = ast.literal_eval(f'"{m.group(1)}"')
            if key not in entries:
                missing.append(key)
            elif set(re.findall(r"\{\w+\}", key)) != set(re.findall(r"\{\w+\}", entries[key])):
                missing.append(f"slots differ: {key}")
    assert missing == []


def test_the_panel_shows_an_edit_not_yet_judged(qtbot: QtBot) -> None:
    from novel_desktop.domain.draft import StagedDraft
    from novel_desktop.ui.draft_panel import DraftPanel

    panel = DraftPanel()
    qtbot.addWidget(panel)
    panel.show_draft(
        StagedDraft(
            chapter=4, text="正文", stage="drafted", awaiting_author=False, author_edited=True,
            judged_text_changed=True, score=2.6, issues=["节奏拖沓"], violations=[],
        )
    )  # fmt: skip
    assert panel.title.text() == "第4章 · 暂存稿"
    assert "还没有重新评审" in panel.state.text()
    assert panel.issues.text() == "• 节奏拖沓"
    assert panel.violations.isHidden()
    panel.set_busy(True)
    assert not panel.rejudge_button.isEnabled() and not panel.commit_button.isEnabled()


def test_the_tree_says_a_stopped_chapter_is_paused(window: MainWindow) -> None:
    window.project.store.update_checkpoint(inflight_chapter=3, pipeline_stage="drafted")
    window.tree.reload()
    tree = window.tree.model
    assert tree.data(tree.chapter_index(3)) == "第3章（已暂停）"
    assert "续写会从停下的地方接着做" in tree.data(tree.chapter_index(3), Qt.ItemDataRole.ToolTipRole)
