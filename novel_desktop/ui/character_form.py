"""角色表单: the characters (one at a time, picked from a list) with their profile and L2 contracts, and the
relationships between them.

Under the contracts table, :attr:`CharacterForm.history` shows every stored version of each contract
(issue 14, item 4: valid_from–valid_until, status, the chapter whose commit changed it).
"""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.domain.characters import Character
from novel_desktop.i18n import paren, tr
from novel_desktop.ui.contract_history import ContractHistoryWidget
from novel_desktop.ui.payload_table import Column, PayloadForm, RowTable, check_rows
from novel_desktop.ui.theme import heading_label

CONTRACT_COLUMNS = [
    Column("id", "编号", required=True, tip="C-角色名大写-三位数字，如 C-LINFENG-003"),
    Column(
        "type", "类型", required=True, tip="capability（能力）、personality（性格）、relationship（关系）…"
    ),
    Column("rule", "契约", required=True, stretch=True),
    Column("valid_from_chapter", "起始章", "int", optional=True),
    Column("valid_until", "截止章", "int", optional=True, tip="留空表示一直有效"),
    Column("update_requires", "变更条件", optional=True, tip="契约要改变之前必须发生的事（如突破事件）"),
    Column("exceptions", "例外", "list"),
]
RELATIONSHIP_COLUMNS = [
    Column("from", "从（角色 id）", required=True),
    Column("to", "到（角色 id）", required=True),
    Column("type", "关系", required=True),
    Column("value", "好感度", "int", optional=True, tip="-100（仇恨）到 100（忠诚）"),
    Column("note", "备注", optional=True, stretch=True),
]
#: The profile fields the form edits as one line of text.
_LINES = ("id", "name", "role", "motivation", "speech_pattern")


def contract_key(slug: str) -> str:
    """The name part of a contract id for a character slug: ``lin-feng`` → ``LINFENG``."""
    return re.sub(r"[^A-Z0-9]", "", slug.upper()) or "NEW"


