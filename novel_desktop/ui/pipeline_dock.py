"""Pipeline progress for the window: stage bar, tokens and cost, 续写/停止, an event log, the live draft.

:class:`PipelineDock` goes into a dock of the main window; :class:`LiveDraftView` is the read-only tab the
draft streams into. Both only listen to the :class:`PipelineController`'s signals and call its methods.
"""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor, QResizeEvent, QTextCursor
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.pipeline_controller import PipelineController, resumable_stage_name
from novel_desktop.controllers.pipeline_events import GATE_STAGE, stage_name
from novel_desktop.i18n import join_list, tr
from novel_desktop.ui.chapter_title import StreamHeading, TitleBar
from novel_desktop.ui.quality_text import GATE_DECISIONS
from novel_desktop.ui.queue_panel import QueuePanel

#: The five steps the author sees, and the pipeline stages each one covers.
STEPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("写作", ("draft", "revise", "length")),
    ("摘要/润色", ("summarize", "refine")),
    ("评审", ("judge", "judge_secondary")),
    ("门控", (GATE_STAGE, "polish")),
    ("提交", ("commit",)),
)
STEP_OF_STAGE = {stage: i for i, (_, stages) in enumerate(STEPS) for stage in stages}
#: Stages the bar names by themselves rather than by their step (修订 instead of 写作).
OWN_TITLE = ("revise", "polish", "length", "judge_secondary")
#: Stages the log does not announce: another line says them already (门控's decision, 按评审意见修订).
_QUIET_STAGES = (GATE_STAGE, "revise")


_STEP_STYLES = {
    "pending": "color: palette(mid); border: 1px solid palette(midlight); background: transparent;",
    "current": "color: white; border: 1px solid #1a73e8; background: #1a73e8; font-weight: bold;",
    "done": "color: #1e7b34; border: 1px solid #8fd19e; background: #e9f7ec;",
    "stopped": "color: #9a3412; border: 1px solid #f5b48a; background: #fff1e6; font-weight: bold;",
}
_LOG_COLORS = {"info": None, "ok": "#1e7b34", "warning": "#a15c00", "error": "#b00020"}


def _now() -> str:
    return datetime.now().strftime("%H:%M:%S")


