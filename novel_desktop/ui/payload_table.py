"""Pieces every proposal form shares: an editable table of rows (add, delete, edit in place) that keeps each
row's unknown keys, the form-level checks on its rows, and the payload's validation in Chinese.

A form collects a payload dict from its widgets, checks the rows itself (empty required text, duplicate ids,
numbers that are not numbers: things the domain models accept or report in English), and then validates the
whole payload through the same domain model :func:`novel_desktop.domain.proposals.validate_payload` uses,
translating pydantic's messages into Chinese. Nothing typed is cleared by a failed check.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.domain.proposals import PAYLOAD_MODELS, validate_payload
from novel_desktop.i18n import labelled, tr

ColumnKind = Literal["text", "list", "int", "choice"]
#: How a list cell is typed and shown: items separated by 「；」 (a Chinese exception may contain 「，」).
LIST_SEPARATOR = "；"
_LIST_SPLIT = re.compile(r"[;；\n]+")


@dataclass(frozen=True)
class Column:
    """One column of a :class:`RowTable`: the JSON key it edits and how."""

    key: str
    header: str
    kind: ColumnKind = "text"
    #: A text column that may not be left empty.
    required: bool = False
    #: An empty optional cell leaves the key out (None) instead of storing "".
    optional: bool = False
    #: For "choice": the stored values and what the author reads for each.
    choices: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    #: The column takes the spare width (long free text).
    stretch: bool = False
    tip: str = ""


def _cell_text(column: Column, value: Any) -> str:
    if value is None:
        return ""
    if column.kind == "list":
        items = value if isinstance(value, list) else [value]
        return LIST_SEPARATOR.join(str(v) for v in items)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _cell_value(column: Column, text: str) -> Any:
    text = text.strip()
    if column.kind == "list":
        return [part.strip() for part in _LIST_SPLIT.split(text) if part.strip()]
    if column.kind == "int":
        if not text:
            return None
        try:
            return int(text)
        except ValueError:
            return text  # kept as typed; check_rows explains it
    if not text and column.optional:
        return None
    return text


def check_rows(
    rows: list[dict[str, Any]], columns: list[Column], what: str, key: str | None = "id"
) -> list[str]:
    """The problems of ``rows`` a table can see itself (required text, whole numbers, duplicate ``key``)."""
    problems: list[str] = []
    seen: set[str] = set()
    for n, row in enumerate(rows, 1):
        label = tr("{what}第 {n} 行").format(what=what, n=n)
        ident = str(row.get(key) or "").strip() if key else ""
        if ident:
            label = tr("{what} {id}").format(what=what, id=ident)
        for column in columns:
            value = row.get(column.key)
            if column.required and not str(value or "").strip():
                problems.append(tr("{row}：「{field}」不能为空").format(row=label, field=tr(column.header)))
            elif column.kind == "int" and value is not None and not isinstance(value, int):
                problems.append(
                    tr("{row}：「{field}」应填整数（章号），现在是「{value}」").format(
                        row=label, field=tr(column.header), value=value
                    )
                )
        if ident:
            if ident in seen:
                problems.append(tr("{what}编号 {id} 重复：每条的编号必须不同").format(what=what, id=ident))
            seen.add(ident)
    return problems


class RowTable(QWidget):
    """A table of JSON objects, one per row, with 添加 / 删除所选 buttons underneath.

    Keys the table has no column for ride along with their row, so a save never drops what it did not show.
    """

    changed = Signal()

    def __init__(
        self,
        columns: list[Column],
        *,
        add_text: str,
        new_row: Callable[[int], dict[str, Any]] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.columns = columns
        self._new_row = new_row or (lambda _n: {})
        self._loading = False
        self.table = QTableWidget(0, len(columns))
        self.table.setHorizontalHeaderLabels([tr(c.header) for c in columns])
        for index, column in enumerate(columns):
            if column.tip:
                header_item = self.table.horizontalHeaderItem(index)
                if header_item is not None:
                    header_item.setToolTip(tr(column.tip))
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        stretch = [i for i, c in enumerate(columns) if c.stretch]
        for index in stretch:
            header.setSectionResizeMode(index, QHeaderView.ResizeMode.Stretch)
        header.setStretchLastSection(not stretch)
        self.table.itemChanged.connect(self._on_table_item_changed)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table, 1)
        row = QHBoxLayout()
        self.add_button = QPushButton(add_text)
        self.remove_button = QPushButton(tr("删除所选行"))
        for button in (self.add_button, self.remove_button):
            button.setAutoDefault(False)
        self.add_button.clicked.connect(lambda _checked=False: self.add_row())
        self.remove_button.clicked.connect(lambda _checked=False: self.remove_selected())
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        self.count_label = QLabel()
        self.count_label.setStyleSheet("color: palette(dark);")
        row.addStretch(1)
        row.addWidget(self.count_label)
        layout.addLayout(row)

    # ------------------------------------------------------------------ filling
    def set_rows(self, rows: list[dict[str, Any]]) -> None:
        self._loading = True
        self.table.setRowCount(0)
        for data in rows:
            self._append(dict(data))
        self._loading = False
        self._after_change(emit=False)

    def _append(self, data: dict[str, Any]) -> int:
        row = self.table.rowCount()
        self.table.insertRow(row)
        for index, column in enumerate(self.columns):
            if column.kind == "choice":
                combo = QComboBox()
                for value, label in column.choices:
                    combo.addItem(tr(label), value)
                current = data.get(column.key)
                at = combo.findData(current)
                if at < 0 and current:
                    combo.addItem(str(current), current)  # a value outside the list is kept as it was
                    at = combo.count() - 1
                combo.setCurrentIndex(max(at, 0))
                combo.currentIndexChanged.connect(lambda _i: self._after_change())
                self.table.setCellWidget(row, index, combo)
                item = QTableWidgetItem()
            else:
                item = QTableWidgetItem(_cell_text(column, data.get(column.key)))
                if column.kind == "list":
                    item.setToolTip(tr("多条用「；」分隔"))
            if index == 0:
                item.setData(Qt.ItemDataRole.UserRole, data)
            self.table.setItem(row, index, item)
        return row

    def add_row(self, data: dict[str, Any] | None = None) -> int:
        """Append a row (a new, mostly empty one when ``data`` is None) and start editing it."""
        self._loading = True
        row = self._append(dict(data) if data is not None else self._new_row(self.table.rowCount() + 1))
        self._loading = False
        self._after_change()
        if data is None:
            first_text = next((i for i, c in enumerate(self.columns) if c.kind != "choice"), 0)
            # Start on the first empty cell, the id already being filled in for the author.
            empty = next(
                (i for i, c in enumerate(self.columns) if c.kind != "choice" and not self.text(row, c.key)),
                first_text,
            )
            self.table.setCurrentCell(row, empty)
            item = self.table.item(row, empty)
            if item is not None:
                self.table.editItem(item)
        return row

    def remove_selected(self) -> None:
        rows = sorted({index.row() for index in self.table.selectedIndexes()}, reverse=True)
        if not rows and self.table.currentRow() >= 0:
            rows = [self.table.currentRow()]
        for row in rows:
            self.table.removeRow(row)
        if rows:
            self._after_change()

    def remove_row(self, row: int) -> None:
        self.table.removeRow(row)
        self._after_change()

    def _on_table_item_changed(self, _item: QTableWidgetItem) -> None:
        if not self._loading:
            self._after_change()

    def _after_change(self, *, emit: bool = True) -> None:
        self.table.resizeRowsToContents()
        self.count_label.setText(tr("共 {n} 条").format(n=self.table.rowCount()))
        if emit:
            self.changed.emit()

    # ------------------------------------------------------------------ reading
    def column_index(self, key: str) -> int:
        return next(i for i, c in enumerate(self.columns) if c.key == key)

    def row_count(self) -> int:
        return self.table.rowCount()

    def text(self, row: int, key: str) -> str:
        index = self.column_index(key)
        widget = self.table.cellWidget(row, index)
        if isinstance(widget, QComboBox):
            return str(widget.currentData() or "")
        item = self.table.item(row, index)
        return item.text() if item else ""

    def set_text(self, row: int, key: str, text: str) -> None:
        """Type into a cell (a choice cell: pick the value)."""
        index = self.column_index(key)
        widget = self.table.cellWidget(row, index)
        if isinstance(widget, QComboBox):
            widget.setCurrentIndex(widget.findData(text))
            return
        item = self.table.item(row, index)
        if item is None:
            item = QTableWidgetItem()
            self.table.setItem(row, index, item)
        item.setText(text)

    def find_row(self, key: str, value: str) -> int:
        """The first row whose ``key`` cell reads ``value``; -1 when none does."""
        return next((r for r in range(self.table.rowCount()) if self.text(r, key).strip() == value), -1)

    def rows(self) -> list[dict[str, Any]]:
        """Every row as its JSON object: the row's original keys, overlaid with what the cells say now."""
        out = []
        for row in range(self.table.rowCount()):
            first = self.table.item(row, 0)
            base = first.data(Qt.ItemDataRole.UserRole) if first else None
            data = dict(base) if isinstance(base, dict) else {}
            for column in self.columns:
                value = _cell_value(column, self.text(row, column.key))
                if value is None and column.optional:
                    data.pop(column.key, None)
                else:
                    data[column.key] = value
            out.append(data)
        return out


