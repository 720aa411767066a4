"""Alerts recorded instead of shown: what the author would have read, and a chosen answer to questions."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QWidget

from novel_desktop.ui.alerts import Answer, ChoiceAnswer, Kind, SaveAnswer, SaveChoice


class RecordingAlerts:
    """Every alert as (kind, title, text), kind one of info / warning / error / confirm / save_changes; ``answer`` (True:
    是) answers every confirm at once, or ``answers`` one by one while it lasts."""

    def __init__(self) -> None:
        self.shown: list[tuple[str, str, str]] = []
        self.answer = True
        self.answers: list[bool] = []
        #: How every "save your changes?" question is answered.
        self.save_choice: SaveChoice = "save"
        #: The button labels of every confirm (None: 是 / 否).
        self.labels: list[tuple[str, str] | None] = []
        #: How every "which one?" question (alerts.choose) is answered: an option's key, or None for 取消.
        self.choice: str | None = None
        #: The option keys each such question offered.
        self.offered: list[list[str]] = []

    def show(self, kind: Kind, parent: QWidget | None, title: str, text: str) -> None:
        self.shown.append((kind, title, text))

    def confirm(
        self,
        parent: QWidget | None,
        title: str,
        text: str,
        on_answer: Answer,
        *,
        default: bool,
        labels: tuple[str, str] | None = None,
    ) -> None:
        self.shown.append(("confirm", title, text))
        self.labels.append(labels)
        on_answer(self.answers.pop(0) if self.answers else self.answer)

    def save_changes(self, parent: QWidget | None, title: str, text: str, on_answer: SaveAnswer) -> None:
        self.shown.append(("save_changes", title, text))
        on_answer(self.save_choice)

    def choose(
        self,
        parent: QWidget | None,
        title: str,
        text: str,
        options: Sequence[tuple[str, str]],
        on_answer: ChoiceAnswer,
    ) -> None:
        self.shown.append(("choose", title, text))
        self.offered.append([key for key, _label in options])
        on_answer(self.choice)

    @property
    def texts(self) -> list[str]:
        return [text for _kind, _title, text in self.shown]
