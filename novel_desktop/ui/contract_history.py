"""角色契约历史: every version of each L2 contract of one character (seed 004 §6.5.3), read-only.

One row per version: the contract id, its version, status (计划中 / 生效中 / 已废止), the chapters it holds
for, its type and rule, and the chapter whose commit made it. :class:`ContractHistoryWidget` is a plain widget
another view (the character form) can embed; :class:`ContractHistoryDialog` shows it on its own, opened from
the project tree's character item.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.domain.characters import Character, CharacterContract
from novel_desktop.domain.contract_lifecycle import contract_history
from novel_desktop.i18n import tr
from novel_desktop.ui.theme import heading_label

_STATUS = {"planned": "计划中", "established": "生效中", "deprecated": "已废止"}
_COLUMNS = ("契约", "版本", "状态", "有效章节", "类型", "规则", "变更于", "说明")


def range_text(contract: CharacterContract) -> str:
    """The chapters a version holds for: 第 1–3 章, 第 4 章起, 第 2 章前."""
    start, end = contract.valid_from_chapter, contract.valid_until
    if end is not None:
        return tr("第 {start}–{end} 章").format(start=start or 1, end=end)
    return tr("第 {start} 章起").format(start=start or 1)


class ContractHistoryWidget(QWidget):
    """The versions of every contract of one character, in a read-only table."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.heading = heading_label("")
        self.empty = QLabel(tr("这个角色还没有契约。"))
        self.empty.setStyleSheet("color: palette(mid);")
        self.table = QTableWidget(0, len(_COLUMNS))
        self.table.setObjectName("ContractHistoryTable")
        self.table.setHorizontalHeaderLabels([tr(c) for c in _COLUMNS])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(True)
        header = self.table.horizontalHeader()
        for column in range(len(_COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(5, QHeaderView.ResizeMode.Stretch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.heading)
        layout.addWidget(self.empty)
        layout.addWidget(self.table)

    def set_character(self, character: Character) -> None:
        """Show ``character``'s contracts, each id's versions oldest first."""
        self.heading.setText(tr("{name} 的契约历史").format(name=character.name))
        rows = [v for versions in contract_history(character).values() for v in versions]
        self.table.setRowCount(len(rows))
        muted = QBrush(QColor("#888888"))
        for row, contract in enumerate(rows):
            changed = (
                tr("第 {n} 章").format(n=contract.changed_in_chapter)
                if contract.changed_in_chapter is not None
                else tr("创建时")
            )
            values = (
                contract.id,
                f"v{contract.version}",
                tr(_STATUS.get(contract.status, contract.status)),
                range_text(contract),
                contract.type,
                contract.rule,
                changed,
                contract.note or (contract.update_requires or ""),
            )
            for column, value in enumerate(values):
                item = QTableWidgetItem(value)
                item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
                if contract.status == "deprecated":
                    item.setForeground(muted)
                if column in (5, 7):
                    item.setToolTip(value)
                self.table.setItem(row, column, item)
        self.table.resizeRowsToContents()
        self.empty.setVisible(not rows)
        self.table.setVisible(bool(rows))

    def rows(self) -> list[list[str]]:
        """The table's text, row by row (what the author reads)."""
        out = []
        for row in range(self.table.rowCount()):
            cells = [self.table.item(row, c) for c in range(self.table.columnCount())]
            out.append([cell.text() if cell is not None else "" for cell in cells])
        return out


class ContractHistoryDialog(QDialog):
    """:class:`ContractHistoryWidget` in a window of its own (not modal: the author keeps writing)."""

    def __init__(self, character: Character, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ContractHistoryDialog")
        self.setWindowTitle(tr("契约历史 — {name}").format(name=character.name))
        self.history = ContractHistoryWidget()
        self.history.set_character(character)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.history)
        layout.addWidget(buttons)
        self.resize(900, 360)
