"""The staged chapter's tab after 手动改 (issue 14, item 1): the chapter editor, the judge's issues beside it.

:class:`DraftTab` shows the staged text in a :class:`DraftEditor` (the chapter editor's typography and
AI-phrase marks; it never saves by itself: the staged text changes only through the two actions) and a
:class:`DraftPanel` with the score, the judge's issues, required fixes and violations, and the two actions:
重新评审 (the edited text is re-summarized and re-judged, then the gate as usual) and 直接提交 (committed as
it stands, flagged). The window's wiring is :mod:`novel_desktop.ui.flows.drafts`.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QHideEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.draft import StagedDraft
from novel_desktop.i18n import tr, tr_n
from novel_desktop.ui import theme
from novel_desktop.ui.chapter_editor import ChapterEditor


class DraftEditor(ChapterEditor):
    """The chapter editor over a staged text: editable; the staged text changes only through the two
    actions. What the author types is kept aside (:attr:`keep`, as the editor autosaves, loses focus or is
    hidden), so closing the tab or the window never loses an unfinished edit; :meth:`current_text` is what
    the actions use."""

    def __init__(self, project: ProjectController, number: int, text: str, parent: QWidget | None = None):
        super().__init__(project, number, parent)
        self.setObjectName("DraftEditor")
        #: Keeps the unfinished edit (chapter, text) → whether it was kept; set by the window's draft flow.
        self.keep: Callable[[int, str], bool] | None = None
        self._kept: str | None = None
        self.load(text)

    def load(self, text: str | None = None) -> None:
        # The base class loads the committed chapter; a draft only ever shows the text it is given.
        super().load(text or "")

    def restore(self, text: str) -> None:
        """Show an unfinished edit kept earlier, as an edit (not yet re-judged)."""
        self.load(text)
        self._kept = text
        self.document().setModified(True)

    def save(self) -> list[int] | None:
        self._autosave.stop()
        text = self.stored_text()
        changed = self.is_modified and text != self._kept
        if changed and self.keep is not None and self.keep(self.number, text):
            self._kept = text
        return None

    def hideEvent(self, event: QHideEvent) -> None:
        self.save()  # the tab closes or the window quits: keep what was typed
        super().hideEvent(event)

    def current_text(self) -> str:
        """The staged chapter as the author left it: the title field's heading line, then the text."""
        return self.stored_text()


class DraftPanel(QFrame):
    """The judge's verdict on the staged chapter and the author's two actions."""

    rejudge_clicked = Signal()
    commit_clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("DraftPanel")
        self.setMinimumWidth(260)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(12, 12, 12, 12)
        self.title = theme.heading_label("")
        self.state = self._label()
        self.state.setObjectName("DraftState")
        outer.addWidget(self.title)
        outer.addWidget(self.state)
        body = QWidget()
        self.sections = QVBoxLayout(body)
        self.sections.setContentsMargins(0, 4, 0, 4)
        self.issues = self._section(tr("评审问题"))
        self.fixes = self._section(tr("必须修改"))
        self.violations = self._section(tr("违反契约"))
        self.sections.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(body)
        outer.addWidget(scroll, 1)
        self.hint = self._label()
        self.hint.setText(
            tr("在左边修改正文。重新评审：只重新摘要和评审你的改稿（不再调用写作模型），然后照常门控。")
        )
        outer.addWidget(self.hint)
        row = QHBoxLayout()
        self.rejudge_button = QPushButton(tr("重新评审"))
        self.rejudge_button.setObjectName("RejudgeButton")
        self.rejudge_button.setDefault(True)
        self.rejudge_button.setToolTip(tr("保存改稿，重新摘要并评审，然后照常门控"))
        self.commit_button = QPushButton(tr("直接提交"))
        self.commit_button.setObjectName("CommitAsIsButton")
        self.commit_button.setToolTip(tr("按现状提交本章，并标记质量问题"))
        row.addWidget(self.rejudge_button)
        row.addWidget(self.commit_button)
        outer.addLayout(row)
        self.rejudge_button.clicked.connect(self.rejudge_clicked)
        self.commit_button.clicked.connect(self.commit_clicked)

    @staticmethod
    def _label() -> QLabel:
        label = QLabel()
        label.setTextFormat(Qt.TextFormat.PlainText)  # the judge quotes the novel
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label

    def _section(self, heading: str) -> QLabel:
        title = QLabel(heading)
        title.setStyleSheet("font-weight: bold; margin-top: 8px;")
        label = self._label()
        self.sections.addWidget(title)
        self.sections.addWidget(label)
        label.setProperty("heading", title)
        return label

    def _fill(self, label: QLabel, items: list[str]) -> None:
        heading = label.property("heading")
        label.setText("\n".join(f"• {item}" for item in items))
        label.setVisible(bool(items))
        if isinstance(heading, QLabel):
            heading.setVisible(bool(items))

    def show_draft(self, draft: StagedDraft) -> None:
        score = f"{draft.score:.1f}" if draft.score is not None else "—"
        self.title.setText(tr("第{n}章 · 暂存稿").format(n=draft.chapter))
        lines = [tr_n("{chars} 字 · 评分 {score}", draft.chars).format(chars=draft.chars, score=score)]
        if draft.awaiting_author:
            lines.append(tr("评分偏低，等你修改。"))
        elif draft.author_edited and draft.judged_text_changed:
            lines.append(tr("这是你的改稿，还没有重新评审；下面的意见针对改稿之前的正文。"))
        elif draft.author_edited:
            lines.append(tr("这是你的改稿。"))
        self.state.setText("\n".join(lines))
        self._fill(self.issues, draft.issues)
        self._fill(self.fixes, draft.required_fixes)
        self._fill(self.violations, draft.violations)

    def set_busy(self, busy: bool) -> None:
        self.rejudge_button.setEnabled(not busy)
        self.commit_button.setEnabled(not busy)


class DraftTab(QWidget):
    """A tab of the staged chapter: the editable text, the judge's issues beside it, the two actions."""

    #: 重新评审 / 直接提交 with the chapter number and the text in the editor.
    rejudge_requested = Signal(int, str)
    commit_requested = Signal(int, str)

    def __init__(self, project: ProjectController, draft: StagedDraft, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("DraftTab")
        self.number = draft.chapter
        self.editor = DraftEditor(project, draft.chapter, draft.text)
        self.panel = DraftPanel()
        splitter = QSplitter(Qt.Orientation.Horizontal)
        page = QWidget()  # the title field above the text, as in a chapter's tab
        column = QVBoxLayout(page)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.editor.title_bar)
        column.addWidget(self.editor, 1)
        splitter.addWidget(page)
        splitter.addWidget(self.panel)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)
        self.panel.rejudge_clicked.connect(self._on_panel_rejudge_clicked)
        self.panel.commit_clicked.connect(self._on_panel_commit_clicked)
        self.show_draft(draft)

    def show_draft(self, draft: StagedDraft, *, reload_text: bool = False) -> None:
        """Show ``draft``'s verdict (and its text, when asked or when the author has not edited)."""
        if reload_text or not self.editor.is_modified:
            self.editor.load(draft.text)
        self.panel.show_draft(draft)

    def _on_panel_rejudge_clicked(self) -> None:
        self.rejudge_requested.emit(self.number, self.editor.current_text())

    def _on_panel_commit_clicked(self) -> None:
        self.commit_requested.emit(self.number, self.editor.current_text())
