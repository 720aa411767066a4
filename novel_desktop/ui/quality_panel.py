"""质量报告: the QualityJudge's verdict on one chapter, and the quality of the whole novel over time.

本章: overall score, recommendation and the gate's path (``3.2 → 修订 → 3.8，通过``); a bar chart of the eight
weighted dimensions with each reason and quoted evidence (a click on a quote asks the window to show that
passage); contract checks, violations, risk flags, required fixes (also clickable), issues and strengths.
全书: the overall score per chapter against the 3.5 / 4.0 gate lines, and AI-phrase hits per 1,000 字.

Reads go through the :class:`ProjectController`. The novel view is built only when it is shown, and the
AI-phrase scan runs a slice of chapters per event-loop turn (results cached by text hash), so a panel over a
500-chapter novel opens at once and stays responsive while the second chart fills in.
"""

from __future__ import annotations

import hashlib
import html
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCharts import (
    QBarCategoryAxis,
    QBarSet,
    QChart,
    QChartView,
    QHorizontalBarSeries,
    QLineSeries,
    QValueAxis,
)
from PySide6.QtCore import QMargins, QPointF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QKeyEvent, QMouseEvent, QPainter, QPen
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.analysis.ai_phrases import PhraseEntry, find_hits, phrases_for_novel
from novel_desktop.analysis.cache import AnalysisCache, text_hash
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.evaluation import (
    DIMENSION_WEIGHTS,
    ContractCheck,
    ContractChecks,
    Evaluation,
    Violation,
    split_risk_flag,
)
from novel_desktop.domain.gate import PASS_AT, POLISH_AT
from novel_desktop.domain.text import count_chars
from novel_desktop.i18n import tr

log = logging.getLogger(__name__)

#: The eight dimensions as the author reads them (seed §6.6.5 order).
DIMENSION_NAMES: dict[str, str] = {
    "plot_logic": "情节逻辑",
    "character": "角色塑造",
    "immersion": "沉浸感",
    "foreshadowing": "伏笔",
    "pacing": "节奏",
    "style_naturalness": "风格自然度",
    "emotional_impact": "情感冲击",
    "storyline_coherence": "故事线连贯",
}
RECOMMENDATIONS: dict[str, str] = {"pass": "通过", "polish": "二次润色", "revise": "修订", "rewrite": "重写"}
GATE_DECISIONS: dict[str, str] = {
    "pass": "通过",
    "polish": "二次润色后通过",
    "revise": "修订",
    "rewrite": "重写",
    "ask_user": "请你决定",
    "force_pass": "强制通过（已标记）",
}
#: Risk flag kinds the QualityJudge prompt defines; others are shown as written.
RISK_KINDS: dict[str, str] = {
    "character_speech_missing": "角色没有体现语癖",
    "foreshadow_premature": "伏笔提前揭底",
    "storyline_contamination": "故事线串线",
    "timeline_conflict": "时间线矛盾",
    "ai_phrase_dense": "AI 用语密集",
    "repetitive_pattern": "句式重复",
}
CONTRACT_LAYERS: tuple[tuple[str, str], ...] = (
    ("l1_checks", "L1 世界规则"),
    ("l2_checks", "L2 角色契约"),
    ("l3_checks", "L3 章节契约"),
    ("ls_checks", "LS 故事线"),
)
CONFIDENCE: dict[str, str] = {"high": "高置信度", "medium": "中置信度", "low": "低置信度"}

_GOOD = "#1e7b34"
_MID = "#a15c00"
_BAD = "#b00020"
_MUTED = "palette(dark)"
#: Chapters scanned per event-loop turn at most, and the time one turn may take.
_SCAN_SLICE = 40
_SCAN_BUDGET_S = 0.03


def score_color(score: float) -> str:
    """Green at the pass line, amber in the polish band, red below it."""
    if score >= PASS_AT:
        return _GOOD
    if score >= POLISH_AT:
        return _MID
    return _BAD


