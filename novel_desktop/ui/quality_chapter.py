"""The 本章 tab of the quality panel: one chapter's verdict, built from the judge's evaluation.

Overall score, recommendation and the gate's path; a bar chart of the eight weighted dimensions with each
reason and quoted evidence (a click on a quote asks the window to show that passage); contract checks,
violations, risk flags, required fixes (also clickable), issues and strengths. Mixed into
:class:`~novel_desktop.ui.quality_panel.QualityPanel`.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, SignalInstance
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.controllers.turns import next_turn
from novel_desktop.domain.evaluation import (
    DIMENSION_NAMES,
    DIMENSION_WEIGHTS,
    ContractCheck,
    ContractChecks,
    Evaluation,
    Violation,
    split_risk_flag,
)
from novel_desktop.i18n import join_list, paren, tr
from novel_desktop.ui.dimension_bars import DimensionBars
from novel_desktop.ui.field_drops import field_drops_paused
from novel_desktop.ui.quality_text import (
    BAD,
    CONFIDENCE,
    CONTRACT_LAYERS,
    FIX_STYLE,
    GOOD,
    MID,
    QUOTE_STYLE,
    RECOMMENDATIONS,
    RISK_KINDS,
    ClickableLabel,
    chapter_title,
    gate_findings,
    gate_path,
    muted,
    parse_evaluation,
    plain_label,
    quote_html,
    score_color,
    section_label,
)


class ChapterReportMixin:
    """Builds the 本章 tab; the panel provides the project, the signals and the widgets named below."""

    project: ProjectController
    jump_requested: SignalInstance
    chapter: int | None
    evaluation: Evaluation | None
    _shown_key: str | None
    #: Counts the reports shown: a later part of an older one is not added (see :meth:`_fill_report`).
    _report_generation: int
    #: The parts of the report shown still to come (see :meth:`report_pending`).
    _parts_pending: int
    dimension_chart: DimensionBars | None
    dimension_order: list[str]
    evidence_labels: dict[str, ClickableLabel]
    reason_labels: dict[str, QLabel]
    fix_labels: list[ClickableLabel]
    violation_labels: list[ClickableLabel]
    gate_finding_labels: list[QLabel]

    def _build_chapter_tab(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(8, 8, 8, 0)
        #: The chapter picker's row (the gate's report beside its question hides it: one chapter only).
        self.picker_row = QWidget()
        top = QHBoxLayout(self.picker_row)
        top.setContentsMargins(0, 0, 0, 0)
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
        layout.addWidget(self.picker_row)
        self.report_scroll = QScrollArea()
        self.report_scroll.setWidgetResizable(True)
        self.report_scroll.setFrameShape(QFrame.Shape.NoFrame)
        layout.addWidget(self.report_scroll, 1)
        return page

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
        parts = [number, info.title if info else None, self._evaluation_of(number)]
        return json.dumps([*parts, self._log_of(number)], ensure_ascii=False, sort_keys=True)

    def _staged(self, number: int) -> bool:
        """Whether ``number``'s report is of the chapter in flight (judged in staging, not committed): the
        gate's question shows it before the author decides."""
        return self.project.evaluation(number) is None and self.project.staged_report(number)[0] is not None

    def _evaluation_of(self, number: int) -> dict[str, Any] | None:
        committed = self.project.evaluation(number)
        return committed if committed is not None else self.project.staged_report(number)[0]

    def _log_of(self, number: int) -> dict[str, Any] | None:
        if self.project.evaluation(number) is None and self.project.staged_report(number)[0] is not None:
            return self.project.staged_report(number)[1]
        return self.project.pipeline_log(number)

    @field_drops_paused()  # a report is a hundred widgets or more, built in one go
    def _show(self, number: int | None, *, in_parts: bool = False) -> None:
        """Build chapter ``number``'s report; ``in_parts``: its first part now and the rest a part per
        event-loop turn (following a chapter just committed, while a queue may be streaming the next one: the
        whole report in one turn held the window 20-30 ms)."""
        index = self.chapter_combo.findData(number) if number is not None else -1
        self.chapter_combo.setCurrentIndex(index)
        self.open_button.setEnabled(number is not None)
        # A commit asks for the same report several times (chapters changed, the new tab, the committed
        # chapter); its chart costs tens of milliseconds, so an unchanged report is not built again.
        key = self._report_key(number)
        if key == self._shown_key and number == self.chapter:
            return
        self._shown_key = key
        self._report_generation += 1
        self._parts_pending = 0
        self.chapter = number
        self.dimension_chart = None
        self.dimension_order = []
        self.evidence_labels = {}
        self.reason_labels = {}
        self.fix_labels = []
        self.violation_labels = []
        self.gate_finding_labels = []
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
            evaluation, problem = parse_evaluation(self._evaluation_of(number))
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
                self._fill_report(number, evaluation, in_parts=in_parts)
        self._body.addStretch(1)
        old = self.report_scroll.takeWidget()
        if old is not None:
            old.deleteLater()
        self.report_scroll.setWidget(content)

    def _empty(self, text: str) -> None:
        label = muted(text)
        label.setObjectName("empty_state")
        label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        label.setContentsMargins(4, 16, 4, 4)
        self.empty_label = label
        self._body.addWidget(label)

    def _fill_report(self, n: int, ev: Evaluation, *, in_parts: bool = False) -> None:
        parts: list[Callable[[], None]] = [
            lambda: self._add_scores(n, ev),
            lambda: self._add_reasons(n, ev),
            lambda: self._add_checks(n, ev),
            lambda: self._add_notes(n, ev),
        ]
        if not in_parts:
            for part in parts:
                part()
            return
        parts[0]()
        generation = self._report_generation
        self._parts_pending = len(parts) - 1
        next_turn(lambda: self._add_parts(generation, parts[1:]))

    def report_pending(self) -> bool:
        """Whether parts of the report shown are still to come (they arrive one a turn)."""
        return self._parts_pending > 0

    @field_drops_paused()
    def _add_parts(self, generation: int, parts: list[Callable[[], None]]) -> None:
        """Add the first of ``parts`` to the report shown as ``generation`` (nothing when another has been
        shown since), before the report's closing stretch; the rest on the turns after, each asking for the
        next when it is done (timers armed together could all fire in one pass of the loop)."""
        if generation != self._report_generation or not parts:
            return
        body = self._body
        holder = QWidget()
        self._body = QVBoxLayout(holder)
        self._body.setContentsMargins(0, 0, 0, 0)
        self._body.setSpacing(4)
        try:
            parts[0]()
        finally:
            self._body = body
        body.insertWidget(body.count() - 1, holder)
        self._parts_pending = len(parts) - 1
        if len(parts) > 1:
            next_turn(lambda: self._add_parts(generation, parts[1:]))

    def _add_scores(self, n: int, ev: Evaluation) -> None:
        self._add_header(n, ev)
        self._body.addWidget(self._dimension_chart(ev))

    def _add_reasons(self, n: int, ev: Evaluation) -> None:
        body = self._body
        body.addWidget(section_label(tr("各维度理由与证据")))
        body.addWidget(muted(tr("点击引文可在正文中定位。")))
        body.addWidget(self._dimension_details(n, ev))

    def _add_checks(self, n: int, ev: Evaluation) -> None:
        body = self._body
        body.addWidget(section_label(tr("契约核验")))
        self._add_contracts(ev)
        body.addWidget(section_label(tr("违规")))
        self._add_violations(n, ev)
        body.addWidget(section_label(tr("门控发现（违规及所违反的规则、程序检查）")))
        self._add_gate_findings(n)

    def _add_notes(self, n: int, ev: Evaluation) -> None:
        body = self._body
        body.addWidget(section_label(tr("风险提示")))
        if ev.risk_flags:
            for flag in ev.risk_flags:
                kind, detail = split_risk_flag(flag)
                shown = tr(RISK_KINDS.get(kind, kind))
                label = plain_label(f"⚠ {shown}" + (tr("：") + detail if detail else ""))
                label.setStyleSheet(f"color: {MID};")
                label.setToolTip(flag)
                body.addWidget(label)
        else:
            body.addWidget(muted(tr("无")))
        body.addWidget(section_label(tr("必须修改")))
        if ev.required_fixes:
            body.addWidget(muted(tr("点击一条修改意见可在正文中定位它指向的段落。")))
            for fix in ev.required_fixes:
                label = ClickableLabel(
                    f"<b>{html.escape(tr('位置'))}</b>"
                    + tr("：")
                    + f"{quote_html(fix.target)}<br>{html.escape(fix.instruction)}"
                )
                label.setStyleSheet(FIX_STYLE)
                label.setToolTip(tr("在正文中定位这一段"))
                label.clicked.connect(lambda t=fix.target: self.jump_requested.emit(n, t))
                self.fix_labels.append(label)
                body.addWidget(label)
        else:
            body.addWidget(muted(tr("无")))
        for title, items, color in (
            (tr("问题"), ev.issues, MID),
            (tr("亮点"), ev.strengths, GOOD),
        ):
            body.addWidget(section_label(title))
            if not items:
                body.addWidget(muted(tr("无")))
            for item in items:
                label = plain_label(f"<span style='color:{color}'>●</span> {html.escape(item)}")
                label.setTextFormat(Qt.TextFormat.RichText)
                body.addWidget(label)

    def _add_header(self, n: int, ev: Evaluation) -> None:
        info = next((c for c in self.project.chapters() if c.number == n), None)
        head = QLabel(chapter_title(n, info.title if info else ""))
        head.setTextFormat(Qt.TextFormat.PlainText)  # the chapter's title is the author's text, not HTML
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
        self.recommendation_label = plain_label(tr("评审建议：{r}").format(r=recommendation))
        facts.addWidget(self.recommendation_label)
        log_data = self._log_of(n)
        self.gate_label = plain_label(tr("门控：{path}").format(path=gate_path(log_data, ev)))
        facts.addWidget(self.gate_label)
        extra: list[str] = []
        if log_data:
            extra.append(tr("修订 {k} 次").format(k=int(log_data.get("revisions") or 0)))
        if self._staged(n):
            extra.insert(0, tr("暂存稿，尚未提交"))
            text = self.project.staged_text(n)
            if text:
                density = self.project.analysis.ai_counter().per_1k(text)
                extra.append(tr("AI 用语 {d:.1f} 处/千字").format(d=density))
        computed = ev.computed_overall()
        if abs(computed - float(ev.overall)) >= 0.05:
            extra.append(tr("按权重复算为 {s:.2f}").format(s=computed))
        if extra:
            facts.addWidget(muted(tr("；").join(extra)))
        row.addSpacing(12)
        row.addLayout(facts, 1)
        self._body.addLayout(row)

    def _dimension_chart(self, ev: Evaluation) -> DimensionBars:
        names = [d for d in DIMENSION_WEIGHTS if d in ev.scores]
        self.dimension_order = names
        rows = [
            (f"{tr(DIMENSION_NAMES.get(d, d))} {DIMENSION_WEIGHTS[d]:.0%}", float(ev.scores[d].score))
            for d in names
        ]  # 情节逻辑 first, at the top
        bars = DimensionBars(rows)
        bars.setAccessibleName(tr("各维度得分图"))
        self.dimension_chart = bars
        return bars

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
                # The weight on a line of its own: the name column stays narrow, the reason gets the room.
                f"<br><span style='color:gray'>{html.escape(tr('权重'))} {DIMENSION_WEIGHTS[name]:.0%}</span>"
            )
            head.setTextFormat(Qt.TextFormat.RichText)
            head.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
            grid.addWidget(head, row, 0, 2 if score.evidence else 1, 1)
            reason = plain_label(score.reason or tr("（评审没有给出理由）"))
            self.reason_labels[name] = reason
            grid.addWidget(reason, row, 1)
            row += 1
            if score.evidence:
                quote = ClickableLabel(quote_html(score.evidence))
                quote.setStyleSheet(QUOTE_STYLE)
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
            self._body.addWidget(muted(tr("这次评审没有逐条核验契约。")))
        elif broken:
            summary = plain_label(
                tr("{k} / {total} 项未通过：{ids}").format(
                    k=len(broken), total=len(results), ids=join_list(broken)
                )
            )
            summary.setStyleSheet(f"color: {BAD};")
            self._body.addWidget(summary)
        else:
            summary = plain_label(tr("全部 {total} 项通过").format(total=len(results)))
            summary.setStyleSheet(f"color: {GOOD};")
            self._body.addWidget(summary)
        self.contract_labels: dict[str, str] = {}
        for title, entries in groups:
            chips = []
            for rule, status in entries:
                ok = status == "pass"
                self.contract_labels[rule] = "pass" if ok else "violation"
                mark, color = ("✓", GOOD) if ok else ("✗", BAD)
                chips.append(
                    f"<span style='color:{color}'>{mark}</span>&nbsp;{html.escape(rule)}"
                    + ("" if ok else f"&nbsp;<span style='color:{color}'>{html.escape(tr('违规'))}</span>")
                )
            label = plain_label(f"<b>{html.escape(title)}</b>" + tr("：") + tr("　").join(chips))
            label.setTextFormat(Qt.TextFormat.RichText)
            self._body.addWidget(label)

    def _add_violations(self, n: int, ev: Evaluation) -> None:
        if not ev.violations:
            self._body.addWidget(muted(tr("无")))
            return
        for violation in ev.violations:
            if isinstance(violation, str):
                label = plain_label(f"✗ {violation}")
                label.setStyleSheet(f"color: {BAD};")
                self._body.addWidget(label)
                continue
            self._body.addWidget(self._violation(n, violation))

    def _add_gate_findings(self, n: int) -> None:
        findings = gate_findings(self._log_of(n))
        if not findings:
            self._body.addWidget(muted(tr("无")))
        for line, blocking in findings:
            label = plain_label(("✗ " if blocking else "⚠ ") + line)
            label.setStyleSheet(f"color: {BAD if blocking else MID};")
            self.gate_finding_labels.append(label)
            self._body.addWidget(label)

    def _violation(self, n: int, v: Violation) -> QWidget:
        confidence = tr(CONFIDENCE.get(v.confidence, v.confidence))
        blocking = v.confidence == "high"
        text = (
            f"<span style='color:{BAD}'>✗</span> <b>{html.escape(v.rule_id)}</b>"
            + paren(html.escape(confidence) + (html.escape(tr("，强制修订")) if blocking else ""))
            + f" {html.escape(v.description)}"
        )
        if not v.evidence:
            label = plain_label(text)
            label.setTextFormat(Qt.TextFormat.RichText)
            return label
        clickable = ClickableLabel(text + f"<br><span style='color:#1d4ed8'>{quote_html(v.evidence)}</span>")
        clickable.setStyleSheet(FIX_STYLE)
        clickable.setToolTip(tr("在正文中定位这一段"))
        clickable.clicked.connect(lambda e=v.evidence: self.jump_requested.emit(n, e))
        self.violation_labels.append(clickable)
        return clickable
