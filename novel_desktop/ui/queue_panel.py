"""The 续写 queue in the pipeline dock: one row per queued chapter with its progress and state, and the
desktop notification when the queue ends or a gate needs the author.

With pipelining (issue 18) the events of two chapters interleave (chapter N is judged while N+1 is drafted
early): every slot keys by the chapter the signal names, never by "the current chapter".
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QGridLayout,
    QLabel,
    QMainWindow,
    QProgressBar,
    QScrollArea,
    QStyle,
    QSystemTrayIcon,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.pipeline_controller import PipelineController
from novel_desktop.controllers.pipeline_events import GATE_STAGE
from novel_desktop.i18n import labelled, tr, tr_n

#: The steps of a queued chapter's bar, and the pipeline stages each covers.
QUEUE_STEPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("写作", ("draft", "revise", "length")),
    ("润色/摘要", ("summarize", "refine")),
    ("评审", ("judge", "judge_secondary", GATE_STAGE, "polish")),
    ("提交", ("commit",)),
)
QUEUE_STEP_OF_STAGE = {stage: i for i, (_, stages) in enumerate(QUEUE_STEPS) for stage in stages}

#: A row's states (Chinese, through tr()), and how each looks.
QUEUED, AHEAD, WRITING, REFINING = "排队中", "预写中", "写作中", "润色中"
JUDGING, COMMITTING = "评审中", "提交中"
COMMITTED, SENT_BACK, DISCARDED, WAITING, STOPPED = "已提交", "已退回", "早稿作废", "等待作者", "已停止"
QUEUE_STATES = (
    QUEUED, AHEAD, WRITING, REFINING, JUDGING, COMMITTING, COMMITTED, SENT_BACK, DISCARDED, WAITING, STOPPED
)  # fmt: skip
_STATE_OF_STEP = (WRITING, REFINING, JUDGING, COMMITTING)
_STATE_COLORS = {
    COMMITTED: "#1e7b34",
    SENT_BACK: "#a15c00",
    DISCARDED: "#a15c00",
    WAITING: "#b00020",
    STOPPED: "#9a3412",
    AHEAD: "#1a73e8",
}
#: How many rows the panel shows before it scrolls.
VISIBLE_ROWS = 5
#: The widest a row's state (with its reason) is shown, in pixels; the tooltip has all of it.
STATE_WIDTH = 320
#: Gate decisions that send a chapter back to be written again.
_SENT_BACK_ACTIONS = ("revise", "rewrite")


@dataclass
class QueueRow:
    """One chapter of the queue as the panel shows it."""

    chapter: int
    number: QLabel
    bar: QProgressBar
    state_label: QLabel
    state: str = QUEUED
    reason: str = ""

    def set_state(self, state: str, step: int | None = None, reason: str = "") -> None:
        self.state, self.reason = state, reason
        shown = labelled(tr(state), reason) if reason else tr(state)
        metrics = self.state_label.fontMetrics()
        self.state_label.setText(metrics.elidedText(shown, Qt.TextElideMode.ElideRight, STATE_WIDTH))
        self.state_label.setToolTip(reason)
        color = _STATE_COLORS.get(state)
        self.state_label.setStyleSheet(f"color: {color};" if color else "")
        if step is not None:
            self.bar.setValue(step)
            title = tr(QUEUE_STEPS[min(step, len(QUEUE_STEPS) - 1)][0])
            done = step >= len(QUEUE_STEPS)
            self.bar.setFormat(tr("已完成") if done else f"{step}/{len(QUEUE_STEPS)} {title}")


class QueuePanel(QWidget):
    """A row per chapter of the running 续写 queue: 第 N 章, a progress bar of its steps, its state."""

    def __init__(self, pipeline: PipelineController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pipeline = pipeline
        self.rows: dict[int, QueueRow] = {}
        self._grid = QGridLayout()
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setHorizontalSpacing(10)
        self._grid.setVerticalSpacing(3)
        self._grid.setColumnStretch(1, 1)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.title = QLabel()
        self.title.setStyleSheet("color: palette(dark);")
        outer.addWidget(self.title)
        # A long queue (续写 50 章) scrolls inside the panel instead of pushing the log out of the dock.
        rows = QWidget()
        rows.setLayout(self._grid)
        self.rows_area = QScrollArea()
        self.rows_area.setWidget(rows)
        self.rows_area.setWidgetResizable(True)
        self.rows_area.setFrameShape(QFrame.Shape.NoFrame)
        self.rows_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        outer.addWidget(self.rows_area)
        self.hide()
        p = pipeline
        p.running_changed.connect(self._on_pipeline_running_changed)
        p.chapter_started.connect(self._on_pipeline_chapter_started)
        p.stage_started.connect(self._on_pipeline_stage_started)
        p.gate_decided.connect(self._on_pipeline_gate_decided)
        p.chapter_committed.connect(self._on_pipeline_chapter_committed)
        p.draft_ahead.connect(self._on_pipeline_draft_ahead)
        p.draft_discarded.connect(self._on_pipeline_draft_discarded)
        p.chapter_paused.connect(self._on_pipeline_chapter_paused)
        p.cancelled.connect(self._on_pipeline_cancelled)
        p.failed.connect(self._on_pipeline_cancelled)
        p.finished.connect(self._on_pipeline_finished)

    # ------------------------------------------------------------------ rows
    def states(self) -> dict[int, str]:
        """Each row's state (Chinese source text), by chapter (what tests and the notification read)."""
        return {n: row.state for n, row in sorted(self.rows.items())}

    def start_queue(self, first: int, count: int) -> None:
        """Show ``count`` rows from chapter ``first``, all 排队中."""
        self.clear()
        for chapter in range(first, first + count):
            self._row(chapter)
        self.title.setText(tr_n("续写队列：{n} 章", count).format(n=count))
        line = self.fontMetrics().height() + 8
        self.rows_area.setFixedHeight(min(count, VISIBLE_ROWS) * line + 4)
        self.show()

    def clear(self) -> None:
        for row in self.rows.values():
            for widget in (row.number, row.bar, row.state_label):
                self._grid.removeWidget(widget)
                widget.deleteLater()
        self.rows.clear()

    def _row(self, chapter: int) -> QueueRow:
        row = self.rows.get(chapter)
        if row is None:
            number = QLabel(tr("第 {n} 章").format(n=chapter))
            bar = QProgressBar()
            bar.setRange(0, len(QUEUE_STEPS))
            bar.setTextVisible(True)
            bar.setMaximumHeight(16)
            state = QLabel()
            state.setMinimumWidth(self.fontMetrics().horizontalAdvance("早稿作废：") + 40)
            line = len(self.rows)
            self._grid.addWidget(number, line, 0)
            self._grid.addWidget(bar, line, 1)
            self._grid.addWidget(state, line, 2)
            row = self.rows[chapter] = QueueRow(chapter, number, bar, state)
            row.set_state(QUEUED, 0)
            self.show()
        return row

    # ------------------------------------------------------------------ slots (each keyed by its chapter)
    def _on_pipeline_running_changed(self, running: bool) -> None:
        p = self.pipeline
        if running and p.run_name == "continue":
            self.start_queue(self._first_chapter(), p.requested_chapters)

    def _first_chapter(self) -> int:
        project = self.pipeline.project
        if not project.is_open:
            return 1
        cp = project.checkpoint()
        inflight = cp.get("inflight_chapter")
        if inflight is not None and cp.get("pipeline_stage") not in (None, "committed"):
            return int(inflight)
        return int(cp.get("last_completed_chapter") or 0) + 1

    def _on_pipeline_chapter_started(self, chapter: int, _resumed: str) -> None:
        row = self._row(chapter)
        row.set_state(WRITING, 0)
        self.rows_area.ensureWidgetVisible(row.number)  # a long queue follows the chapter being written

    def _on_pipeline_stage_started(self, chapter: int, stage: str) -> None:
        step = QUEUE_STEP_OF_STAGE.get(stage)
        if step is None or (chapter not in self.rows and self.pipeline.run_name != "continue"):
            return
        row = self._row(chapter)
        if row.state == AHEAD and step == 0:
            row.set_state(AHEAD, 0)  # the early draft streams; it is 写作中 once its turn comes
            return
        row.set_state(_STATE_OF_STEP[step], step)

    def _on_pipeline_gate_decided(self, chapter: int, action: str, _overall: float, reason: str) -> None:
        if action in _SENT_BACK_ACTIONS and chapter in self.rows:
            self.rows[chapter].set_state(SENT_BACK, 0, reason)

    def _on_pipeline_chapter_committed(self, chapter: int) -> None:
        if chapter in self.rows:
            self.rows[chapter].set_state(COMMITTED, len(QUEUE_STEPS))

    def _on_pipeline_draft_ahead(self, chapter: int) -> None:
        self._row(chapter).set_state(AHEAD, 0)

    def _on_pipeline_draft_discarded(self, chapter: int, reason: str) -> None:
        self._row(chapter).set_state(DISCARDED, 0, reason)

    def _on_pipeline_chapter_paused(self, chapter: int, message: str) -> None:
        self._row(chapter).set_state(WAITING, None, message)

    def _on_pipeline_finished(self) -> None:
        # The queue ended early (a chapter left for the author, the volume's end): the rest was not written.
        for row in self.rows.values():
            if row.state in (QUEUED, AHEAD, DISCARDED):
                row.set_state(STOPPED)

    def _on_pipeline_cancelled(self, *_args: object) -> None:
        for row in self.rows.values():
            if row.state not in (COMMITTED, WAITING):
                row.set_state(STOPPED)