# ====================================================================== derived data (no Qt)
def parse_evaluation(raw: dict[str, Any] | None) -> tuple[Evaluation | None, str | None]:
    """The stored evaluation as a model, or None and why it cannot be read."""
    if raw is None:
        return None, None
    try:
        return Evaluation.model_validate(raw), None
    except ValueError as exc:
        # pydantic's ValidationError is a ValueError; it is caught as such because importing pydantic here,
        # ahead of PySide6, trips PySide6's import hook over pydantic's lazy module attributes.
        errors = exc.errors() if callable(getattr(exc, "errors", None)) else []  # type: ignore[attr-defined]
        if errors:
            where = ".".join(str(p) for p in errors[0]["loc"])
            return None, f"{where}: {errors[0]['msg']}"
        return None, str(exc)


def _score_text(score: float) -> str:
    """3.2, 3.84, 4.0: two decimals at most, one at least."""
    text = f"{score:.2f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def gate_path(log_data: dict[str, Any] | None, evaluation: Evaluation) -> str:
    """The gate's path through the judged rounds, e.g. ``3.2 → 修订 → 3.8，通过``.

    Every score after the first followed a revision (or rewrite); the pipeline log keeps the scores of all
    rounds. Without a log (an imported chapter) the path is the final score alone.
    """
    scores: list[float] = []
    decision = None
    if log_data:
        scores = [float(s) for s in log_data.get("scores") or [] if isinstance(s, int | float)]
        decision = log_data.get("gate_decision")
    if not scores:
        scores = [float(evaluation.overall)]
    step = f" → {tr('修订')} → "
    path = step.join(_score_text(s) for s in scores)
    if decision:
        path += tr("，") + tr(GATE_DECISIONS.get(str(decision), str(decision)))
    return path


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


class AiPhraseCounter:
    """AI-phrase hits per 1,000 字 of a text, cached by text hash and phrase list.

    Only the regular-expression scan is needed here, so this does not go through ``NovelAnalyzer`` (which also
    segments every chapter with jieba, seconds for a long novel); it shares its cache file, with its own keys,
    so reopening a novel reads the counts instead of rescanning.
    """

    def __init__(self, phrases: Sequence[PhraseEntry], cache: AnalysisCache | None = None) -> None:
        self.phrases = list(phrases)
        raw = "\n".join(f"{p.regex}:{p.pattern}" for p in self.phrases)
        self._fingerprint = hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]
        self.cache = cache if cache is not None else AnalysisCache()

    def per_1k(self, text: str) -> float:
        key = f"ai-hits:{self._fingerprint}:{text_hash(text)}"
        counts = self.cache.get(key, lambda data: (int(data[0]), int(data[1])))
        if counts is None:
            counts = (len(find_hits(text, self.phrases)), count_chars(text))
            self.cache.put(key, counts, list)
        hits, chars = counts
        return hits * 1000.0 / chars if chars else 0.0


def novel_phrases(project: ProjectController) -> list[PhraseEntry]:
    """The phrase list in force for this novel (the shipped list when its blacklist does not parse)."""
    try:
        return phrases_for_novel(project.document_json("ai-blacklist.json"))
    except ValueError:
        return phrases_for_novel(None)


# ====================================================================== widgets
class ClickableLabel(QLabel):
    """A wrapped text the author can click (or focus and press Enter) to ask for something."""

    clicked = Signal()

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setWordWrap(True)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setTextFormat(Qt.TextFormat.RichText)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self.rect().contains(event.position().toPoint()):
            self.clicked.emit()
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            self.clicked.emit()
            return
        super().keyPressEvent(event)


def _section_title(text: str) -> QLabel:
    label = QLabel(text)
    font = label.font()
    font.setBold(True)
    font.setPointSizeF(font.pointSizeF() * 1.1)
    label.setFont(font)
    label.setContentsMargins(0, 10, 0, 2)
    return label


