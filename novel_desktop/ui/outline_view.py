"""卷大纲与章节契约: the volume outline and each chapter's contract side by side, both editable.

Left, the volume's chapters (outline sections, written chapters and contracts, with 字数 and score); middle,
the outline Markdown; right, the selected chapter's contract as a form whose objectives carry the judge's
verdict. Everything is read and written through the ProjectController; :class:`VolumeReader` bundles the
few reads the outline and storyline views share.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
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
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.agents.context import outline_sections, section_title
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.contracts import ChapterContract
from novel_desktop.domain.evaluation import Evaluation
from novel_desktop.i18n import tr
from novel_desktop.storage import layout
from novel_desktop.storage.store import ChapterInfo

# ---------------------------------------------------------------------------------------------- reading

#: ``- **POV**: 林枫`` — the per-chapter fields of an outline section (seed 004: Storyline/POV/Location/…).
_FIELD = re.compile(r"^\s*(?:[-*+]\s*)?\**\s*([A-Za-z\u4e00-\u9fff]+)\s*\**\s*[:：]\s*\**\s*(.*?)\s*$")
#: Chinese spellings an author may use for the same outline fields.
_FIELD_ALIASES = {"故事线": "storyline", "视角": "pov", "地点": "location", "冲突": "conflict"}


def outline_field(section: str, name: str) -> str:
    """The value of ``- **Name**: value`` in an outline section ("" when absent); names match case-blind."""
    wanted = name.lower()
    for line in section.splitlines()[1:]:
        m = _FIELD.match(line)
        if not m:
            continue
        key = m.group(1).lower()
        if _FIELD_ALIASES.get(m.group(1), key) == wanted:
            return m.group(2).strip("* ")
    return ""


@dataclass(frozen=True)
class ChapterPlan:
    """One chapter of a volume as the views show it: planned (outline, contract), written, or both."""

    number: int
    title: str
    section: str
    info: ChapterInfo | None
    storyline_id: str | None
    pov: str

    @property
    def written(self) -> bool:
        return self.info is not None


class VolumeReader:
    """Reads a volume's outline, chapters and contracts through the ProjectController (never the store)."""

    def __init__(self, project: ProjectController) -> None:
        self.project = project

    def outline(self, volume: int) -> str | None:
        return self.project.document(f"{layout.volume_dir(volume)}/outline.md")

    def contract_numbers(self, volume: int) -> list[int]:
        prefix = f"{layout.volume_dir(volume)}/chapter-contracts/"
        numbers = []
        for path in self.project.documents(prefix):
            m = re.search(r"chapter-(\d+)\.json$", path)
            if m:
                numbers.append(int(m.group(1)))
        return numbers

    def contract_json(self, volume: int, chapter: int) -> dict[str, Any] | None:
        data = self.project.document_json(layout.contract_path(volume, chapter))
        return data if isinstance(data, dict) else None

    def contract(self, volume: int, chapter: int) -> ChapterContract | None:
        data = self.contract_json(volume, chapter)
        if data is None:
            return None
        try:
            return ChapterContract.model_validate(data)
        except ValidationError:
            return None

    def evaluation(self, chapter: int) -> Evaluation | None:
        data = self.project.evaluation(chapter)
        if not data:
            return None
        try:
            return Evaluation.model_validate(data)
        except ValidationError:
            # A hand-edited evaluation that no longer parses still has a readable overall score.
            return None

    def chapters(self, volume: int, outline: str | None = None) -> list[ChapterPlan]:
        """The volume's chapters in order: outline sections, written chapters and contracted chapters."""
        text = self.outline(volume) if outline is None else outline
        sections = outline_sections(text or "")
        infos = {c.number: c for c in self.project.chapters() if c.volume == volume}
        contracts = set(self.contract_numbers(volume))
        plans = []
        for number in sorted(set(sections) | set(infos) | contracts):
            section = sections.get(number, "")
            info = infos.get(number)
            storyline: str | None = None
            if number in contracts:
                contract = self.contract(volume, number)
                storyline = contract.storyline_id if contract else None
            storyline = (
                storyline or outline_field(section, "storyline") or (info.storyline_id if info else None)
            )
            title = section_title(section) or (info.title if info else "")
            plans.append(
                ChapterPlan(number, title, section, info, storyline or None, outline_field(section, "pov"))
            )
        return plans


# ---------------------------------------------------------------------------------------------- helpers

