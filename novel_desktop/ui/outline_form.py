"""The middle of the outline view: the volume's header and the selected chapter's outline section as forms.

The outline stays Markdown (the agents read it); :mod:`novel_desktop.domain.outline_form` reads a section
into a :class:`SectionForm` and writes the edited form back changing only the lines that changed.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.domain.outline_form import (
    OUTLINE_FIELDS,
    SectionForm,
    read_header,
    read_section,
    write_header,
    write_section,
)
from novel_desktop.i18n import tr

#: The form's label of each outline field (the Markdown keeps the format's English names).
FIELD_LABELS = {
    "Storyline": "故事线",
    "POV": "视角（POV）",
    "Location": "地点",
    "Conflict": "冲突",
    "Arc": "人物弧光",
    "Foreshadowing": "伏笔",
    "StateChanges": "状态变化",
}


class OutlineForm(QScrollArea):
    """The volume header (title, summary) and one chapter's section (title, fields, 要点)."""

    #: The author changed something in the form.
    edited = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.Shape.NoFrame)
        body = QWidget()
        column = QVBoxLayout(body)
        column.setContentsMargins(0, 0, 8, 0)

        self.volume_box = QGroupBox()
        volume_form = QFormLayout(self.volume_box)
        self.volume_title = QLineEdit()
        self.volume_summary = QPlainTextEdit()
        self.volume_summary.setPlaceholderText(tr("本卷的概要、主题（可不填）"))
        self.volume_summary.setFixedHeight(84)
        volume_form.addRow(tr("卷标题"), self.volume_title)
        volume_form.addRow(tr("概要"), self.volume_summary)
        column.addWidget(self.volume_box)

        self.chapter_box = QGroupBox()
        chapter_form = QFormLayout(self.chapter_box)
        chapter_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.title_edit = QLineEdit()
        chapter_form.addRow(tr("标题"), self.title_edit)
        self.field_edits: dict[str, QLineEdit] = {}
        for name in OUTLINE_FIELDS:
            edit = QLineEdit()
            edit.setToolTip(tr("大纲里的「{name}」一行").format(name=name))
            self.field_edits[name] = edit
            chapter_form.addRow(tr(FIELD_LABELS[name]), edit)
        self.notes_edit = QPlainTextEdit()
        self.notes_edit.setPlaceholderText(tr("其他要点，每行一条（原样写进大纲）"))
        self.notes_edit.setMinimumHeight(90)
        chapter_form.addRow(tr("要点"), self.notes_edit)
        column.addWidget(self.chapter_box)
        self.no_chapter = QLabel(tr("在左侧选择一章，编辑它的大纲。"))
        self.no_chapter.setStyleSheet("color: #666;")
        column.addWidget(self.no_chapter)
        column.addStretch(1)
        self.setWidget(body)

        self.chapter: int | None = None
        self._loading = False
        for line in (self.volume_title, self.title_edit, *self.field_edits.values()):
            line.textEdited.connect(self._on_edited)
        self.volume_summary.textChanged.connect(self._on_edited)
        self.notes_edit.textChanged.connect(self._on_edited)

    def _on_edited(self, *_args: object) -> None:
        if not self._loading:
            self.edited.emit()

    # ------------------------------------------------------------------ load and write
    def load(self, volume: int, outline: str, chapter: int | None) -> None:
        """Show ``outline``'s header and chapter ``chapter``'s section (none: the header only)."""
        self._loading = True
        try:
            title, summary = read_header(outline)
            self.volume_box.setTitle(tr("卷信息"))
            self.volume_title.setText(title)
            self.volume_summary.setPlainText(summary)
            section = read_section(outline, chapter) if chapter is not None else None
            self.chapter = chapter if section is not None else None
            self.chapter_box.setVisible(section is not None)
            self.no_chapter.setVisible(section is None)
            if chapter is not None and section is None:
                missing = tr("大纲里没有第 {n} 章。可以用「添加章节」加一节。")
                self.no_chapter.setText(missing.format(n=chapter))
            else:
                self.no_chapter.setText(tr("在左侧选择一章，编辑它的大纲。"))
            if section is not None:
                self.chapter_box.setTitle(tr("第 {n} 章大纲").format(n=section.number))
                self.title_edit.setText(section.title)
                for name, edit in self.field_edits.items():
                    edit.setText(section.fields.get(name, ""))
                    edit.setCursorPosition(0)
                self.notes_edit.setPlainText(section.notes)
        finally:
            self._loading = False

    def section(self) -> SectionForm | None:
        """The chapter section as the form shows it (None when no chapter is shown)."""
        if self.chapter is None:
            return None
        fields = {name: edit.text() for name, edit in self.field_edits.items()}
        return SectionForm(self.chapter, self.title_edit.text(), fields, self.notes_edit.toPlainText())

    def apply(self, outline: str) -> str:
        """``outline`` with the form's header and section written into it (only changed lines differ)."""
        text = write_header(outline, self.volume_title.text(), self.volume_summary.toPlainText())
        section = self.section()
        return write_section(text, section) if section is not None else text

    def focus_title(self) -> None:
        self.title_edit.setFocus()
        self.title_edit.selectAll()


__all__ = ["FIELD_LABELS", "OutlineForm"]
