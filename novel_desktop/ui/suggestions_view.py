"""The judge's issues as suggestions beside the chapter editor (issue 14, item 7).

:class:`SuggestionsView` lists the suggestions for one chapter: per suggestion the judge's issue it answers,
the old text (struck through, red) and the new text (green), the reason, and 接受 / 拒绝; 全部接受 takes every
one still open. An accepted suggestion changes the editor's text as one undoable edit (Ctrl+Z takes it back),
which the editor then saves as any edit of the author's. A passage the author has changed in the meantime
can no longer be replaced: its card says so. :func:`open_suggestions` shows the view in a dock at the right
of the window and fetches the suggestions through the :class:`SuggestionsController`.
"""

from __future__ import annotations

import contextlib
import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QScrollArea,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.suggestions_controller import ChapterSuggestions, SuggestionsController
from novel_desktop.domain.suggestions import ChapterSuggestion
from novel_desktop.i18n import tr, tr_n
from novel_desktop.ui import alerts

OLD_STYLE = "background:#fbe3e1;color:#8a1f17;text-decoration:line-through;"
NEW_STYLE = "background:#def2de;color:#1d5e20;"


def diff_html(original: str, replacement: str) -> str:
    """The old and the new passage, highlighted (the novel's text is escaped, never markup)."""
    old = html.escape(original).replace("\n", "<br>")
    new = html.escape(replacement).replace("\n", "<br>")
    return (
        f"<div style='line-height:150%'><span style='{OLD_STYLE}'>{old}</span></div>"
        f"<div style='line-height:150%;margin-top:4px'><span style='{NEW_STYLE}'>{new}</span></div>"
    )


def find_in_editor(editor: QTextEdit, suggestion: ChapterSuggestion, near: int) -> int | None:
    """Where ``suggestion.original`` is in the editor's text now: the occurrence nearest to ``near``."""
    text = editor.toPlainText()
    hits = []
    start = text.find(suggestion.original)
    while start != -1:
        hits.append(start)
        start = text.find(suggestion.original, start + 1)
    return min(hits, key=lambda p: abs(p - near)) if hits else None


def replace_in_editor(editor: QTextEdit, start: int, original: str, replacement: str) -> None:
    """Replace ``original`` at ``start`` with ``replacement`` as one undoable edit of the editor."""
    cursor = QTextCursor(editor.document())
    cursor.beginEditBlock()
    cursor.setPosition(start)
    cursor.setPosition(start + len(original), QTextCursor.MoveMode.KeepAnchor)
    cursor.insertText(replacement)
    cursor.endEditBlock()


