"""The NOVEL_ASK question dialog (stub; its owner replaces this module)."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QWidget

from novel_desktop.domain.novel_ask import AnswerSpec, QuestionSpec


class AskDialog(QDialog):
    @classmethod
    def ask(cls, parent: QWidget | None, spec: QuestionSpec, context: str = "") -> AnswerSpec | None:
        """Show the questions modally; the validated AnswerSpec, or None when cancelled."""
        return None
