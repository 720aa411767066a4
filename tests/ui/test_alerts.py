"""The one alerts surface: message boxes open window-modal with open() (the caller goes on at once), a
confirm answers through its callback or an awaited future, and headless runs print instead of showing."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
import qasync
from PySide6.QtWidgets import QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from novel_desktop.ui import alerts


@pytest.fixture
def real_alerts() -> Iterator[alerts.DialogAlerts]:
    """The app's presenter instead of the tests' recorder, for this test."""
    presenter = alerts.DialogAlerts()
    previous = alerts.use(presenter)
    yield presenter
    alerts.use(previous)


def _boxes(window: QWidget) -> list[QMessageBox]:
    return [b for b in window.findChildren(QMessageBox) if b.isVisible()]


def test_a_message_opens_over_the_window_without_blocking(qtbot: QtBot, real_alerts: object) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    window.show()
    alerts.error(window, "导出失败", "磁盘满了")
    [box] = _boxes(window)  # this line runs while the box shows: no nested loop
    assert box.isModal() and box.text() == "磁盘满了" and box.windowTitle() == "导出失败"
    box.button(QMessageBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: not _boxes(window))


@pytest.mark.parametrize(
    ("button", "answer"), [(QMessageBox.StandardButton.Yes, True), (QMessageBox.StandardButton.No, False)]
)
def test_confirm_answers_through_its_callback(
    qtbot: QtBot, real_alerts: object, button: QMessageBox.StandardButton, answer: bool
) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    window.show()
    answers: list[bool] = []
    alerts.confirm(window, "导入书稿", "导入成一部新小说？", answers.append)
    assert answers == []
    [box] = _boxes(window)
    box.button(button).click()
    assert answers == [answer]


def test_ask_awaits_the_answer_in_a_coroutine(
    qtbot: QtBot, qloop: qasync.QEventLoop, real_alerts: object
) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    window.show()

    async def main() -> bool:
        asked = asyncio.ensure_future(alerts.ask(window, "卷末回顾", "确定现在回顾吗？"))
        while not _boxes(window):
            await asyncio.sleep(0.01)
        _boxes(window)[0].button(QMessageBox.StandardButton.Yes).click()
        return await asked

    assert qloop.run_until_complete(asyncio.wait_for(main(), 10)) is True


def test_headless_alerts_print_and_answer_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    headless = alerts.HeadlessAlerts()
    answers: list[bool] = []
    headless.show("warning", None, "无法打开", "文件不存在")
    headless.confirm(None, "清除失效的锁？", "确认？", answers.append, default=False)
    err = capsys.readouterr().err
    assert "[warning] 无法打开: 文件不存在" in err and "清除失效的锁？" in err
    assert answers == [False]
