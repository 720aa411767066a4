"""回滚到此章 in the project tree and 故事 → 已移除的章节 in the real window (issue 15 point 5)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.storage.store import NovelStore
from novel_desktop.ui.chapter_editor import ChapterTab
from novel_desktop.ui.main_window import MainWindow
from tests.fakes.alerts import RecordingAlerts
from tests.storage.test_rollback import write_six
from tests.ui.shots import save_shot


@pytest.fixture
def project(novel_path: Path) -> Iterator[ProjectController]:
    with NovelStore.create(novel_path, title="六章书") as store:
        write_six(store)
    controller = ProjectController()
    controller.open(novel_path)
    yield controller
    controller.close()


def _menu_texts(window: MainWindow, number: int) -> list[str]:
    menu = window.tree.context_menu(window.tree.model.chapter_index(number))
    assert menu is not None
    return [a.text() for a in menu.actions()]


def _trigger_rollback(window: MainWindow, number: int) -> None:
    menu = window.tree.context_menu(window.tree.model.chapter_index(number))
    assert menu is not None
    action = next(a for a in menu.actions() if a.text() == "回滚到此章…")
    action.trigger()


def test_the_chapter_menu_rolls_back_after_a_confirmation(
    window: MainWindow, alerts: RecordingAlerts
) -> None:
    assert _menu_texts(window, 4) == ["回滚到此章…", "查看上下文…"]
    window.open_chapter(5)
    window.open_chapter(6)
    tab6 = window.chapter_tab(6)
    assert tab6 is not None
    tab6.editor.setPlainText("作者没保存的改动。")
    tab6.editor.document().setModified(True)  # as typing leaves it
    unsaved = tab6.editor.stored_text()
    assert unsaved.startswith("# 第6章") and unsaved.endswith("\n\n作者没保存的改动。")

    _trigger_rollback(window, 4)

    kind, title, text = alerts.shown[0]
    assert (kind, title) == ("confirm", "回滚到第4章")
    assert "将移除 第5章、第6章（共 2 章" in text
    assert "保留在“已移除的章节”里" in text
    assert [c.number for c in window.project.chapters()] == [1, 2, 3, 4]
    assert window.tree.model.chapter_rows()[-1][0].startswith("第4章")
    assert window.chapter_tab(5) is None
    assert window.chapter_tab(6) is None
    open_tabs = [window.tabs.widget(i) for i in range(window.tabs.count())]
    assert all(w.number <= 4 for w in open_tabs if isinstance(w, ChapterTab))
    assert "全书 4 章" in window.novel_label.text()
    assert "已回滚到第4章" in window.statusBar().currentMessage()
    # The unsaved edit went into the archive with its chapter.
    archived = {a.chapter: a for a in window.project.store.archived_chapters()}
    assert window.project.store.archived_chapter(archived[6].id).content == unsaved


def test_no_keeps_every_chapter(window: MainWindow, alerts: RecordingAlerts) -> None:
    alerts.answer = False
    _trigger_rollback(window, 2)
    assert len(window.project.chapters()) == 6
    assert window.project.store.archived_chapters() == []


def test_the_last_chapter_is_refused_with_a_message(window: MainWindow, alerts: RecordingAlerts) -> None:
    _trigger_rollback(window, 6)
    assert alerts.shown[0][0] == "warning"
    assert "最后一章" in alerts.shown[0][2]
    assert len(window.project.chapters()) == 6


def test_the_archive_view_lists_shows_and_restores(
    qtbot: QtBot, window: MainWindow, alerts: RecordingAlerts
) -> None:
    _trigger_rollback(window, 3)
    window.rollback_flows.archive_action.trigger()
    view = window.rollback_flows.view
    assert view is not None
    assert view.isVisible()
    batch = view.list.topLevelItem(0)
    assert batch.text(0) == "第 1 次回滚"
    rows = [(batch.child(i).text(0), batch.child(i).text(3)) for i in range(batch.childCount())]
    assert rows == [("第4章 第4章", "可恢复"), ("第5章 第5章", ""), ("第6章 第6章", "")]
    # The first is shown: its text, then each revision.
    assert view.text.toPlainText() == "# 第4章\n\n林风登上第4峰。"
    assert view.restore_button.isEnabled()
    view.revision.setCurrentIndex(1)
    assert view.text.toPlainText().endswith("（初稿）")
    view.list.setCurrentItem(batch.child(2))
    assert "第6峰" in view.text.toPlainText()
    assert not view.restore_button.isEnabled()

    save_shot(view, "archive-view")

    view.list.setCurrentItem(batch.child(0))
    qtbot.mouseClick(view.restore_button, qtbot_button())
    assert [c.number for c in window.project.chapters()] == [1, 2, 3, 4]
    assert window.project.status().stale_chapters == [4]
    tab = window.tabs.currentWidget()
    assert isinstance(tab, ChapterTab)
    assert tab.number == 4
    assert "需要重建" in window.statusBar().currentMessage()
    batch = view.list.topLevelItem(0)
    assert [batch.child(i).text(3) for i in range(3)] == ["已恢复", "可恢复", ""]
    view.close()


def qtbot_button():
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton


def test_screenshot_of_the_confirmation(qtbot: QtBot, window: MainWindow) -> None:
    """The real message box the author sees (DialogAlerts), grabbed offscreen."""
    from PySide6.QtWidgets import QMessageBox

    from novel_desktop.ui import alerts as alerts_module
    from novel_desktop.ui.alerts import DialogAlerts

    previous = alerts_module.use(DialogAlerts())
    try:
        _trigger_rollback(window, 4)
        box = next(w for w in window.findChildren(QMessageBox) if w.isVisible())
        assert "将移除 第5章、第6章" in box.text()
        save_shot(box, "rollback-confirm")
        box.button(QMessageBox.StandardButton.No).click()
    finally:
        alerts_module.use(previous)
    assert len(window.project.chapters()) == 6
