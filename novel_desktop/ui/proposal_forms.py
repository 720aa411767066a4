"""The forms of the four proposal kinds: 故事线 and 卷大纲与章节契约 here, 世界规则 and 角色 in their own
modules, and :func:`form_for` that picks one for a kind."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.i18n import tr
from novel_desktop.ui.character_form import CharacterForm
from novel_desktop.ui.contract_form import ContractForm
from novel_desktop.ui.payload_table import Column, PayloadForm, RowTable, check_rows
from novel_desktop.ui.theme import heading_label
from novel_desktop.ui.world_form import WorldForm

STORYLINE_COLUMNS = [
    Column("id", "标识", required=True, tip="小写英文、数字、连字符或下划线，如 sect_war"),
    Column("name", "名称", required=True),
    Column(
        "type", "类型", required=True, tip="main_arc、faction_conflict、conspiracy、mystery、character_arc…"
    ),
    Column(
        "scope",
        "范围",
        "choice",
        choices=(("novel", "全书"), ("multi_volume", "跨卷"), ("single_volume", "单卷")),
    ),
    Column(
        "status",
        "状态",
        "choice",
        choices=(("active", "进行中"), ("planned", "计划中"), ("dormant", "休眠"), ("resolved", "已收束")),
    ),
    Column("pov_characters", "视角角色", "list"),
    Column("description", "简介", stretch=True),
]
STORYLINE_LINK_COLUMNS = [
    Column("from", "从（故事线）", required=True),
    Column("to", "到（故事线）", required=True),
    Column("type", "关系", required=True),
    Column("convergence_condition", "交汇条件", stretch=True),
]


class StorylinesForm(PayloadForm):
    """``storylines`` payload: the storylines table and how they relate."""

    kind = "storylines"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._extra: dict[str, Any] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        splitter = QSplitter(Qt.Orientation.Vertical)
        layout.addWidget(splitter, 1)
        lines = QWidget()
        lines_layout = QVBoxLayout(lines)
        lines_layout.setContentsMargins(0, 0, 0, 0)
        lines_layout.addWidget(heading_label(tr("故事线")))
        self.storylines = RowTable(
            STORYLINE_COLUMNS,
            add_text=tr("添加故事线"),
            new_row=lambda n: {
                "id": f"line_{n}",
                "name": "",
                "type": "",
                "scope": "single_volume",
                "status": "planned",
            },
        )
        lines_layout.addWidget(self.storylines, 1)
        splitter.addWidget(lines)
        links = QWidget()
        links_layout = QVBoxLayout(links)
        links_layout.setContentsMargins(0, 0, 0, 0)
        links_layout.addWidget(heading_label(tr("故事线之间的关系")))
        self.links = RowTable(STORYLINE_LINK_COLUMNS, add_text=tr("添加关系"))
        links_layout.addWidget(self.links, 1)
        splitter.addWidget(links)
        splitter.setSizes([420, 160])
        self.storylines.changed.connect(self.changed)
        self.links.changed.connect(self.changed)

    def load(self, payload: dict[str, Any]) -> None:
        self._extra = {k: v for k, v in payload.items() if k not in ("storylines", "relationships")}
        self.storylines.set_rows([s for s in payload.get("storylines") or [] if isinstance(s, dict)])
        self.links.set_rows([r for r in payload.get("relationships") or [] if isinstance(r, dict)])

    def _gather(self) -> tuple[dict[str, Any], list[str]]:
        lines = self.storylines.rows()
        links = self.links.rows()
        problems = check_rows(lines, STORYLINE_COLUMNS, tr("故事线"))
        problems += check_rows(links, STORYLINE_LINK_COLUMNS, tr("故事线关系"), key=None)
        ids = {str(line.get("id") or "").strip() for line in lines}
        for n, link in enumerate(links, 1):
            for end in ("from", "to"):
                value = str(link.get(end) or "").strip()
                if value and value not in ids:
                    problems.append(
                        tr(
                            "故事线关系第 {n} 行：没有标识为 {id} 的故事线"
                            "（删掉这条关系，或改成已有的故事线）"
                        ).format(n=n, id=value)
                    )
        return {**self._extra, "storylines": lines, "relationships": links}, problems


class VolumePlanForm(PayloadForm):
    """``volume_plan`` payload: the outline text and one chapter contract at a time, chosen from a list.

    The storyline schedule and the foreshadowing plan ride along unchanged (their own views edit them)."""

    kind = "volume_plan"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._extra: dict[str, Any] = {}
        self._contracts: dict[int, dict[str, Any]] = {}
        self._current = 0
        self._switching = False
        self.volume = 1

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        layout.addWidget(splitter, 1)

        outline_box = QWidget()
        outline_layout = QVBoxLayout(outline_box)
        outline_layout.setContentsMargins(0, 0, 0, 0)
        outline_layout.addWidget(heading_label(tr("卷大纲")))
        self.outline_edit = QPlainTextEdit()
        self.outline_edit.setPlaceholderText(tr("本卷大纲（Markdown，每章一节：### 第 N 章 标题）"))
        outline_layout.addWidget(self.outline_edit, 1)
        splitter.addWidget(outline_box)

        chapters_box = QWidget()
        chapters_layout = QVBoxLayout(chapters_box)
        chapters_layout.setContentsMargins(0, 0, 0, 0)
        chapters_layout.addWidget(heading_label(tr("章节契约")))
        self.chapter_list = QListWidget()
        chapters_layout.addWidget(self.chapter_list, 1)
        buttons = QHBoxLayout()
        self.add_button = QPushButton(tr("添加章"))
        self.remove_button = QPushButton(tr("删除本章契约"))
        for button in (self.add_button, self.remove_button):
            button.setAutoDefault(False)
            buttons.addWidget(button)
        chapters_layout.addLayout(buttons)
        self.switch_label = QLabel()
        self.switch_label.setWordWrap(True)
        self.switch_label.setStyleSheet("color: #c62828;")
        self.switch_label.hide()
        chapters_layout.addWidget(self.switch_label)
        splitter.addWidget(chapters_box)

        self.contract_form = ContractForm(None)
        splitter.addWidget(self.contract_form)
        splitter.setSizes([380, 150, 520])

        self.outline_edit.textChanged.connect(self.changed)
        self.chapter_list.currentRowChanged.connect(self._on_chapter_list_current_row_changed)
        self.add_button.clicked.connect(lambda _checked=False: self.add_chapter())
        self.remove_button.clicked.connect(lambda _checked=False: self.remove_chapter())

    # ------------------------------------------------------------------ chapters
    def chapters(self) -> list[int]:
        return sorted(self._contracts)

    def _store_current(self) -> list[str]:
        """Keep the shown contract; its problems when it cannot be kept (it stays shown then)."""
        if not self._current or self._current not in self._contracts:
            return []
        data, problems = self.contract_form.collect()
        if data is None:
            return problems
        if data != self._contracts[self._current]:
            self._contracts[self._current] = data
        return []

    def _show(self, chapter: int) -> None:
        self._current = chapter
        has = chapter in self._contracts
        if has:
            self.contract_form.load(self.volume, chapter, self._contracts[chapter])
        self.contract_form.setEnabled(has)
        self.remove_button.setEnabled(has)

    def _fill_list(self, select: int) -> None:
        self._switching = True
        self.chapter_list.clear()
        row = 0
        for index, chapter in enumerate(self.chapters()):
            self.chapter_list.addItem(QListWidgetItem(tr("第 {n} 章").format(n=chapter)))
            if chapter == select:
                row = index
        self._switching = False
        if self._contracts:
            self._switching = True
            self.chapter_list.setCurrentRow(row)
            self._switching = False
            self._show(self.chapters()[row])
        else:
            self._show(0)

    def _on_chapter_list_current_row_changed(self, row: int) -> None:
        if self._switching or row < 0:
            return
        problems = self._store_current()
        if problems:
            # Everything typed stays: go back to the chapter until it is fixed.
            self.switch_label.setText(
                tr("第 {n} 章的契约有问题，改好再换章：").format(n=self._current) + "\n" + "\n".join(problems)
            )
            self.switch_label.show()
            self._switching = True
            self.chapter_list.setCurrentRow(self.chapters().index(self._current))
            self._switching = False
            return
        self.switch_label.hide()
        self._show(self.chapters()[row])

    def select_chapter(self, chapter: int) -> bool:
        """Show the contract of ``chapter``; False when the plan has none (or the shown one is invalid)."""
        if chapter not in self._contracts:
            return False
        self.chapter_list.setCurrentRow(self.chapters().index(chapter))
        return self._current == chapter

    def add_chapter(self, chapter: int | None = None) -> None:
        if self._store_current():
            self._on_chapter_list_current_row_changed(self.chapter_list.currentRow())
            return
        if chapter is None:
            suggested = max(self._contracts, default=0) + 1
            chapter, ok = QInputDialog.getInt(
                self, tr("添加章"), tr("为第几章写契约？"), suggested, 1, 100000
            )
            if not ok:
                return
        if chapter not in self._contracts:
            self._contracts[chapter] = {"chapter": chapter}
            self.changed.emit()
        self._fill_list(chapter)

    def remove_chapter(self) -> None:
        if self._current in self._contracts:
            del self._contracts[self._current]
            chapter = self._current
            self._current = 0
            later = [n for n in self.chapters() if n > chapter]
            self._fill_list(later[0] if later else max(self._contracts, default=0))
            self.changed.emit()

    # ------------------------------------------------------------------ payload
    def load(self, payload: dict[str, Any], *, volume: int = 1) -> None:
        self.volume = volume
        self._extra = {k: v for k, v in payload.items() if k not in ("outline", "chapter_contracts")}
        self.outline_edit.setPlainText(str(payload.get("outline") or ""))
        self._contracts = {}
        for contract in payload.get("chapter_contracts") or []:
            if isinstance(contract, dict) and isinstance(contract.get("chapter"), int):
                self._contracts[contract["chapter"]] = dict(contract)
        self._current = 0
        self._fill_list(min(self._contracts, default=0))

    def _gather(self) -> tuple[dict[str, Any], list[str]]:
        problems = [tr("第 {n} 章契约：{p}").format(n=self._current, p=p) for p in self._store_current()]
        outline = self.outline_edit.toPlainText()
        if not outline.strip():
            problems.append(tr("卷大纲不能为空"))
        contracts = [self._contracts[n] for n in self.chapters()]
        return {**self._extra, "outline": outline, "chapter_contracts": contracts}, problems


FORMS: dict[str, type[PayloadForm]] = {
    "world": WorldForm,
    "characters": CharacterForm,
    "storylines": StorylinesForm,
    "volume_plan": VolumePlanForm,
}


def form_for(kind: str, payload: dict[str, Any], *, volume: int | None = None) -> PayloadForm:
    """A form for a ``kind`` payload, filled with ``payload``."""
    form = FORMS[kind]()
    if isinstance(form, VolumePlanForm):
        form.load(payload, volume=volume or 1)
    else:
        form.load(payload)
    return form
