"""统计: the novel's pass rate, the most frequent judge issues, tokens and cost per chapter and words written
per day, as charts in the quality panel's manner. The figures come from
:func:`novel_desktop.controllers.analytics_controller.analytics`; what each one counts is said beside it.
"""

from __future__ import annotations

from PySide6.QtCharts import (
    QBarCategoryAxis,
    QBarSeries,
    QBarSet,
    QChart,
    QChartView,
    QLineSeries,
    QStackedBarSeries,
    QValueAxis,
)
from PySide6.QtCore import QMargins, QPointF, Qt
from PySide6.QtGui import QColor, QPainter, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QHeaderView,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.analytics_controller import Analytics, analytics
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.i18n import tr
from novel_desktop.ui.quality_text import muted, plain_label


def _chart(title: str) -> tuple[QChart, QChartView]:
    chart = QChart()
    chart.setTitle(title)
    chart.setMargins(QMargins(4, 4, 4, 4))
    chart.setBackgroundRoundness(0)
    chart.legend().setAlignment(Qt.AlignmentFlag.AlignBottom)
    view = QChartView(chart)
    view.setRenderHint(QPainter.RenderHint.Antialiasing)
    # Tall enough for the title, axis labels and legend at a large font (150%), with a plot left to see.
    view.setMinimumHeight(max(240, view.fontMetrics().height() * 14))
    return chart, view


