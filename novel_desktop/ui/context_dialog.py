"""The context inspector's window (issue 16 point 7): for a chapter, each agent's prompt, section by section.

Per agent and round a row with the model and the total tokens (against the writer's budget); under it each
section with its tokens and why it was included; what the budget dropped or trimmed is greyed and marked.
Chapters written before the records existed say so.
"""

from __future__ import annotations

from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSpinBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.context_controller import ContextController, ContextDenied
from novel_desktop.domain.context_record import ChapterContext, ContextEntry, ContextSection
from novel_desktop.i18n import tr, tr_n

_DIM = QColor(140, 140, 140)


def status_text(section: ContextSection) -> str:
    return {"dropped": tr("已丢弃"), "trimmed": tr("已裁剪")}.get(section.status, "")


def entry_heading(entry: ContextEntry) -> tuple[str, str, str]:
    """The entry's row: its agent and round, its total (and budget), its role and model."""
    name = entry.heading
    if entry.panel and entry.agent == "summarizer":  # the summarizer's parts, each its own prompt
        name += tr(" · 摘要组 {panel}").format(panel=entry.panel)
    elif entry.panel:  # the ordinary judge's panels, each its own prompt
        name += tr(" · 评审组 {panel}").format(panel=entry.panel)
    total = f"{entry.total_tokens:,}"
    if entry.budget:
        total = tr("{total} / 预算 {budget}").format(total=total, budget=f"{entry.budget:,}")
    return name, total, tr("模型 {model}（{role}）").format(model=entry.model, role=entry.role)


class ContextDialog(QDialog):
    """Shows a chapter's context records; the spin box picks another chapter."""

    def __init__(self, controller: ContextController, chapter: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ContextDialog")
        self.controller = controller
        self.setWindowTitle(tr("上下文检查"))
        self.resize(900, 620)
        top = QHBoxLayout()
        top.addWidget(QLabel(tr("章节：")))
        self.chapter_box = QSpinBox()
        numbers = controller.chapters() or [chapter]
        self.chapter_box.setRange(min(numbers), max(numbers))
        top.addWidget(self.chapter_box)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        top.addWidget(self.summary, 1)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels([tr("部分"), tr("tokens"), tr("纳入原因")])
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setStretchLastSection(True)
        self.tree.setWordWrap(True)
        self.tree.setAlternatingRowColors(True)
        self.note = QLabel()
        self.note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.note)
        layout.addWidget(self.tree, 1)
        layout.addWidget(buttons)
        self.chapter_box.setValue(chapter)
        self.chapter_box.valueChanged.connect(self.show_chapter)
        self.show_chapter(chapter)

    def show_chapter(self, number: int) -> None:
        self.tree.clear()
        try:
            record = self.controller.chapter(number)
        except ContextDenied as exc:
            self.summary.setText("")
            self.note.setText(str(exc))
            self.note.setVisible(True)
            return
        self._fill(record)

    def _fill(self, record: ChapterContext) -> None:
        state = tr("（写作中）") if record.in_flight else ""
        self.summary.setText(
            tr_n("第{n}章{state}：{count} 次提示词", len(record.entries)).format(
                n=record.chapter, state=state, count=len(record.entries)
            )
        )
        note = ""
        if not record.entries:
            note = (
                tr("这一章正在写作，还没有发出提示词。")
                if record.in_flight
                else tr(
                    "这一章没有上下文记录：它写于本版本之前，或来自导入、手写或外部执行器。此后由程序写的每一章都会记录各智能体的提示词内容。"
                )
            )
        self.note.setText(note)
        self.note.setVisible(bool(note))
        bold = QFont(self.tree.font())
        bold.setBold(True)
        for entry in record.entries:
            top = QTreeWidgetItem(list(entry_heading(entry)))
            for column in range(3):
                top.setFont(column, bold)
            self.tree.addTopLevelItem(top)
            for section in entry.sections:
                why = section.why
                mark = status_text(section)
                if mark:
                    why = (
                        tr("【{x}】").format(x=mark) + why + (tr("；") + section.note if section.note else "")
                    )
                child = QTreeWidgetItem([section.label, f"{section.tokens:,}", why])
                child.setToolTip(2, why)
                if section.status:
                    for column in range(3):
                        child.setForeground(column, QBrush(_DIM))
                    font = QFont(self.tree.font())
                    font.setStrikeOut(section.status == "dropped")
                    child.setFont(0, font)
                top.addChild(child)
            top.setExpanded(entry.agent in ("writer", "reviser") or len(record.entries) == 1)