# ---------------------------------------------------------------------------------------------- validation

#: Field names as the forms label them, for the Chinese explanation of a model error.
FIELD_NAMES = {
    "rules": "规则",
    "documents": "文档",
    "file": "文件名",
    "content": "内容",
    "characters": "角色",
    "relationships": "关系",
    "contracts": "契约",
    "storylines": "故事线",
    "chapter_contracts": "章节契约",
    "outline": "大纲",
    "id": "编号",
    "name": "名字",
    "category": "类别",
    "rule": "规则内容",
    "constraint_type": "硬/软",
    "exceptions": "例外",
    "type": "类型",
    "scope": "范围",
    "status": "状态",
    "from": "从",
    "to": "到",
    "value": "好感度",
    "valid_from_chapter": "起始章",
    "valid_until": "截止章",
    "chapter": "章号",
}


def _where(loc: tuple[Any, ...]) -> str:
    parts = []
    for part in loc:
        if isinstance(part, int):
            parts.append(tr("第 {n} 条").format(n=part + 1))
        else:
            parts.append(tr(FIELD_NAMES.get(str(part), str(part))))
    return " · ".join(parts) or tr("（整体）")


def _message(error: Any) -> str:
    kind = error.get("type", "")
    ctx = error.get("ctx") or {}
    if kind == "missing":
        return tr("缺少这一项")
    if kind == "string_pattern_mismatch":
        return tr("格式不对（应符合 {pattern}，如 W-001、C-LINFENG-001）").format(
            pattern=ctx.get("pattern", "")
        )
    if kind == "string_too_short":
        return tr("不能为空")
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return tr("应填整数")
    if kind == "literal_error":
        return tr("只能是 {expected}").format(expected=ctx.get("expected", ""))
    if kind in ("greater_than_equal", "greater_than"):
        return tr("不能小于 {limit}").format(limit=ctx.get("ge", ctx.get("gt", "")))
    if kind in ("less_than_equal", "less_than"):
        return tr("不能大于 {limit}").format(limit=ctx.get("le", ctx.get("lt", "")))
    if kind == "value_error":
        return str(error.get("msg", "")).removeprefix("Value error, ")
    return str(error.get("msg", ""))


