"""查找替换 across the whole novel: every hit with its chapter and context; replace one, some or all.

Each chapter a replacement changes is saved through :meth:`ProjectController.save_chapter`, so it becomes a
manual revision (undoable in 历史版本) and marks the chapters after it for rebuild, as a hand edit does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.i18n import tr
from novel_desktop.ui import alerts

CONTEXT_CHARS = 18
MAX_HITS = 5000


@dataclass(frozen=True)
class Hit:
    chapter: int
    start: int
    end: int
    matched: str
    context: str


def compile_pattern(query: str, *, regex: bool = False, case: bool = False) -> re.Pattern[str] | None:
    """The search pattern, or None for an empty query; raises re.error for a bad regular expression."""
    if not query:
        return None
    return re.compile(query if regex else re.escape(query), 0 if case else re.IGNORECASE)


def find_all(texts: dict[int, str], pattern: re.Pattern[str], limit: int = MAX_HITS) -> list[Hit]:
    """Every non-empty match in every chapter, in reading order, with a line of context around it."""
    hits: list[Hit] = []
    for chapter in sorted(texts):
        text = texts[chapter]
        for m in pattern.finditer(text):
            if m.end() == m.start():
                continue
            left = text[max(0, m.start() - CONTEXT_CHARS) : m.start()].split("\n")[-1]
            right = text[m.end() : m.end() + CONTEXT_CHARS].split("\n")[0]
            hits.append(Hit(chapter, m.start(), m.end(), m.group(0), f"{left}【{m.group(0)}】{right}"))
            if len(hits) >= limit:
                return hits
    return hits


def replace_spans(text: str, spans: list[tuple[int, int]], pattern: re.Pattern[str], replacement: str) -> str:
    """Replace the matches at ``spans`` (those that still match there), from the end so offsets stay valid."""
    for start, end in sorted(spans, reverse=True):
        m = pattern.fullmatch(text, start, end)
        if m is None:
            continue
        text = text[:start] + m.expand(replacement) + text[end:]
    return text


class FindReplaceDialog(QDialog):
    """Non-modal: the author keeps it open while jumping between hits."""

    #: Show this hit in the editor: chapter, start and end offsets.
    hit_requested = Signal(int, int, int)
    #: Open editors must save before the dialog reads the chapters (connected directly, so it is done first).
    save_requested = Signal()
    #: Chapters whose text a replacement changed (open editors reload them).
    chapters_replaced = Signal(list)

    def __init__(self, project: ProjectController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.setWindowTitle(tr("查找替换（全书）"))
        self.resize(760, 560)
        self.hits: list[Hit] = []
        self._pattern: re.Pattern[str] | None = None

        self.find_edit = QLineEdit()
        self.find_edit.setPlaceholderText(tr("要查找的文字"))
        self.replace_edit = QLineEdit()
        self.replace_edit.setPlaceholderText(tr("替换为（可留空）"))
        self.regex_box = QCheckBox(tr("正则表达式"))
        self.case_box = QCheckBox(tr("区分大小写"))
        self.find_button = QPushButton(tr("查找全部"))
        self.find_button.setDefault(True)
        self.replace_button = QPushButton(tr("替换选中"))
        self.replace_all_button = QPushButton(tr("全部替换"))
        self.summary = QLabel()
        self.summary.setStyleSheet("color: palette(dark);")
        self.results = QTreeWidget()
        self.results.setRootIsDecorated(False)
        self.results.setUniformRowHeights(True)
        self.results.setHeaderLabels([tr("章"), tr("上下文")])
        self.results.setSelectionMode(QTreeWidget.SelectionMode.ExtendedSelection)
        self.results.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.results.setToolTip(tr("双击跳到正文"))

        grid = QGridLayout()
        grid.addWidget(QLabel(tr("查找")), 0, 0)
        grid.addWidget(self.find_edit, 0, 1)
        grid.addWidget(self.find_button, 0, 2)
        grid.addWidget(QLabel(tr("替换为")), 1, 0)
        grid.addWidget(self.replace_edit, 1, 1)
        grid.addWidget(self.replace_button, 1, 2)
        options = QHBoxLayout()
        options.addWidget(self.regex_box)
        options.addWidget(self.case_box)
        options.addStretch(1)
        options.addWidget(self.replace_all_button)
        layout = QVBoxLayout(self)
        layout.addLayout(grid)
        layout.addLayout(options)
        layout.addWidget(self.summary)
        layout.addWidget(self.results, 1)

        self.find_button.clicked.connect(self._on_find_clicked)
        self.find_edit.returnPressed.connect(self._on_find_clicked)
        self.replace_button.clicked.connect(self._on_replace_clicked)
        self.replace_all_button.clicked.connect(self._on_replace_all_clicked)
        self.results.itemActivated.connect(self._on_results_item_activated)
        self._update_buttons()

    # ------------------------------------------------------------------ actions
    def search(self) -> list[Hit]:
        """Find the query in every chapter and list the hits."""
        self.save_requested.emit()
        self.results.clear()
        self.hits = []
        try:
            self._pattern = compile_pattern(
                self.find_edit.text(), regex=self.regex_box.isChecked(), case=self.case_box.isChecked()
            )
        except re.error as exc:
            self._pattern = None
            self.summary.setText(tr("正则表达式有误：{error}").format(error=exc))
            self._update_buttons()
            return []
        if self._pattern is None:
            self.summary.setText("")
            self._update_buttons()
            return []
        self.hits = find_all(self.project.chapter_texts(), self._pattern)
        for hit in self.hits:
            item = QTreeWidgetItem([tr("第{n}章").format(n=hit.chapter), hit.context])
            item.setData(0, Qt.ItemDataRole.UserRole, hit)
            self.results.addTopLevelItem(item)
        chapters = len({h.chapter for h in self.hits})
        if self.hits:
            self.summary.setText(
                tr("共 {hits} 处，分布在 {chapters} 章").format(hits=len(self.hits), chapters=chapters)
            )
        else:
            self.summary.setText(tr("全书没有找到“{query}”").format(query=self.find_edit.text()))
        self._update_buttons()
        return self.hits

    def selected_hits(self) -> list[Hit]:
        return [i.data(0, Qt.ItemDataRole.UserRole) for i in self.results.selectedItems()]

    def replace(self, hits: list[Hit]) -> list[int]:
        """Replace the given hits; returns the changed chapters (each saved as a manual revision)."""
        if self._pattern is None or not hits:
            return []
        self.save_requested.emit()
        by_chapter: dict[int, list[tuple[int, int]]] = {}
        for hit in hits:
            by_chapter.setdefault(hit.chapter, []).append((hit.start, hit.end))
        changed = []
        for chapter, spans in sorted(by_chapter.items()):
            old = self.project.chapter_text(chapter)
            new = replace_spans(old, spans, self._pattern, self.replace_edit.text())
            if new != old:
                self.project.save_chapter(chapter, new)
                changed.append(chapter)
        if changed:
            self.chapters_replaced.emit(changed)
        replaced = len(hits)
        self.search()  # offsets moved: list what is left
        self.summary.setText(
            tr("已替换 {count} 处（{chapters} 章），每章存为一个手动修改版本。").format(
                count=replaced, chapters=len(changed)
            )
            + ("  " + self.summary.text() if self.hits else "")
        )
        return changed

    def replace_all(self) -> list[int]:
        return self.replace(list(self.hits))

    # ------------------------------------------------------------------ slots
    def _update_buttons(self) -> None:
        self.replace_button.setEnabled(bool(self.hits))
        self.replace_all_button.setEnabled(bool(self.hits))

    def _on_find_clicked(self) -> None:
        self.search()

    def _on_replace_clicked(self) -> None:
        hits = self.selected_hits()
        if not hits and self.hits:
            hits = [self.hits[0]]
        self.replace(hits)

    def _on_replace_all_clicked(self) -> None:
        chapters = len({h.chapter for h in self.hits})
        alerts.confirm(
            self,
            tr("全部替换"),
            tr(
                "将在 {chapters} 章中替换 {count} 处“{query}”。每章存为一个手动修改版本，可在历史版本里恢复。"
            ).format(chapters=chapters, count=len(self.hits), query=self.find_edit.text()),
            lambda yes: yes and self.replace_all(),
        )

    def _on_results_item_activated(self, item: QTreeWidgetItem, _column: int) -> None:
        hit: Hit = item.data(0, Qt.ItemDataRole.UserRole)
        self.hit_requested.emit(hit.chapter, hit.start, hit.end)
