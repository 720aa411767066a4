"""The painted swimlane of the storyline view: rows are storylines, columns a volume's chapters.

Convergence events are drawn as bands. Only the cells inside the exposed rectangle are painted, so a
50-chapter volume of a 500-chapter novel paints as fast as a short one. Row and column headers stay in view
while the grid scrolls under them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetrics,
    QHelpEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
)
from PySide6.QtWidgets import QScrollArea, QToolTip, QWidget

from novel_desktop.controllers.reader import ChapterPlan
from novel_desktop.domain.outline import outline_field
from novel_desktop.domain.storylines import ConvergenceEvent
from novel_desktop.i18n import join_list, paren, tr

#: One colour per storyline, in row order; chosen to stay apart for the colour-blind and on grey.
PALETTE = ("#3b7dd8", "#d9822b", "#2e9e6a", "#a05fc7", "#c8464b", "#1f9aa8", "#8c7a3b", "#d35a9e")
DORMANT = QColor("#b9b9b9")
_CONVERGENCE = QColor(245, 180, 40, 70)
_CONVERGENCE_EDGE = QColor("#d89b00")
_GRID = QColor("#e2e2e2")
_HEADER_BG = QColor("#f4f4f4")

ROLE_TEXT = {"primary": "主线", "secondary": "副线", "seasoning": "点缀"}
STATUS_TEXT = {"active": "进行中", "dormant": "休眠", "planned": "计划中", "resolved": "已完结"}


@dataclass
class Lane:
    """One row of the swimlane: a storyline and how it stands in this volume."""

    storyline_id: str
    name: str
    color: QColor
    role: str | None = None
    status: str = "active"
    registered: bool = True
    pov_characters: list[str] = field(default_factory=list)

    @property
    def dormant(self) -> bool:
        return self.status in ("dormant", "resolved")

    @property
    def planned(self) -> bool:
        return self.status == "planned"


def summary_first_line(markdown: str, limit: int = 80) -> str:
    """The summary's first prose line (headings and metadata comments skipped), cut for a tooltip."""
    for line in markdown.splitlines():
        text = line.strip()
        if not text or text.startswith(("#", "<!--")):
            continue
        text = text.lstrip("-*> ").strip()
        return text if len(text) <= limit else text[: limit - 1] + "…"
    return ""