class StepLabel(QLabel):
    """One step of the stage bar; ``state`` is pending, current, done or stopped."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.state = "pending"
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setMinimumWidth(self.fontMetrics().horizontalAdvance("✓ 摘要/润色") + 24)
        self.set_state("pending")

    def set_state(self, state: str, title: str | None = None) -> None:
        self.state = state
        shown = tr(title or self.title)
        self.setText(f"✓ {shown}" if state == "done" else shown)
        self.setStyleSheet(f"QLabel {{ {_STEP_STYLES[state]} border-radius: 4px; padding: 4px 10px; }}")


#: How often the tokens-and-cost line follows a streaming chapter (milliseconds).
USAGE_REFRESH_MS = 250


class PipelineDock(QWidget):
    """Stage bar, chapter, tokens and cost so far, 续写 N 章 / 停止, and a timed log of what happened."""

    def __init__(self, pipeline: PipelineController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pipeline = pipeline
        self._chapter = 0
        self._usage: dict[int, tuple[int, int, float]] = {}
        #: The last stage of each chapter of this run: a chapter drafted early (pipelining) has its stages
        #: before it becomes the dock's chapter; the bar shows them then.
        self._stages: dict[int, str] = {}
        self._streamed = 0
        # Streamed text and live usage arrive many times a second: the label follows a few times a second.
        self._usage_timer = QTimer(self, singleShot=True, interval=USAGE_REFRESH_MS)
        self._usage_timer.timeout.connect(self._update_usage)

        outer = QVBoxLayout(self)
        outer.setContentsMargins(8, 6, 8, 6)
        outer.setSpacing(6)

        # --- row 1: chapter, stage bar, actions
        bar = QHBoxLayout()
        bar.setSpacing(6)
        self.chapter_label = QLabel(tr("未在运行"))
        self.chapter_label.setMinimumWidth(self.fontMetrics().horizontalAdvance("第 888 章") + 8)
        font = self.chapter_label.font()
        font.setBold(True)
        self.chapter_label.setFont(font)
        bar.addWidget(self.chapter_label)
        self.steps: list[StepLabel] = []
        for i, (title, _) in enumerate(STEPS):
            if i:
                arrow = QLabel("→")
                arrow.setStyleSheet("color: palette(mid);")
                bar.addWidget(arrow)
            step = StepLabel(title)
            self.steps.append(step)
            bar.addWidget(step)
        bar.addStretch(1)
        self.count_box = QSpinBox()
        self.count_box.setRange(1, 50)
        self.count_box.setValue(1)
        self.count_box.setSuffix(tr(" 章"))
        self.count_box.setToolTip(tr("一次续写的章数"))
        self.continue_button = QPushButton(tr("续写"))
        self.continue_button.setToolTip(tr("按本卷大纲续写下一章（或 N 章）"))
        self.stop_button = QPushButton(tr("停止"))
        self.stop_button.setToolTip(tr("立即停止；未提交的章节保持原样，下次续写从中断处继续"))
        bar.addWidget(self.count_box)
        bar.addWidget(self.continue_button)
        bar.addWidget(self.stop_button)
        outer.addLayout(bar)

        # --- row 2: tokens and cost
        self.usage_label = QLabel()
        self.usage_label.setStyleSheet("color: palette(dark);")
        self.usage_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        outer.addWidget(self.usage_label)

        # --- the 续写 queue: a row per chapter (shown while a queue runs and after it, until the next)
        self.queue = QueuePanel(pipeline)
        outer.addWidget(self.queue)

        # --- the last error, in words the author can act on
        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.setStyleSheet(
            "QLabel { color: #7f1d1d; background: #fdecec; border: 1px solid #f5b5b5;"
            " border-radius: 4px; padding: 6px 8px; }"
        )
        self.error_label.hide()
        outer.addWidget(self.error_label)

        # --- the log
        self.log_list = QListWidget()
        self.log_list.setFrameShape(QFrame.Shape.StyledPanel)
        self.log_list.setWordWrap(True)
        self.log_list.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        outer.addWidget(self.log_list, 1)

        self._connect()
        self._update_usage()
        self._on_pipeline_running_changed(pipeline.running)

    def _connect(self) -> None:
        p = self.pipeline
        # Nothing to continue without a novel: the buttons follow the open project too.
        p.project.project_opened.connect(self._update_buttons)
        p.project.project_opened.connect(self._on_project_opened)
        p.project.project_closed.connect(self._update_buttons)
        p.running_changed.connect(self._on_pipeline_running_changed)
        p.chapter_started.connect(self._on_pipeline_chapter_started)
        p.stage_started.connect(self._on_pipeline_stage_started)
        p.text_delta.connect(self._on_pipeline_text_delta)
        p.text_reset.connect(self._on_pipeline_text_reset)
        p.usage_updated.connect(self._on_pipeline_usage_updated)
        p.gate_decided.connect(self._on_pipeline_gate_decided)
        p.gate_issues.connect(self._on_pipeline_gate_issues)
        p.chapter_committed.connect(self._on_pipeline_chapter_committed)
        p.chapter_paused.connect(self._on_pipeline_chapter_paused)
        p.warning.connect(self._on_pipeline_warning)
        p.question_asked.connect(self._on_pipeline_question_asked)
        p.cancelled.connect(self._on_pipeline_cancelled)
        p.failed.connect(self._on_pipeline_failed)
        p.rebuild_finished.connect(self._on_pipeline_rebuild_finished)
        p.state_changed.connect(self._on_pipeline_state_changed)
        p.step_finished.connect(self._on_pipeline_step_finished)
        p.checks_reported.connect(self._on_pipeline_checks_reported)
        p.volume_finished.connect(self._on_pipeline_volume_finished)
        p.lifecycle_finished.connect(self._on_pipeline_lifecycle_finished)
        self.continue_button.clicked.connect(self._on_continue_clicked)
        self.stop_button.clicked.connect(self._on_stop_clicked)

    # ------------------------------------------------------------------ helpers
    def log(self, text: str, kind: str = "info") -> None:
        """Append a timed line to the log and keep it in view."""
        item = QListWidgetItem(f"{_now()}  {text}")
        color = _LOG_COLORS.get(kind)
        if color:
            item.setForeground(QColor(color))
        item.setData(Qt.ItemDataRole.UserRole, kind)
        self.log_list.addItem(item)
        self.log_list.scrollToBottom()

    def log_lines(self) -> list[str]:
        """The log's lines without their times (what tests and copy-paste care about)."""
        return [self.log_list.item(i).text().split("  ", 1)[1] for i in range(self.log_list.count())]

    def _chapter_name(self, chapter: int) -> str:
        return tr("第 {n} 章").format(n=chapter)

    def _set_step(self, index: int, stage: str = "") -> None:
        for i, step in enumerate(self.steps):
            if i < index:
                step.set_state("done")
            elif i == index:
                step.set_state("current", stage_name(stage) if stage in OWN_TITLE else None)
            else:
                step.set_state("pending")

    def _mark_stopped(self) -> None:
        for step in self.steps:
            if step.state == "current":
                step.set_state("stopped", step.text())

    def _update_usage(self) -> None:
        usage_in, usage_out, cost = self._usage.get(self._chapter, (0, 0, 0.0))
        total = sum(c for _, _, c in self._usage.values())
        self.usage_label.setText(
            tr("本章：输入 {i} · 输出 {o} tokens · ${c:.4f}　本次合计 ${t:.4f}　已写 {w} 字").format(
                i=f"{usage_in:,}", o=f"{usage_out:,}", c=cost, t=total, w=f"{self._streamed:,}"
            )
        )

    # ------------------------------------------------------------------ slots
    def _on_continue_clicked(self) -> None:
        self.pipeline.continue_chapters(self.count_box.value())

    def _on_stop_clicked(self) -> None:
        self.pipeline.cancel()

    def _on_project_opened(self, _path: str) -> None:
        # A cold start (§8.1): a chapter a crash or 停止 interrupted waits in staging; say where it stopped.
        cp = self.pipeline.project.checkpoint()
        chapter, stage = cp.get("inflight_chapter"), str(cp.get("pipeline_stage") or "")
        done = resumable_stage_name(stage)
        if chapter is not None and done is not None:
            self.chapter_label.setText(tr("第 {n} 章未完成").format(n=chapter))
            self.log(
                tr("第 {chapter} 章上次停在“{stage}”，续写会从那里接着做").format(
                    chapter=chapter, stage=tr(done)
                ),
                "warning",
            )

    def _update_buttons(self, *_args: object) -> None:
        project = self.pipeline.project
        running, is_open = self.pipeline.running, project.is_open and not project.readonly  # runs write
        self.continue_button.setEnabled(is_open and not running)
        self.count_box.setEnabled(is_open and not running)
        self.stop_button.setEnabled(running)

    def _on_pipeline_running_changed(self, running: bool) -> None:
        self._update_buttons()
        if running:
            self._usage.clear()
            self._stages.clear()
            self._streamed = 0
            self.error_label.hide()
            self._update_usage()
        else:
            self._update_usage()  # the last figures at once, not after the refresh interval
            if self._chapter == 0:
                self.chapter_label.setText(tr("未在运行"))

    def _on_pipeline_chapter_started(self, chapter: int, resumed_from: str) -> None:
        self._chapter = chapter
        self._streamed = 0
        self.chapter_label.setText(self._chapter_name(chapter))
        for step in self.steps:
            step.set_state("pending")
        early = self._stages.get(chapter)
        if early in STEP_OF_STAGE:  # drafted early, while the chapter before it was judged
            self._set_step(STEP_OF_STAGE[early], early)
        if resumed_from:
            # The author reads 评审完成, not the stage id "judged".
            self.log(
                tr("{ch} 从中断处继续（{stage}）").format(
                    ch=self._chapter_name(chapter), stage=tr(stage_name(resumed_from))
                )
            )
        else:
            self.log(tr("{ch} 开始").format(ch=self._chapter_name(chapter)))
        self._update_usage()

    def _on_pipeline_stage_started(self, chapter: int, stage: str) -> None:
        self._stages[chapter] = stage
        if stage not in _QUIET_STAGES:  # each stage by its name in the author's language, never its id
            self.log(tr("{ch} · {stage}").format(ch=self._chapter_name(chapter), stage=tr(stage_name(stage))))
        if self._chapter and chapter != self._chapter:
            return  # the next chapter's early draft: its row in the queue shows it
        if stage in ("draft", "revise"):
            self._streamed = 0
        index = STEP_OF_STAGE.get(stage)
        if index is not None:
            self._set_step(index, stage)
        if stage == "revise":
            self.log(tr("{ch} 按评审意见修订").format(ch=self._chapter_name(chapter)))

    def _on_pipeline_text_delta(self, chapter: int, text: str) -> None:
        if chapter != self._chapter:
            return  # an early draft of the next chapter
        self._streamed += len(text)
        if not self._usage_timer.isActive():
            self._usage_timer.start()

    def _on_pipeline_text_reset(self, chapter: int) -> None:
        self._streamed = 0
        self._update_usage()
        self.log(tr("{ch} 连接中断，正在重新生成").format(ch=self._chapter_name(chapter)), "warning")

    def _on_pipeline_usage_updated(self, chapter: int, usage_in: int, usage_out: int, cost: float) -> None:
        self._usage[chapter] = (usage_in, usage_out, cost)
        if not self._usage_timer.isActive():
            self._usage_timer.start()

    def _on_pipeline_gate_decided(self, chapter: int, action: str, overall: float, reason: str) -> None:
        words = tr(GATE_DECISIONS.get(action, action))
        kind = "ok" if action in ("pass", "polish") else "warning"
        self.log(
            tr("{ch} 门控：{action}（{score:.1f} 分）— {reason}").format(
                ch=self._chapter_name(chapter), action=words, score=overall, reason=reason
            ),
            kind,
        )

    def _on_pipeline_gate_issues(self, chapter: int, lines: list[str]) -> None:
        # Each violation with the rule it breaks and each finding of the checks in code, one log line each.
        for line in lines:
            self.log(f"    · {line}", "warning")

    def _on_pipeline_chapter_committed(self, chapter: int) -> None:
        for step in self.steps:
            step.set_state("done")
        self.log(tr("{ch} 已提交").format(ch=self._chapter_name(chapter)), "ok")

    def _on_pipeline_chapter_paused(self, chapter: int, message: str) -> None:
        self._mark_stopped()
        self.log(tr("{ch} 暂停：{msg}").format(ch=self._chapter_name(chapter), msg=message), "warning")

    def _on_pipeline_warning(self, chapter: int, message: str) -> None:
        # Core messages usually name their chapter already ("第 3 章的状态补丁…").
        named = f"第 {chapter} 章" in message or f"第{chapter}章" in message
        prefix = f"{self._chapter_name(chapter)} " if chapter and not named else ""
        self.log(f"⚠ {prefix}{message}", "warning")

    def _on_pipeline_question_asked(self, request: object) -> None:
        spec = getattr(request, "spec", None)
        header = spec.questions[0].header if spec is not None and spec.questions else ""
        self.log(tr("等待你的决定：{header}").format(header=header))

    def _on_pipeline_cancelled(self) -> None:
        self._mark_stopped()
        self.log(tr("已停止：本章未提交，下次续写会从中断处继续"), "warning")

    def _on_pipeline_failed(self, message: str) -> None:
        self._mark_stopped()
        self.error_label.setText(message)
        self.error_label.show()
        self.log("✖ " + message.replace("\n", " "), "error")

    def _on_pipeline_rebuild_finished(self, report: object) -> None:
        data = report if isinstance(report, dict) else {}
        chapter = int(data.get("chapter", 0))
        later = sorted(int(n) for n in (data.get("disagreeing") or {}))
        if later:
            chapters = join_list(str(n) for n in later)
            self.log(
                tr("{ch} 重建完成；第 {later} 章可能与修改后的内容不一致，请检查").format(
                    ch=self._chapter_name(chapter), later=chapters
                ),
                "warning",
            )
        else:
            self.log(tr("{ch} 重建完成；后续章节与新状态一致").format(ch=self._chapter_name(chapter)), "ok")

    def _on_pipeline_state_changed(self, old: str, new: str) -> None:
        self.log(
            tr("阶段：{old} → {new}").format(
                old=tr(STATE_NAMES.get(old, old)), new=tr(STATE_NAMES.get(new, new))
            )
        )

    def _on_pipeline_step_finished(self, message: str) -> None:
        for line in message.splitlines():
            if line.strip():
                self.log(line, "ok")

    def _on_pipeline_checks_reported(self, chapter: int, message: str, pause: bool) -> None:
        for line in message.splitlines():
            if line.strip():
                self.log(line, "warning" if pause else "info")
        if pause:
            self._mark_stopped()
            self.log(
                tr("{ch} 之后的检查要求暂停，处理后再续写").format(ch=self._chapter_name(chapter)), "warning"
            )

    def _on_pipeline_volume_finished(self, volume: int) -> None:
        self.log(tr("第 {v} 卷已写完：下一步是卷末回顾（写作 → 卷末回顾）").format(v=volume), "ok")

    def _on_pipeline_lifecycle_finished(self, _action: str, message: str) -> None:
        self._on_pipeline_step_finished(message)


