"""The chapter's title as a field above its text: "第六章" as a fixed label, the title editable.

:class:`TitleBar` is shown above the chapter editor, the staged draft's editor and the live stream. The
stored form (a ``# 第六章 标题`` heading line above the body) is put together by
:mod:`novel_desktop.domain.chapter_heading`; :class:`StreamHeading` takes the heading off a streamed chapter.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QLineEdit, QWidget

from novel_desktop.domain.chapter_heading import split_heading
from novel_desktop.i18n import tr
from novel_desktop.ui import theme

#: The width of the title row, in em of the writing font (the editor's text column is 42).
TITLE_COLUMN_EM = 42


class TitleBar(QFrame):
    """The fixed chapter label and the title field, on the paper colour of the editor below it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ChapterTitleBar")
        self.setStyleSheet(
            f"QFrame#ChapterTitleBar {{ background: {theme.PAPER}; }}"
            f"QLineEdit#ChapterTitle {{ background: transparent; border: none;"
            f" border-bottom: 1px solid #e2ded5; color: {theme.INK}; padding: 2px 0; }}"
            f"QLineEdit#ChapterTitle:focus {{ border-bottom: 1px solid {theme.ACCENT}; }}"
            f"QLabel#ChapterLabel {{ color: {theme.MUTED}; }}"
        )
        font = theme.writing_font(theme.WRITING_POINT_SIZE * 1.25)
        font.setWeight(QFont.Weight.Bold)
        self.label = QLabel()
        self.label.setObjectName("ChapterLabel")
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setFont(font)
        self.edit = QLineEdit()
        self.edit.setObjectName("ChapterTitle")
        self.edit.setFont(font)
        self.edit.setPlaceholderText(tr("章节标题"))
        self.edit.setToolTip(tr("章节标题：改标题只保存一个新版本，不需要重建"))
        self.edit.setAccessibleName(tr("章节标题"))
        row = QHBoxLayout(self)
        row.setContentsMargins(28, 18, 28, 2)
        row.setSpacing(12)
        row.addStretch(1)
        row.addWidget(self.label)
        row.addWidget(self.edit, 10)
        row.addStretch(1)
        column = int(self.edit.fontMetrics().horizontalAdvance("汉") * TITLE_COLUMN_EM * 0.8)
        self.edit.setMaximumWidth(column)

    def show_heading(self, label: str, title: str) -> None:
        """Show ``label`` (hidden when empty) and ``title`` as not yet edited."""
        self.label.setText(label)
        self.label.setVisible(bool(label))
        self.edit.setText(title)
        self.edit.setModified(False)
        self.edit.setCursorPosition(0)

    def title(self) -> str:
        return self.edit.text()


class StreamHeading:
    """Takes the ``# 第N章 标题`` line off the start of a streamed chapter: :meth:`feed` returns what is
    prose (the heading line is held back until it ends) and :attr:`label` / :attr:`title` once known."""

    def __init__(self, chapter: int = 0) -> None:
        self.reset(chapter)

    def reset(self, chapter: int) -> None:
        self.label = tr("第{n}章").format(n=chapter) if chapter else ""
        self.title = ""
        self._head = ""
        self._done = False
        self._eat_blank = False

    def feed(self, text: str) -> str:
        if self._done and not self._eat_blank:
            return text
        if not self._done:
            self._head += text
            start = self._head.lstrip("\n \t\u3000")
            if start and not start.startswith("#"):
                self._done = True
                text, self._head = self._head, ""
                return text
            if "\n" not in start:
                return ""  # the heading line has not ended yet
            parts = split_heading(self._head)
            self.label = parts.label or self.label
            self.title = parts.title
            self._done = True
            self._eat_blank = True
            text, self._head = parts.separator.lstrip("\n") + parts.body, ""
        stripped = text.lstrip("\n")
        if stripped:
            self._eat_blank = False
        return stripped
