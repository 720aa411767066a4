"""Qt's standard buttons speak the window's language (issue 19: a Chinese window said "Close")."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtWidgets import QDialogButtonBox
from pytestqt.qtbot import QtBot

from novel_desktop.ui.qt_translations import install_qt_translations


@pytest.fixture
def untranslated_afterwards() -> Iterator[None]:
    yield
    install_qt_translations("en")  # the other tests see Qt as it was


def _buttons(qtbot: QtBot) -> QDialogButtonBox:
    box = QDialogButtonBox(QDialogButtonBox.StandardButton.Close | QDialogButtonBox.StandardButton.Cancel)
    qtbot.addWidget(box)
    return box


def test_a_chinese_window_gets_chinese_standard_buttons(qtbot: QtBot, untranslated_afterwards: None) -> None:
    assert install_qt_translations("zh")
    box = _buttons(qtbot)
    assert box.button(QDialogButtonBox.StandardButton.Close).text() == "关闭"
    assert box.button(QDialogButtonBox.StandardButton.Cancel).text() == "取消"


def test_an_english_window_keeps_qts_english(qtbot: QtBot, untranslated_afterwards: None) -> None:
    install_qt_translations("zh")
    assert not install_qt_translations("en")  # English needs no catalogue: the Chinese one is removed
    box = _buttons(qtbot)
    assert box.button(QDialogButtonBox.StandardButton.Close).text() == "Close"
