"""The chapter editor: comfortable CJK typography, live 字数, autosave, AI-phrase underlines with hints.

:class:`ChapterEditor` is the text area of one chapter, its title a field above it
(:attr:`ChapterEditor.title_bar`: "第六章" fixed beside the editable title; the text shows the body without
the ``# 第六章 标题`` line, and saving joins them back into that stored form); :class:`ChapterTab` is its
tab. Saving goes through
:meth:`ProjectController.save_chapter`, which keeps every save as a ``manual`` revision (so undo reaches
across saves through the 历史版本 dialog) and returns the chapters it marked ``needs_rebuild``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QEvent, QMimeData, QPoint, QSize, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFocusEvent,
    QFont,
    QHelpEvent,
    QResizeEvent,
    QSyntaxHighlighter,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QFrame,
    QTextEdit,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.analysis_controller import PhraseHit, PhraseMatcher
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.chapter_heading import ChapterHeading, join_heading, split_heading
from novel_desktop.domain.text import count_chars
from novel_desktop.i18n import tr
from novel_desktop.ui import theme
from novel_desktop.ui.chapter_title import TitleBar

#: The full-width indent of a Chinese paragraph (two ideographic spaces).
INDENT = "\u3000\u3000"
#: Line height in percent of the font's line spacing: airy enough for long CJK reading.
LINE_HEIGHT = 170
#: The widest text column, in em: about 40 汉字 a line, as a printed page; wider windows get side margins.
MAX_COLUMN_EM = 42
AUTOSAVE_MS = 2000


def phrase_hint(hit: PhraseHit) -> str:
    return tr("AI 腔：“{matched}”（{category}）\n建议：{suggestion}").format(
        matched=hit.matched, category=hit.category, suggestion=hit.suggestion
    )


def indent_paragraphs(text: str) -> str:
    """Every prose paragraph starts with "　　"; headings (``#``) and blank lines stay as they are."""
    lines = []
    for line in text.split("\n"):
        body = line.lstrip(" \t\u3000")
        if not body or body.startswith("#"):
            lines.append(line)
        else:
            lines.append(INDENT + body)
    return "\n".join(lines)


class AiPhraseHighlighter(QSyntaxHighlighter):
    """Wavy underlines under AI phrases, one block (paragraph) at a time; headings in bold."""

    def __init__(self, document: QTextDocument, matcher: PhraseMatcher | None = None) -> None:
        super().__init__(document)
        self._matcher = matcher or PhraseMatcher()
        self.hit_format = QTextCharFormat()
        self.hit_format.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
        self.hit_format.setUnderlineColor(QColor("#d9822b"))
        self.heading_format = QTextCharFormat()
        self.heading_format.setFontWeight(QFont.Weight.Bold)
        self.heading_format.setForeground(QColor("#3a3a3a"))

    @contextmanager
    def narrowed_to(self, text: str) -> Iterator[None]:
        """While ``text`` is laid out (loaded), underline with only the phrases it can contain."""
        full = self._matcher
        self._matcher = full.narrowed(text)
        try:
            yield
        finally:
            self._matcher = full

    def set_matcher(self, matcher: PhraseMatcher) -> None:
        """Underline another phrase list (the novel's blacklist changed)."""
        self._matcher = matcher
        document = self.document()
        with self.narrowed_to(document.toPlainText() if document is not None else ""):
            self.rehighlight()

    def hits(self, text: str) -> list[PhraseHit]:
        return self._matcher.hits(text)

    def highlightBlock(self, text: str) -> None:
        if text.startswith("#"):
            self.setFormat(0, len(text), self.heading_format)
            return
        for hit in self.hits(text):
            self.setFormat(hit.start, hit.end - hit.start, self.hit_format)


class ChapterEditor(QTextEdit):
    """One chapter's text. Saves itself 2 s after typing stops, and whenever :meth:`save` is called.

    A plain-text :class:`QTextEdit` rather than a QPlainTextEdit: QPlainTextEdit's layout ignores the
    block line height, and airy lines are the point of a writing tool; a chapter (a few thousand 字) lays
    out in a few milliseconds either way.
    """

    #: 字数 of the chapter and of the selection.
    counts_changed = Signal(int, int)
    #: The text was saved: the chapter and the chapters now marked needs_rebuild.
    chapter_saved = Signal(int, list)
    #: Saving failed; the message is for the author.
    save_failed = Signal(str)
    #: Files (or links) were dropped or pasted: the chapter, a controllers.drops.Dropped, the text position.
    #: They are never inserted as their URLs: the window asks what to do with them.
    files_dropped = Signal(int, object, int)

    def __init__(self, project: ProjectController, number: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ChapterEditor")
        self.project = project
        self.number = number
        self._chars = 0
        self._selected = 0
        self.setFont(theme.writing_font())
        self.setAcceptRichText(False)  # pasting from a web page must not bring its fonts and colours
        self.setLineWrapMode(QTextEdit.LineWrapMode.WidgetWidth)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setTabChangesFocus(False)
        self.document().setDocumentMargin(28)
        self.highlighter = AiPhraseHighlighter(self.document(), project.analysis.phrase_matcher())
        #: The title row above the text (its container lays it out): "第六章" and the editable title.
        self.title_bar = TitleBar()
        self._parts = split_heading("", number)
        self.title_bar.edit.textEdited.connect(self._on_title_edited)
        self.title_bar.edit.editingFinished.connect(self._on_title_editing_finished)
        self.title_bar.edit.returnPressed.connect(self.setFocus)
        self._autosave = QTimer(self)
        self._autosave.setSingleShot(True)
        self._autosave.setInterval(AUTOSAVE_MS)
        self._autosave.timeout.connect(self._on_autosave_timeout)
        self.textChanged.connect(self._on_self_text_changed)
        self.selectionChanged.connect(self._on_self_selection_changed)
        self.load()
        self.setReadOnly(project.readonly)  # a read-only novel is shown, never saved

    # ------------------------------------------------------------------ text
    def load(self, text: str | None = None) -> None:
        """Show the chapter's current text (or ``text``), its title in the title field; the undo history
        starts here."""
        self._autosave.stop()
        stored = self.project.chapter_text(self.number) if text is None else text
        self._parts = split_heading(stored, self.number)
        self.title_bar.show_heading(self._parts.label, self._parts.title)
        doc = self.document()
        doc.setUndoRedoEnabled(False)  # loading and formatting are not edits the author can undo
        body = self._parts.body
        with self.highlighter.narrowed_to(body):  # both re-underline every paragraph
            self.setPlainText(body)
            self._apply_line_height()
        doc.setUndoRedoEnabled(True)
        doc.setModified(False)
        self._recount()

    def _apply_line_height(self) -> None:
        # New paragraphs inherit the block format of the one they split from, so setting it once on every
        # block (and on the cursor) keeps the whole chapter at the same line height while the author types.
        fmt = QTextBlockFormat()
        fmt.setLineHeight(LINE_HEIGHT, QTextBlockFormat.LineHeightTypes.ProportionalHeight.value)
        cursor = QTextCursor(self.document())
        cursor.select(QTextCursor.SelectionType.Document)
        cursor.mergeBlockFormat(fmt)
        cursor.clearSelection()
        cursor.movePosition(QTextCursor.MoveOperation.Start)
        self.setTextCursor(cursor)

    def indent_paragraphs(self) -> None:
        """Start every paragraph with the full-width indent "　　" (one undoable edit)."""
        old = self.toPlainText()
        new = indent_paragraphs(old)
        if new == old or self.isReadOnly():
            return
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        block = self.document().firstBlock()
        while block.isValid():
            text = block.text()
            body = text.lstrip(" \t\u3000")
            if body and not body.startswith("#") and text[: len(text) - len(body)] != INDENT:
                cursor.setPosition(block.position())
                cursor.setPosition(block.position() + len(text) - len(body), QTextCursor.MoveMode.KeepAnchor)
                cursor.insertText(INDENT)
            block = block.next()
        cursor.endEditBlock()

    def insert_text_at(self, position: int, text: str) -> None:
        """Insert ``text`` at ``position`` as one undoable edit (a dropped file's text, once asked)."""
        if self.isReadOnly():
            return
        cursor = QTextCursor(self.document())
        cursor.setPosition(min(max(0, position), self.document().characterCount() - 1))
        cursor.insertText(text)
        self.setTextCursor(cursor)

    # ------------------------------------------------------------------ drops and pastes
    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        return source.hasUrls() or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:
        """Text goes in as text; files and links never as their URLs: they are handed to the window."""
        if not source.hasUrls():
            super().insertFromMimeData(source)
            return
        from novel_desktop.ui.drops import dropped_of

        self.files_dropped.emit(self.number, dropped_of(source), self.textCursor().position())

    @property
    def chars(self) -> int:
        return self._chars

    @property
    def selected_chars(self) -> int:
        return self._selected

    @property
    def is_modified(self) -> bool:
        return self.document().isModified() or self.title_bar.edit.isModified()

    @property
    def heading(self) -> ChapterHeading:
        """The stored text as last loaded or saved, taken apart (label, title, body)."""
        return self._parts

    def title(self) -> str:
        return self.title_bar.title()

    def stored_text(self) -> str:
        """The chapter as it is stored: the heading line with the title field's title, then the body."""
        return join_heading(self._parts, self.title_bar.title(), self.toPlainText())

    def setReadOnly(self, readonly: bool) -> None:
        super().setReadOnly(readonly)
        self.title_bar.edit.setReadOnly(readonly)

    def select_stored(self, start: int, end: int) -> None:
        """Select ``start``..``end`` of the stored text: in the title field when it is in the heading."""
        offset = self._parts.body_offset
        if start < offset:
            title_at = self._parts.title_offset
            self.title_bar.edit.setSelection(max(0, start - title_at), max(0, end - start))
            self.title_bar.edit.setFocus()
            return
        cursor = self.textCursor()
        last = self.document().characterCount() - 1
        cursor.setPosition(min(start - offset, last))
        cursor.setPosition(min(end - offset, last), QTextCursor.MoveMode.KeepAnchor)
        self.setTextCursor(cursor)
        self.ensureCursorVisible()

    # ------------------------------------------------------------------ saving
    def save(self) -> list[int] | None:
        """Save if changed; returns the chapters marked needs_rebuild, or None when nothing was saved."""
        self._autosave.stop()
        if not self.is_modified or self.isReadOnly():
            return None
        text = self.stored_text()
        try:
            marked = self.project.save_chapter(self.number, text)
        except Exception as exc:  # a locked or broken file: the text stays in the editor, marked unsaved
            self.save_failed.emit(tr("第{n}章保存失败：{error}").format(n=self.number, error=exc))
            return None
        self._parts = split_heading(text, self.number)
        self.title_bar.edit.setModified(False)
        self.document().setModified(False)
        self.chapter_saved.emit(self.number, marked)
        return marked

    def _on_autosave_timeout(self) -> None:
        self.save()

    def _on_title_edited(self, _text: str) -> None:
        self._recount()
        self._autosave.start()  # a renamed chapter saves as typing does: 2 s after the last keystroke

    def _on_title_editing_finished(self) -> None:
        if self.title_bar.edit.isModified():
            self.save()

    # ------------------------------------------------------------------ counts
    def _recount(self) -> None:
        # The chapter's 字数 as the project tree, the status bar and `novel status` count it: the stored text,
        # its heading line included, so the editor never disagrees with them.
        self._chars = count_chars(self.stored_text())
        self._selected = count_chars(self.textCursor().selectedText())
        self.counts_changed.emit(self._chars, self._selected)

    def _on_self_text_changed(self) -> None:
        self._recount()
        if self.document().isModified():
            self._autosave.start()  # restarts: saves 2 s after the last keystroke

    def _on_self_selection_changed(self) -> None:
        selected = count_chars(self.textCursor().selectedText())
        if selected != self._selected:
            self._selected = selected
            self.counts_changed.emit(self._chars, self._selected)

    # ------------------------------------------------------------------ AI-phrase hints
    def hint_at_position(self, position: int) -> str:
        """The suggestion for the AI phrase at document ``position`` ("" when there is none)."""
        block = self.document().findBlock(position)
        if not block.isValid():
            return ""
        offset = position - block.position()
        for hit in self.highlighter.hits(block.text()):
            if hit.start <= offset < hit.end:
                return phrase_hint(hit)
        return ""

    def hint_at(self, pos: QPoint) -> str:
        """The suggestion for the AI phrase under the viewport point ``pos``."""
        return self.hint_at_position(self.cursorForPosition(pos).position())

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            hint = self.hint_at(event.pos())
            if hint:
                QToolTip.showText(event.globalPos(), hint, self.viewport())
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)

    # ------------------------------------------------------------------ layout
    def resizeEvent(self, event: QResizeEvent) -> None:
        # Keep the line length of a printed page: on a wide window the column is centred. The margins are
        # set before the base class lays the text out for the new width.
        # The viewport's own resizes arrive here too, so the column is measured on the whole widget and
        # the margins are only touched when they change (else setting them would resize, recursively).
        column = int(self.fontMetrics().horizontalAdvance("汉") * MAX_COLUMN_EM)
        side = max(0, (self.width() - column) // 2)
        if self.viewportMargins().left() != side:
            self.setViewportMargins(side, 0, side, 0)
        super().resizeEvent(event)

    def minimumSizeHint(self) -> QSize:
        # The base class adds the viewport margins, which follow the width: the window could never shrink.
        return QSize(240, 120)

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self.save()  # leaving the editor (another tab, the tree, a dialog) saves at once


class ChapterTab(QWidget):
    """An editor tab: one chapter's title field above its text. (A stale chapter's rebuild is offered by
    the window's one 重建 bar, ui/flows/stale.py, for the whole novel.)"""

    def __init__(self, project: ProjectController, number: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.number = number
        self.editor = ChapterEditor(project, number)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.editor.title_bar)
        layout.addWidget(self.editor, 1)