class SuggestionCard(QFrame):
    """One suggestion: issue, old → new, reason, 接受 / 拒绝."""

    decided = Signal(str, bool)  # suggestion id, accepted

    def __init__(self, suggestion: ChapterSuggestion, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.suggestion = suggestion
        self.state = "open"  # open, accepted, rejected, missing
        self.setObjectName("SuggestionCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        box = QVBoxLayout(self)
        box.setContentsMargins(10, 8, 10, 8)
        box.setSpacing(4)
        head = QLabel(f"{suggestion.id}  {suggestion.issue}".strip())
        head.setTextFormat(Qt.TextFormat.PlainText)
        head.setWordWrap(True)
        head.setStyleSheet("font-weight:bold;")
        self.diff = QLabel(diff_html(suggestion.original, suggestion.replacement))
        self.diff.setTextFormat(Qt.TextFormat.RichText)
        self.diff.setWordWrap(True)
        self.diff.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.reason = QLabel(
            tr("理由：{reason}").format(reason=suggestion.reason) if suggestion.reason else ""
        )
        self.reason.setTextFormat(Qt.TextFormat.PlainText)
        self.reason.setWordWrap(True)
        self.reason.setStyleSheet("color:#666;")
        self.status = QLabel("")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.accept_button = QPushButton(tr("接受"))
        self.reject_button = QPushButton(tr("拒绝"))
        row = QHBoxLayout()
        row.addWidget(self.status, 1)
        row.addWidget(self.reject_button)
        row.addWidget(self.accept_button)
        box.addWidget(head)
        box.addWidget(self.diff)
        if suggestion.reason:
            box.addWidget(self.reason)
        box.addLayout(row)
        self.accept_button.clicked.connect(lambda: self.decided.emit(suggestion.id, True))
        self.reject_button.clicked.connect(lambda: self.decided.emit(suggestion.id, False))

    def settle(self, state: str) -> None:
        """Show the decision and take the buttons away."""
        self.state = state
        text = {
            "accepted": tr("已接受"),
            "rejected": tr("已拒绝"),
            "missing": tr("原文已改动，无法套用这条建议"),
        }[state]
        self.status.setText(text)
        self.accept_button.setEnabled(False)
        self.reject_button.setEnabled(False)
        self.setStyleSheet("#SuggestionCard{background:#f6f6f6;}" if state != "accepted" else "")


class SuggestionsView(QWidget):
    """The suggestions for one chapter, applied to ``editor`` as the author accepts them."""

    def __init__(self, editor: QTextEdit, data: ChapterSuggestions, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("SuggestionsView")
        self.editor = editor
        self.data = data
        #: Net change of length the accepted suggestions made before each position (to find the next one).
        self._shifts: list[tuple[int, int]] = []
        box = QVBoxLayout(self)
        box.setContentsMargins(8, 8, 8, 8)
        title = tr("第{n}章：评审意见 {issues} 条，修改建议 {count} 条").format(
            n=data.chapter, issues=len(data.issues), count=len(data.suggestions)
        )
        self.title = QLabel(title)
        self.title.setWordWrap(True)
        self.title.setStyleSheet("font-weight:bold;")
        box.addWidget(self.title)
        if data.dropped:
            note = QLabel(
                tr_n("{n} 条建议在正文中找不到原文，已忽略", len(data.dropped)).format(n=len(data.dropped))
            )
            note.setToolTip("\n".join(data.dropped))
            note.setStyleSheet("color:#8a6d1f;")
            box.addWidget(note)
        inner = QWidget()
        cards = QVBoxLayout(inner)
        cards.setContentsMargins(0, 0, 0, 0)
        self.cards: dict[str, SuggestionCard] = {}
        for s in data.suggestions:
            card = SuggestionCard(s)
            card.decided.connect(self._on_card_decided)
            cards.addWidget(card)
            self.cards[s.id] = card
        if not data.suggestions:
            empty = QLabel(tr("评审意见无法落到具体的文字修改上，可以用“重新评审”或手动修改。"))
            empty.setWordWrap(True)
            cards.addWidget(empty)
        cards.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(inner)
        box.addWidget(scroll, 1)
        row = QHBoxLayout()
        self.summary = QLabel("")
        self.accept_all_button = QPushButton(tr("全部接受"))
        self.accept_all_button.setEnabled(bool(data.suggestions) and not editor.isReadOnly())
        row.addWidget(self.summary, 1)
        row.addWidget(self.accept_all_button)
        box.addLayout(row)
        self.accept_all_button.clicked.connect(self.accept_all)
        if editor.isReadOnly():
            for card in self.cards.values():
                card.accept_button.setEnabled(False)
            self.summary.setText(tr("这一章是只读的，不能套用建议"))

    # ------------------------------------------------------------------ decisions
    def accept(self, suggestion_id: str) -> bool:
        """Apply one suggestion to the editor (one undoable edit); False when its passage is gone."""
        card = self.cards[suggestion_id]
        if card.state != "open" or self.editor.isReadOnly():
            return False
        s = card.suggestion
        near = s.start + sum(delta for pos, delta in self._shifts if pos < s.start)
        start = find_in_editor(self.editor, s, near)
        if start is None:
            card.settle("missing")
            self._update_summary()
            return False
        replace_in_editor(self.editor, start, s.original, s.replacement)
        self._shifts.append((s.start, len(s.replacement) - len(s.original)))
        card.settle("accepted")
        self._update_summary()
        return True

    def reject(self, suggestion_id: str) -> None:
        card = self.cards[suggestion_id]
        if card.state == "open":
            card.settle("rejected")
            self._update_summary()

    def accept_all(self) -> None:
        """Accept every suggestion still open, in the order of the text."""
        for sid, card in self.cards.items():
            if card.state == "open":
                self.accept(sid)

    def _on_card_decided(self, suggestion_id: str, accepted: bool) -> None:
        if accepted:
            self.accept(suggestion_id)
        else:
            self.reject(suggestion_id)

    def _update_summary(self) -> None:
        states = [c.state for c in self.cards.values()]
        self.summary.setText(
            tr("已接受 {a} 条，已拒绝 {r} 条，待定 {o} 条").format(
                a=states.count("accepted"), r=states.count("rejected"), o=states.count("open")
            )
        )
        self.accept_all_button.setEnabled("open" in states)


def open_suggestions(
    window: QMainWindow, editor: QTextEdit, controller: SuggestionsController, chapter: int
) -> QDockWidget:
    """Show chapter ``chapter``'s suggestions in a dock at the right of ``window``, bound to ``editor``."""
    dock = window.findChild(QDockWidget, "SuggestionsDock")
    if dock is None:
        dock = QDockWidget(tr("修改建议"), window)
        dock.setObjectName("SuggestionsDock")
        dock.setMinimumWidth(340)
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        quality = window.findChild(QDockWidget, "QualityDock")
        if quality is not None and not quality.isHidden():
            # Beside the judge's report as a tab of the same dock: the cards get the full height.
            window.tabifyDockWidget(quality, dock)
    waiting = QLabel(tr("正在按评审意见生成第{n}章的修改建议…").format(n=chapter))
    waiting.setWordWrap(True)
    waiting.setAlignment(Qt.AlignmentFlag.AlignCenter)
    dock.setWidget(waiting)
    dock.show()
    dock.raise_()

    def on_ready(data: object) -> None:
        if isinstance(data, ChapterSuggestions) and data.chapter == chapter:
            dock.setWidget(SuggestionsView(editor, data))
        disconnect()

    def on_failed(message: str) -> None:
        disconnect()
        dock.hide()
        alerts.warning(window, tr("修改建议"), message)

    def disconnect() -> None:
        for signal, slot in ((controller.ready, on_ready), (controller.failed, on_failed)):
            with contextlib.suppress(RuntimeError, TypeError):
                signal.disconnect(slot)

    controller.ready.connect(on_ready)
    controller.failed.connect(on_failed)
    if not controller.request(chapter):
        disconnect()
        waiting.setText(tr("上一次的修改建议还在生成，请稍候。"))
    return dock
