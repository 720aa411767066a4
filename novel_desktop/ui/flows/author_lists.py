"""Window wiring for what the author keeps in charge of (issue 14 items 4 and 5): 工具 → AI 套话黑名单…, the
project tree's character item → 契约历史…, and the editors' underlines following the phrase list.

:func:`install` is the window's one call; it keeps the window module (at its size limit) out of this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from novel_desktop.controllers.blacklist_controller import BlacklistController
from novel_desktop.domain.characters import Character
from novel_desktop.i18n import tr
from novel_desktop.ui import alerts
from novel_desktop.ui.blacklist_panel import BlacklistDialog
from novel_desktop.ui.contract_history import ContractHistoryDialog
from novel_desktop.ui.project_tree import CHARACTER

if TYPE_CHECKING:
    from novel_desktop.ui.main_window import MainWindow


class AuthorLists:
    """The blacklist dialog, the contract history dialogs and the re-underlining, for one window."""

    def __init__(self, window: MainWindow, tools_menu: QMenu) -> None:
        self.window = window
        self.blacklist = BlacklistController(window.project)
        self.blacklist_dialog: BlacklistDialog | None = None
        self.history_dialogs: list[ContractHistoryDialog] = []
        self._phrases_source: str | None = None
        self.blacklist_action = QAction(tr("AI 套话黑名单…"), window)
        self.blacklist_action.setObjectName("BlacklistAction")
        self.blacklist_action.setStatusTip(tr("查看每条套话的命中次数，增删短语，处理评审发现的新套话"))
        self.blacklist_action.triggered.connect(lambda _checked=False: self.show_blacklist())
        tools_menu.addAction(self.blacklist_action)
        window._novel_actions.append(self.blacklist_action)
        tree = window.tree.view
        tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        tree.customContextMenuRequested.connect(self._on_tree_menu)
        project = window.project
        project.document_changed.connect(self._on_document_changed)
        project.chapters_changed.connect(self._underline_again)  # a commit may have added phrases
        project.project_closed.connect(self._on_project_closed)

    # ------------------------------------------------------------------ the phrase list
    def show_blacklist(self) -> BlacklistDialog | None:
        if not self.window.project.is_open:
            return None
        if self.blacklist_dialog is None:
            self.blacklist_dialog = BlacklistDialog(self.blacklist, self.window)
        else:
            self.blacklist_dialog.panel.refresh()
        if self.blacklist_dialog.isVisible():
            self.blacklist_dialog.raise_()
        self.blacklist_dialog.show()
        return self.blacklist_dialog

    def _on_document_changed(self, path: str) -> None:
        if path == "ai-blacklist.json":
            self._underline_again()

    def _underline_again(self) -> None:
        """Give every open editor the list in force, when it changed since the editors got theirs."""
        project = self.window.project
        if not project.is_open:
            return
        raw = project.document("ai-blacklist.json")
        if raw == self._phrases_source:
            return
        self._phrases_source = raw
        for editor in self.window.editors():
            editor.highlighter.set_matcher(project.analysis.phrase_matcher())

    def _on_project_closed(self) -> None:
        self._phrases_source = None
        if self.blacklist_dialog is not None:
            self.blacklist_dialog.close()
            self.blacklist_dialog.deleteLater()
            self.blacklist_dialog = None
        for dialog in self.history_dialogs:
            dialog.close()
        self.history_dialogs.clear()

    # ------------------------------------------------------------------ contract history
    def tree_menu(self, pos: QPoint) -> QMenu | None:
        """The context menu of the project tree at ``pos``: 契约历史… on a character item."""
        tree = self.window.tree
        node = tree.model.node(tree.view.indexAt(pos))
        if node.kind != CHARACTER:
            return None
        menu = QMenu(tree)
        menu.addAction(tr("契约历史…"), lambda: self.show_contract_history(str(node.key)))
        return menu

    def _on_tree_menu(self, pos: QPoint) -> None:
        menu = self.tree_menu(pos)
        if menu is not None:
            menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            menu.popup(self.window.tree.view.viewport().mapToGlobal(pos))

    def show_contract_history(self, path: str) -> ContractHistoryDialog | None:
        """The contract history of the character stored at ``path`` (characters/active/<slug>.json)."""
        data = self.window.project.document_json(path)
        try:
            character = Character.model_validate(data)
        except ValueError as exc:
            alerts.warning(self.window, tr("契约历史"), tr("角色文件无法读取：{e}").format(e=exc))
            return None
        dialog = ContractHistoryDialog(character, self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.destroyed.connect(lambda _=None, d=dialog: self._forget(d))
        self.history_dialogs.append(dialog)
        dialog.show()
        return dialog

    def _forget(self, dialog: ContractHistoryDialog) -> None:
        if dialog in self.history_dialogs:
            self.history_dialogs.remove(dialog)


def install(window: MainWindow, tools_menu: QMenu) -> AuthorLists:
    """Wire the blacklist and contract-history parts into ``window``; returns them (tests use it)."""
    return AuthorLists(window, tools_menu)
