"""Keyboard: every main action has a shortcut (standard keys where Qt has them), no two share one, none is
taken by the editor first, tooltips name them, and 帮助 → 快捷键… lists exactly the actions' shortcuts."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QApplication, QMenu, QToolButton
from pytestqt.qtbot import QtBot

from novel_desktop.ui.main_window import MainWindow
from novel_desktop.ui.shortcuts import ShortcutsDialog, clashes, keys_text, plain_text, shortcut_rows

Std = QKeySequence.StandardKey


def _main_actions(window: MainWindow) -> dict[str, QAction]:
    return {
        "续写": window.continue_action,
        "停止": window.stop_action,
        "保存": window.save_action,
        "重建": window.rebuild_action,
        "导出": window.export_action,
        "查找": window.find_action,
        "导入": window.import_action,
    }


def _with_keys(window: MainWindow) -> list[QAction]:
    return [a for a in window.findChildren(QAction) if keys_text(a)]


def test_every_main_action_has_a_shortcut(window: MainWindow) -> None:
    missing = [name for name, action in _main_actions(window).items() if not keys_text(action)]
    assert missing == []
    # Qt's standard keys where it has them: the platform's own (Ctrl+S here, ⌘S on a Mac).
    assert window.save_action.shortcut() == QKeySequence(Std.Save)
    assert window.find_action.shortcut() == QKeySequence(Std.Find)
    assert QKeySequence("Ctrl+Shift+F") in window.find_action.shortcuts()  # the old key still works
    assert window.continue_action.shortcut() == QKeySequence("Ctrl+Return")
    assert window.stop_action.shortcut() == QKeySequence("Esc")
    assert window.quit_action.shortcut() == QKeySequence("Ctrl+Q")


def test_no_two_actions_share_a_shortcut(window: MainWindow) -> None:
    assert clashes(window.findChildren(QAction)) == {}
    assert clashes([window.save_action, window.export_action, window.save_action]) == {
        "Ctrl+S": ["保存", "保存"]
    }


def test_the_editor_takes_none_of_them_first(window: MainWindow) -> None:
    """A key the editor overrides (ShortcutOverride accepted) would never reach the window's action."""
    tab = window.open_chapter(1)
    assert tab is not None
    taken = []
    for action in _with_keys(window):
        for sequence in action.shortcuts():
            combo = sequence[0]
            event = QKeyEvent(QEvent.Type.ShortcutOverride, combo.key(), combo.keyboardModifiers())
            event.ignore()
            QApplication.sendEvent(tab.editor, event)
            if event.isAccepted():
                taken.append((plain_text(action), sequence.toString()))
    assert taken == []


def test_tooltips_name_the_shortcut(window: MainWindow) -> None:
    # The platform's names: Ctrl+Return，Ctrl+Enter — or once Qt's own Chinese translations are loaded (an
    # earlier test may have), Ctrl+回车, which names both keys alike and is listed once.
    keys = keys_text(window.continue_action)
    assert keys in ("Ctrl+Return，Ctrl+Enter", "Ctrl+回车")
    assert window.continue_action.toolTip() == f"按本卷大纲续写下一章（{keys}）"
    assert window.save_action.toolTip() == "保存（Ctrl+S）"
    button = window.toolbar.widgetForAction(window.stop_action)
    assert isinstance(button, QToolButton) and "Esc" in button.toolTip()


def test_the_help_list_is_the_actions_shortcuts(qtbot: QtBot, window: MainWindow) -> None:
    [help_menu] = [
        a.menu() for a in window.menuBar().actions() if isinstance(a.menu(), QMenu) and a.text() == "帮助"
    ]
    assert isinstance(help_menu, QMenu) and window.shortcuts_action in help_menu.actions()
    window.shortcuts_action.trigger()
    [dialog] = [d for d in window.findChildren(ShortcutsDialog) if d.isVisible()]
    assert dialog.isModal()  # open(), no nested loop
    rows = dialog.rows()
    assert rows == shortcut_rows(window.menuBar())
    # Exactly the actions with a shortcut, each once, with all its keys: nothing hidden, nothing stale.
    assert sorted((name, keys) for _menu, name, keys in rows) == sorted(
        (plain_text(a), keys_text(a)) for a in _with_keys(window)
    )
    assert ("写作", "续写", keys_text(window.continue_action)) in rows
    assert ("文件", "导出", "Ctrl+E") in rows
    assert ("帮助", "快捷键", "F1") in rows
    dialog.reject()


def test_a_changed_shortcut_shows_in_the_list(qtbot: QtBot, window: MainWindow) -> None:
    window.export_action.setShortcut(QKeySequence("Ctrl+Shift+E"))
    dialog = ShortcutsDialog(window.menuBar(), window)
    qtbot.addWidget(dialog)
    assert ("文件", "导出", "Ctrl+Shift+E") in dialog.rows()


def test_ctrl_s_in_the_editor_saves(qtbot: QtBot, window: MainWindow) -> None:
    tab = window.open_chapter(1)
    assert tab is not None
    window.activateWindow()
    tab.editor.setFocus()
    tab.editor.insertPlainText("雨停了。")
    with qtbot.waitSignal(tab.editor.chapter_saved, timeout=1000):
        qtbot.keyClick(tab.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert "雨停了。" in window.project.chapter_text(1)


def test_ctrl_s_in_the_outline_saves_the_outline(
    qtbot: QtBot, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The outline view keeps its own Ctrl+S; two shortcuts on one key would make Qt trigger neither."""
    from novel_desktop.ui.outline_view import OutlineView

    saved: list[str] = []
    view = window.open_view("outline")
    assert isinstance(view, OutlineView)
    monkeypatch.setattr(view.reader, "save_outline", lambda volume, text: saved.append("outline"))
    window.activateWindow()
    view.form.title_edit.setFocus()
    qtbot.keyClick(view.form.title_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(view.form.title_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert saved == ["outline", "outline"]
    assert window.save_action.shortcut() == QKeySequence(Std.Save)  # still listed, still the window's
    # Back in a chapter, Ctrl+S is the window's again.
    tab = window.open_chapter(1)
    assert tab is not None
    tab.editor.setFocus()
    tab.editor.insertPlainText("雨停了。")
    with qtbot.waitSignal(tab.editor.chapter_saved, timeout=1000):
        qtbot.keyClick(tab.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert saved == ["outline", "outline"]
