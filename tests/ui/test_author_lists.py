"""The window's AI-phrase list panel (工具 → AI 套话黑名单…) and a character's contract history (project tree →
契约历史…), issue 14 items 4 and 5: what the author sees and what the buttons change."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMenu
from pytestqt.qtbot import QtBot

from novel_desktop.config import AppSettings
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.characters import Character
from novel_desktop.domain.contract_lifecycle import apply_contract_update
from novel_desktop.domain.contracts import ContractUpdate
from novel_desktop.ui.blacklist_panel import BlacklistDialog
from novel_desktop.ui.contract_history import ContractHistoryDialog
from novel_desktop.ui.main_window import MainWindow
from novel_desktop.ui.project_tree import CHARACTER
from tests.fakes.alerts import RecordingAlerts
from tests.ui.shots import save_shot

pytestmark = pytest.mark.usefixtures("gui_thread_gc")
LIN = "characters/active/lin-feng.json"


@pytest.fixture
def window(qtbot: QtBot, project: ProjectController) -> MainWindow:
    win = MainWindow(project=project, settings=AppSettings())
    qtbot.addWidget(win)
    win._update_for_project()
    win.show_workspace()
    win.show()
    return win


def _blacklist(project: ProjectController) -> dict:
    return json.loads(project.document("ai-blacklist.json") or "{}")


def test_the_character_item_opens_the_contract_history(window: MainWindow, qtbot: QtBot) -> None:
    project = window.project
    lin = Character.model_validate(project.document_json(LIN))
    lin, _ = apply_contract_update(
        lin, ContractUpdate(contract_id="C-LINFENG-001", rule="已引气入体", note="问心阶上引气"), 4
    )
    project.save_document(LIN, json.dumps(lin.to_json_dict(), ensure_ascii=False))
    window.tree.reload()

    model, view = window.tree.model, window.tree.view
    section = next(
        model.index(r, 0) for r in range(model.rowCount()) if model.node(model.index(r, 0)).key == CHARACTER
    )
    view.expand(section)
    item = next(
        model.index(r, 0, section)
        for r in range(model.rowCount(section))
        if model.node(model.index(r, 0, section)).key == LIN
    )
    assert view.contextMenuPolicy() is Qt.ContextMenuPolicy.CustomContextMenu
    menu = window.author_lists.tree_menu(view.visualRect(item).center())
    assert isinstance(menu, QMenu)
    [action] = [a for a in menu.actions() if a.text() == "契约历史…"]
    action.trigger()
    # Other items offer nothing.
    assert window.author_lists.tree_menu(view.visualRect(section).center()) is None

    dialog = next(w for w in QApplication.topLevelWidgets() if isinstance(w, ContractHistoryDialog))
    assert dialog.isVisible() and "林枫" in dialog.windowTitle()
    rows = dialog.history.rows()
    assert [r[:4] for r in rows[:2]] == [
        ["C-LINFENG-001", "v1", "已废止", "第 1–4 章"],
        ["C-LINFENG-001", "v2", "生效中", "第 5 章起"],
    ]
    assert rows[1][5] == "已引气入体" and rows[1][6] == "第 4 章" and rows[1][7] == "问心阶上引气"
    assert rows[0][6] == "创建时"
    assert rows[2][0] == "C-LINFENG-002"
    dialog.resize(980, 300)
    save_shot(dialog, "contract_history")
    dialog.close()


def test_the_blacklist_panel_adds_removes_and_settles_proposals(
    window: MainWindow, qtbot: QtBot, alerts: RecordingAlerts
) -> None:
    project = window.project
    data = _blacklist(project)
    data["proposed"] = [{"phrase": "柴刀", "chapter": 2}, {"phrase": "药篓", "chapter": 2}]
    project.save_document("ai-blacklist.json", json.dumps(data, ensure_ascii=False))
    tab = window.open_chapter(1)
    assert tab is not None
    editor = tab.editor

    def underlined(phrase: str) -> bool:
        block = editor.document().begin()
        while block.isValid():
            if any(h.matched == phrase for h in editor.highlighter.hits(block.text())):
                return True
            block = block.next()
        return False

    assert not underlined("柴刀")
    window.author_lists.blacklist_action.trigger()
    dialog = next(w for w in QApplication.topLevelWidgets() if isinstance(w, BlacklistDialog))
    panel = dialog.panel
    assert panel.proposal_phrases() == ["柴刀", "药篓"]
    text = "".join(project.chapter_text(n) or "" for n in (1, 2))

    # Accept one proposal, reject the other.
    panel.proposals.item(0).setSelected(True)
    qtbot.mouseClick(panel.accept_button, Qt.MouseButton.LeftButton)
    assert panel.phrases()["柴刀"] == ("评审", text.count("柴刀"))
    assert text.count("柴刀") > 0 and underlined("柴刀")  # the open editor follows the list
    panel.proposals.item(0).setSelected(True)
    qtbot.mouseClick(panel.reject_button, Qt.MouseButton.LeftButton)
    assert panel.proposal_phrases() == [] and _blacklist(project)["rejected"] == ["药篓"]
    assert not panel.accept_button.isEnabled()

    # The author adds a phrase of their own and removes a shipped one.
    panel.add_edit.setText("青石镇")
    qtbot.mouseClick(panel.add_button, Qt.MouseButton.LeftButton)
    assert panel.phrases()["青石镇"] == ("作者", text.count("青石镇"))
    row = next(r for r in range(panel.table.rowCount()) if panel.table.item(r, 0).text() == "不禁")
    panel.table.selectRow(row)
    qtbot.mouseClick(panel.remove_button, Qt.MouseButton.LeftButton)
    assert "不禁" not in panel.phrases() and "不禁" in _blacklist(project)["custom_removed"]

    # Auto-add is a per-novel switch stored in the list.
    panel.auto_add.setChecked(True)
    assert _blacklist(project)["auto_add"] is True
    assert alerts.shown == []
    save_shot(dialog, "blacklist_panel")


def test_removing_a_phrase_that_is_gone_is_told_and_nothing_changes(
    window: MainWindow, alerts: RecordingAlerts
) -> None:
    dialog = window.author_lists.show_blacklist()
    assert dialog is not None
    before = window.project.document("ai-blacklist.json")
    from novel_desktop.domain.style import BlacklistEdit

    assert not dialog.panel._apply(BlacklistEdit(remove=["从来没有这句"]))
    assert alerts.shown and "黑名单里没有" in alerts.shown[-1][2]
    assert window.project.document("ai-blacklist.json") == before
