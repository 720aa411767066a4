"""The words, colours and small widgets of the quality report (no reads: see quality_panel.py).

The author-facing names of the judge's dimensions, recommendations, gate decisions, risk kinds and contract
layers; the gate's path as text; and the labels the report is built from (a clickable quote, a muted note).
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent, QMouseEvent
from PySide6.QtWidgets import QLabel, QWidget

from novel_desktop.domain.evaluation import Evaluation
from novel_desktop.domain.gate import PASS_AT, POLISH_AT, GateIssue
from novel_desktop.i18n import tr

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

GOOD = "#1e7b34"
MID = "#a15c00"
BAD = "#b00020"
MUTED = "palette(dark)"
#: Chapters scanned per event-loop turn at most, and the time one turn may take.


def score_color(score: float) -> str:
    """Green at the pass line, amber in the polish band, red below it."""
    if score >= PASS_AT:
        return GOOD
    if score >= POLISH_AT:
        return MID
    return BAD


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


def section_label(text: str) -> QLabel:
    label = QLabel(text)
    font = label.font()
    font.setBold(True)
    font.setPointSizeF(font.pointSizeF() * 1.1)
    label.setFont(font)
    label.setContentsMargins(0, 10, 0, 2)
    label.setWordWrap(True)  # a long title (English) wraps instead of widening the report past its dock
    return label


def muted(text: str) -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)  # novel text, verdicts: never rendered as HTML (callers
    label.setWordWrap(True)  # that build escaped markup themselves switch to RichText)
    label.setStyleSheet(f"color: {MUTED};")
    return label


def plain_label(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


QUOTE_STYLE = (
    "QLabel { color: #1d4ed8; background: #f3f6fc; border-left: 3px solid #93b4f0;"
    " padding: 3px 8px; } QLabel:hover { background: #e4ecfa; }"
    " QLabel:focus { border: 1px solid #1d4ed8; border-left: 3px solid #1d4ed8; }"
)
FIX_STYLE = (
    "QLabel { background: #fff8eb; border: 1px solid #f1d49b; border-radius: 4px; padding: 6px 8px; }"
    " QLabel:hover { background: #fff1d6; } QLabel:focus { border: 1px solid #a15c00; }"
)


def quote_html(text: str) -> str:
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


def gate_findings(log_data: dict[str, Any] | None) -> list[tuple[str, bool]]:
    """What the gate saw on a committed chapter, from its pipeline log: each judge violation with the rule
    it breaks (``gate_violations``), then each finding of the checks in code (``gate_issues``), as
    (line, blocking) pairs."""
    if not log_data:
        return []
    out = [(str(v), True) for v in log_data.get("gate_violations") or [] if str(v).strip()]
    for raw in log_data.get("gate_issues") or []:
        if isinstance(raw, dict):
            issue = GateIssue.from_json(raw)
            out.append((issue.line(), issue.blocking))
        elif str(raw).strip():
            out.append((str(raw), False))
    return list(dict.fromkeys(out))
