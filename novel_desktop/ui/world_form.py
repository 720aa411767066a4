"""世界规则表单: the L1 rules as a table (edit, delete, add) and the narrative world documents as text."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.i18n import tr
from novel_desktop.ui.payload_table import Column, PayloadForm, RowTable, check_rows
from novel_desktop.ui.theme import heading_label

RULE_COLUMNS = [
    Column("id", "编号", required=True, tip="W- 加三位数字，如 W-004"),
    Column("category", "类别", required=True, tip="如 magic_system、geography、society"),
    Column("rule", "规则", required=True, stretch=True),
    Column(
        "constraint_type",
        "硬/软",
        "choice",
        choices=(("hard", "硬"), ("soft", "软")),
        tip="硬规则绝不能违反；软规则可以有解释过的例外",
    ),
    Column("exceptions", "例外", "list", tip="多条用「；」分隔"),
]


def next_rule_id(ids: list[str]) -> str:
    """The next free ``W-NNN`` after the highest one in ``ids``."""
    numbers = [int(i[2:]) for i in ids if i.startswith("W-") and i[2:].isdigit()]
    return f"W-{max(numbers, default=0) + 1:03d}"


class WorldForm(PayloadForm):
    """``world`` payload: rules (table) and documents (a list of files, each one's text)."""

    kind = "world"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._documents: list[dict[str, Any]] = []
        self._current_doc = -1
        self._loading = False
        #: Top-level keys the form does not edit, kept as they were.
        self._extra: dict[str, Any] = {}

        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        splitter = QSplitter(Qt.Orientation.Vertical)
        outer.addWidget(splitter, 1)

        rules_box = QWidget()
        rules_layout = QVBoxLayout(rules_box)
        rules_layout.setContentsMargins(0, 0, 0, 0)
        rules_layout.addWidget(heading_label(tr("世界规则")))
        self.rules = RowTable(RULE_COLUMNS, add_text=tr("添加规则"), new_row=self._new_rule)
        rules_layout.addWidget(self.rules, 1)
        splitter.addWidget(rules_box)

        docs_box = QWidget()
        docs_layout = QVBoxLayout(docs_box)
        docs_layout.setContentsMargins(0, 0, 0, 0)
        docs_layout.addWidget(heading_label(tr("设定文档")))
        row = QHBoxLayout()
        left = QVBoxLayout()
        self.doc_list = QListWidget()
        self.doc_list.setMaximumWidth(220)
        left.addWidget(self.doc_list, 1)
        buttons = QHBoxLayout()
        self.add_doc_button = QPushButton(tr("添加文档"))
        self.remove_doc_button = QPushButton(tr("删除文档"))
        for button in (self.add_doc_button, self.remove_doc_button):
            button.setAutoDefault(False)
            buttons.addWidget(button)
        left.addLayout(buttons)
        row.addLayout(left)
        right = QVBoxLayout()
        name_row = QHBoxLayout()
        name_row.addWidget(QLabel(tr("文件名")))
        self.doc_name = QLineEdit()
        self.doc_name.setPlaceholderText(tr("如 power-system.md"))
        name_row.addWidget(self.doc_name, 1)
        right.addLayout(name_row)
        self.doc_text = QPlainTextEdit()
        self.doc_text.setPlaceholderText(tr("设定说明（Markdown）"))
        right.addWidget(self.doc_text, 1)
        row.addLayout(right, 1)
        docs_layout.addLayout(row, 1)
        splitter.addWidget(docs_box)
        splitter.setSizes([360, 240])

        self.rules.changed.connect(self.changed)
        self.doc_list.currentRowChanged.connect(self._on_doc_list_current_row_changed)
        self.add_doc_button.clicked.connect(lambda _checked=False: self.add_document())
        self.remove_doc_button.clicked.connect(lambda _checked=False: self.remove_document())
        self.doc_name.textEdited.connect(self._on_doc_edited)
        self.doc_text.textChanged.connect(self._on_doc_edited)

    # ------------------------------------------------------------------ rules
    def _new_rule(self, _n: int) -> dict[str, Any]:
        ids = [self.rules.text(r, "id") for r in range(self.rules.row_count())]
        return {
            "id": next_rule_id(ids),
            "category": "",
            "rule": "",
            "constraint_type": "hard",
            "exceptions": [],
        }

    # ------------------------------------------------------------------ documents
    def _store_doc(self) -> None:
        if 0 <= self._current_doc < len(self._documents):
            doc = self._documents[self._current_doc]
            doc["file"] = self.doc_name.text().strip()
            doc["content"] = self.doc_text.toPlainText()

    def _show_doc(self, index: int) -> None:
        self._loading = True
        self._current_doc = index
        has = 0 <= index < len(self._documents)
        doc = self._documents[index] if has else {}
        self.doc_name.setText(str(doc.get("file") or ""))
        self.doc_text.setPlainText(str(doc.get("content") or ""))
        for widget in (self.doc_name, self.doc_text, self.remove_doc_button):
            widget.setEnabled(has)
        self._loading = False

    def _fill_doc_list(self, select: int) -> None:
        self.doc_list.blockSignals(True)
        self.doc_list.clear()
        for doc in self._documents:
            self.doc_list.addItem(QListWidgetItem(str(doc.get("file") or tr("（未命名）"))))
        self.doc_list.blockSignals(False)
        select = min(select, len(self._documents) - 1)
        self.doc_list.setCurrentRow(select)
        self._show_doc(select)

    def _on_doc_list_current_row_changed(self, row: int) -> None:
        self._store_doc()
        self._show_doc(row)

    def _on_doc_edited(self, *_args: object) -> None:
        if self._loading:
            return
        self._store_doc()
        item = self.doc_list.item(self._current_doc)
        if item is not None:
            item.setText(self.doc_name.text().strip() or tr("（未命名）"))
        self.changed.emit()

    def add_document(self) -> None:
        self._store_doc()
        names = {str(d.get("file")) for d in self._documents}
        n = 1
        while f"notes-{n}.md" in names:
            n += 1
        self._documents.append({"file": f"notes-{n}.md", "content": ""})
        self._fill_doc_list(len(self._documents) - 1)
        self.doc_name.setFocus()
        self.changed.emit()

    def remove_document(self) -> None:
        index = self._current_doc
        if 0 <= index < len(self._documents):
            del self._documents[index]
            self._current_doc = -1
            self._fill_doc_list(index)
            self.changed.emit()

    def select_document(self, file: str) -> None:
        """Show the document called ``file`` (tests, the tree's 世界规则 item)."""
        self._store_doc()
        index = next((i for i, d in enumerate(self._documents) if d.get("file") == file), -1)
        self.doc_list.setCurrentRow(index)

    # ------------------------------------------------------------------ payload
    def load(self, payload: dict[str, Any]) -> None:
        rules = [r for r in payload.get("rules") or [] if isinstance(r, dict)]
        self.rules.set_rows(rules)
        self._documents = [dict(d) for d in payload.get("documents") or [] if isinstance(d, dict)]
        self._extra = {k: v for k, v in payload.items() if k not in ("rules", "documents")}
        self._current_doc = -1
        self._fill_doc_list(0)

    def _gather(self) -> tuple[dict[str, Any], list[str]]:
        self._store_doc()
        rules = self.rules.rows()
        problems = check_rows(rules, RULE_COLUMNS, tr("规则"))
        names: set[str] = set()
        for n, doc in enumerate(self._documents, 1):
            name = str(doc.get("file") or "").strip()
            if not name:
                problems.append(tr("设定文档第 {n} 个没有文件名").format(n=n))
            elif name in names:
                problems.append(tr("设定文档「{name}」重名").format(name=name))
            names.add(name)
        payload = {**self._extra, "rules": rules, "documents": list(self._documents)}
        return payload, problems
