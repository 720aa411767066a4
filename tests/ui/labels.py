"""Whether a widget tree shows each label's whole text: the text's width by QFontMetrics (plus the style's
margins) against the width the widget got. Used by test_labels_fit.py over every view and dialog in English.
"""

from __future__ import annotations

import re

from PySide6.QtCharts import QBarCategoryAxis, QChartView
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QCheckBox,
    QGroupBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QRadioButton,
    QStyle,
    QTabBar,
    QToolButton,
    QWidget,
)

from novel_desktop.ui.dimension_bars import DimensionBars

#: Slack for rounding between the font's advance and the layout's integer widths.
SLACK = 2


def _plain(text: str) -> str:
    """A label's text as drawn: the mnemonic & dropped (&& is one &)."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def _widest_line(fm: QFontMetrics, text: str) -> int:
    return max((fm.horizontalAdvance(line) for line in text.split("\n")), default=0)


def _shown(widget: QWidget) -> bool:
    return widget.isVisible() and widget.width() > 0


def _label(label: QLabel) -> str | None:
    text = label.text()
    if text and label.wordWrap() and label.isVisible():
        # A wrapped label is as wide as it is given; its lines need the height they need at that width
        # (a dialog that kept its first height cut an English message's last line).
        need = label.heightForWidth(label.width())
        if need > label.height() + SLACK:
            return f"wrapped QLabel {text[:40]!r}: needs {need} px high, has {label.height()}"
        return None
    if not text or label.wordWrap() or label.textFormat() == Qt.TextFormat.RichText:
        return None
    if label.textFormat() == Qt.TextFormat.AutoText and GuiQt.mightBeRichText(text):
        return None
    room = label.contentsRect().width() - 2 * label.margin() - max(label.indent(), 0)
    need = _widest_line(QFontMetrics(label.font()), text)
    return None if need <= room + SLACK else f"QLabel {text!r}: needs {need}, has {room}"


def _button(button: QAbstractButton) -> str | None:
    text = _plain(button.text())
    if not text:
        return None
    style = button.style()
    need = _widest_line(QFontMetrics(button.font()), text)
    if isinstance(button, QCheckBox):
        need += style.pixelMetric(QStyle.PixelMetric.PM_IndicatorWidth, None, button)
        need += style.pixelMetric(QStyle.PixelMetric.PM_CheckBoxLabelSpacing, None, button)
    elif isinstance(button, QRadioButton):
        need += style.pixelMetric(QStyle.PixelMetric.PM_ExclusiveIndicatorWidth, None, button)
        need += style.pixelMetric(QStyle.PixelMetric.PM_RadioButtonLabelSpacing, None, button)
    elif isinstance(button, QPushButton):
        need += style.pixelMetric(QStyle.PixelMetric.PM_ButtonMargin, None, button)
        need += 2 * style.pixelMetric(QStyle.PixelMetric.PM_DefaultFrameWidth, None, button)
        if not button.icon().isNull():
            need += button.iconSize().width() + 4
        if button.menu() is not None:
            need += style.pixelMetric(QStyle.PixelMetric.PM_MenuButtonIndicator, None, button)
    elif isinstance(button, QToolButton):
        if button.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonIconOnly:
            return None
        if button.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonTextBesideIcon:
            need += button.iconSize().width()
    return (
        None
        if need <= button.width() + SLACK
        else f"{type(button).__name__} {text!r}: needs {need}, has {button.width()}"
    )


def _group(box: QGroupBox) -> str | None:
    text = _plain(box.title())
    if not text:
        return None
    need = QFontMetrics(box.font()).horizontalAdvance(text) + 8
    if box.isCheckable():
        need += box.style().pixelMetric(QStyle.PixelMetric.PM_IndicatorWidth, None, box) + 4
    return None if need <= box.width() + SLACK else f"QGroupBox {text!r}: needs {need}, has {box.width()}"


def _tabs(bar: QTabBar) -> list[str]:
    out: list[str] = []
    fm = QFontMetrics(bar.font())
    for i in range(bar.count()):
        if not bar.isTabVisible(i):
            continue
        text = _plain(bar.tabText(i))
        need = fm.horizontalAdvance(text)
        room = bar.tabRect(i).width() - 2 * 6  # the tab's own padding (the theme's 6-14 px; Fusion 6)
        for side in (QTabBar.ButtonPosition.LeftSide, QTabBar.ButtonPosition.RightSide):
            button = bar.tabButton(i, side)
            if button is not None:
                room -= button.width()
        if need > room + SLACK:
            out.append(f"tab {text!r}: needs {need}, has {room}")
    return out


def _header(header: QHeaderView) -> list[str]:
    if header.orientation() != Qt.Orientation.Horizontal or header.model() is None:
        return []
    out: list[str] = []
    fm = QFontMetrics(header.font())
    margin = 2 * header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)
    last = header.count() - 1
    for i in range(header.count()):
        if header.isSectionHidden(i):
            continue
        text = header.model().headerData(i, Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole)
        if not isinstance(text, str) or not text:
            continue
        need = _widest_line(fm, text) + margin
        size = header.sectionSize(i)
        if i == last and header.stretchLastSection():
            size = max(size, header.viewport().width() - header.sectionViewportPosition(i))
        if need > size + SLACK:
            out.append(f"column {text!r}: needs {need}, has {size}")
    return out


def _chart(view: QChartView) -> list[str]:
    out: list[str] = []
    chart = view.chart()
    area = chart.plotArea()
    for axis in chart.axes():
        title = axis.titleText() if axis.isTitleVisible() else ""
        if not title:
            continue
        need = QFontMetrics(axis.titleFont()).horizontalAdvance(title)
        vertical = axis.orientation() == Qt.Orientation.Vertical
        room = int(area.height() if vertical else area.width())
        if need > room + SLACK:
            out.append(f"axis {title!r}: needs {need}, has {room}")
    # Squeezed, QtCharts elides every tick label, axis title and legend entry to "...": the plot keeps at least
    # four lines of its labels' height.
    line = max((QFontMetrics(axis.labelsFont()).height() for axis in chart.axes()), default=0)
    if chart.axes() and area.height() < 4 * line:
        out.append(f"chart {chart.title()!r}: plot {area.height():.0f} px tall, under 4 lines of {line} px")
    legend = chart.legend()
    if legend.isVisible() and legend.alignment() in (Qt.AlignmentFlag.AlignBottom, Qt.AlignmentFlag.AlignTop):
        # One row of entries (a marker, its label, spacing); wider than the chart, QtCharts elides the labels.
        fm = QFontMetrics(legend.font())
        labels = [m.label() for m in legend.markers() if m.isVisible() and m.label()]
        need = sum(fm.horizontalAdvance(label) + int(fm.height() * 1.5) for label in labels)
        room = int(legend.geometry().width())
        if need > room:
            out.append(f"legend {labels}: needs {need}, has {room}")
    for axis in chart.axes():
        if not isinstance(axis, QBarCategoryAxis) or not axis.labelsVisible() or not axis.categories():
            continue
        fm = QFontMetrics(axis.labelsFont())
        widest = max(fm.horizontalAdvance(c) for c in axis.categories())
        if axis.orientation() == Qt.Orientation.Vertical:
            # The labels sit left of the plot area, inside the chart's margins; and QtCharts squeezes (elides)
            # the axes once they want more than 0.4 of the chart's width (its layout's "golden_ratio").
            left = chart.layout().getContentsMargins()[0]
            room = int(min(area.left() - chart.margins().left() - left, 0.4 * view.width() - 12))
            # QtCharts also elides a label taller than about 2/3 of its category's band (measured: 24 px text
            # in a 35 px band is elided, in a 38 px band drawn whole).
            band = area.height() / len(axis.categories())
            if fm.height() * 1.5 > band:
                out.append(
                    f"axis labels {axis.categories()[:2]}…: {fm.height()} px tall in a {band:.0f} px band"
                )
        else:
            room = int(area.width() / len(axis.categories()))
        if widest > room + SLACK:
            out.append(f"axis labels {axis.categories()[:3]}…: need {widest}, have {room}")
    return out


def clipped(root: QWidget) -> list[str]:
    """Every visible label, button, check box, radio button, group box title, tab, column header and chart
    axis title under ``root`` (and ``root`` itself) whose text is wider than the room it has."""
    out: list[str] = []
    for widget in [root, *root.findChildren(QWidget)]:
        if not _shown(widget):
            continue
        where = _where(widget)
        problems: list[str] = []
        if isinstance(widget, QLabel):
            problem = _label(widget)
            problems += [problem] if problem else []
        elif isinstance(widget, QAbstractButton) and not isinstance(widget, QTabBar):
            if widget.parent() is not None and type(widget.parent()).__name__ in ("QTabBar", "QScrollBar"):
                continue
            problem = _button(widget)
            problems += [problem] if problem else []
        elif isinstance(widget, QGroupBox):
            problem = _group(widget)
            problems += [problem] if problem else []
        elif isinstance(widget, QTabBar):
            problems += _tabs(widget)
        elif isinstance(widget, QHeaderView):
            problems += _header(widget)
        elif isinstance(widget, QChartView):
            problems += _chart(widget)
        elif isinstance(widget, DimensionBars):
            problems += [f"dimension bar {label!r}: elided" for label in widget.elided_labels()]
        if isinstance(widget, (QLabel, QAbstractButton)) and not problems and _cut_by_parent(widget):
            problems.append(f"{type(widget).__name__} {widget.text()!r}: cut off by its container")
        out += [f"{where}: {p}" for p in problems]
    return out


def _cut_by_parent(widget: QWidget) -> bool:
    """A label or button whose own width is enough but whose container shows only part of it (a row of
    labels wider than its panel). Inside a scroll area the rest is a scroll away: not counted."""
    w = widget.parentWidget()
    while w is not None:
        if isinstance(w, QAbstractScrollArea) or w.objectName() == "qt_scrollarea_viewport":
            return False
        w = w.parentWidget()
    if not widget.text() or isinstance(widget, QTabBar):
        return False
    shown = widget.visibleRegion().boundingRect()
    return shown.width() + SLACK < widget.width() and not shown.isEmpty()


def _where(widget: QWidget) -> str:
    names: list[str] = []
    w: QWidget | None = widget
    while w is not None and len(names) < 3:
        names.append(w.objectName() or type(w).__name__)
        w = w.parentWidget()
    return re.sub(r"\s+", " ", "/".join(reversed(names)))