_VERDICT_PASS = QColor("#2e7d32")
_VERDICT_FAIL = QColor("#c62828")
_VERDICT_NONE = QColor("#8a8a8a")


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

    def __init__(self, project: ProjectController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.reader = VolumeReader(project)
        self.volume = 1
        self.chapter = 0
        self._original: dict[str, Any] = {}
        self._loading = False
        self.dirty = False

        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.heading = QLabel()
        font = self.heading.font()
        font.setPointSizeF(font.pointSizeF() * 1.2)
        font.setBold(True)
        self.heading.setFont(font)
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
        top.addRow(tr("故事线"), self.storyline_edit)
        form.addLayout(top)

        form.addWidget(_section_label(tr("前置条件")))
        pre = QFormLayout()
        self.world_rules_edit = QLineEdit()
        self.world_rules_edit.setPlaceholderText(tr("用逗号分隔，如 W-001, W-002"))
        pre.addRow(tr("须遵守的世界规则"), self.world_rules_edit)
        form.addLayout(pre)
        form.addWidget(QLabel(tr("开场时的角色状态")))
        self.pre_states = _EditableTable([tr("角色"), tr("属性"), tr("值")])
        form.addWidget(self.pre_states.with_buttons(lambda: self._add_row(self.pre_states)))

        form.addWidget(_section_label(tr("目标")))
        self.objectives = _EditableTable([tr("ID"), tr("类型"), tr("必需"), tr("描述"), tr("评审结果")])
        self.objectives.horizontalHeader().setStretchLastSection(False)
        self.objectives.horizontalHeader().setSectionResizeMode(
            self.OBJ_DESCRIPTION, QHeaderView.ResizeMode.Stretch
        )
        form.addWidget(self.objectives.with_buttons(self._add_objective))

        form.addWidget(_section_label(tr("后置条件")))
        form.addWidget(QLabel(tr("结束时的角色状态变化")))
        self.post_states = _EditableTable([tr("角色"), tr("属性"), tr("值")])
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

        QShortcut(
            QKeySequence.StandardKey.Save,
            self,
            self.save,
            context=Qt.ShortcutContext.WidgetWithChildrenShortcut,
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

        evaluation = self.reader.evaluation(chapter)
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
            data = {"id": f"OBJ-{layout.num(self.chapter)}-{table.rowCount() + 1}", "type": "plot"}
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
            item.setForeground(QBrush(_VERDICT_PASS))
        elif status in ("violation", "fail"):
            item = QTableWidgetItem(tr("✗ 违反"))
            item.setForeground(QBrush(_VERDICT_FAIL))
            font = QFont(item.font())
            font.setBold(True)
            item.setFont(font)
        else:
            item = QTableWidgetItem(tr("— 未评"))
            item.setForeground(QBrush(_VERDICT_NONE))
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
        try:
            contract = ChapterContract.model_validate(data)
        except ValidationError as exc:
            for error in exc.errors():
                where = ".".join(str(part) for part in error["loc"])
                problems.append(tr("{where}：{msg}").format(where=where, msg=error["msg"]))
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
        self.project.save_document(
            layout.contract_path(self.volume, self.chapter),
            json.dumps(data, ensure_ascii=False, indent=2) + "\n",
        )
        self._original = data
        self.error_label.hide()
        self._set_dirty(False)
        self.state_label.setText(tr("已保存"))
        self.contract_saved.emit(self.chapter)
        return True


# ---------------------------------------------------------------------------------------------- the view


class OutlineView(QWidget):
    """The volume outline (middle) and the selected chapter's contract (right) beside the chapter list."""

    chapter_requested = Signal(int)

    #: Columns of the chapter list.
    COL_NUMBER, COL_TITLE, COL_CHARS, COL_SCORE = range(4)

    def __init__(self, project: ProjectController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.reader = VolumeReader(project)
        self.volume = 1
        self._headings: tuple[tuple[int, str], ...] = ()
        self._outline_dirty = False
        self._saving = False

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        layout.addWidget(self.splitter)

        # Left: the chapter list.
        self.chapter_list = QTreeWidget()
        self.chapter_list.setRootIsDecorated(False)
        self.chapter_list.setHeaderLabels([tr("章"), tr("标题"), tr("字数"), tr("评分")])
        self.chapter_list.setUniformRowHeights(True)
        header = self.chapter_list.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(self.COL_TITLE, QHeaderView.ResizeMode.Stretch)
        self.chapter_list.currentItemChanged.connect(self._on_chapter_list_current_changed)
        self.chapter_list.itemDoubleClicked.connect(self._on_chapter_list_double_clicked)
        self.chapter_list.setToolTip(tr("双击打开章节"))
        self.splitter.addWidget(self.chapter_list)

        # Middle: the outline editor, or how to get an outline.
        self.outline_stack = QStackedWidget()
        editor_box = QWidget()
        editor_layout = QVBoxLayout(editor_box)
        editor_layout.setContentsMargins(0, 0, 0, 0)
        self.outline_heading = QLabel()
        self.outline_heading.setFont(self._heading_font())
        editor_layout.addWidget(self.outline_heading)
        self.outline_edit = QPlainTextEdit()
        self.outline_edit.setTabChangesFocus(False)
        self.outline_edit.textChanged.connect(self._on_outline_edit_text_changed)
        editor_layout.addWidget(self.outline_edit, 1)
        outline_bar = QHBoxLayout()
        self.outline_state = QLabel()
        self.outline_state.setStyleSheet("color: #666;")
        self.save_outline_button = QPushButton(tr("保存"))
        self.save_outline_button.setToolTip(tr("保存大纲（Ctrl+S）"))
        self.save_outline_button.clicked.connect(self.save_outline)
        outline_bar.addWidget(self.outline_state, 1)
        outline_bar.addWidget(self.save_outline_button)
        editor_layout.addLayout(outline_bar)
        QShortcut(
            QKeySequence.StandardKey.Save,
            editor_box,
            self.save_outline,
            context=Qt.ShortcutContext.WidgetWithChildrenShortcut,
        )
        self.outline_empty = self._empty_page(
            tr("本卷还没有大纲"),
            tr(
                "大纲是 Markdown，每章一节，以「## 第N章 标题」开头，下面可写 Storyline、POV、Location、"
                "Conflict 等要点。\n\n可以在「规划」中让 PlotArchitect 生成本卷大纲，"
                "或用命令行 novel outline set 导入手写的大纲，也可以直接在这里开始写。"
            ),
            tr("开始编写大纲"),
            self._start_outline,
        )
        self.outline_stack.addWidget(self.outline_empty)
        self.outline_stack.addWidget(editor_box)
        self.splitter.addWidget(self.outline_stack)

        # Right: the contract form, or how a contract comes about.
        self.contract_stack = QStackedWidget()
        self.contract_form = ContractForm(project)
        self.contract_empty_title = QLabel()
        self.contract_empty = self._empty_page(
            "",
            tr(
                "章节契约写明本章的前置条件、目标、后置条件和验收标准，QualityJudge 按它验收。\n\n"
                "续写本章前，PlotArchitect 会根据大纲生成契约；也可以现在新建一份手动填写。"
            ),
            tr("新建契约"),
            self._new_contract,
            title_label=self.contract_empty_title,
        )
        self.no_chapter_page = self._empty_page(
            tr("没有选中章节"), tr("在左侧选择一章，查看并编辑它的契约。"), None, None
        )
        self.contract_stack.addWidget(self.no_chapter_page)
        self.contract_stack.addWidget(self.contract_empty)
        self.contract_stack.addWidget(self.contract_form)
        self.splitter.addWidget(self.contract_stack)

        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setStretchFactor(2, 1)
        self.splitter.setSizes([260, 560, 620])

        project.document_changed.connect(self._on_project_document_changed)
        project.chapters_changed.connect(self._on_project_chapters_changed)
        if project.is_open:
            self.show_volume(int(project.checkpoint().get("current_volume") or 1))

    @staticmethod
    def _heading_font() -> QFont:
        font = QFont()
        font.setPointSizeF(font.pointSizeF() * 1.2)
        font.setBold(True)
        return font

    def _empty_page(
        self,
        title: str,
        text: str,
        button_text: str | None,
        on_click: Any,
        *,
        title_label: QLabel | None = None,
    ) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(24, 24, 24, 24)
        layout.addStretch(1)
        heading = title_label or QLabel(title)
        heading.setFont(self._heading_font())
        heading.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(heading)
        body = QLabel(text)
        body.setWordWrap(True)
        body.setAlignment(Qt.AlignmentFlag.AlignCenter)
        body.setStyleSheet("color: #555;")
        layout.addWidget(body)
        if button_text:
            button = QPushButton(button_text)
            button.clicked.connect(on_click)
            row = QHBoxLayout()
            row.addStretch(1)
            row.addWidget(button)
            row.addStretch(1)
            layout.addLayout(row)
        layout.addStretch(2)
        return page

    # ------------------------------------------------------------------ public
    def show_volume(self, volume: int) -> None:
        if volume != self.volume and not (self._confirm_discard() and self._confirm_discard_outline()):
            return
        self.volume = volume
        self.refresh()

    def refresh(self) -> None:
        """Re-read the outline, the chapter list and the selected contract from the project."""
        if not self.project.is_open:
            return
        outline = self.reader.outline(self.volume)
        titles = dict(self.project.volumes())
        name = titles.get(self.volume, "")
        self.outline_heading.setText(
            tr("第 {n} 卷大纲").format(n=self.volume) + (f" · {name}" if name else "")
        )
        self.outline_edit.blockSignals(True)
        self.outline_edit.setPlainText(outline or "")
        self.outline_edit.blockSignals(False)
        self._set_outline_dirty(False)
        self.outline_stack.setCurrentIndex(1 if outline else 0)
        self._rebuild_chapter_list(outline or "")

    def selected_chapter(self) -> int | None:
        item = self.chapter_list.currentItem()
        return int(item.data(self.COL_NUMBER, Qt.ItemDataRole.UserRole)) if item else None

    def select_chapter(self, chapter: int) -> None:
        for index in range(self.chapter_list.topLevelItemCount()):
            item = self.chapter_list.topLevelItem(index)
            if item is not None and item.data(self.COL_NUMBER, Qt.ItemDataRole.UserRole) == chapter:
                self.chapter_list.setCurrentItem(item)
                return

    def save_outline(self) -> None:
        text = self.outline_edit.toPlainText()
        self._saving = True
        try:
            self.project.save_document(f"{layout.volume_dir(self.volume)}/outline.md", text)
        finally:
            self._saving = False
        self._set_outline_dirty(False)
        self.outline_state.setText(tr("大纲已保存"))

    # ------------------------------------------------------------------ chapter list
    def _rebuild_chapter_list(self, outline: str) -> None:
        current = self.selected_chapter()
        plans = self.reader.chapters(self.volume, outline)
        self._headings = tuple((p.number, p.title) for p in plans if p.section)
        self.chapter_list.blockSignals(True)
        self.chapter_list.clear()
        for plan in plans:
            item = QTreeWidgetItem()
            item.setText(self.COL_NUMBER, str(plan.number))
            item.setData(self.COL_NUMBER, Qt.ItemDataRole.UserRole, plan.number)
            item.setText(self.COL_TITLE, plan.title or tr("（无标题）"))
            item.setTextAlignment(
                self.COL_NUMBER, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
            )
            if plan.info is not None:
                item.setText(self.COL_CHARS, f"{plan.info.chars:,}")
                item.setTextAlignment(
                    self.COL_CHARS, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                )
                evaluation = self.project.evaluation(plan.number) or {}
                overall = evaluation.get("overall")
                if isinstance(overall, int | float):
                    item.setText(self.COL_SCORE, f"{overall:.2f}")
                    item.setTextAlignment(self.COL_SCORE, Qt.AlignmentFlag.AlignCenter)
                    if overall < 3.0:
                        item.setForeground(self.COL_SCORE, QBrush(_VERDICT_FAIL))
            else:
                # Not written yet: grey, so planned chapters read apart from finished ones.
                for column in range(4):
                    item.setForeground(column, QBrush(_VERDICT_NONE))
                item.setText(self.COL_CHARS, tr("未写"))
            tip = [tr("第 {n} 章 {t}").format(n=plan.number, t=plan.title)]
            if plan.storyline_id:
                tip.append(tr("故事线：{s}").format(s=plan.storyline_id))
            if plan.pov:
                tip.append(tr("视角：{p}").format(p=plan.pov))
            if not plan.section:
                tip.append(tr("大纲里没有这一章"))
            item.setToolTip(self.COL_TITLE, "\n".join(tip))
            self.chapter_list.addTopLevelItem(item)
        self.chapter_list.blockSignals(False)
        if current is not None:
            self.select_chapter(current)
        if self.chapter_list.currentItem() is None and plans:
            # Start on the chapter about to be written: that is the contract the author most likely checks.
            next_chapter = int(self.project.checkpoint().get("last_completed_chapter") or 0) + 1
            target = next((p.number for p in plans if p.number >= next_chapter), plans[0].number)
            self.select_chapter(target)
        if self.chapter_list.currentItem() is None:
            self.contract_stack.setCurrentWidget(self.no_chapter_page)
        elif current is None or self.selected_chapter() != current or not self.contract_form.dirty:
            self._show_contract(self.selected_chapter())

    def chapter_rows(self) -> list[tuple[str, str, str, str]]:
        """What the chapter list shows, row by row (number, title, 字数, score)."""
        rows = []
        for index in range(self.chapter_list.topLevelItemCount()):
            item = self.chapter_list.topLevelItem(index)
            if item is not None:
                rows.append((item.text(0), item.text(1), item.text(2), item.text(3)))
        return rows

    def _on_chapter_list_current_changed(
        self, current: QTreeWidgetItem | None, previous: QTreeWidgetItem | None
    ) -> None:
        if current is None:
            self.contract_stack.setCurrentWidget(self.no_chapter_page)
            return
        chapter = int(current.data(self.COL_NUMBER, Qt.ItemDataRole.UserRole))
        if self.contract_form.dirty and chapter != self.contract_form.chapter and not self._confirm_discard():
            self.chapter_list.blockSignals(True)
            if previous is not None:
                self.chapter_list.setCurrentItem(previous)
            self.chapter_list.blockSignals(False)
            return
        self._show_contract(chapter)

    def _on_chapter_list_double_clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        self.chapter_requested.emit(int(item.data(self.COL_NUMBER, Qt.ItemDataRole.UserRole)))

    def _confirm_discard(self) -> bool:
        """Ask before unsaved contract edits are thrown away; True when it is fine to go on."""
        if not self.contract_form.dirty:
            return True
        answer = QMessageBox.question(
            self,
            tr("未保存的契约"),
            tr("第 {n} 章的契约有未保存的修改。要保存吗？").format(n=self.contract_form.chapter),
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Save:
            return self.contract_form.save()
        return answer == QMessageBox.StandardButton.Discard

    def _confirm_discard_outline(self) -> bool:
        if not self._outline_dirty:
            return True
        answer = QMessageBox.question(
            self,
            tr("未保存的大纲"),
            tr("第 {n} 卷的大纲有未保存的修改。要保存吗？").format(n=self.volume),
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Save:
            self.save_outline()
            return True
        return answer == QMessageBox.StandardButton.Discard

    # ------------------------------------------------------------------ contract
    def _show_contract(self, chapter: int | None) -> None:
        if chapter is None:
            self.contract_stack.setCurrentWidget(self.no_chapter_page)
            return
        data = self.reader.contract_json(self.volume, chapter)
        if data is None:
            self.contract_empty_title.setText(tr("第 {n} 章还没有契约").format(n=chapter))
            self.contract_stack.setCurrentWidget(self.contract_empty)
            self.contract_form.chapter = chapter
            self.contract_form.dirty = False
            return
        try:
            self.contract_form.load(self.volume, chapter, data)
        except ValidationError as exc:
            # A contract that no longer parses is shown as empty with the problem, never silently dropped.
            self.contract_form.load(self.volume, chapter, {})
            self.contract_form.error_label.setText(
                tr("契约文件无法解析：{e}").format(e=str(exc).splitlines()[0])
            )
            self.contract_form.error_label.show()
        self.contract_stack.setCurrentWidget(self.contract_form)

    def _new_contract(self) -> None:
        chapter = self.selected_chapter()
        if chapter is None:
            return
        plan = next(
            (
                p
                for p in self.reader.chapters(self.volume, self.outline_edit.toPlainText())
                if p.number == chapter
            ),
            None,
        )
        self.contract_form.load(self.volume, chapter, {}, storyline_hint=plan.storyline_id if plan else None)
        self.contract_form._set_dirty(True)
        self.contract_stack.setCurrentWidget(self.contract_form)

    # ------------------------------------------------------------------ outline
    def _start_outline(self) -> None:
        template = tr(
            "# 第 {v} 卷\n\n## 第 1 章 \n- **Storyline**: \n- **POV**: \n- **Conflict**: \n"
        ).format(v=self.volume)
        self.outline_edit.setPlainText(template)
        self.outline_stack.setCurrentIndex(1)
        self.outline_edit.setFocus()

    def _on_outline_edit_text_changed(self) -> None:
        self._set_outline_dirty(True)
        text = self.outline_edit.toPlainText()
        sections = outline_sections(text)
        headings = tuple((n, section_title(s)) for n, s in sorted(sections.items()))
        # Re-parse on every edit but rebuild the list only when a heading changed, so typing stays smooth.
        if headings != self._headings:
            self._rebuild_chapter_list(text)

    def _set_outline_dirty(self, dirty: bool) -> None:
        self._outline_dirty = dirty
        self.outline_state.setText(tr("大纲有未保存的修改") if dirty else "")

    # ------------------------------------------------------------------ project signals
    def _on_project_document_changed(self, path: str) -> None:
        if self._saving or not path.startswith(layout.volume_dir(self.volume)):
            return
        if path.endswith("outline.md") and self._outline_dirty:
            return  # never overwrite the author's unsaved outline with a pipeline write
        if path.endswith("outline.md"):
            self.refresh()
        else:
            self._rebuild_chapter_list(self.outline_edit.toPlainText())

    def _on_project_chapters_changed(self) -> None:
        self._rebuild_chapter_list(self.outline_edit.toPlainText())
