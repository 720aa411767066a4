"""章节契约表单: one chapter's contract as an editable form whose objectives carry the judge's verdict.

``save`` validates through :class:`ChapterContract` before anything is written; invalid input is explained and
everything the author typed stays in the form. Reads and writes go through the :class:`NovelReader`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QStyle,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.controllers.reader import NovelReader
from novel_desktop.domain.contracts import ChapterContract
from novel_desktop.i18n import ONE, tr
from novel_desktop.ui.theme import heading_label

# ---------------------------------------------------------------------------------------------- helpers

VERDICT_PASS = QColor("#2e7d32")
VERDICT_FAIL = QColor("#c62828")
VERDICT_NONE = QColor("#8a8a8a")


def _value_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _parse_value(text: str) -> Any:
    # Numbers and booleans typed into a cell stay numbers and booleans; anything else is text.
    text = text.strip()
    try:
        return json.loads(text)
    except ValueError:
        return text


def _cell(table: QTableWidget, row: int, column: int) -> str:
    item = table.item(row, column)
    return item.text().strip() if item else ""


def _section_label(text: str) -> QLabel:
    label = QLabel(text)
    font = label.font()
    font.setBold(True)
    label.setFont(font)
    return label


def _small_button(text: str) -> QPushButton:
    button = QPushButton(text)
    button.setAutoDefault(False)
    return button


class _EditableTable(QTableWidget):
    """A table with add/remove buttons underneath, sized to its rows so the form scrolls as one page."""

    def __init__(self, headers: list[str], parent: QWidget | None = None) -> None:
        super().__init__(0, len(headers), parent)
        self.setHorizontalHeaderLabels(headers)
        self.verticalHeader().setVisible(False)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWordWrap(True)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # The last column holds free text (a value, a status); it takes the spare width.
        header.setStretchLastSection(True)
        # Never narrower than its column titles side by side (the form scrolls instead): squeezed, a stretched
        # column fell below its own title (English "Description" read "escriptio").
        margin = 2 * self.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header) + 8
        titles = sum(header.fontMetrics().horizontalAdvance(h) + margin for h in headers)
        self.setMinimumWidth(titles + 2 * self.frameWidth())

    def fit_height(self) -> None:
        self.resizeRowsToContents()
        rows = sum(self.rowHeight(r) for r in range(self.rowCount()))
        self.setFixedHeight(self.horizontalHeader().height() + rows + 2 * self.frameWidth() + 2)

    def with_buttons(self, on_add: Any) -> QWidget:
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self)
        row = QHBoxLayout()
        add = _small_button(tr("添加一行"))
        remove = _small_button(tr("删除所选行"))
        add.clicked.connect(on_add)
        remove.clicked.connect(self.remove_selected)
        row.addWidget(add)
        row.addWidget(remove)
        row.addStretch(1)
        layout.addLayout(row)
        return box

    def remove_selected(self) -> None:
        for row in sorted({index.row() for index in self.selectedIndexes()}, reverse=True):
            self.removeRow(row)
        self.fit_height()


# ---------------------------------------------------------------------------------------------- contract form


class ContractForm(QWidget):
    """One chapter contract as a form; ``save`` validates through ChapterContract before writing."""

    contract_saved = Signal(int)

    #: Columns of the objectives table; the last one shows the judge's verdict and is read-only.
    OBJ_ID, OBJ_TYPE, OBJ_REQUIRED, OBJ_DESCRIPTION, OBJ_VERDICT = range(5)

    def __init__(self, project: ProjectController | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        # Without a project the form only edits (a proposal's contracts): no verdicts, no 保存 of its own.
        self.reader = NovelReader(project) if project is not None else None
        self.volume = 1
        self.chapter = 0
        self._original: dict[str, Any] = {}
        self._loading = False
        self.dirty = False

        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.heading = heading_label()
        outer.addWidget(self.heading)

        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        body = QWidget()
        form = QVBoxLayout(body)
        form.setContentsMargins(0, 0, 6, 0)
        scroll.setWidget(body)
        outer.addWidget(scroll, 1)

        top = QFormLayout()
        self.storyline_edit = QLineEdit()
        self.storyline_edit.setPlaceholderText(tr("故事线 id，如 main_arc"))
        top.addRow(tr("故事线", ONE), self.storyline_edit)
        form.addLayout(top)

        form.addWidget(_section_label(tr("前置条件")))
        pre = QFormLayout()
        self.world_rules_edit = QLineEdit()
        self.world_rules_edit.setPlaceholderText(tr("用逗号分隔，如 W-001, W-002"))
        pre.addRow(tr("须遵守的世界规则"), self.world_rules_edit)
        form.addLayout(pre)
        form.addWidget(QLabel(tr("开场时的角色状态")))
        self.pre_states = _EditableTable([tr("角色", ONE), tr("属性"), tr("值")])
        form.addWidget(self.pre_states.with_buttons(lambda: self._add_row(self.pre_states)))

        form.addWidget(_section_label(tr("目标")))
        self.objectives = _EditableTable([tr("ID"), tr("类型"), tr("必需"), tr("描述"), tr("评审结果")])
        self.objectives.horizontalHeader().setStretchLastSection(False)
        self.objectives.horizontalHeader().setSectionResizeMode(
            self.OBJ_DESCRIPTION, QHeaderView.ResizeMode.Stretch
        )
        # Squeezed, the stretched description gets the header's minimum section size (a little room left) or
        # its default size (none): neither may be less than its own title.
        header = self.objectives.horizontalHeader()
        margin = 2 * header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header) + 8
        title = header.fontMetrics().horizontalAdvance(tr("描述")) + margin
        header.setMinimumSectionSize(max(header.minimumSectionSize(), title))
        header.setDefaultSectionSize(max(header.defaultSectionSize(), title))
        form.addWidget(self.objectives.with_buttons(self._add_objective))

        form.addWidget(_section_label(tr("后置条件")))
        form.addWidget(QLabel(tr("结束时的角色状态变化")))
        self.post_states = _EditableTable([tr("角色", ONE), tr("属性"), tr("值")])
        form.addWidget(self.post_states.with_buttons(lambda: self._add_row(self.post_states)))
        form.addWidget(QLabel(tr("伏笔更新")))
        self.foreshadow_updates = _EditableTable([tr("伏笔 ID"), tr("之后的状态")])
        self.foreshadow_updates.setToolTip(
            tr("状态：planned（计划）、planted（埋设）、advanced（推进）、resolved（回收）")
        )
        form.addWidget(self.foreshadow_updates.with_buttons(lambda: self._add_row(self.foreshadow_updates)))

        form.addWidget(_section_label(tr("验收标准")))
        self.criteria = QListWidget()
        self.criteria.setWordWrap(True)
        self.criteria.setMinimumHeight(90)
        criteria_box = QWidget()
        criteria_layout = QVBoxLayout(criteria_box)
        criteria_layout.setContentsMargins(0, 0, 0, 0)
        criteria_layout.addWidget(self.criteria)
        buttons = QHBoxLayout()
        add = _small_button(tr("添加标准"))
        remove = _small_button(tr("删除所选标准"))
        add.clicked.connect(self._add_criterion)
        remove.clicked.connect(self._remove_criterion)
        buttons.addWidget(add)
        buttons.addWidget(remove)
        buttons.addStretch(1)
        criteria_layout.addLayout(buttons)
        form.addWidget(criteria_box)
        form.addStretch(1)

        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #c62828;")
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.hide()
        outer.addWidget(self.error_label)
        bottom = QHBoxLayout()
        self.state_label = QLabel()
        self.state_label.setStyleSheet("color: #666;")
        self.save_button = QPushButton(tr("保存契约"))
        self.save_button.setToolTip(tr("保存契约（Ctrl+S）"))
        self.save_button.clicked.connect(self.save)
        bottom.addWidget(self.state_label, 1)
        bottom.addWidget(self.save_button)
        outer.addLayout(bottom)
        if self.reader is None:
            self.save_button.hide()

        QShortcut(QKeySequence.StandardKey.Save, self, self.save).setContext(
            Qt.ShortcutContext.WidgetWithChildrenShortcut  # PySide6 drops the constructor's context=
        )

        self.storyline_edit.textEdited.connect(self._mark_dirty)
        self.world_rules_edit.textEdited.connect(self._mark_dirty)
        for table in (self.pre_states, self.objectives, self.post_states, self.foreshadow_updates):
            table.itemChanged.connect(self._mark_dirty)
            table.model().rowsRemoved.connect(self._mark_dirty)
        self.criteria.itemChanged.connect(self._mark_dirty)
        self.criteria.model().rowsRemoved.connect(self._mark_dirty)

    # ------------------------------------------------------------------ loading
    def load(
        self, volume: int, chapter: int, data: dict[str, Any], *, storyline_hint: str | None = None
    ) -> None:
        """Fill the form from a contract's JSON (or an empty one for a new contract)."""
        self._loading = True
        self.volume, self.chapter = volume, chapter
        self._original = dict(data)
        contract = ChapterContract.model_validate(data) if data else ChapterContract(chapter=chapter)
        self.heading.setText(tr("第 {n} 章 契约").format(n=chapter))
        self.storyline_edit.setText(contract.storyline_id or storyline_hint or "")
        self.world_rules_edit.setText(", ".join(contract.preconditions.required_world_rules))
        self._fill_states(self.pre_states, contract.preconditions.character_states)
        self._fill_states(self.post_states, contract.postconditions.state_changes)
        self.foreshadow_updates.setRowCount(0)
        for item_id, update in contract.postconditions.foreshadowing_updates.items():
            self._add_row(self.foreshadow_updates, [item_id, update])
        self.foreshadow_updates.fit_height()

        evaluation = self.reader.evaluation(chapter) if self.reader else None
        results = evaluation.contract_results() if evaluation else {}
        violated = set()
        if evaluation:
            violated = {v.rule_id for v in evaluation.violations if not isinstance(v, str)}
        self.objectives.setRowCount(0)
        for objective in contract.objectives:
            raw = objective.to_json_dict()
            status = "violation" if objective.id in violated else results.get(objective.id)
            self._add_objective(raw, status)
        self.objectives.fit_height()

        self.criteria.clear()
        for text in contract.acceptance_criteria:
            self._append_criterion(text)
        self.error_label.hide()
        self._loading = False
        self._set_dirty(False)

    def _fill_states(self, table: _EditableTable, states: dict[str, dict[str, Any]]) -> None:
        table.setRowCount(0)
        for who, attributes in states.items():
            for key, value in attributes.items():
                self._add_row(table, [who, key, _value_text(value)])
        table.fit_height()

    def _add_row(self, table: _EditableTable, values: list[str] | None = None) -> None:
        was_loading = self._loading
        self._loading = True
        row = table.rowCount()
        table.insertRow(row)
        for column, text in enumerate(values or [""] * table.columnCount()):
            table.setItem(row, column, QTableWidgetItem(text))
        self._loading = was_loading
        table.fit_height()
        if values is None:
            table.setCurrentCell(row, 0)
            table.editItem(table.currentItem())
            self._mark_dirty()

    def _add_objective(self, raw: dict[str, Any] | None = None, status: str | None = None) -> None:
        was_loading = self._loading
        self._loading = True
        table = self.objectives
        new = not isinstance(raw, dict)
        data: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if new:
            data = {"id": NovelReader.objective_id(self.chapter, table.rowCount() + 1), "type": "plot"}
        row = table.rowCount()
        table.insertRow(row)
        id_item = QTableWidgetItem(str(data.get("id", "")))
        # Fields the form has no column for (action, target, unknown keys) ride along with the row.
        id_item.setData(Qt.ItemDataRole.UserRole, data)
        table.setItem(row, self.OBJ_ID, id_item)
        table.setItem(row, self.OBJ_TYPE, QTableWidgetItem(str(data.get("type", ""))))
        required = QTableWidgetItem()
        required.setFlags(
            Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        )
        required.setCheckState(Qt.CheckState.Checked if data.get("required") else Qt.CheckState.Unchecked)
        table.setItem(row, self.OBJ_REQUIRED, required)
        description = str(data.get("description", ""))
        target = data.get("target")
        description_tip = f"{data.get('action') or ''} {target}".strip() if target else ""
        desc_item = QTableWidgetItem(description)
        if description_tip:
            desc_item.setToolTip(tr("伏笔：{t}").format(t=description_tip))
        table.setItem(row, self.OBJ_DESCRIPTION, desc_item)
        table.setItem(row, self.OBJ_VERDICT, self._verdict_item(status))
        self._loading = was_loading
        if new:
            table.fit_height()
            table.setCurrentCell(row, self.OBJ_DESCRIPTION)
            table.editItem(table.currentItem())
            self._mark_dirty()

    @staticmethod
    def _verdict_item(status: str | None) -> QTableWidgetItem:
        if status == "pass":
            item = QTableWidgetItem(tr("✓ 通过"))
            item.setForeground(QBrush(VERDICT_PASS))
        elif status in ("violation", "fail"):
            item = QTableWidgetItem(tr("✗ 违反"))
            item.setForeground(QBrush(VERDICT_FAIL))
            font = QFont(item.font())
            font.setBold(True)
            item.setFont(font)
        else:
            item = QTableWidgetItem(tr("— 未评"))
            item.setForeground(QBrush(VERDICT_NONE))
        item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
        item.setToolTip(tr("QualityJudge 对此目标的判定"))
        return item

    def verdict_text(self, objective_id: str) -> str:
        """The verdict column's text for an objective (for tests and the outline list)."""
        for row in range(self.objectives.rowCount()):
            if _cell(self.objectives, row, self.OBJ_ID) == objective_id:
                return _cell(self.objectives, row, self.OBJ_VERDICT)
        return ""

    def _append_criterion(self, text: str) -> QListWidgetItem:
        item = QListWidgetItem(text)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
        self.criteria.addItem(item)
        return item

    def _add_criterion(self) -> None:
        item = self._append_criterion("")
        self.criteria.setCurrentItem(item)
        self.criteria.editItem(item)
        self._mark_dirty()

    def _remove_criterion(self) -> None:
        for item in self.criteria.selectedItems():
            self.criteria.takeItem(self.criteria.row(item))

    # ------------------------------------------------------------------ dirty state
    def _mark_dirty(self, *_args: object) -> None:
        if not self._loading:
            self._set_dirty(True)

    def _set_dirty(self, dirty: bool) -> None:
        self.dirty = dirty
        self.state_label.setText(tr("有未保存的修改") if dirty else "")

    # ------------------------------------------------------------------ saving
    def collect(self) -> tuple[dict[str, Any] | None, list[str]]:
        """The contract JSON the form describes, or the problems (in Chinese) that stop it being saved."""
        problems: list[str] = []
        data = dict(self._original)
        data["chapter"] = self.chapter
        storyline = self.storyline_edit.text().strip()
        if storyline:
            data["storyline_id"] = storyline
        else:
            data.pop("storyline_id", None)

        pre = dict(data.get("preconditions") or {})
        pre["character_states"] = self._collect_states(self.pre_states, tr("前置条件"), problems)
        pre["required_world_rules"] = [
            part.strip() for part in re.split(r"[,，、\s]+", self.world_rules_edit.text()) if part.strip()
        ]
        data["preconditions"] = pre

        objectives = []
        seen: set[str] = set()
        for row in range(self.objectives.rowCount()):
            id_item = self.objectives.item(row, self.OBJ_ID)
            base = id_item.data(Qt.ItemDataRole.UserRole) if id_item else None
            entry = dict(base) if isinstance(base, dict) else {}
            objective_id = _cell(self.objectives, row, self.OBJ_ID)
            kind = _cell(self.objectives, row, self.OBJ_TYPE)
            if not objective_id:
                problems.append(tr("目标第 {n} 行缺少 ID。").format(n=row + 1))
            elif objective_id in seen:
                problems.append(tr("目标 ID {id} 重复。").format(id=objective_id))
            seen.add(objective_id)
            if not kind:
                problems.append(
                    tr("目标 {id} 缺少类型（如 plot、foreshadowing、character）。").format(
                        id=objective_id or row + 1
                    )
                )
            required_item = self.objectives.item(row, self.OBJ_REQUIRED)
            entry.update(
                id=objective_id,
                type=kind,
                required=bool(required_item and required_item.checkState() == Qt.CheckState.Checked),
                description=_cell(self.objectives, row, self.OBJ_DESCRIPTION),
            )
            objectives.append(entry)
        data["objectives"] = objectives

        post = dict(data.get("postconditions") or {})
        post["state_changes"] = self._collect_states(self.post_states, tr("后置条件"), problems)
        updates: dict[str, str] = {}
        allowed = ("planned", "planted", "advanced", "resolved")
        for row in range(self.foreshadow_updates.rowCount()):
            item_id = _cell(self.foreshadow_updates, row, 0)
            status = _cell(self.foreshadow_updates, row, 1)
            if not item_id and not status:
                continue
            if not item_id:
                problems.append(tr("伏笔更新第 {n} 行缺少伏笔 ID。").format(n=row + 1))
            if status not in allowed:
                problems.append(
                    tr("伏笔 {id} 的状态「{s}」无效，应为 planned、planted、advanced 或 resolved。").format(
                        id=item_id, s=status
                    )
                )
            updates[item_id] = status
        post["foreshadowing_updates"] = updates
        data["postconditions"] = post

        criteria = []
        for index in range(self.criteria.count()):
            text = self.criteria.item(index).text().strip()
            if text:
                criteria.append(text)
        data["acceptance_criteria"] = criteria
        if problems:
            return None, problems
        contract, errors = NovelReader.validate_contract(data)
        if contract is None:
            for where, msg in errors:
                problems.append(tr("{where}：{msg}").format(where=where, msg=msg))
            return None, problems
        return contract.to_json_dict(), []

    def _collect_states(
        self, table: QTableWidget, what: str, problems: list[str]
    ) -> dict[str, dict[str, Any]]:
        states: dict[str, dict[str, Any]] = {}
        for row in range(table.rowCount()):
            who, key, value = (_cell(table, row, c) for c in range(3))
            if not (who or key or value):
                continue
            if not who or not key:
                problems.append(tr("{what}第 {n} 行需要同时填写角色和属性。").format(what=what, n=row + 1))
                continue
            states.setdefault(who, {})[key] = _parse_value(value)
        return states

    def save(self) -> bool:
        """Validate and save; on invalid input show why and keep everything the author typed."""
        data, problems = self.collect()
        if data is None:
            self.error_label.setText(tr("契约未保存：") + "\n" + "\n".join(f"• {p}" for p in problems))
            self.error_label.show()
            return False
        if self.reader is None:
            return False
        self.reader.save_contract(self.volume, self.chapter, data)
        self._original = data
        self.error_label.hide()
        self._set_dirty(False)
        self.state_label.setText(tr("已保存"))
        self.contract_saved.emit(self.chapter)
        return True
