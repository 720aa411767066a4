"""The NOVEL_ASK question dialog (seed 000): a QuestionSpec in, a validated AnswerSpec out.

Single choice is radio buttons, multi choice check boxes, free text a text box; ``allow_other`` adds an
automatic "其他" with an inline text field; defaults are preselected and recommended options come first.
The dialog cannot be submitted until every required question is answered, and what it returns has passed
``validate_answer_spec`` — the same check the pipeline applies to an answers file.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractButton,
    QButtonGroup,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.pipeline_controller import PipelineQuestion
from novel_desktop.domain.novel_ask import (
    AnswerSpec,
    AnswerSpecInvalid,
    Question,
    QuestionOption,
    QuestionSpec,
)
from novel_desktop.domain.novel_ask_answers import build_answer_spec, validate_answer_spec
from novel_desktop.i18n import join_list, tr, tr_n
from novel_desktop.ui.modal import open_and_wait

ANSWERED_BY = "novel_desktop"
_RECOMMENDED_MARKERS = ("推荐", "recommended")
#: The pipeline's question topics (NOVEL_ASK ``topic``) as the author reads them, for the dialog's title.
TOPIC_TITLES = {
    "novel setup": "新书设定",
    "style source": "文风来源",
    "quick start review": "试写确认",
    "volume plan": "卷大纲确认",
    "quality brief": "质量简报",
    "volume review": "卷末回顾",
    "rule change propagation": "契约更新",
    "contract change": "契约变更",
    "world extension conflict": "世界观冲突",
    "world decision": "世界观决定",
    "character decision": "角色决定",
    "platform binding": "平台设定",
    "world review": "确认世界规则",
    "characters review": "确认角色与契约",
    "storylines review": "确认故事线",
    "volume_plan review": "确认试写章节契约",
    "volume closures": "卷末收尾确认",
}
#: A free-text question whose id ends so asks for file paths, and gets a 选择文件… button.
FILES_SUFFIX = "_files"
#: Context with Markdown headings (a volume outline) is shown formatted; anything else as plain text.
_MARKDOWN_HEADING = re.compile(r"^#{1,6} ", re.M)


def is_recommended(option: QuestionOption) -> bool:
    """An option the question's author marked as recommended (in its label or description)."""
    text = f"{option.label} {option.description}".lower()
    return any(marker in text for marker in _RECOMMENDED_MARKERS)


def ordered_options(question: Question) -> list[QuestionOption]:
    """Recommended options first, otherwise in the spec's order (a stable sort)."""
    return sorted(question.options, key=lambda o: not is_recommended(o))