class SwimlaneCanvas(QWidget):
    """The painted grid. Row and column headers stay in view while the grid scrolls under them."""

    cell_clicked = Signal(int)

    HEADER_WIDTH = 210
    HEADER_HEIGHT = 46
    CELL_WIDTH = 74
    ROW_HEIGHT = 52

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lanes: list[Lane] = []
        self.chapters: list[ChapterPlan] = []
        self.events: list[ConvergenceEvent] = []
        self.next_chapter = 0
        self.summaries: dict[int, str] = {}
        self._scroll: QScrollArea | None = None
        self.setMouseTracking(True)

    def attach(self, scroll: QScrollArea) -> None:
        self._scroll = scroll
        # The sticky headers move with the scroll position, so repaint on every scroll step.
        scroll.horizontalScrollBar().valueChanged.connect(self.update)
        scroll.verticalScrollBar().valueChanged.connect(self.update)

    def set_data(
        self,
        lanes: list[Lane],
        chapters: list[ChapterPlan],
        events: list[ConvergenceEvent],
        next_chapter: int,
    ) -> None:
        self.lanes, self.chapters, self.events, self.next_chapter = lanes, chapters, events, next_chapter
        self.summaries = {}
        self.setFixedSize(self.sizeHint())
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(
            self.HEADER_WIDTH + max(1, len(self.chapters)) * self.CELL_WIDTH + 8,
            self.HEADER_HEIGHT + max(1, len(self.lanes)) * self.ROW_HEIGHT + 8,
        )

    # ------------------------------------------------------------------ geometry
    def _offsets(self) -> tuple[int, int]:
        if self._scroll is None:
            return 0, 0
        return self._scroll.horizontalScrollBar().value(), self._scroll.verticalScrollBar().value()

    def column_of(self, chapter: int) -> int | None:
        return next((i for i, plan in enumerate(self.chapters) if plan.number == chapter), None)

    def row_of(self, storyline_id: str) -> int | None:
        return next((i for i, lane in enumerate(self.lanes) if lane.storyline_id == storyline_id), None)

    def cell_rect(self, storyline_id: str, chapter: int) -> QRect:
        """The rectangle (widget coordinates) of a storyline's cell in a chapter's column."""
        row, column = self.row_of(storyline_id), self.column_of(chapter)
        if row is None or column is None:
            return QRect()
        return QRect(
            self.HEADER_WIDTH + column * self.CELL_WIDTH,
            self.HEADER_HEIGHT + row * self.ROW_HEIGHT,
            self.CELL_WIDTH,
            self.ROW_HEIGHT,
        )

    def convergence_rects(self) -> list[QRect]:
        """One rectangle per involved row of every convergence event touching the shown chapters."""
        rects = []
        for event in self.events:
            columns = [i for i, plan in enumerate(self.chapters) if event.covers(plan.number)]
            if not columns:
                continue
            for storyline_id in event.involved_storylines:
                row = self.row_of(storyline_id)
                if row is None:
                    continue
                rects.append(
                    QRect(
                        self.HEADER_WIDTH + columns[0] * self.CELL_WIDTH,
                        self.HEADER_HEIGHT + row * self.ROW_HEIGHT,
                        (columns[-1] - columns[0] + 1) * self.CELL_WIDTH,
                        self.ROW_HEIGHT,
                    )
                )
        return rects

    def hit(self, pos: QPoint) -> tuple[int | None, int | None]:
        """(row, column) under a point; None for a header or outside the grid."""
        dx, dy = self._offsets()
        column = row = None
        if pos.x() >= dx + self.HEADER_WIDTH:
            index = (pos.x() - self.HEADER_WIDTH) // self.CELL_WIDTH
            column = index if 0 <= index < len(self.chapters) else None
        if pos.y() >= dy + self.HEADER_HEIGHT:
            index = (pos.y() - self.HEADER_HEIGHT) // self.ROW_HEIGHT
            row = index if 0 <= index < len(self.lanes) else None
        elif pos.y() < dy + self.HEADER_HEIGHT:
            row = -1  # the column header
        return row, column

    def lane_of(self, plan: ChapterPlan) -> int | None:
        return self.row_of(plan.storyline_id) if plan.storyline_id else None

    # ------------------------------------------------------------------ painting
    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        exposed = event.rect()
        painter.fillRect(exposed, QColor("white"))
        dx, dy = self._offsets()
        first = max(0, (exposed.left() - self.HEADER_WIDTH) // self.CELL_WIDTH)
        last = min(len(self.chapters) - 1, (exposed.right() - self.HEADER_WIDTH) // self.CELL_WIDTH)
        grid_bottom = self.HEADER_HEIGHT + len(self.lanes) * self.ROW_HEIGHT

        # Rows: dormant lines on grey, then the grid lines.
        for row, lane in enumerate(self.lanes):
            top = self.HEADER_HEIGHT + row * self.ROW_HEIGHT
            if lane.dormant:
                painter.fillRect(QRect(0, top, self.width(), self.ROW_HEIGHT), QColor("#f2f2f2"))
            painter.setPen(QPen(_GRID))
            painter.drawLine(0, top + self.ROW_HEIGHT, self.width(), top + self.ROW_HEIGHT)
        for column in range(first, last + 1):
            x = self.HEADER_WIDTH + column * self.CELL_WIDTH
            painter.setPen(QPen(_GRID))
            painter.drawLine(x + self.CELL_WIDTH, self.HEADER_HEIGHT, x + self.CELL_WIDTH, grid_bottom)
            if self.chapters[column].number == self.next_chapter:
                painter.fillRect(
                    QRect(x, self.HEADER_HEIGHT, self.CELL_WIDTH, grid_bottom - self.HEADER_HEIGHT),
                    QColor(59, 125, 216, 18),
                )

        # Convergence bands under the cells, so the cells stay readable on top of them.
        for rect in self.convergence_rects():
            if rect.intersects(exposed):
                painter.setPen(QPen(_CONVERGENCE_EDGE, 1.5, Qt.PenStyle.DashLine))
                painter.setBrush(QBrush(_CONVERGENCE))
                painter.drawRect(rect.adjusted(1, 2, -1, -2))

        for column in range(first, last + 1):
            plan = self.chapters[column]
            lane_row = self.lane_of(plan)
            if lane_row is None:
                continue
            lane = self.lanes[lane_row]
            self._paint_cell(painter, plan, lane, self.cell_rect(lane.storyline_id, plan.number))

        self._paint_column_header(painter, first, last, dy)
        self._paint_row_header(painter, dx, dy)
        painter.end()

    def _paint_cell(self, painter: QPainter, plan: ChapterPlan, lane: Lane, rect: QRect) -> None:
        box = rect.adjusted(5, 8, -5, -8)
        color = QColor(DORMANT if lane.dormant else lane.color)
        if plan.written:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QBrush(color))
            text_color = QColor("white")
        else:
            # Planned but not written: an outline only, so the written part of the volume reads at a glance.
            light = QColor(color)
            light.setAlpha(40)
            painter.setPen(QPen(color, 1.5, Qt.PenStyle.DashLine))
            painter.setBrush(QBrush(light))
            text_color = color.darker(130)
        painter.drawRoundedRect(box, 6, 6)
        label = plan.pov or str(plan.number)
        painter.setPen(text_color)
        metrics = QFontMetrics(painter.font())
        painter.drawText(
            box,
            Qt.AlignmentFlag.AlignCenter,
            metrics.elidedText(label, Qt.TextElideMode.ElideRight, box.width() - 6),
        )

    def _paint_column_header(self, painter: QPainter, first: int, last: int, dy: int) -> None:
        painter.fillRect(QRect(0, dy, self.width(), self.HEADER_HEIGHT), _HEADER_BG)
        painter.setPen(QPen(QColor("#c8c8c8")))
        painter.drawLine(0, dy + self.HEADER_HEIGHT - 1, self.width(), dy + self.HEADER_HEIGHT - 1)
        metrics = QFontMetrics(self.font())
        bold = QFont(self.font())
        bold.setBold(True)
        converging = {plan.number for plan in self.chapters for e in self.events if e.covers(plan.number)}
        for column in range(first, last + 1):
            plan = self.chapters[column]
            rect = QRect(
                self.HEADER_WIDTH + column * self.CELL_WIDTH, dy, self.CELL_WIDTH, self.HEADER_HEIGHT
            )
            if plan.number in converging:
                painter.fillRect(rect.adjusted(1, 1, -1, -1), _CONVERGENCE)
            painter.setFont(bold)
            painter.setPen(QColor("#222") if plan.written else QColor("#888"))
            painter.drawText(
                rect.adjusted(0, 4, 0, -rect.height() // 2), Qt.AlignmentFlag.AlignCenter, str(plan.number)
            )
            painter.setFont(self.font())
            title = metrics.elidedText(plan.title, Qt.TextElideMode.ElideRight, self.CELL_WIDTH - 6)
            painter.drawText(
                rect.adjusted(3, rect.height() // 2, -3, -2), Qt.AlignmentFlag.AlignCenter, title
            )

    def _paint_row_header(self, painter: QPainter, dx: int, dy: int) -> None:
        header = QRect(dx, dy + self.HEADER_HEIGHT, self.HEADER_WIDTH, self.height())
        painter.fillRect(header, _HEADER_BG)
        painter.fillRect(QRect(dx, dy, self.HEADER_WIDTH, self.HEADER_HEIGHT), _HEADER_BG)
        painter.setPen(QColor("#555"))
        painter.drawText(
            QRect(dx + 10, dy, self.HEADER_WIDTH - 10, self.HEADER_HEIGHT),
            Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
            tr("故事线 ＼ 章"),
        )
        painter.setPen(QPen(QColor("#c8c8c8")))
        painter.drawLine(dx + self.HEADER_WIDTH - 1, dy, dx + self.HEADER_WIDTH - 1, self.height())
        bold = QFont(self.font())
        bold.setBold(True)
        small = QFont(self.font())
        small.setPointSizeF(max(7.0, small.pointSizeF() * 0.85))
        for row, lane in enumerate(self.lanes):
            top = self.HEADER_HEIGHT + row * self.ROW_HEIGHT
            if top + self.ROW_HEIGHT <= dy + self.HEADER_HEIGHT:
                continue
            rect = QRect(dx, top, self.HEADER_WIDTH, self.ROW_HEIGHT)
            color = DORMANT if lane.dormant else lane.color
            swatch = QRect(dx + 10, top + 14, 12, self.ROW_HEIGHT - 28)
            if lane.planned:
                painter.setPen(QPen(color, 1.5, Qt.PenStyle.DashLine))
                painter.setBrush(Qt.BrushStyle.NoBrush)
            else:
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(QBrush(color))
            painter.drawRoundedRect(swatch, 3, 3)
            painter.setFont(bold)
            painter.setPen(QColor("#999") if lane.dormant else QColor("#222"))
            metrics = QFontMetrics(bold)
            name_rect = QRect(dx + 30, top + 6, self.HEADER_WIDTH - 36, self.ROW_HEIGHT // 2 - 4)
            painter.drawText(
                name_rect,
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                metrics.elidedText(lane.name, Qt.TextElideMode.ElideRight, name_rect.width()),
            )
            painter.setFont(small)
            painter.setPen(QColor("#777"))
            detail = [lane.storyline_id]
            if lane.role:
                detail.append(tr(ROLE_TEXT.get(lane.role, lane.role)))
            if lane.status != "active":
                detail.append(tr(STATUS_TEXT.get(lane.status, lane.status)))
            if not lane.registered:
                detail.append(tr("未登记"))
            info_rect = QRect(
                dx + 30, top + self.ROW_HEIGHT // 2, self.HEADER_WIDTH - 36, self.ROW_HEIGHT // 2 - 6
            )
            painter.drawText(
                info_rect,
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                QFontMetrics(small).elidedText(
                    " · ".join(detail), Qt.TextElideMode.ElideRight, info_rect.width()
                ),
            )
            painter.setPen(QPen(_GRID))
            painter.drawLine(rect.left(), rect.bottom(), rect.right(), rect.bottom())
        painter.setFont(self.font())

    # ------------------------------------------------------------------ interaction
    def _plan_at(self, pos: QPoint) -> tuple[ChapterPlan | None, bool]:
        """The chapter under a point and whether the point is on that chapter's own cell (or its header)."""
        row, column = self.hit(pos)
        if column is None:
            return None, False
        plan = self.chapters[column]
        return plan, row == -1 or (row is not None and row == self.lane_of(plan))

    def mousePressEvent(self, event: QMouseEvent) -> None:
        plan, on_cell = self._plan_at(event.position().toPoint())
        if event.button() == Qt.MouseButton.LeftButton and plan is not None and on_cell:
            self.cell_clicked.emit(plan.number)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        _plan, on_cell = self._plan_at(event.position().toPoint())
        self.setCursor(Qt.CursorShape.PointingHandCursor if on_cell else Qt.CursorShape.ArrowCursor)
        super().mouseMoveEvent(event)

    def tooltip_at(self, pos: QPoint) -> str:
        """The hover text at a point: the chapter, its POV and the first line of its summary."""
        row, column = self.hit(pos)
        if column is None:
            if row is not None and row >= 0:
                lane = self.lanes[row]
                lines = [lane.name + paren(lane.storyline_id)]
                if lane.pov_characters:
                    lines.append(tr("视角人物：{p}").format(p=join_list(lane.pov_characters)))
                return "\n".join(lines)
            return ""
        plan = self.chapters[column]
        lines = [tr("第 {n} 章 {t}").format(n=plan.number, t=plan.title).strip()]
        if plan.storyline_id:
            lines.append(tr("故事线：{s}").format(s=plan.storyline_id))
        if plan.pov:
            lines.append(tr("视角：{p}").format(p=plan.pov))
        summary = self.summaries.get(plan.number)
        if summary:
            lines.append(summary)
        elif not plan.written:
            conflict = outline_field(plan.section, "conflict")
            lines.append(tr("（未写）") + (f" {conflict}" if conflict else ""))
        for event in self.events:
            if event.covers(plan.number):
                involved = join_list(event.involved_storylines)
                lines.append(
                    tr("交汇：{who}").format(who=involved) + (f" — {event.trigger}" if event.trigger else "")
                )
        return "\n".join(lines)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            text = self.tooltip_at(event.pos())
            if text:
                QToolTip.showText(event.globalPos(), text, self)
            else:
                QToolTip.hideText()
            return True
        return super().event(event)


class Legend(QWidget):
    """What the marks mean: written, planned, convergence, dormant, the next chapter."""

    ITEMS = (
        ("written", "已写章节"),
        ("planned", "大纲中的计划章节"),
        ("convergence", "交汇事件"),
        ("dormant", "休眠的故事线"),
        ("next", "下一章"),
    )

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumHeight(26)

    def sizeHint(self) -> QSize:
        metrics = QFontMetrics(self.font())
        width = sum(34 + metrics.horizontalAdvance(tr(text)) + 18 for _k, text in self.ITEMS)
        return QSize(width, 26)

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        metrics = QFontMetrics(self.font())
        x = 4
        base = QColor(PALETTE[0])
        for kind, text in self.ITEMS:
            swatch = QRect(x, 6, 26, 14)
            if kind == "written":
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(QBrush(base))
            elif kind == "planned":
                light = QColor(base)
                light.setAlpha(40)
                painter.setPen(QPen(base, 1.5, Qt.PenStyle.DashLine))
                painter.setBrush(QBrush(light))
            elif kind == "convergence":
                painter.setPen(QPen(_CONVERGENCE_EDGE, 1.5, Qt.PenStyle.DashLine))
                painter.setBrush(QBrush(_CONVERGENCE))
            elif kind == "dormant":
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(QBrush(DORMANT))
            else:
                painter.setPen(QPen(QColor("#9bb8e6")))
                painter.setBrush(QBrush(QColor(59, 125, 216, 30)))
            painter.drawRoundedRect(swatch, 4, 4)
            painter.setPen(QColor("#444"))
            label = tr(text)
            painter.drawText(
                QRect(x + 32, 0, metrics.horizontalAdvance(label) + 4, 26),
                Qt.AlignmentFlag.AlignVCenter,
                label,
            )
            x += 34 + metrics.horizontalAdvance(label) + 18
        painter.end()
