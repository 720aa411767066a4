"""The 全书 tab of the quality panel: the overall score per chapter against the 3.5 / 4.0 gate lines, and
AI-phrase hits per 1,000 字.

The tab is built only when it is shown. The AI-phrase density comes from the :class:`AnalysisController`
(``project.analysis``, over the GUI's one analysis cache) a slice of chapters per event-loop turn, so a panel
over a 500-chapter novel opens at once and stays responsive while the second chart fills in. Mixed into
:class:`~novel_desktop.ui.quality_panel.QualityPanel`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from PySide6.QtCharts import QChart, QChartView, QLineSeries, QValueAxis
from PySide6.QtCore import QMargins, QPointF, Qt, QTimer
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from novel_desktop.controllers.analysis_controller import AiPhraseCounter
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.gate import PASS_AT, POLISH_AT
from novel_desktop.i18n import tr, tr_n
from novel_desktop.ui.quality_text import GOOD, MID, muted, plain_label

#: Chapters scanned per event-loop turn at most, and the time one turn may take.
_SCAN_SLICE = 40
_SCAN_BUDGET_S = 0.03


@dataclass(frozen=True)
class TrendPoint:
    chapter: int
    overall: float


def score_trend(project: ProjectController) -> list[TrendPoint]:
    """The overall score of every evaluated chapter, in chapter order (unreadable evaluations skipped)."""
    points: list[TrendPoint] = []
    for info in project.chapters():
        raw = project.evaluation(info.number)
        if not raw:
            continue
        overall = raw.get("overall")
        if isinstance(overall, int | float) and not isinstance(overall, bool):
            points.append(TrendPoint(info.number, float(overall)))
    return points


class NovelTrendMixin:
    """Builds and fills the 全书 tab; the panel provides the project and the scan timer."""

    project: ProjectController
    trend: list[TrendPoint]
    ai_hits: dict[int, float]
    ai_scan_done: bool
    _trend_dirty: bool
    _scan_queue: list[int]
    _scan_total: int
    _counter: AiPhraseCounter | None
    _scan_timer: QTimer
    trend_summary: QLabel
    ai_status: QLabel

    def _build_novel_tab(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(8, 8, 8, 8)
        self.trend_summary = plain_label("")
        layout.addWidget(self.trend_summary)

        self.score_series = QLineSeries()
        self.score_series.setName(tr("综合评分"))
        self.score_series.setColor(QColor("#4f7fd9"))
        self.pass_line = QLineSeries()
        self.pass_line.setName(tr("通过线 {v}").format(v=PASS_AT))
        self.pass_line.setPen(QPen(QColor(GOOD), 1.5, Qt.PenStyle.DashLine))
        self.polish_line = QLineSeries()
        self.polish_line.setName(tr("润色线 {v}").format(v=POLISH_AT))
        self.polish_line.setPen(QPen(QColor(MID), 1.5, Qt.PenStyle.DashLine))
        self.score_x = QValueAxis()
        self.score_y = QValueAxis()
        self.score_y.setRange(1, 5)
        self.score_y.setTickCount(5)
        self.score_y.setLabelFormat("%.1f")
        self.score_chart_view = self._line_chart(
            tr("综合评分（按章）"),
            [self.score_series, self.polish_line, self.pass_line],
            self.score_x,
            self.score_y,
        )
        layout.addWidget(self.score_chart_view, 1)

        self.ai_series = QLineSeries()
        self.ai_series.setName(tr("AI 高频词（次/千字）"))
        self.ai_series.setColor(QColor("#c2410c"))
        self.ai_x = QValueAxis()
        self.ai_y = QValueAxis()
        self.ai_y.setLabelFormat("%.1f")
        self.ai_chart_view = self._line_chart(
            tr("AI 高频词密度（按章）"), [self.ai_series], self.ai_x, self.ai_y
        )
        layout.addWidget(self.ai_chart_view, 1)
        self.ai_status = muted("")
        layout.addWidget(self.ai_status)
        layout.addWidget(muted(tr("点击图中的点可打开对应章节。")))
        return page

    def _line_chart(
        self, title: str, series: list[QLineSeries], x_axis: QValueAxis, y_axis: QValueAxis
    ) -> QChartView:
        chart = QChart()
        chart.setTitle(title)
        chart.setMargins(QMargins(4, 4, 4, 4))
        chart.setBackgroundRoundness(0)
        chart.legend().setAlignment(Qt.AlignmentFlag.AlignBottom)
        for s in series:
            chart.addSeries(s)
        x_axis.setLabelFormat("%d")
        x_axis.setTitleText(tr("章"))
        chart.addAxis(x_axis, Qt.AlignmentFlag.AlignBottom)
        chart.addAxis(y_axis, Qt.AlignmentFlag.AlignLeft)
        for s in series:
            s.attachAxis(x_axis)
            s.attachAxis(y_axis)
        view = QChartView(chart)
        view.setRenderHint(QPainter.RenderHint.Antialiasing)
        # Tall enough for the title, tick labels, axis title and legend at a large font (150%): squeezed,
        # QtCharts elides them all to "...".
        view.setMinimumHeight(max(220, view.fontMetrics().height() * 14))
        return view

    def _build_trend(self) -> None:
        self._trend_dirty = False
        self.trend = score_trend(self.project) if self.project.is_open else []
        points = [QPointF(p.chapter, p.overall) for p in self.trend]
        self.score_series.replace(points)
        # Markers help while a dot is a chapter one can click; at hundreds of chapters they are a smear.
        self.score_series.setPointsVisible(len(points) <= 120)
        self.score_series.setMarkerSize(7)
        chapters = [c.number for c in self.project.chapters()] if self.project.is_open else []
        low, high = (min(chapters), max(chapters)) if chapters else (1, 1)
        self._set_x_range(self.score_x, low, high)
        self._set_x_range(self.ai_x, low, high)
        self.polish_line.replace([QPointF(low - 0.5, POLISH_AT), QPointF(high + 0.5, POLISH_AT)])
        self.pass_line.replace([QPointF(low - 0.5, PASS_AT), QPointF(high + 0.5, PASS_AT)])
        if self.trend:
            scores = [p.overall for p in self.trend]
            worst = min(self.trend, key=lambda p: p.overall)
            below = sum(1 for s in scores if s < POLISH_AT)
            self.trend_summary.setText(
                tr_n(
                    "已评审 {k} 章，平均 {avg:.2f}；最低为第 {n} 章 {low:.2f}；低于 {line} 的 {below} 章。",
                    len(scores),
                ).format(
                    k=len(scores),
                    avg=sum(scores) / len(scores),
                    n=worst.chapter,
                    low=worst.overall,
                    line=POLISH_AT,
                    below=below,
                )
            )
        elif self.project.is_open:
            self.trend_summary.setText(tr("还没有评审过的章节：写完并评审后，这里会显示每章的综合评分走势。"))
        else:
            self.trend_summary.setText(tr("没有打开的小说。"))
        self._start_ai_scan()

    @staticmethod
    def _set_x_range(axis: QValueAxis, low: int, high: int) -> None:
        axis.setRange(low - 0.5, high + 0.5)
        # Ticks on whole chapters, about ten of them, at a round step (1, 2, 5, 10, 20, 50 ...).
        span = high - low + 1
        step = 1
        for candidate in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000):
            step = candidate
            if span / candidate <= 10:
                break
        axis.setTickType(QValueAxis.TickType.TicksDynamic)
        axis.setTickAnchor(float(low if step == 1 else 0))
        axis.setTickInterval(float(step))

    def _start_ai_scan(self) -> None:
        self._scan_timer.stop()
        self.ai_hits = {}
        self.ai_series.clear()
        self.ai_scan_done = False
        if not self.project.is_open:
            self._scan_queue = []
            self.ai_status.setText("")
            self.ai_scan_done = True
            return
        self._counter = self.project.analysis.ai_counter()
        self._scan_queue = [c.number for c in self.project.chapters()]
        self._scan_total = len(self._scan_queue)
        self._scan_timer.start()

    def _on_scan_timer_timeout(self) -> None:
        # A slice per event-loop turn keeps the window responsive while hundreds of chapters are scanned.
        counter = self._counter
        if counter is None or not self.project.is_open:
            return
        started = time.monotonic()
        done = 0
        while self._scan_queue and done < _SCAN_SLICE and time.monotonic() - started < _SCAN_BUDGET_S:
            n = self._scan_queue.pop(0)
            density = self.project.analysis.ai_density(counter, n)
            if density is not None:
                self.ai_hits[n] = density
            done += 1
        self.ai_series.replace([QPointF(n, v) for n, v in sorted(self.ai_hits.items())])
        self.ai_series.setPointsVisible(len(self.ai_hits) <= 120)
        self.ai_series.setMarkerSize(7)
        top = max(self.ai_hits.values(), default=0.0)
        self.ai_y.setRange(0, max(1.0, top * 1.2))
        self.ai_y.applyNiceNumbers()
        if self._scan_queue:
            scanned = self._scan_total - len(self._scan_queue)
            self.ai_status.setText(
                tr_n("正在统计 AI 高频词：{k} / {total} 章", self._scan_total).format(
                    k=scanned, total=self._scan_total
                )
            )
            self._scan_timer.start()
            return
        self.project.analysis.flush()
        self._counter = None
        self.ai_scan_done = True
        if self.ai_hits and not any(self.ai_hits.values()):
            self.ai_status.setText(
                tr_n("AI 高频词：{k} 章正文中都没有发现。", len(self.ai_hits)).format(k=len(self.ai_hits))
            )
        elif self.ai_hits:
            values = list(self.ai_hits.values())
            self.ai_status.setText(
                tr("AI 高频词：平均每千字 {avg:.2f} 次，最高为第 {n} 章 {top:.2f} 次。").format(
                    avg=sum(values) / len(values),
                    n=max(self.ai_hits, key=lambda k: self.ai_hits[k]),
                    top=max(values),
                )
            )
        else:
            self.ai_status.setText(tr("还没有正文可统计。"))