class QueueNotifier:
    """Tells the author, outside the window, that the 续写 queue ended or a gate needs them: a tray message
    when the desktop has a tray, else the window's status bar. ``messages`` keeps what was told."""

    def __init__(self, window: QMainWindow, pipeline: PipelineController) -> None:
        self.window, self.pipeline = window, pipeline
        self.messages: list[tuple[str, str]] = []
        self._tray: QSystemTrayIcon | None = None
        self._written = 0
        self._cost: dict[int, float] = {}
        self._stopped_for_author = False
        p = pipeline
        p.running_changed.connect(self._on_pipeline_running_changed)
        p.chapter_committed.connect(self._on_pipeline_chapter_committed)
        p.usage_updated.connect(self._on_pipeline_usage_updated)
        p.chapter_paused.connect(self._on_pipeline_chapter_paused)
        p.question_asked.connect(self._on_pipeline_question_asked)
        p.checks_reported.connect(self._on_pipeline_checks_reported)
        p.finished.connect(self._on_pipeline_finished)

    def notify(self, title: str, text: str) -> None:
        self.messages.append((title, text))
        if QSystemTrayIcon.isSystemTrayAvailable():
            if self._tray is None:
                icon = self.window.windowIcon()
                style = QApplication.style()
                if icon.isNull() and style is not None:
                    icon = style.standardIcon(QStyle.StandardPixmap.SP_FileDialogDetailedView)
                self._tray = QSystemTrayIcon(icon, self.window)
                self._tray.setToolTip(self.window.windowTitle())
            self._tray.show()
            self._tray.showMessage(title, text, QSystemTrayIcon.MessageIcon.Information, 10000)
        else:
            self.window.statusBar().showMessage(labelled(title, text), 20000)

    # ------------------------------------------------------------------ slots
    def _on_pipeline_running_changed(self, running: bool) -> None:
        if running:
            self._written, self._cost, self._stopped_for_author = 0, {}, False

    def _on_pipeline_chapter_committed(self, _chapter: int) -> None:
        self._written += 1

    def _on_pipeline_usage_updated(self, chapter: int, _in: int, _out: int, cost: float) -> None:
        self._cost[chapter] = cost

    def _needs_author(self, text: str, *, stops: bool) -> None:
        self._stopped_for_author = self._stopped_for_author or stops
        self.notify(tr("续写等待你的决定"), text)

    def _on_pipeline_chapter_paused(self, chapter: int, message: str) -> None:
        self._needs_author(tr("第 {n} 章：{msg}").format(n=chapter, msg=message), stops=True)

    def _on_pipeline_question_asked(self, request: object) -> None:
        spec = getattr(request, "spec", None)
        header = spec.questions[0].header if spec is not None and spec.questions else ""
        self._needs_author(tr("等待你的决定：{header}").format(header=header), stops=False)

    def _on_pipeline_checks_reported(self, chapter: int, _message: str, pause: bool) -> None:
        if pause:
            self._needs_author(tr("第 {n} 章之后的检查要求暂停，处理后再续写").format(n=chapter), stops=True)

    def _on_pipeline_finished(self) -> None:
        p = self.pipeline
        if p.run_name != "continue" or self._stopped_for_author:
            return  # the author was told why the queue stopped
        self.notify(
            tr("续写结束"),
            tr_n("写完 {n}/{m} 章，花费 ${c:.4f}", p.requested_chapters).format(
                n=self._written, m=p.requested_chapters, c=sum(self._cost.values())
            ),
        )


__all__ = ["QUEUE_STATES", "QUEUE_STEPS", "QueueNotifier", "QueuePanel", "QueueRow"]