class _QuestionBox(QGroupBox):
    """One question: its header as the title, the question text, and the answer widgets."""

    changed = Signal()

    def __init__(self, question: Question, parent: QWidget | None = None) -> None:
        super().__init__(question.header, parent)
        self.question = question
        self.buttons: dict[str, QAbstractButton] = {}
        self.other_button: QAbstractButton | None = None
        self.other_edit: QLineEdit | None = None
        self.text_edit: QPlainTextEdit | None = None
        self._group: QButtonGroup | None = None
        self.browse_button: QPushButton | None = None

        layout = QVBoxLayout(self)
        layout.setSpacing(6)
        text = QLabel(question.question)
        text.setWordWrap(True)
        text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(text)
        hint = self._hint()
        if hint:
            hint_label = QLabel(hint)
            hint_label.setObjectName("hint")
            hint_label.setStyleSheet("color: palette(dark);")
            layout.addWidget(hint_label)

        if question.kind == "free_text":
            self.text_edit = QPlainTextEdit()
            self.text_edit.setPlaceholderText(tr("在这里填写"))
            self.text_edit.setFixedHeight(self.text_edit.fontMetrics().lineSpacing() * 4 + 16)
            if isinstance(question.default, str):
                self.text_edit.setPlainText(question.default)
            self.text_edit.textChanged.connect(self.changed)
            layout.addWidget(self.text_edit)
            if question.id.endswith(FILES_SUFFIX):
                # A question for file paths (the quick start's style samples): pick them instead of typing.
                self.browse_button = QPushButton(tr("选择文件…"))
                self.browse_button.clicked.connect(self._on_browse_clicked)
                layout.addWidget(self.browse_button, 0, Qt.AlignmentFlag.AlignLeft)
            return

        single = question.kind == "single_choice"
        if single:
            self._group = QButtonGroup(self)
            self._group.setExclusive(True)
        for option in ordered_options(question):
            button = self._make_button(option.label + (tr("（推荐）") if self._needs_tag(option) else ""))
            self.buttons[option.label] = button
            layout.addWidget(button)
            if option.description:
                desc = QLabel(option.description)
                desc.setWordWrap(True)
                desc.setStyleSheet("color: palette(dark); margin-left: 24px;")
                layout.addWidget(desc)
        if question.allow_other:
            row = QHBoxLayout()
            self.other_button = self._make_button(tr("其他"))
            self.other_edit = QLineEdit()
            self.other_edit.setPlaceholderText(tr("填写其他答案"))
            # Typing an answer of one's own means choosing "其他".
            self.other_edit.textEdited.connect(self._on_other_edited)
            self.other_edit.textChanged.connect(self.changed)
            row.addWidget(self.other_button)
            row.addWidget(self.other_edit, 1)
            layout.addLayout(row)
        self._preselect()

    def _on_browse_clicked(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(
            self, self.question.header, str(Path.home()), tr("文本 (*.txt *.md);;所有文件 (*)")
        )
        if files and self.text_edit is not None:
            self.text_edit.setPlainText(", ".join(files))

    def _on_other_edited(self, _text: str) -> None:
        if self.other_button is not None:
            self.other_button.setChecked(True)

    def _hint(self) -> str:
        parts = [tr("必答") if self.question.required else tr("选填")]
        if self.question.kind == "multi_choice":
            parts.append(tr("可多选"))
        return " · ".join(parts)

    @staticmethod
    def _needs_tag(option: QuestionOption) -> bool:
        # The marker may sit only in the description; show it on the option itself as well.
        return is_recommended(option) and not any(m in option.label.lower() for m in _RECOMMENDED_MARKERS)

    def _make_button(self, text: str) -> QAbstractButton:
        button: QAbstractButton
        if self.question.kind == "single_choice":
            button = QRadioButton(text)
            assert self._group is not None
            self._group.addButton(button)
        else:
            button = QCheckBox(text)
        button.toggled.connect(lambda _on: self.changed.emit())
        return button

    def _preselect(self) -> None:
        default = self.question.default
        chosen = [default] if isinstance(default, str) else list(default or [])
        for value in chosen:
            if value in self.buttons:
                self.buttons[value].setChecked(True)
            elif self.other_button is not None and self.other_edit is not None:
                # A default outside the labels is an "其他" answer (allowed only with allow_other).
                self.other_button.setChecked(True)
                existing = self.other_edit.text()
                self.other_edit.setText(join_list([existing, value]) if existing else value)

    # ------------------------------------------------------------------ reading the answer
    def _other_text(self) -> str:
        return self.other_edit.text().strip() if self.other_edit is not None else ""

    def is_complete(self) -> bool:
        """Required questions answered, and a checked "其他" has text."""
        if self.other_button is not None and self.other_button.isChecked() and not self._other_text():
            return False
        if not self.question.required:
            return True
        value = self.answer()
        if isinstance(value, list):
            return bool(value)
        return bool(value and value.strip())

    def answer(self) -> str | list[str] | None:
        if self.text_edit is not None:
            return self.text_edit.toPlainText()
        picked = [label for label, button in self.buttons.items() if button.isChecked()]
        # Keep the spec's order in the answer, not the display order.
        picked.sort(key=self.question.labels.index)
        other = self._other_text() if self.other_button is not None and self.other_button.isChecked() else ""
        if self.question.kind == "single_choice":
            return other or (picked[0] if picked else None)
        if other and other not in picked:
            picked.append(other)
        return picked


class AskDialog(QDialog):
    """Modal questions; :meth:`ask` (blocking) or :meth:`ask_async` (from a coroutine) return the answer."""

    def __init__(
        self,
        spec: QuestionSpec,
        context: str = "",
        parent: QWidget | None = None,
        *,
        report: QWidget | None = None,
    ) -> None:
        """``report``: what the question is about in full (the staged chapter's quality report beside the
        gate's low-score question), shown to the left of the questions."""
        super().__init__(parent)
        self.spec = spec
        self.report = report
        self._answer: AnswerSpec | None = None
        headers = [q.header for q in spec.questions]
        # One question: its header says it all; several: what they are about, when the topic is known.
        topic = TOPIC_TITLES.get(spec.topic)
        if len(headers) == 1:
            self.setWindowTitle(headers[0])
        else:
            self.setWindowTitle(tr(topic) if topic else tr("需要你的决定"))
        self.setMinimumWidth(560)

        outer = QVBoxLayout()
        outer.setSpacing(10)
        if report is None:
            self.setLayout(outer)
        else:
            root = QHBoxLayout(self)
            root.addWidget(report, 3)
            root.addLayout(outer, 2)
        if len(headers) == 1:
            heading = headers[0]
        elif topic:
            heading = tr_n("{topic}（{n} 个问题）", len(headers)).format(topic=tr(topic), n=len(headers))
        else:
            heading = tr_n("需要你的决定（{n} 个问题）", len(headers)).format(n=len(headers))
        title = QLabel(heading)
        font = title.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        title.setFont(font)
        title.setWordWrap(True)
        outer.addWidget(title)

        # What the question is about (a plan's outline, a chapter's verdict) can be long: it scrolls in a
        # box of at most a third of the screen, so the questions and the buttons always stay in view.
        self.context_view: QTextBrowser | None = None
        if context.strip():
            view = QTextBrowser()
            view.setOpenLinks(False)
            if _MARKDOWN_HEADING.search(context):
                view.setMarkdown(context)
            else:
                view.setPlainText(context)
            view.setStyleSheet(
                "QTextBrowser { background: #fff8e1; color: #4e3b00; border: 1px solid #f0d78c;"
                " border-radius: 4px; padding: 4px; }"
            )
            view.document().setTextWidth(self.minimumWidth() - 40)
            screen = self.screen().availableGeometry() if self.screen() else None
            cap = int(screen.height() / 3) if screen else 300
            view.setFixedHeight(min(int(view.document().size().height()) + 20, max(cap, 160)))
            self.context_view = view
            outer.addWidget(view)

        body = QWidget()
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(0, 0, 0, 0)
        body_layout.setSpacing(12)
        self.boxes: dict[str, _QuestionBox] = {}
        for question in spec.questions:
            box = _QuestionBox(question)
            box.changed.connect(self._update_ok)
            self.boxes[question.id] = box
            body_layout.addWidget(box)
        body_layout.addStretch(1)
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll_area.setWidget(body)
        outer.addWidget(self.scroll_area, 1)

        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #b00020;")
        self.error_label.hide()
        outer.addWidget(self.error_label)

        buttons = QDialogButtonBox()
        self.ok_button: QPushButton = buttons.addButton(tr("确定"), QDialogButtonBox.ButtonRole.AcceptRole)
        self.cancel_button: QPushButton = buttons.addButton(
            tr("取消"), QDialogButtonBox.ButtonRole.RejectRole
        )
        self.ok_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        outer.addWidget(buttons)
        self._update_ok()
        self._fit(body)

    def _fit(self, body: QWidget) -> None:
        """Tall enough to show every question when they fit on screen; the scroll area takes the rest."""
        screen = self.screen().availableGeometry() if self.screen() else None
        limit = int(screen.height() * 0.8) if screen else 700
        wanted = body.sizeHint().height() + 160 + (self.context_view.height() if self.context_view else 0)
        width = max(self.minimumWidth(), 600)
        if self.report is not None:  # the report beside the questions: wide, and as tall as the screen lets
            width = min(int(screen.width() * 0.9), 1200) if screen else 1200
            wanted = max(wanted, 720)
        self.resize(width, min(max(wanted, 280), limit))

    # ------------------------------------------------------------------ accessors (tests, the controller)
    def option_button(self, question_id: str, label: str) -> QAbstractButton:
        return self.boxes[question_id].buttons[label]

    def other_button(self, question_id: str) -> QAbstractButton | None:
        return self.boxes[question_id].other_button

    def other_edit(self, question_id: str) -> QLineEdit | None:
        return self.boxes[question_id].other_edit

    def text_edit(self, question_id: str) -> QPlainTextEdit | None:
        return self.boxes[question_id].text_edit

    def answers(self) -> dict[str, object]:
        """What is filled in now, question id → value (blank optional answers included; the spec builder drops
        them)."""
        return {qid: box.answer() for qid, box in self.boxes.items()}

    def answer(self) -> AnswerSpec | None:
        """The submitted AnswerSpec; None until the dialog was accepted."""
        return self._answer

    # ------------------------------------------------------------------ behaviour
    def _update_ok(self) -> None:
        self.ok_button.setEnabled(all(box.is_complete() for box in self.boxes.values()))
        self.error_label.hide()

    def accept(self) -> None:
        if not self.ok_button.isEnabled():
            return
        try:
            spec = build_answer_spec(self.spec, self.answers(), answered_by=ANSWERED_BY)
            problems = validate_answer_spec(self.spec, spec.to_json_dict())
            if problems:
                raise AnswerSpecInvalid(problems)
        except AnswerSpecInvalid as exc:
            self.error_label.setText("\n".join(str(p) for p in exc.problems))
            self.error_label.show()
            return
        self._answer = spec
        super().accept()

    # ------------------------------------------------------------------ entry points
    @classmethod
    async def ask_async(
        cls, parent: QWidget | None, spec: QuestionSpec, context: str = "", report: QWidget | None = None
    ) -> AnswerSpec | None:
        """Show the questions window-modally and wait for the answer: the validated AnswerSpec, or None when
        cancelled. ``open()`` plus a future, so no nested event loop runs inside a task. Cancelling the
        awaiting task closes the dialog."""
        dialog = cls(spec, context, parent, report=report)
        await open_and_wait(dialog, parent)
        return dialog.answer()


def dialog_asker(
    parent: QWidget | None, report_for: Callable[[str], QWidget | None] | None = None
) -> Callable[[PipelineQuestion], Awaitable[AnswerSpec | None]]:
    """The pipeline controller's responder for the window: each question as an AskDialog over ``parent``
    (a proposal's review as its forms, a :class:`ProposalDialog`), opened with ``open()`` and answered
    through its ``finished`` signal. ``report_for(topic)``: what to show beside a question of that topic
    (the gate's low-score question: the staged chapter's full quality report; ui/gate_report.py)."""

    async def ask(question: PipelineQuestion) -> AnswerSpec | None:
        if question.proposal is not None:
            from novel_desktop.ui.proposal_dialog import ProposalDialog

            return await ProposalDialog.ask_async(parent, question.proposal, question.spec)
        report = report_for(question.spec.topic) if report_for is not None else None
        return await AskDialog.ask_async(parent, question.spec, question.context, report)

    return ask