class CharacterForm(PayloadForm):
    """``characters`` payload: the characters (the selected one's fields and contracts) and relationships."""

    kind = "characters"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._characters: list[dict[str, Any]] = []
        self._current = -1
        self._loading = False
        self._extra: dict[str, Any] = {}

        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        vertical = QSplitter(Qt.Orientation.Vertical)
        outer.addWidget(vertical, 1)

        top = QSplitter(Qt.Orientation.Horizontal)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(heading_label(tr("角色")))
        self.character_list = QListWidget()
        left_layout.addWidget(self.character_list, 1)
        buttons = QHBoxLayout()
        self.add_button = QPushButton(tr("添加角色"))
        self.remove_button = QPushButton(tr("删除角色"))
        for button in (self.add_button, self.remove_button):
            button.setAutoDefault(False)
            buttons.addWidget(button)
        left_layout.addLayout(buttons)
        top.addWidget(left)

        body = QWidget()
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(6, 0, 6, 0)
        fields = QFormLayout()
        self.line_edits: dict[str, QLineEdit] = {}
        labels = {
            "id": tr("标识（英文）"),
            "name": tr("名字"),
            "role": tr("身份"),
            "motivation": tr("动机"),
            "speech_pattern": tr("说话方式"),
        }
        for key in _LINES[:3]:
            self.line_edits[key] = QLineEdit()
            fields.addRow(labels[key], self.line_edits[key])
        self.line_edits["id"].setPlaceholderText(tr("小写英文和连字符，如 lin-feng"))
        self.line_edits["role"].setPlaceholderText(tr("protagonist、mentor、antagonist、supporting…"))
        self.description_edit = QPlainTextEdit()
        self.description_edit.setFixedHeight(self.description_edit.fontMetrics().lineSpacing() * 3 + 14)
        fields.addRow(tr("简介"), self.description_edit)
        self.goals_edit = QPlainTextEdit()
        self.goals_edit.setPlaceholderText(tr("每行一个目标"))
        self.goals_edit.setFixedHeight(self.goals_edit.fontMetrics().lineSpacing() * 3 + 14)
        fields.addRow(tr("目标"), self.goals_edit)
        for key in _LINES[3:]:
            self.line_edits[key] = QLineEdit()
            fields.addRow(labels[key], self.line_edits[key])
        body_layout.addLayout(fields)
        body_layout.addWidget(heading_label(tr("角色契约")))
        self.contracts = RowTable(CONTRACT_COLUMNS, add_text=tr("添加契约"), new_row=self._new_contract)
        self.contracts.setMinimumHeight(180)
        body_layout.addWidget(self.contracts)
        #: Where the contract history (issue 14, item 4) goes; empty until the lifecycle view adds itself.
        self.history_slot = QVBoxLayout()
        self.history_slot.setObjectName("ContractHistorySlot")
        self.history = ContractHistoryWidget()
        self.history.table.setMinimumHeight(150)  # a few versions visible; the detail area scrolls
        self.history_slot.addWidget(self.history)
        body_layout.addLayout(self.history_slot)
        body_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(body)
        self.detail = body
        top.addWidget(scroll)
        top.setStretchFactor(1, 1)
        top.setSizes([200, 700])
        vertical.addWidget(top)

        rel_box = QWidget()
        rel_layout = QVBoxLayout(rel_box)
        rel_layout.setContentsMargins(0, 0, 0, 0)
        rel_layout.addWidget(heading_label(tr("人物关系")))
        self.relationships = RowTable(RELATIONSHIP_COLUMNS, add_text=tr("添加关系"))
        rel_layout.addWidget(self.relationships, 1)
        vertical.addWidget(rel_box)
        vertical.setSizes([600, 150])
        vertical.setStretchFactor(0, 1)

        self.character_list.currentRowChanged.connect(self._on_character_list_current_row_changed)
        self.add_button.clicked.connect(lambda _checked=False: self.add_character())
        self.remove_button.clicked.connect(lambda _checked=False: self.remove_character())
        for edit in self.line_edits.values():
            edit.textEdited.connect(self._on_field_edited)
        self.description_edit.textChanged.connect(self._on_field_edited)
        self.goals_edit.textChanged.connect(self._on_field_edited)
        self.contracts.changed.connect(self._on_field_edited)
        self.relationships.changed.connect(self.changed)

    # ------------------------------------------------------------------ one character
    def _new_contract(self, _n: int) -> dict[str, Any]:
        key = contract_key(self.line_edits["id"].text().strip())
        numbers = []
        for row in range(self.contracts.row_count()):
            m = re.search(r"-(\d{3,})$", self.contracts.text(row, "id"))
            if m:
                numbers.append(int(m.group(1)))
        return {"id": f"C-{key}-{max(numbers, default=0) + 1:03d}", "type": "", "rule": "", "exceptions": []}

    def _store_current(self) -> None:
        if not 0 <= self._current < len(self._characters):
            return
        data = self._characters[self._current]
        for key, edit in self.line_edits.items():
            text = edit.text().strip()
            if key == "role" and not text:
                data.pop("role", None)
            else:
                data[key] = text
        data["description"] = self.description_edit.toPlainText().strip()
        data["goals"] = [g.strip() for g in self.goals_edit.toPlainText().splitlines() if g.strip()]
        data["contracts"] = self.contracts.rows()

    def _show(self, index: int) -> None:
        self._loading = True
        self._current = index
        has = 0 <= index < len(self._characters)
        data = self._characters[index] if has else {}
        for key, edit in self.line_edits.items():
            edit.setText(str(data.get(key) or ""))
        self.description_edit.setPlainText(str(data.get("description") or ""))
        self.goals_edit.setPlainText("\n".join(str(g) for g in data.get("goals") or []))
        self.contracts.set_rows([c for c in data.get("contracts") or [] if isinstance(c, dict)])
        self.detail.setEnabled(has)
        self.remove_button.setEnabled(has)
        self._show_history(data)
        self._loading = False

    def _show_history(self, data: dict[str, Any]) -> None:
        """Every version of this character's contracts as stored (a new, unsaved character has none)."""
        try:
            character = Character.model_validate(data) if data else None
        except ValueError:  # pydantic's ValidationError: an invalid row shows no history
            character = None
        self.history.setVisible(character is not None and bool(character.contracts))
        if character is not None:
            self.history.set_character(character)

    @staticmethod
    def _label(data: dict[str, Any]) -> str:
        name = str(data.get("name") or "").strip() or tr("（未命名）")
        slug = str(data.get("id") or "").strip()
        return name + paren(slug) if slug else name

    def _fill_list(self, select: int) -> None:
        self.character_list.blockSignals(True)
        self.character_list.clear()
        for data in self._characters:
            self.character_list.addItem(QListWidgetItem(self._label(data)))
        self.character_list.blockSignals(False)
        select = min(select, len(self._characters) - 1)
        self.character_list.setCurrentRow(select)
        self._show(select)

    def _on_character_list_current_row_changed(self, row: int) -> None:
        self._store_current()
        self._show(row)

    def _on_field_edited(self, *_args: object) -> None:
        if self._loading:
            return
        self._store_current()
        item = self.character_list.item(self._current)
        if item is not None:
            item.setText(self._label(self._characters[self._current]))
        self.changed.emit()

    def select_character(self, slug: str) -> bool:
        """Show the character whose id is ``slug`` (the tree's 角色 item); False when there is none."""
        self._store_current()
        index = next((i for i, c in enumerate(self._characters) if c.get("id") == slug), -1)
        if index >= 0:
            self.character_list.setCurrentRow(index)
        return index >= 0

    def current_slug(self) -> str:
        return self.line_edits["id"].text().strip()

    def add_character(self) -> None:
        self._store_current()
        slugs = {str(c.get("id")) for c in self._characters}
        n = 1
        while f"new-character-{n}" in slugs:
            n += 1
        self._characters.append(
            {"id": f"new-character-{n}", "name": "", "description": "", "goals": [], "contracts": []}
        )
        self._fill_list(len(self._characters) - 1)
        self.line_edits["name"].setFocus()
        self.changed.emit()

    def remove_character(self) -> None:
        index = self._current
        if 0 <= index < len(self._characters):
            del self._characters[index]
            self._current = -1
            self._fill_list(index)
            self.changed.emit()

    # ------------------------------------------------------------------ payload
    def load(self, payload: dict[str, Any]) -> None:
        self._characters = [dict(c) for c in payload.get("characters") or [] if isinstance(c, dict)]
        self._extra = {k: v for k, v in payload.items() if k not in ("characters", "relationships")}
        self.relationships.set_rows([r for r in payload.get("relationships") or [] if isinstance(r, dict)])
        self._current = -1
        self._fill_list(0)

    def _gather(self) -> tuple[dict[str, Any], list[str]]:
        self._store_current()
        problems: list[str] = []
        slugs: set[str] = set()
        for n, data in enumerate(self._characters, 1):
            slug = str(data.get("id") or "").strip()
            name = str(data.get("name") or "").strip()
            who = tr("角色「{name}」").format(name=name or slug or n)
            if not name:
                problems.append(tr("{who}：名字不能为空").format(who=who))
            if not slug:
                problems.append(tr("{who}：标识不能为空").format(who=who))
            elif slug in slugs:
                problems.append(tr("角色标识 {id} 重复：每个角色的标识必须不同").format(id=slug))
            slugs.add(slug)
            problems += check_rows(
                data.get("contracts") or [], CONTRACT_COLUMNS, tr("{who}的契约").format(who=who)
            )
        relationships = self.relationships.rows()
        problems += check_rows(relationships, RELATIONSHIP_COLUMNS, tr("关系"), key=None)
        payload = {
            **self._extra,
            "characters": [dict(c) for c in self._characters],
            "relationships": relationships,
        }
        return payload, problems
