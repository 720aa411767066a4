"""AI 套话黑名单: the novel's AI-phrase list as the author manages it (seed 004 §7 黑名单维护).

A table of every phrase in force (短语 / 来源 / 命中), a line to add phrases, a button to remove the selected
ones, the judge's proposals with 接受 / 拒绝 / 全部接受, and the 自动加入 checkbox — the powers of
``novel blacklist``. Changes go through the ``BlacklistController`` in one write each; the editors then
underline the new list.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.blacklist_controller import BlacklistController
from novel_desktop.domain.style import BlacklistEdit, BlacklistReport
from novel_desktop.i18n import tr
from novel_desktop.ui import alerts
from novel_desktop.ui.theme import heading_label


class _CountItem(QTableWidgetItem):
    """A hit count that sorts as a number."""

    def __lt__(self, other: QTableWidgetItem) -> bool:
        return int(self.data(Qt.ItemDataRole.UserRole) or 0) < int(other.data(Qt.ItemDataRole.UserRole) or 0)


class BlacklistPanel(QWidget):
    """The list, its proposals and the auto-add switch for the open novel."""

    def __init__(self, controller: BlacklistController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.report: BlacklistReport | None = None

        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.table = QTableWidget(0, 3)
        self.table.setObjectName("BlacklistTable")
        self.table.setHorizontalHeaderLabels([tr("短语"), tr("来源"), tr("命中")])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)

        self.add_edit = QLineEdit()
        self.add_edit.setPlaceholderText(tr("新短语，多个用空格或逗号分开；re: 开头为正则"))
        self.add_button = QPushButton(tr("添加"))
        self.remove_button = QPushButton(tr("移除所选"))
        self.add_button.clicked.connect(self.add_phrases)
        self.add_edit.returnPressed.connect(self.add_phrases)
        self.remove_button.clicked.connect(self.remove_selected)
        edit_row = QHBoxLayout()
        edit_row.addWidget(self.add_edit, 1)
        edit_row.addWidget(self.add_button)
        edit_row.addWidget(self.remove_button)

        self.proposals_heading = heading_label(tr("评审发现的新套话"))
        self.proposals = QListWidget()
        self.proposals.setObjectName("BlacklistProposals")
        self.proposals.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.proposals.setMaximumHeight(140)
        self.accept_button = QPushButton(tr("接受"))
        self.reject_button = QPushButton(tr("拒绝"))
        self.accept_all_button = QPushButton(tr("全部接受"))
        self.accept_button.clicked.connect(lambda: self._settle(accept=True))
        self.reject_button.clicked.connect(lambda: self._settle(accept=False))
        self.accept_all_button.clicked.connect(self.accept_all)
        proposal_row = QHBoxLayout()
        proposal_row.addWidget(self.accept_button)
        proposal_row.addWidget(self.reject_button)
        proposal_row.addWidget(self.accept_all_button)
        proposal_row.addStretch(1)
        self.auto_add = QCheckBox(tr("评审发现的新套话直接加入黑名单（不再逐条确认）"))
        self.auto_add.toggled.connect(self._on_auto_add_toggled)

        layout = QVBoxLayout(self)
        layout.addWidget(heading_label(tr("AI 套话黑名单")))
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        layout.addLayout(edit_row)
        layout.addWidget(self.proposals_heading)
        layout.addWidget(self.proposals)
        layout.addLayout(proposal_row)
        layout.addWidget(self.auto_add)
        controller.project.document_changed.connect(self._on_document_changed)
        controller.project.chapters_changed.connect(self.refresh)
        self.refresh()

    # ------------------------------------------------------------------ showing
    def refresh(self) -> None:
        """Read the list again (after a change here, a commit, or an edit elsewhere)."""
        if not self.controller.project.is_open:
            return
        try:
            report = self.controller.report()
        except ValueError as exc:
            self.summary.setText(str(exc))
            return
        self.report = report
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(report.rows))
        for row, phrase in enumerate(report.rows):
            self.table.setItem(row, 0, QTableWidgetItem(phrase.phrase))
            source = QTableWidgetItem(tr(phrase.source))
            source.setToolTip(phrase.category)
            self.table.setItem(row, 1, source)
            hits = _CountItem(str(phrase.hits))
            hits.setData(Qt.ItemDataRole.UserRole, phrase.hits)
            hits.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.table.setItem(row, 2, hits)
        self.table.setSortingEnabled(True)
        self.table.sortItems(2, Qt.SortOrder.DescendingOrder)
        self.table.scrollToTop()
        total = sum(r.hits for r in report.rows)
        self.summary.setText(
            tr(
                "共 {n} 条，在已提交的 {chapters} 章中命中 {hits} 次；作者移除的内置短语 {removed} 条。"
            ).format(n=len(report.rows), chapters=report.chapters, hits=total, removed=len(report.removed))
        )
        self.proposals.clear()
        for proposal in report.proposed:
            where = tr("（第 {n} 章）").format(n=proposal.chapter) if proposal.chapter else ""
            item = QListWidgetItem(f"{proposal.phrase}{where}")
            item.setData(Qt.ItemDataRole.UserRole, proposal.phrase)
            self.proposals.addItem(item)
        has = bool(report.proposed)
        for widget in (self.accept_button, self.reject_button, self.accept_all_button):
            widget.setEnabled(has and not self.controller.readonly)
        self.proposals_heading.setText(tr("评审发现的新套话（{n} 条待确认）").format(n=len(report.proposed)))
        self.auto_add.blockSignals(True)
        self.auto_add.setChecked(report.auto_add)
        self.auto_add.blockSignals(False)
        editable: tuple[QWidget, ...] = (self.add_button, self.remove_button, self.add_edit, self.auto_add)
        for control in editable:
            control.setEnabled(not self.controller.readonly)

    def phrases(self) -> dict[str, tuple[str, int]]:
        """Phrase → (source, hits) as the table shows them."""
        out = {}
        for row in range(self.table.rowCount()):
            phrase, source, hits = (self.table.item(row, c) for c in range(3))
            if phrase is not None and source is not None and hits is not None:
                out[phrase.text()] = (source.text(), int(hits.text()))
        return out

    def proposal_phrases(self) -> list[str]:
        return [
            str(self.proposals.item(i).data(Qt.ItemDataRole.UserRole)) for i in range(self.proposals.count())
        ]

    # ------------------------------------------------------------------ changing
    def _apply(self, edit: BlacklistEdit) -> bool:
        try:
            changed = self.controller.edit(edit)
        except (ValueError, OSError) as exc:
            alerts.warning(self, tr("AI 套话黑名单"), str(exc))
            return False
        except Exception as exc:  # a read-only or busy novel: told, nothing changed
            alerts.error(self, tr("AI 套话黑名单"), str(exc))
            return False
        if not changed:
            self.refresh()  # a changed list is read again through document_changed
        return True

    def add_phrases(self) -> None:
        text = self.add_edit.text().strip()
        if text.startswith("re:"):
            phrases = [text]  # a pattern may contain spaces and commas
        else:
            flat = text.replace("，", ",").replace("、", ",")
            phrases = [p for chunk in flat.split(",") for p in chunk.split()]
        if not phrases:
            return
        if self._apply(BlacklistEdit(add=phrases)):
            self.add_edit.clear()

    def remove_selected(self) -> None:
        rows = sorted({index.row() for index in self.table.selectedIndexes()})
        phrases = [item.text() for r in rows if (item := self.table.item(r, 0)) is not None]
        if phrases:
            self._apply(BlacklistEdit(remove=phrases))

    def _selected_proposals(self) -> list[str]:
        return [str(item.data(Qt.ItemDataRole.UserRole)) for item in self.proposals.selectedItems()]

    def _settle(self, *, accept: bool) -> None:
        chosen = self._selected_proposals()
        if not chosen:
            alerts.info(self, tr("AI 套话黑名单"), tr("先在列表里选中要处理的短语。"))
            return
        self._apply(BlacklistEdit(accept=chosen) if accept else BlacklistEdit(reject=chosen))

    def accept_all(self) -> None:
        self._apply(BlacklistEdit(accept_all=True))

    def _on_auto_add_toggled(self, checked: bool) -> None:
        if not self._apply(BlacklistEdit(auto_add=checked)):
            self.refresh()

    def _on_document_changed(self, path: str) -> None:
        if path == "ai-blacklist.json":
            self.refresh()


class BlacklistDialog(QDialog):
    """:class:`BlacklistPanel` in a window of its own, opened from 工具 → AI 套话黑名单… (not modal)."""

    def __init__(self, controller: BlacklistController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("BlacklistDialog")
        self.setWindowTitle(tr("AI 套话黑名单"))
        self.panel = BlacklistPanel(controller)
        layout = QVBoxLayout(self)
        layout.addWidget(self.panel)
        self.resize(560, 680)