def _muted(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setStyleSheet(f"color: {_MUTED};")
    return label


def _text(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


_QUOTE_STYLE = (
    "QLabel { color: #1d4ed8; background: #f3f6fc; border-left: 3px solid #93b4f0;"
    " padding: 3px 8px; } QLabel:hover { background: #e4ecfa; }"
    " QLabel:focus { border: 1px solid #1d4ed8; border-left: 3px solid #1d4ed8; }"
)
_FIX_STYLE = (
    "QLabel { background: #fff8eb; border: 1px solid #f1d49b; border-radius: 4px; padding: 6px 8px; }"
    " QLabel:hover { background: #fff1d6; } QLabel:focus { border: 1px solid #a15c00; }"
)


def _quote(text: str) -> str:
    # Evidence that is itself a line of dialogue already carries its quotation marks.
    if text[:1] in "“「\"'" and text[-1:] in "”」\"'":
        return html.escape(text)
    return "“" + html.escape(text) + "”"


def chapter_title(number: int, title: str) -> str:
    """``第 3 章 入城``; a title that already starts with 第…章 is shown as is."""
    head = tr("第 {n} 章").format(n=number)
    if not title:
        return head
    if title.startswith("第") and "章" in title[:8]:
        return title
    return f"{head} {title}"


class QualityPanel(QWidget):
    """The quality report; see the module docstring."""

    #: Show chapter ``int`` in the editor with the passage ``str`` selected.
    jump_requested = Signal(int, str)
    #: Open chapter ``int`` (from the trend charts or 在编辑器中打开).
    chapter_requested = Signal(int)

    def __init__(self, project: ProjectController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.chapter: int | None = None
        self.evaluation: Evaluation | None = None
        self._shown_key: str | None = None
        #: What the chapter view shows, for tests and for keyboard navigation.
        self.bar_set: QBarSet | None = None
        self.dimension_order: list[str] = []
        self.evidence_labels: dict[str, ClickableLabel] = {}
        self.reason_labels: dict[str, QLabel] = {}
        self.fix_labels: list[ClickableLabel] = []
        self.violation_labels: list[ClickableLabel] = []
        self.trend: list[TrendPoint] = []
        self.ai_hits: dict[int, float] = {}
        self.ai_scan_done = False
        self._trend_dirty = True
        self._scan_queue: list[int] = []
        self._counter: AiPhraseCounter | None = None
        self._scan_timer = QTimer(self)
        self._scan_timer.setSingleShot(True)
        self._scan_timer.setInterval(0)

        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.tabs = QTabWidget()
        outer.addWidget(self.tabs)
        self.tabs.addTab(self._build_chapter_tab(), tr("本章"))
        self.tabs.addTab(self._build_novel_tab(), tr("全书"))
        self._connect()
        self.refresh()

    def _connect(self) -> None:
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)
        self.chapter_combo.activated.connect(self._on_chapter_combo_activated)
        self.open_button.clicked.connect(self._on_open_button_clicked)
        self.score_series.clicked.connect(self._on_trend_clicked)
        self.ai_series.clicked.connect(self._on_trend_clicked)
        self._scan_timer.timeout.connect(self._on_scan_timer_timeout)
        self.project.chapters_changed.connect(self.refresh)
        self.project.project_opened.connect(self._on_project_opened)
        self.project.project_closed.connect(self.refresh)
        self.project.document_changed.connect(self._on_project_document_changed)

    # ------------------------------------------------------------------ chapter tab
    def _build_chapter_tab(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(8, 8, 8, 0)
        top = QHBoxLayout()
        top.addWidget(QLabel(tr("章节")))
        self.chapter_combo = QComboBox()
        self.chapter_combo.setMinimumContentsLength(16)
        self.chapter_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        top.addWidget(self.chapter_combo)
        self.open_button = QPushButton(tr("在编辑器中打开"))
        top.addWidget(self.open_button)
        top.addStretch(1)
        layout.addLayout(top)
        self.report_scroll = QScrollArea()
        self.report_scroll.setWidgetResizable(True)
        self.report_scroll.setFrameShape(QFrame.Shape.NoFrame)
        layout.addWidget(self.report_scroll, 1)
        return page

    def refresh(self) -> None:
        """Re-read what this view shows from the project."""
        self._trend_dirty = True
        self._fill_chapter_combo()
        chapter = self.chapter
        if chapter is None or not self._has_chapter(chapter):
            chapter = self._default_chapter()
        self._show(chapter)
        if self.tabs.currentIndex() == 1:
            self._build_trend()

    def show_chapter(self, number: int) -> None:
        """Show chapter ``number``'s report on the 本章 tab."""
        self._fill_chapter_combo()
        self._show(number)
        self.tabs.setCurrentIndex(0)

    def show_novel(self) -> None:
        """Show the 全书 tab (building its charts if they are out of date)."""
        self.tabs.setCurrentIndex(1)
        if self._trend_dirty:
            self._build_trend()

    def _has_chapter(self, number: int) -> bool:
        return self.chapter_combo.findData(number) >= 0

    def _default_chapter(self) -> int | None:
        # The latest chapter that has a verdict, else the latest chapter.
        if not self.project.is_open:
            return None
        chapters = self.project.chapters()
        for info in reversed(chapters):
            if self.project.evaluation(info.number) is not None:
                return info.number
        return chapters[-1].number if chapters else None

    def _fill_chapter_combo(self) -> None:
        self.chapter_combo.blockSignals(True)
        self.chapter_combo.clear()
        if self.project.is_open:
            for info in self.project.chapters():
                self.chapter_combo.addItem(chapter_title(info.number, info.title), info.number)
        self.chapter_combo.blockSignals(False)

    def _report_key(self, number: int | None) -> str:
        """What the report of ``number`` is built from; the same key means the same report."""
        if not self.project.is_open or number is None:
            return json.dumps([self.project.is_open, number])
        info = next((c for c in self.project.chapters() if c.number == number), None)
        parts = [number, info.title if info else None, self.project.evaluation(number)]
        return json.dumps([*parts, self.project.pipeline_log(number)], ensure_ascii=False, sort_keys=True)

    def _show(self, number: int | None) -> None:
        index = self.chapter_combo.findData(number) if number is not None else -1
        self.chapter_combo.setCurrentIndex(index)
        self.open_button.setEnabled(number is not None)
        # A commit asks for the same report several times (chapters changed, the new tab, the committed
        # chapter); its chart costs tens of milliseconds, so an unchanged report is not built again.
        key = self._report_key(number)
        if key == self._shown_key and number == self.chapter:
            return
        self._shown_key = key
        self.chapter = number
        self.bar_set = None
        self.dimension_order = []
        self.evidence_labels = {}
        self.reason_labels = {}
        self.fix_labels = []
        self.violation_labels = []
        self.evaluation = None
        content = QWidget()
        self._body = QVBoxLayout(content)
        self._body.setContentsMargins(4, 4, 12, 12)
        self._body.setSpacing(4)
        if not self.project.is_open:
            self._empty(tr("没有打开的小说。"))
        elif number is None:
            self._empty(tr("还没有章节。写完第一章并通过评审后，这里会显示质量报告。"))
        else:
            evaluation, problem = parse_evaluation(self.project.evaluation(number))
            if problem:
                self._empty(
                    tr("第 {n} 章的评审结果无法读取（{problem}）。可以重新评审这一章。").format(
                        n=number, problem=problem
                    )
                )
            elif evaluation is None:
                self._empty(
                    tr(
                        "第 {n} 章还没有评审结果。写完并经过质量评审后，这里会显示各维度得分、理由与证据。"
                    ).format(n=number)
                )
            else:
                self.evaluation = evaluation
                self._fill_report(number, evaluation)
        self._body.addStretch(1)
        old = self.report_scroll.takeWidget()
        if old is not None:
            old.deleteLater()
        self.report_scroll.setWidget(content)

    def _empty(self, text: str) -> None:
        label = _muted(text)
        label.setObjectName("empty_state")
        label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        label.setContentsMargins(4, 16, 4, 4)
        self.empty_label = label
        self._body.addWidget(label)

    def _fill_report(self, n: int, ev: Evaluation) -> None:
        body = self._body
        self._add_header(n, ev)
        body.addWidget(self._dimension_chart(ev))
        body.addWidget(_section_title(tr("各维度理由与证据")))
        body.addWidget(_muted(tr("点击引文可在正文中定位。")))
        body.addWidget(self._dimension_details(n, ev))
        body.addWidget(_section_title(tr("契约核验")))
        self._add_contracts(ev)
        body.addWidget(_section_title(tr("违规")))
        self._add_violations(n, ev)
        body.addWidget(_section_title(tr("风险提示")))
        if ev.risk_flags:
            for flag in ev.risk_flags:
                kind, detail = split_risk_flag(flag)
                shown = tr(RISK_KINDS.get(kind, kind))
                label = _text(f"⚠ {shown}" + (f"：{detail}" if detail else ""))
                label.setStyleSheet(f"color: {_MID};")
                label.setToolTip(flag)
                body.addWidget(label)
        else:
            body.addWidget(_muted(tr("无")))
        body.addWidget(_section_title(tr("必须修改")))
        if ev.required_fixes:
            body.addWidget(_muted(tr("点击一条修改意见可在正文中定位它指向的段落。")))
            for fix in ev.required_fixes:
                label = ClickableLabel(
                    f"<b>{html.escape(tr('位置'))}</b>：{_quote(fix.target)}<br>{html.escape(fix.instruction)}"
                )
                label.setStyleSheet(_FIX_STYLE)
                label.setToolTip(tr("在正文中定位这一段"))
                label.clicked.connect(lambda t=fix.target: self.jump_requested.emit(n, t))
                self.fix_labels.append(label)
                body.addWidget(label)
        else:
            body.addWidget(_muted(tr("无")))
        for title, items, color in (
            (tr("问题"), ev.issues, _MID),
            (tr("亮点"), ev.strengths, _GOOD),
        ):
            body.addWidget(_section_title(title))
            if not items:
                body.addWidget(_muted(tr("无")))
            for item in items:
                label = _text(f"<span style='color:{color}'>●</span> {html.escape(item)}")
                label.setTextFormat(Qt.TextFormat.RichText)
                body.addWidget(label)

    def _add_header(self, n: int, ev: Evaluation) -> None:
        info = next((c for c in self.project.chapters() if c.number == n), None)
        head = QLabel(chapter_title(n, info.title if info else ""))
        font = head.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.25)
        head.setFont(font)
        self._body.addWidget(head)

        row = QHBoxLayout()
        self.score_label = QLabel(f"{ev.overall:.2f}")
        big = QFont(self.score_label.font())
        big.setPointSizeF(big.pointSizeF() * 2.4)
        big.setBold(True)
        self.score_label.setFont(big)
        self.score_label.setStyleSheet(f"color: {score_color(float(ev.overall))};")
        self.score_label.setToolTip(tr("综合评分（8 个维度加权平均，满分 5）"))
        row.addWidget(self.score_label, 0, Qt.AlignmentFlag.AlignTop)
        facts = QVBoxLayout()
        facts.setSpacing(2)
        recommendation = tr(RECOMMENDATIONS.get(ev.recommendation.value, ev.recommendation.value))
        self.recommendation_label = _text(tr("评审建议：{r}").format(r=recommendation))
        facts.addWidget(self.recommendation_label)
        log_data = self.project.pipeline_log(n)
        self.gate_label = _text(tr("门控：{path}").format(path=gate_path(log_data, ev)))
        facts.addWidget(self.gate_label)
        extra: list[str] = []
        if log_data:
            extra.append(tr("修订 {k} 次").format(k=int(log_data.get("revisions") or 0)))
        computed = ev.computed_overall()
        if abs(computed - float(ev.overall)) >= 0.05:
            extra.append(tr("按权重复算为 {s:.2f}").format(s=computed))
        if extra:
            facts.addWidget(_muted("；".join(extra)))
        row.addSpacing(12)
        row.addLayout(facts, 1)
        self._body.addLayout(row)

    def _dimension_chart(self, ev: Evaluation) -> QChartView:
        names = [d for d in DIMENSION_WEIGHTS if d in ev.scores]
        self.dimension_order = names
        bars = QBarSet(tr("得分"))
        # A horizontal bar chart lists its first category at the bottom; reversed, 情节逻辑 reads first.
        for name in reversed(names):
            bars.append(float(ev.scores[name].score))
        bars.setColor(QColor("#4f7fd9"))
        bars.setBorderColor(QColor("#4f7fd9"))
        bars.setSelectedColor(QColor("#e07a2e"))
        bars.setLabelColor(QColor("white"))
        for index, name in enumerate(reversed(names)):
            if ev.scores[name].score < 3:
                bars.selectBar(index)  # low dimensions stand out
        series = QHorizontalBarSeries()
        series.append(bars)
        series.setLabelsVisible(True)
        series.setLabelsPosition(QHorizontalBarSeries.LabelsPosition.LabelsInsideEnd)
        series.setLabelsFormat("@value")
        series.setBarWidth(0.7)
        chart = QChart()
        chart.addSeries(series)
        chart.legend().hide()
        chart.setMargins(QMargins(4, 4, 4, 4))
        chart.setBackgroundRoundness(0)
        categories = QBarCategoryAxis()
        categories.append(
            [f"{tr(DIMENSION_NAMES.get(d, d))} {DIMENSION_WEIGHTS[d]:.0%}" for d in reversed(names)]
        )
        values = QValueAxis()
        values.setRange(0, 5)
        values.setTickCount(6)
        values.setLabelFormat("%d")
        chart.addAxis(categories, Qt.AlignmentFlag.AlignLeft)
        chart.addAxis(values, Qt.AlignmentFlag.AlignBottom)
        series.attachAxis(categories)
        series.attachAxis(values)
        view = QChartView(chart)
        view.setRenderHint(QPainter.RenderHint.Antialiasing)
        view.setMinimumHeight(300)
        view.setMaximumHeight(340)
        view.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        view.setAccessibleName(tr("各维度得分图"))
        self.bar_set = bars
        self.dimension_chart = view
        return view

    def _dimension_details(self, n: int, ev: Evaluation) -> QWidget:
        box = QWidget()
        grid = QGridLayout(box)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(6)
        grid.setColumnStretch(1, 1)
        row = 0
        for name in self.dimension_order:
            score = ev.scores[name]
            head = QLabel(
                f"<b>{html.escape(tr(DIMENSION_NAMES.get(name, name)))}</b>"
                f" <span style='color:{score_color(score.score)}'><b>{score.score}</b></span>"
                f"<span style='color:gray'> {html.escape(tr('权重'))} {DIMENSION_WEIGHTS[name]:.0%}</span>"
            )
            head.setTextFormat(Qt.TextFormat.RichText)
            head.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
            grid.addWidget(head, row, 0, 2 if score.evidence else 1, 1)
            reason = _text(score.reason or tr("（评审没有给出理由）"))
            self.reason_labels[name] = reason
            grid.addWidget(reason, row, 1)
            row += 1
            if score.evidence:
                quote = ClickableLabel(_quote(score.evidence))
                quote.setStyleSheet(_QUOTE_STYLE)
                quote.setToolTip(tr("在正文中定位这一段"))
                quote.clicked.connect(lambda e=score.evidence: self.jump_requested.emit(n, e))
                self.evidence_labels[name] = quote
                grid.addWidget(quote, row, 1)
                row += 1
        return box

    def _add_contracts(self, ev: Evaluation) -> None:
        results = ev.contract_results()
        verification = ev.contract_verification
        groups: list[tuple[str, list[tuple[str, str]]]] = []
        if isinstance(verification, ContractChecks):
            for key, title in CONTRACT_LAYERS:
                entries = [
                    (c.id, str(c.status)) for c in getattr(verification, key) if isinstance(c, ContractCheck)
                ]
                if entries:
                    groups.append((tr(title), entries))
        elif results:
            groups.append((tr("契约"), [(rule, str(status)) for rule, status in results.items()]))
        broken = [rule for rule, status in results.items() if status != "pass"]
        if not results:
            self._body.addWidget(_muted(tr("这次评审没有逐条核验契约。")))
        elif broken:
            summary = _text(
                tr("{k} / {total} 项未通过：{ids}").format(
                    k=len(broken), total=len(results), ids="、".join(broken)
                )
            )
            summary.setStyleSheet(f"color: {_BAD};")
            self._body.addWidget(summary)
        else:
            summary = _text(tr("全部 {total} 项通过").format(total=len(results)))
            summary.setStyleSheet(f"color: {_GOOD};")
            self._body.addWidget(summary)
        self.contract_labels: dict[str, str] = {}
        for title, entries in groups:
            chips = []
            for rule, status in entries:
                ok = status == "pass"
                self.contract_labels[rule] = "pass" if ok else "violation"
                mark, color = ("✓", _GOOD) if ok else ("✗", _BAD)
                chips.append(
                    f"<span style='color:{color}'>{mark}</span>&nbsp;{html.escape(rule)}"
                    + ("" if ok else f"&nbsp;<span style='color:{color}'>{html.escape(tr('违规'))}</span>")
                )
            label = _text(f"<b>{html.escape(title)}</b>：" + "　".join(chips))
            label.setTextFormat(Qt.TextFormat.RichText)
            self._body.addWidget(label)

    def _add_violations(self, n: int, ev: Evaluation) -> None:
        if not ev.violations:
            self._body.addWidget(_muted(tr("无")))
            return
        for violation in ev.violations:
            if isinstance(violation, str):
                label = _text(f"✗ {violation}")
                label.setStyleSheet(f"color: {_BAD};")
                self._body.addWidget(label)
                continue
            self._body.addWidget(self._violation(n, violation))

    def _violation(self, n: int, v: Violation) -> QWidget:
        confidence = tr(CONFIDENCE.get(v.confidence, v.confidence))
        blocking = v.confidence == "high"
        text = (
            f"<span style='color:{_BAD}'>✗</span> <b>{html.escape(v.rule_id)}</b>"
            f"（{html.escape(confidence)}{html.escape(tr('，强制修订')) if blocking else ''}）"
            f" {html.escape(v.description)}"
        )
        if not v.evidence:
            label = _text(text)
            label.setTextFormat(Qt.TextFormat.RichText)
            return label
        clickable = ClickableLabel(text + f"<br><span style='color:#1d4ed8'>{_quote(v.evidence)}</span>")
        clickable.setStyleSheet(_FIX_STYLE)
        clickable.setToolTip(tr("在正文中定位这一段"))
        clickable.clicked.connect(lambda e=v.evidence: self.jump_requested.emit(n, e))
        self.violation_labels.append(clickable)
        return clickable

    # ------------------------------------------------------------------ novel tab
    def _build_novel_tab(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(8, 8, 8, 8)
        self.trend_summary = _text("")
        layout.addWidget(self.trend_summary)

        self.score_series = QLineSeries()
        self.score_series.setName(tr("综合评分"))
        self.score_series.setColor(QColor("#4f7fd9"))
        self.pass_line = QLineSeries()
        self.pass_line.setName(tr("通过线 {v}").format(v=PASS_AT))
        self.pass_line.setPen(QPen(QColor(_GOOD), 1.5, Qt.PenStyle.DashLine))
        self.polish_line = QLineSeries()
        self.polish_line.setName(tr("润色线 {v}").format(v=POLISH_AT))
        self.polish_line.setPen(QPen(QColor(_MID), 1.5, Qt.PenStyle.DashLine))
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
        self.ai_status = _muted("")
        layout.addWidget(self.ai_status)
        layout.addWidget(_muted(tr("点击图中的点可打开对应章节。")))
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
        view.setMinimumHeight(220)
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
                tr(
                    "已评审 {k} 章，平均 {avg:.2f}；最低为第 {n} 章 {low:.2f}；低于 {line} 的 {below} 章。"
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
        self._counter = AiPhraseCounter(novel_phrases(self.project), AnalysisCache.default())
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
            text = self.project.chapter_text(n)
            if text:
                self.ai_hits[n] = counter.per_1k(text)
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
                tr("正在统计 AI 高频词：{k} / {total} 章").format(k=scanned, total=self._scan_total)
            )
            self._scan_timer.start()
            return
        counter.cache.flush()
        counter.cache.close()
        self._counter = None
        self.ai_scan_done = True
        if self.ai_hits and not any(self.ai_hits.values()):
            self.ai_status.setText(tr("AI 高频词：{k} 章正文中都没有发现。").format(k=len(self.ai_hits)))
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

    # ------------------------------------------------------------------ slots
    def _on_tabs_current_changed(self, index: int) -> None:
        if index == 1 and self._trend_dirty:
            self._build_trend()

    def _on_chapter_combo_activated(self, index: int) -> None:
        number = self.chapter_combo.itemData(index)
        if isinstance(number, int):
            self._show(number)

    def _on_open_button_clicked(self) -> None:
        if self.chapter is not None:
            self.chapter_requested.emit(self.chapter)

    def _on_trend_clicked(self, point: QPointF) -> None:
        chapters = sorted(set(self.ai_hits) | {p.chapter for p in self.trend})
        if not chapters:
            return
        nearest = min(chapters, key=lambda c: abs(c - point.x()))
        self.show_chapter(nearest)
        self.chapter_requested.emit(nearest)

    def _on_project_opened(self, _path: str) -> None:
        self.chapter = None
        self._shown_key = None
        self.refresh()

    def _on_project_document_changed(self, path: str) -> None:
        if path.startswith("evaluations/") or path == "ai-blacklist.json":
            self.refresh()
