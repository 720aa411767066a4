"""The window's one way to tell the author something or ask a yes/no question.

``info`` / ``warning`` / ``error`` show a message box over the window and return at once; ``confirm`` asks a
yes/no question and answers through a callback, ``ask`` through an awaited future. Every box is opened
window-modal with ``open()``: no nested event loop ever runs (an ``exec()`` inside an asyncio task stops the
qasync loop with "Cannot enter into task … while another task … is being executed").

Who shows them is a replaceable *presenter*: :class:`DialogAlerts` in the app, :class:`HeadlessAlerts`
(stderr, never blocks) for ``--screenshot``, a recording one in tests (``use()`` returns the previous one).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from typing import Literal, Protocol

from PySide6.QtWidgets import QMessageBox, QWidget

from novel_desktop.i18n import tr

Kind = Literal["info", "warning", "error"]
Answer = Callable[[bool], object]
#: What to do with unsaved edits: keep them by saving, throw them away, or stay where one is.
SaveChoice = Literal["save", "discard", "cancel"]
SaveAnswer = Callable[[SaveChoice], object]
#: One of several answers by its key, or None for 取消 / a closed box.
ChoiceAnswer = Callable[[str | None], object]


class AlertPresenter(Protocol):
    """Shows messages and yes/no questions without blocking the caller."""

    def show(self, kind: Kind, parent: QWidget | None, title: str, text: str) -> None: ...

    def confirm(
        self,
        parent: QWidget | None,
        title: str,
        text: str,
        on_answer: Answer,
        *,
        default: bool,
        labels: tuple[str, str] | None = None,
    ) -> None: ...

    def save_changes(self, parent: QWidget | None, title: str, text: str, on_answer: SaveAnswer) -> None: ...

    def choose(
        self,
        parent: QWidget | None,
        title: str,
        text: str,
        options: Sequence[tuple[str, str]],
        on_answer: ChoiceAnswer,
    ) -> None: ...


_ICONS = {
    "info": QMessageBox.Icon.Information,
    "warning": QMessageBox.Icon.Warning,
    "error": QMessageBox.Icon.Critical,
}


class DialogAlerts:
    """Window-modal message boxes opened with ``open()``; each deletes itself when closed."""

    def __init__(self) -> None:
        #: Boxes without a parent, kept alive until they close.
        self._orphans: set[QMessageBox] = set()

    def _box(self, parent: QWidget | None, title: str, text: str, icon: QMessageBox.Icon) -> QMessageBox:
        box = QMessageBox(icon, title, text, QMessageBox.StandardButton.NoButton, parent)
        box.setObjectName("alert")
        if parent is None:
            self._orphans.add(box)
            box.finished.connect(lambda _code, b=box: self._orphans.discard(b))
        box.finished.connect(box.deleteLater)
        return box

    def show(self, kind: Kind, parent: QWidget | None, title: str, text: str) -> None:
        box = self._box(parent, title, text, _ICONS[kind])
        box.setStandardButtons(QMessageBox.StandardButton.Ok)
        box.button(QMessageBox.StandardButton.Ok).setText(tr("确定"))
        box.open()

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
        box = self._box(parent, title, text, QMessageBox.Icon.Question)
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        yes = box.button(QMessageBox.StandardButton.Yes)
        yes_text, no_text = labels or (tr("是"), tr("否"))
        yes.setText(yes_text)
        box.button(QMessageBox.StandardButton.No).setText(no_text)
        box.setDefaultButton(QMessageBox.StandardButton.Yes if default else QMessageBox.StandardButton.No)
        box.finished.connect(lambda _code: on_answer(box.clickedButton() is yes))
        box.open()

    def save_changes(self, parent: QWidget | None, title: str, text: str, on_answer: SaveAnswer) -> None:
        box = self._box(parent, title, text, QMessageBox.Icon.Question)
        buttons = {
            QMessageBox.StandardButton.Save: ("save", tr("保存")),
            QMessageBox.StandardButton.Discard: ("discard", tr("不保存")),
            QMessageBox.StandardButton.Cancel: ("cancel", tr("取消")),
        }
        choices: dict[object, SaveChoice] = {}
        for standard, (choice, label) in buttons.items():
            button = box.addButton(standard)
            button.setText(label)
            choices[button] = choice  # type: ignore[assignment]
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        box.finished.connect(lambda _code: on_answer(choices.get(box.clickedButton(), "cancel")))
        box.open()

    def choose(
        self,
        parent: QWidget | None,
        title: str,
        text: str,
        options: Sequence[tuple[str, str]],
        on_answer: ChoiceAnswer,
    ) -> None:
        box = self._box(parent, title, text, QMessageBox.Icon.Question)
        keys: dict[object, str] = {}
        for index, (key, label) in enumerate(options):
            button = box.addButton(label, QMessageBox.ButtonRole.AcceptRole)
            keys[button] = key
            if index == 0:
                box.setDefaultButton(button)
        box.addButton(tr("取消"), QMessageBox.ButtonRole.RejectRole)
        box.finished.connect(lambda _code: on_answer(keys.get(box.clickedButton())))
        box.open()


class HeadlessAlerts:
    """For runs without anyone at the screen (``--screenshot``): print to stderr, answer the default."""

    def show(self, kind: Kind, parent: QWidget | None, title: str, text: str) -> None:
        print(f"[{kind}] {title}: {text}", file=sys.stderr)

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
        print(f"[confirm → {'yes' if default else 'no'}] {title}: {text}", file=sys.stderr)
        on_answer(default)

    def save_changes(self, parent: QWidget | None, title: str, text: str, on_answer: SaveAnswer) -> None:
        print(f"[save? → cancel] {title}: {text}", file=sys.stderr)
        on_answer("cancel")  # nobody to ask: the edits stay where they are

    def choose(
        self,
        parent: QWidget | None,
        title: str,
        text: str,
        options: Sequence[tuple[str, str]],
        on_answer: ChoiceAnswer,
    ) -> None:
        print(f"[choose → cancel] {title}: {text}", file=sys.stderr)
        on_answer(None)  # nobody to ask: nothing changes


_presenter: AlertPresenter = DialogAlerts()


def use(presenter: AlertPresenter) -> AlertPresenter:
    """Make ``presenter`` show every alert from now on; returns the one it replaces."""
    global _presenter
    previous, _presenter = _presenter, presenter
    return previous


def presenter() -> AlertPresenter:
    return _presenter


def info(parent: QWidget | None, title: str, text: str) -> None:
    _presenter.show("info", parent, title, text)


def warning(parent: QWidget | None, title: str, text: str) -> None:
    _presenter.show("warning", parent, title, text)


def error(parent: QWidget | None, title: str, text: str) -> None:
    _presenter.show("error", parent, title, text)


def confirm(
    parent: QWidget | None,
    title: str,
    text: str,
    on_answer: Answer,
    *,
    default: bool = True,
    labels: tuple[str, str] | None = None,
) -> None:
    """Ask yes/no; ``on_answer(True)`` for 是, ``on_answer(False)`` for 否 or a closed box. ``labels`` names
    the two buttons instead (e.g. 先重建 / 取消)."""
    if labels is None:
        _presenter.confirm(parent, title, text, on_answer, default=default)
    else:
        _presenter.confirm(parent, title, text, on_answer, default=default, labels=labels)


def save_changes(parent: QWidget | None, title: str, text: str, on_answer: SaveAnswer) -> None:
    """Ask what to do with unsaved edits: ``on_answer("save" | "discard" | "cancel")``; closing cancels."""
    _presenter.save_changes(parent, title, text, on_answer)


def choose(
    parent: QWidget | None, title: str, text: str, options: Sequence[tuple[str, str]], on_answer: ChoiceAnswer
) -> None:
    """Ask which of ``options`` ((key, button label), the first the default) or 取消: ``on_answer(key)``, or
    ``on_answer(None)`` for 取消 and a closed box."""
    _presenter.choose(parent, title, text, options, on_answer)


async def ask(parent: QWidget | None, title: str, text: str, *, default: bool = True) -> bool:
    """:func:`confirm` from a coroutine: the answer through a future, no nested loop."""
    answered: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    def on_answer(yes: bool) -> None:
        if not answered.done():
            answered.set_result(yes)

    confirm(parent, title, text, on_answer, default=default)
    return await answered
