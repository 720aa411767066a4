"""What an agent proposes, shown as a form before it binds: 接受 / 保存修改 / 重新生成 (seed 004 §6.5.5).

The dialog answers the proposal's review question (:func:`novel_desktop.domain.proposals.review_spec`):
接受 stores the proposal as it is, 保存修改 stores the author's edited payload (the form's JSON in
``edited``), 重新生成 asks the agent again with the author's notes (``changes``). An edit that does not
validate is explained in Chinese and nothing is returned; 取消 returns None. :meth:`ProposalDialog.ask_async`
opens it with ``open()`` and a future, never a nested event loop.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.domain.novel_ask import AnswerSpec, AnswerSpecInvalid, QuestionSpec
from novel_desktop.domain.novel_ask_answers import build_answer_spec
from novel_desktop.domain.proposals import (
    ACCEPT,
    ACTION_Q,
    CHANGES_Q,
    EDIT,
    EDITED_Q,
    KIND_NAMES,
    REGENERATE,
    Proposal,
    review_spec,
)
from novel_desktop.i18n import tr
from novel_desktop.ui.modal import open_and_wait
from novel_desktop.ui.payload_table import PayloadForm, normalized
from novel_desktop.ui.proposal_forms import form_for

ANSWERED_BY = "novel_desktop"


def problems_text(problems: list[str], head: str) -> str:
    """The problems as the dialogs list them under a heading."""
    return head + "\n" + "\n".join(f"• {p}" for p in problems)


def error_label() -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    label.setStyleSheet("color: #c62828;")
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.hide()
    return label


def note_label(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setStyleSheet(
        "QLabel { background: #fff8e1; color: #4e3b00; border: 1px solid #f0d78c; border-radius: 4px;"
        " padding: 6px; }"
    )
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class ProposalDialog(QDialog):
    """A proposal as its form; :meth:`answer` is the AnswerSpec of the button the author pressed."""

    def __init__(
        self, proposal: Proposal, spec: QuestionSpec | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.proposal = proposal
        self.spec = spec or review_spec(proposal)
        self._answer: AnswerSpec | None = None
        self.setWindowTitle(proposal.title)
        self.setMinimumSize(900, 620)

        layout = QVBoxLayout(self)
        title = QLabel(proposal.title)
        font = title.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        title.setFont(font)
        title.setWordWrap(True)
        layout.addWidget(title)
        name = KIND_NAMES.get(proposal.kind, proposal.kind)
        intro = tr(
            "智能体生成了以下{name}。可以直接修改、删除或添加条目；"
            "只有你确认的内容才会保存，自第 {n} 章起生效。"
        )
        self.intro = QLabel(intro.format(name=tr(name), n=proposal.effective_from))
        self.intro.setWordWrap(True)  # a long sentence in English: it wraps instead of widening the dialog
        layout.addWidget(self.intro)
        if proposal.note.strip():
            self.note = note_label(proposal.note.strip())
            layout.addWidget(self.note)

        self.form: PayloadForm = form_for(proposal.kind, proposal.payload, volume=_volume_of(proposal))
        layout.addWidget(self.form, 1)

        self.changes_label = QLabel(tr("修改意见（选“重新生成”时填写，智能体会照此重写）"))
        self.changes_edit = QPlainTextEdit()
        self.changes_edit.setPlaceholderText(tr("例如：主角的金手指弱一些；删掉第二条支线"))
        self.changes_edit.setFixedHeight(self.changes_edit.fontMetrics().lineSpacing() * 3 + 14)
        layout.addWidget(self.changes_label)
        layout.addWidget(self.changes_edit)

        # The spec's own further questions (the volume plan's 章数), each a line the author may fill.
        self.extra_edits: dict[str, QLineEdit] = {}
        known = {ACTION_Q, EDITED_Q, CHANGES_Q}
        for q in self.spec.questions:
            if q.id not in known and q.kind == "free_text":
                edit = QLineEdit()
                edit.setPlaceholderText(q.question)
                self.extra_edits[q.id] = edit
                row = QHBoxLayout()
                row.addWidget(QLabel(q.header))
                row.addWidget(edit, 1)
                layout.addLayout(row)
        self.error_label = error_label()
        layout.addWidget(self.error_label)

        # In the order the author decides: keep it, keep my edit, try again, not now.
        buttons = QHBoxLayout()
        self.accept_button = QPushButton(tr("接受"))
        self.accept_button.setToolTip(tr("按智能体生成的内容保存（若已修改，则保存修改后的内容）"))
        self.save_button = QPushButton(tr("保存修改"))
        self.save_button.setToolTip(tr("检查并保存你修改后的内容"))
        self.regenerate_button = QPushButton(tr("重新生成"))
        self.cancel_button = QPushButton(tr("取消"))
        buttons.addStretch(1)
        # Options of the spec beyond the three (the volume plan's 调整章数) are buttons of their own.
        first = self.spec.questions[0] if self.spec.questions else None
        extra = [o for o in (first.options if first else []) if o.label not in (ACCEPT, EDIT, REGENERATE)]
        self.extra_buttons: dict[str, QPushButton] = {}
        for option in extra:
            button = QPushButton(tr(option.label))
            button.setToolTip(option.description)
            button.clicked.connect(lambda _checked=False, label=option.label: self._on_extra_clicked(label))
            self.extra_buttons[option.label] = button
        for button in (
            self.accept_button,
            self.save_button,
            self.regenerate_button,
            *self.extra_buttons.values(),
            self.cancel_button,
        ):
            button.setAutoDefault(False)
            buttons.addWidget(button)
        self.accept_button.setDefault(True)
        self.accept_button.clicked.connect(self._on_accept_clicked)
        self.save_button.clicked.connect(self._on_save_clicked)
        self.regenerate_button.clicked.connect(self._on_regenerate_clicked)
        self.cancel_button.clicked.connect(self.reject)
        layout.addLayout(buttons)

        labels = set(self.spec.questions[0].labels) if self.spec.questions else set()
        can_regenerate = REGENERATE in labels
        for widget in (self.regenerate_button, self.changes_label, self.changes_edit):
            widget.setVisible(can_regenerate)
        self.form.changed.connect(self.error_label.hide)
        self.resize(1100, 760)

    # ------------------------------------------------------------------ reading
    def answer(self) -> AnswerSpec | None:
        """The submitted AnswerSpec; None until a button other than 取消 ended the dialog."""
        return self._answer

    def edited_payload(self) -> dict[str, Any] | None:
        """The form's payload when it validates (the problems are shown otherwise)."""
        payload, problems = self.form.collect()
        if payload is None:
            self.error_label.setText(problems_text(problems, tr("还不能保存，请先改正：")))
            self.error_label.show()
        return payload

    def _modified(self, payload: dict[str, Any]) -> bool:
        kind = self.proposal.kind
        return bool(normalized(kind, payload) != normalized(kind, self.proposal.payload))

    # ------------------------------------------------------------------ buttons
    def _finish(self, answers: dict[str, object]) -> None:
        try:
            self._answer = build_answer_spec(self.spec, answers, answered_by=ANSWERED_BY)
        except AnswerSpecInvalid as exc:
            self.error_label.setText("\n".join(str(p) for p in exc.problems))
            self.error_label.show()
            return
        super().accept()

    def _on_accept_clicked(self) -> None:
        payload = self.edited_payload()
        if payload is None:
            return
        if self._modified(payload):
            # The author changed the form and pressed 接受: what they see is what is stored.
            self._save(payload)
            return
        self._finish({ACTION_Q: ACCEPT})

    def _on_save_clicked(self) -> None:
        payload = self.edited_payload()
        if payload is not None:
            self._save(payload)

    def _save(self, payload: dict[str, Any]) -> None:
        self._finish({ACTION_Q: EDIT, EDITED_Q: json.dumps(payload, ensure_ascii=False, indent=2)})

    def _on_regenerate_clicked(self) -> None:
        changes = self.changes_edit.toPlainText().strip()
        if not changes:
            self.error_label.setText(tr("写下要智能体改什么，再点“重新生成”。"))
            self.error_label.show()
            self.changes_edit.setFocus()
            return
        self._finish({ACTION_Q: REGENERATE, CHANGES_Q: changes})

    def _on_extra_clicked(self, label: str) -> None:
        empty = [e for e in self.extra_edits.values() if not e.text().strip()]
        if empty:
            # The extra option needs its value (调整章数 needs the number of chapters).
            self.error_label.setText(tr("请先填写：{what}").format(what=empty[0].placeholderText()))
            self.error_label.show()
            empty[0].setFocus()
            return
        answers: dict[str, object] = {ACTION_Q: label}
        answers.update({qid: e.text().strip() for qid, e in self.extra_edits.items() if e.text().strip()})
        changes = self.changes_edit.toPlainText().strip()
        if changes:
            answers[CHANGES_Q] = changes
        self._finish(answers)

    def accept(self) -> None:
        # Enter in a field presses the default button (接受), never closes the dialog unchecked.
        self._on_accept_clicked()

    # ------------------------------------------------------------------ entry point
    @classmethod
    async def ask_async(
        cls, parent: QWidget | None, proposal: Proposal, spec: QuestionSpec | None = None
    ) -> AnswerSpec | None:
        """Show the proposal window-modally and wait: the AnswerSpec, or None when cancelled. ``open()``
        plus a future, so no nested event loop runs inside a task; cancelling the awaiting task closes it."""
        dialog = cls(proposal, spec, parent)
        await open_and_wait(dialog, parent)
        return dialog.answer()


def _volume_of(proposal: Proposal) -> int | None:
    schedule = proposal.payload.get("storyline_schedule")
    volume = schedule.get("volume") if isinstance(schedule, dict) else None
    return volume if isinstance(volume, int) else None