def payload_problems(kind: str, payload: dict[str, Any]) -> list[str]:
    """The problems of ``payload`` as a ``kind`` payload, in Chinese; empty when it validates.

    The same model as :func:`validate_payload` (which stays the arbiter: anything it rejects is reported)."""
    model = PAYLOAD_MODELS.get(kind)
    if model is None:
        return validate_payload(kind, payload)
    try:
        model.model_validate(payload)
    except ValidationError as exc:
        return [labelled(_where(tuple(e.get("loc", ()))), _message(e)) for e in exc.errors()]
    return validate_payload(kind, payload)


def normalized(kind: str, payload: dict[str, Any]) -> Any:
    """``payload`` with defaults filled in, for telling whether the author changed anything."""
    model = PAYLOAD_MODELS.get(kind)
    if model is None:
        return payload
    try:
        return model.model_validate(payload).model_dump(mode="json", by_alias=True)
    except ValidationError:
        return payload


class PayloadForm(QWidget):
    """A form for one proposal kind: ``load`` a payload, ``collect`` it back (or the problems, in Chinese)."""

    kind = ""
    #: Any field or row changed.
    changed = Signal()

    def load(self, payload: dict[str, Any]) -> None:
        raise NotImplementedError

    def _gather(self) -> tuple[dict[str, Any], list[str]]:
        """The payload the widgets describe and the problems the form sees itself."""
        raise NotImplementedError

    def collect(self) -> tuple[dict[str, Any] | None, list[str]]:
        """The payload, or None and the problems that stop it (the form's own checks, then the model's)."""
        payload, problems = self._gather()
        if not problems:
            problems = payload_problems(self.kind, payload)
        return (None, problems) if problems else (payload, [])
