"""A chapter's score on each dimension as horizontal bars on a 0-5 scale, painted in one widget.

It replaced a QtCharts bar chart, which took 5-7 ms to build on the event loop each time a report was shown
and elided the longer English dimension names ("Emotional impa...") although half its width was empty: it
keeps a fixed share of the chart for its axis labels. Here the names get the room the longest one needs, and
are elided only when the widget is narrower than that plus a short bar (:meth:`DimensionBars.elided_labels`
says which, for the label checks of the tests).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from novel_desktop.i18n import join_list

#: The scale's top (the judge scores 0-5).
TOP = 5
#: A dimension scored under this stands out in the warning colour.
LOW = 3.0
BAR = QColor("#4f7fd9")
BAR_LOW = QColor("#e07a2e")
GRID = QColor("#e3e6eb")
TEXT = QColor("#374151")
ELIDE = Qt.TextElideMode.ElideRight
#: The least room the bars keep beside the names, in digit widths (a CJK font's average character is wide).
MIN_BAR_CHARS = 12


class DimensionBars(QWidget):
    """``rows``: (label, score) from the top bar down."""

    def __init__(self, rows: Sequence[tuple[str, float]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows = [(label, float(score)) for label, score in rows]
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setAccessibleDescription(join_list([f"{label} {_value(score)}" for label, score in self._rows]))
        self.setToolTip("\n".join(f"{label}: {_value(score)}" for label, score in self._rows))

    # ------------------------------------------------------------------ what it shows
    def rows(self) -> list[tuple[str, float]]:
        return list(self._rows)

    def scores(self) -> list[float]:
        """The scores from the top bar down."""
        return [score for _, score in self._rows]

    def elided_labels(self) -> list[str]:
        """The names cut short at the current width (none when the widget has the room it asks for)."""
        room, fm = self._label_width(), self.fontMetrics()
        return [label for label, _ in self._rows if fm.elidedText(label, ELIDE, room) != label]

    # ------------------------------------------------------------------ geometry
    def _line(self) -> int:
        return self.fontMetrics().height()

    def _row_height(self) -> int:
        return int(self._line() * 1.6)

    def _names_width(self) -> int:
        fm = self.fontMetrics()
        # Two pixels over the advance: elidedText cuts some texts exactly as wide as the room.
        return max((fm.horizontalAdvance(label) + 2 for label, _ in self._rows), default=0)

    def _label_width(self) -> int:
        """The names' column now: what the longest needs, less when the bars need the room."""
        bars_least = self._unit() * MIN_BAR_CHARS
        return max(0, min(self._names_width(), self.width() - self._unit() * 3 - bars_least))

    def _unit(self) -> int:
        """A digit's width: the gap between the parts, and the measure of the bars' least room."""
        return max(4, self.fontMetrics().horizontalAdvance("0"))

    def _height(self) -> int:
        return len(self._rows) * self._row_height() + int(self._line() * 2.2)

    def sizeHint(self) -> QSize:
        return QSize(self._names_width() + self._unit() * 33, self._height())

    def minimumSizeHint(self) -> QSize:
        # Narrower than the names and a short bar, the names are elided rather than the report widened.
        return QSize(self._unit() * (MIN_BAR_CHARS + 8), self._height())

    # ------------------------------------------------------------------ painting
    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.fillRect(self.rect(), QColor("white"))
        fm = self.fontMetrics()
        gap, row_h, line, names = self._unit(), self._row_height(), self._line(), self._label_width()
        left = gap + names + gap
        right = self.width() - gap * 2
        span = max(1, right - left)
        top = line // 2
        bottom = top + len(self._rows) * row_h
        # The scale: a light line at each whole score, its number under the bars.
        for tick in range(TOP + 1):
            x = left + span * tick / TOP
            painter.setPen(QPen(GRID, 1))
            painter.drawLine(int(x), top, int(x), bottom)
            painter.setPen(TEXT)
            box = QRectF(x - line, bottom + line * 0.3, line * 2, line * 1.2)
            painter.drawText(box, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop, str(tick))
        for i, (label, score) in enumerate(self._rows):
            y = top + i * row_h
            painter.setPen(TEXT)
            painter.drawText(
                QRectF(gap, y, names, row_h),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                fm.elidedText(label, ELIDE, names),
            )
            width = span * max(0.0, min(score, TOP)) / TOP
            bar = QRectF(left, y + row_h * 0.15, width, row_h * 0.7)
            painter.fillRect(bar, BAR_LOW if score < LOW else BAR)
            text = _value(score)
            need = fm.horizontalAdvance(text) + gap
            if width >= need + gap:  # inside the bar's end, as the chart had it
                painter.setPen(QColor("white"))
                box = QRectF(left, bar.top(), width - gap, bar.height())
                painter.drawText(box, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, text)
            else:  # a short bar: after it
                painter.setPen(TEXT)
                box = QRectF(left + width + gap / 2, bar.top(), need + gap, bar.height())
                painter.drawText(box, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)
        painter.end()


def _value(score: float) -> str:
    return f"{score:g}"


__all__ = ["DimensionBars"]
