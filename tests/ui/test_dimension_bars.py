"""The painted dimension chart of the quality report (ui/dimension_bars.py): every name whole when the
widget has the room it asks for, cut short (and said so) only when it is narrower."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from novel_desktop.ui.dimension_bars import DimensionBars

ROWS = [("Plot logic 18%", 4.0), ("Emotional impact 8%", 2.5), ("Storyline coherence 8%", 3.5)]


def test_the_names_show_whole_with_room_and_are_cut_when_squeezed(qtbot: QtBot) -> None:
    bars = DimensionBars(ROWS)
    qtbot.addWidget(bars)
    bars.resize(bars.sizeHint())
    bars.show()
    assert bars.elided_labels() == []
    assert bars.scores() == [4.0, 2.5, 3.5]
    assert "Emotional impact 8% 2.5" in bars.accessibleDescription()
    bars.resize(bars.minimumSizeHint().width(), bars.height())
    assert "Storyline coherence 8%" in bars.elided_labels()
    # Squeezed, the bars still keep their room: the widget never asks to be wider than its minimum.
    assert bars.minimumSizeHint().width() < bars.sizeHint().width()
    assert bars.grab().width() == bars.width()  # paints at any width without error


def test_the_chart_is_as_tall_as_its_rows(qtbot: QtBot) -> None:
    one, three = DimensionBars(ROWS[:1]), DimensionBars(ROWS)
    qtbot.addWidget(one)
    qtbot.addWidget(three)
    assert three.sizeHint().height() > one.sizeHint().height()