#: The §8.2 states as the author reads them.
STATE_NAMES = {
    "INIT": "新建",
    "QUICK_START": "快速起步",
    "VOL_PLANNING": "卷规划",
    "WRITING": "写作",
    "CHAPTER_REWRITE": "修订",
    "VOL_REVIEW": "卷末回顾",
    "ERROR_RETRY": "出错重试",
}


class LiveDraftView(QPlainTextEdit):
    """The read-only tab the draft streams into, coalesced so a fast stream costs one layout per frame."""

    FLUSH_MS = 40

    def __init__(self, pipeline: PipelineController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pipeline = pipeline
        self.setReadOnly(True)
        self.setPlaceholderText(tr("点“续写”后，正在写的章节会实时显示在这里。"))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.document().setDocumentMargin(16)
        font = self.font()
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.setFont(font)
        self._pending: list[str] = []
        #: The chapter this view streams (0 until the first starts); others' text is not shown here.
        self.chapter = 0
        # The writer ends its reply with a fenced JSON block of state hints for the program, not prose:
        # once the fence starts, the rest is not shown.
        self._tail = ""
        self._hidden = False
        #: The chapter's title above the stream, once its heading line has streamed (not in the text).
        self.heading = StreamHeading()
        self.title_bar = TitleBar(self)
        self.title_bar.edit.setReadOnly(True)
        self.title_bar.edit.setPlaceholderText("")
        self.setViewportMargins(0, self.title_bar.sizeHint().height(), 0, 0)
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(self.FLUSH_MS)
        self._flush_timer.timeout.connect(self.flush)
        pipeline.chapter_started.connect(self._on_pipeline_chapter_started)
        pipeline.stage_started.connect(self._on_pipeline_stage_started)
        pipeline.text_delta.connect(self._on_pipeline_text_delta)
        pipeline.text_reset.connect(self._on_pipeline_text_reset)

    def flush(self) -> None:
        """Append what arrived since the last flush; follow the end only if the author was at the end."""
        if not self._pending:
            return
        text, self._pending = "".join(self._pending), []
        if self._hidden:
            return
        text = self.heading.feed(text)
        if self.heading.title != self.title_bar.title():
            self.title_bar.show_heading(self.heading.label, self.heading.title)
        window = self._tail + text
        fence = window.find("```")
        if fence >= 0:
            self._hidden = True
            text = text[: max(0, fence - len(self._tail))].rstrip()
        self._tail = window[-2:]
        bar = self.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 4
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text)
        if at_end:
            bar.setValue(bar.maximum())

    def _clear(self) -> None:
        self._pending.clear()
        self._tail = ""
        self._hidden = False
        self._flush_timer.stop()
        self.clear()
        self.heading.reset(self.chapter)
        self.title_bar.show_heading(self.heading.label, "")

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        frame = self.frameWidth()
        self.title_bar.setGeometry(frame, frame, self.width() - 2 * frame, self.viewportMargins().top())

    def start(self, chapter: int, text: str = "") -> None:
        """Stream ``chapter`` from here on, beginning with ``text`` (what its early draft streamed so far)."""
        self.chapter = chapter
        self._clear()
        if text:
            self._pending.append(text)
            self.flush()

    def _on_pipeline_chapter_started(self, chapter: int, _resumed: str) -> None:
        if chapter != self.chapter:
            self.start(chapter)

    def _on_pipeline_stage_started(self, chapter: int, stage: str) -> None:
        if stage in ("draft", "revise") and chapter == self.chapter:
            self._clear()  # a revision streams a whole new text

    def _on_pipeline_text_delta(self, chapter: int, text: str) -> None:
        if self.chapter and chapter != self.chapter:
            return  # the next chapter's early draft (pipelining): the run flow keeps it for its own turn
        self._pending.append(text)
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def _on_pipeline_text_reset(self, chapter: int) -> None:
        if not self.chapter or chapter == self.chapter:
            self._clear()