class AnalyticsView(QWidget):
    """The analytics tab; see the module docstring."""

    def __init__(self, project: ProjectController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.data = Analytics()
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        outer.addWidget(scroll)
        page = QWidget()
        scroll.setWidget(page)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(12, 12, 12, 12)
        self.empty_label = plain_label(tr("还没有数据：用流水线写完并提交章节后，这里会显示统计。"))
        layout.addWidget(self.empty_label)

        grid = QGridLayout()
        layout.addLayout(grid, 1)
        # 1. pass rate
        self.pass_chart, self.pass_view = _chart(tr("通过率"))
        box = QVBoxLayout()
        self.pass_label = plain_label("")
        box.addWidget(self.pass_label)
        box.addWidget(self.pass_view, 1)
        box.addWidget(
            muted(
                tr(
                    "通过率 = 未经强制通过（接受 / 直接提交）而提交的章数 ÷ 由流水线提交的章数"
                    "（有流水线日志的章；导入的章不计）。"
                )
            )
        )
        grid.addLayout(box, 0, 0)
        # 2. judge issues
        box = QVBoxLayout()
        box.addWidget(plain_label(tr("最常见的评审问题（前 10）")))
        self.issue_table = QTableWidget(0, 3)
        self.issue_table.setHorizontalHeaderLabels([tr("规则"), tr("章数"), tr("示例")])
        self.issue_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.issue_table.verticalHeader().setVisible(False)
        header = self.issue_table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.issue_table.setMinimumHeight(240)
        box.addWidget(self.issue_table, 1)
        self.issue_status = muted("")
        box.addWidget(self.issue_status)
        box.addWidget(
            muted(tr("按规则统计闸门发现的问题（代码检查与评审的阻断性违规），同一章同一规则只计一次。"))
        )
        grid.addLayout(box, 0, 1)
        # 3. tokens and cost per chapter
        self.cost_chart, self.cost_view = _chart(tr("每章 tokens 与花费"))
        self.cost_label = muted("")
        box = QVBoxLayout()
        box.addWidget(self.cost_view, 1)
        box.addWidget(self.cost_label)
        grid.addLayout(box, 1, 0)
        # 4. words per day
        self.words_chart, self.words_view = _chart(tr("每日写作字数"))
        self.words_label = muted("")
        box = QVBoxLayout()
        box.addWidget(self.words_view, 1)
        box.addWidget(self.words_label)
        box.addWidget(
            muted(
                tr("流水线提交计最终稿的字数；手改计改后比改前多出的字数；导入的正文不计。按本地日期统计。")
            )
        )
        grid.addLayout(box, 1, 1)
        self._dirty = False
        # A commit or an edit re-reads the figures now when the tab is shown, else when it is next shown.
        self.project.chapters_changed.connect(self._on_project_changed)
        self.project.project_opened.connect(self._on_project_changed)
        self.refresh()

    def _on_project_changed(self, *_args: object) -> None:
        if self.isVisible():
            self.refresh()
        else:
            self._dirty = True

    def showEvent(self, event: QShowEvent) -> None:
        if self._dirty:
            self.refresh()
        super().showEvent(event)

    # ------------------------------------------------------------------ fill
    def refresh(self, *_args: object) -> None:
        """Re-read the figures from the project."""
        self._dirty = False
        self.data = analytics(self.project)
        self.empty_label.setVisible(self.data.empty)
        self._fill_pass()
        self._fill_issues()
        self._fill_costs()
        self._fill_words()

    def _fill_pass(self) -> None:
        data = self.data
        chart = self.pass_chart
        chart.removeAllSeries()
        for axis in chart.axes():
            chart.removeAxis(axis)
        if data.pass_rate is None:
            self.pass_label.setText(tr("还没有由流水线提交的章节。"))
            return
        self.pass_label.setText(
            tr("通过率 {rate:.0%}：{k} 章中 {passed} 章未经强制通过。").format(
                rate=data.pass_rate, k=len(data.committed), passed=data.passed
            )
        )
        passed = QBarSet(tr("未强制通过"))
        passed.setColor(QColor("#16a34a"))
        passed.append(float(data.passed))
        forced = QBarSet(tr("强制通过"))
        forced.setColor(QColor("#c2410c"))
        forced.append(float(len(data.forced)))
        series = QBarSeries()
        series.append(passed)
        series.append(forced)
        chart.addSeries(series)
        y = QValueAxis()
        y.setLabelFormat("%d")
        y.setRange(0, max(1, len(data.committed)))
        # Whole chapters only: ticks at a whole step, about five of them.
        y.setTickType(QValueAxis.TickType.TicksDynamic)
        y.setTickAnchor(0.0)
        y.setTickInterval(float(max(1, -(-len(data.committed) // 5))))
        x = QBarCategoryAxis()
        x.append([tr("章数")])
        chart.addAxis(x, Qt.AlignmentFlag.AlignBottom)
        chart.addAxis(y, Qt.AlignmentFlag.AlignLeft)
        series.attachAxis(x)
        series.attachAxis(y)

    def _fill_issues(self) -> None:
        issues = self.data.issues
        self.issue_table.setRowCount(len(issues))
        for row, issue in enumerate(issues):
            self.issue_table.setItem(row, 0, QTableWidgetItem(issue.rule))
            count = QTableWidgetItem(str(issue.chapters))
            count.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.issue_table.setItem(row, 1, count)
            example = QTableWidgetItem(issue.example)
            example.setToolTip(issue.example)
            self.issue_table.setItem(row, 2, example)
        if issues:
            self.issue_status.setText("")
        elif self.data.committed:
            self.issue_status.setText(tr("提交的章节在闸门都没有发现问题。"))
        else:
            self.issue_status.setText(tr("还没有由流水线提交的章节。"))

    def _fill_costs(self) -> None:
        costs = self.data.costs
        chart = self.cost_chart
        chart.removeAllSeries()
        for axis in chart.axes():
            chart.removeAxis(axis)
        if not costs:
            self.cost_label.setText(tr("成本账本里还没有按章记录的调用。"))
            return
        chapters = sorted(costs)
        inputs = QBarSet(tr("输入 tokens"))
        inputs.setColor(QColor("#4f7fd9"))
        outputs = QBarSet(tr("输出 tokens"))
        outputs.setColor(QColor("#93c5fd"))
        for n in chapters:
            inputs.append(float(costs[n].total_input_tokens))
            outputs.append(float(costs[n].output_tokens))
        bars = QStackedBarSeries()
        bars.append(inputs)
        bars.append(outputs)
        cost_line = QLineSeries()
        cost_line.setName(tr("花费（美元）"))
        cost_line.setColor(QColor("#c2410c"))
        cost_line.setPointsVisible(len(chapters) <= 120)
        cost_line.replace([QPointF(i, costs[n].cost_usd) for i, n in enumerate(chapters)])
        chart.addSeries(bars)
        chart.addSeries(cost_line)
        x = QBarCategoryAxis()
        x.append([str(n) for n in chapters])
        x.setTitleText(tr("章"))
        tokens = QValueAxis()
        tokens.setLabelFormat("%d")
        tokens.setTitleText(tr("tokens"))
        top = max(costs[n].total_input_tokens + costs[n].output_tokens for n in chapters)
        tokens.setRange(0, max(1, top * 1.1))
        tokens.applyNiceNumbers()
        dollars = QValueAxis()
        dollars.setLabelFormat("%.3f")
        dollars.setTitleText(tr("美元"))
        dollars.setRange(0, max(0.001, max(costs[n].cost_usd for n in chapters) * 1.2))
        chart.addAxis(x, Qt.AlignmentFlag.AlignBottom)
        chart.addAxis(tokens, Qt.AlignmentFlag.AlignLeft)
        chart.addAxis(dollars, Qt.AlignmentFlag.AlignRight)
        bars.attachAxis(x)
        bars.attachAxis(tokens)
        cost_line.attachAxis(x)
        cost_line.attachAxis(dollars)
        total = sum(c.cost_usd for c in costs.values())
        self.cost_label.setText(
            tr("{k} 章共 ${cost:.4f}（成本账本中记到这些章的全部调用）。").format(k=len(chapters), cost=total)
        )

    def _fill_words(self) -> None:
        days = self.data.days
        chart = self.words_chart
        chart.removeAllSeries()
        for axis in chart.axes():
            chart.removeAxis(axis)
        if not days:
            self.words_label.setText(tr("还没有写作或手改记录。"))
            return
        pipeline = QBarSet(tr("流水线提交"))
        pipeline.setColor(QColor("#4f7fd9"))
        manual = QBarSet(tr("手改", "words"))
        manual.setColor(QColor("#ca8a04"))
        for day in days:
            pipeline.append(float(day.pipeline))
            manual.append(float(day.manual))
        series = QStackedBarSeries()
        series.append(pipeline)
        series.append(manual)
        chart.addSeries(series)
        x = QBarCategoryAxis()
        x.append([day.day.strftime("%m-%d") for day in days])
        y = QValueAxis()
        y.setLabelFormat("%d")
        y.setTitleText(tr("字"))
        y.setRange(0, max(1, max(day.total for day in days) * 1.1))
        y.applyNiceNumbers()
        chart.addAxis(x, Qt.AlignmentFlag.AlignBottom)
        chart.addAxis(y, Qt.AlignmentFlag.AlignLeft)
        series.attachAxis(x)
        series.attachAxis(y)
        total = sum(day.total for day in days)
        self.words_label.setText(tr("{d} 天共 {n} 字。").format(d=len(days), n=total))


__all__ = ["AnalyticsView"]
