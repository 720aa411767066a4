"""接续已有书稿: the estimate before anything starts, the chapter-by-chapter progress with 停止, and how it
ended (what was stored and the next step, or why it stopped and what is kept).

The approvals themselves (world, characters, storylines; the foreshadowing and state; the style) come as the
usual proposal and ask dialogs over the window, through the pipeline controller's asker, as the quick start's
do. The dialog is not modal: it stays beside them, and the window's other runs are disabled while it runs.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.adopt_controller import AdoptController, AdoptSummary
from novel_desktop.i18n import tr


def estimate_lines(est: Any) -> list[str]:
    """The estimate as the author reads it (an AdoptEstimate's fields, in the window's language)."""
    pending = list(est.to_read)
    if pending:
        span = tr("第 {first}-{last} 章").format(first=pending[0], last=pending[-1])
        head = tr("共 {chapters} 章：待分析 {pending} 章（{span}），已分析 {already} 章").format(
            chapters=est.chapters, pending=len(pending), span=span, already=est.already
        )
    else:
        head = tr("共 {chapters} 章，都已分析：只剩归纳设定和文风").format(chapters=est.chapters)
    lines = [
        head,
        tr("预计输入约 {input} tokens，输出约 {output} tokens").format(
            input=f"{est.input_tokens:,}", output=f"{est.output_tokens:,}"
        ),
        tr("预计费用约 ${cost}（逐章阅读：{reader}；归纳设定：{synthesis}）").format(
            cost=f"{est.cost_usd:.2f}", reader=est.reader_model, synthesis=est.synthesis_model
        ),
    ]
    if est.unpriced:
        models = tr("、").join(est.unpriced)
        lines.append(tr("价格表里没有 {models} 的价格，这部分费用没有算进去").format(models=models))
    return lines


def summary_line(summary: AdoptSummary) -> str:
    return tr("角色 {characters} 个、规则 {rules} 条、故事线 {storylines} 条、伏笔 {threads} 条").format(
        characters=summary.characters,
        rules=summary.rules,
        storylines=summary.storylines,
        threads=summary.foreshadowing,
    )


class AdoptDialog(QDialog):
    """One dialog per adoption; :meth:`load` asks for the estimate (the window calls it once shown)."""

    def __init__(self, controller: AdoptController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.stage = "estimate"  # estimate → running → done | failed | stopped
        self.setWindowTitle(tr("接续已有书稿"))
        self.setMinimumWidth(560)
        self.setModal(False)

        layout = QVBoxLayout(self)
        layout.setSpacing(10)
        intro = QLabel(
            tr(
                "逐章读一遍导入的书稿，归纳出人物与契约、世界规则、故事线、未回收的伏笔、最后一章的故事状态和本书自己的文风，每一项都经你确认后才保存；之后就能规划和续写。可以随时停止，下次从下一章继续。"
            )
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)

        self.estimate_label = QLabel(tr("正在估算…"))
        self.estimate_label.setWordWrap(True)
        self.estimate_label.setTextFormat(Qt.TextFormat.PlainText)
        self.estimate_label.setObjectName("AdoptEstimate")
        layout.addWidget(self.estimate_label)

        self.progress_bar = QProgressBar()
        self.progress_bar.setTextVisible(False)
        self.chapter_label = QLabel()
        self.chapter_label.setObjectName("AdoptChapter")
        self.message_label = QLabel()
        self.message_label.setWordWrap(True)
        self.message_label.setTextFormat(Qt.TextFormat.PlainText)
        self.result_label = QLabel()
        self.result_label.setWordWrap(True)
        self.result_label.setTextFormat(Qt.TextFormat.PlainText)
        self.result_label.setObjectName("AdoptResult")
        for widget in (self.progress_bar, self.chapter_label, self.message_label, self.result_label):
            layout.addWidget(widget)
        layout.addStretch(1)

        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.start_button = QPushButton(tr("开始分析"))
        self.start_button.setObjectName("PrimaryAction")
        self.start_button.setEnabled(False)
        self.stop_button = QPushButton(tr("停止"))
        self.stop_button.setToolTip(tr("立即停止；已分析的章节都保留，下次从下一章继续"))
        self.cancel_button = QPushButton(tr("取消"))
        self.close_button = QPushButton(tr("关闭"))
        for button in (self.start_button, self.stop_button, self.cancel_button, self.close_button):
            button.setAutoDefault(False)
            buttons.addWidget(button)
        layout.addLayout(buttons)

        self.start_button.clicked.connect(self._on_start_clicked)
        self.stop_button.clicked.connect(controller.stop)
        self.cancel_button.clicked.connect(self.reject)
        self.close_button.clicked.connect(self.accept)
        controller.estimate_ready.connect(self._on_estimate_ready)
        controller.progress.connect(self._on_progress)
        controller.finished.connect(self._on_finished)
        controller.failed.connect(self._on_failed)
        controller.cancelled.connect(self._on_cancelled)
        self._show_stage("estimate")

    # ------------------------------------------------------------------ stages
    def load(self) -> None:
        """Ask for the estimate; 开始分析 is enabled once it is shown."""
        self.controller.request_estimate()

    def _show_stage(self, stage: str) -> None:
        self.stage = stage
        running = stage == "running"
        ended = stage in ("done", "failed", "stopped")
        self.progress_bar.setVisible(running or stage in ("failed", "stopped"))
        self.chapter_label.setVisible(running or stage in ("failed", "stopped"))
        self.message_label.setVisible(running)
        self.result_label.setVisible(ended)
        self.start_button.setVisible(stage == "estimate")
        self.cancel_button.setVisible(stage == "estimate")
        self.stop_button.setVisible(running)
        self.close_button.setVisible(ended)
        self.estimate_label.setVisible(stage == "estimate")

    def _fit(self) -> None:
        """Grow (never shrink) to show every line of the wrapped texts at the dialog's width: an English
        intro and an error's message run longer than the height the dialog opened with. Run when it is shown
        and after each relayout (a text set or a part shown posts one)."""
        layout = self.layout()
        if layout is None or not self.isVisible():
            return
        layout.activate()
        wanted = layout.totalHeightForWidth(self.width()) if layout.hasHeightForWidth() else 0
        if wanted > self.height():
            self.resize(self.width(), wanted)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._fit()

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        if event.type() == QEvent.Type.LayoutRequest:
            self._fit()
        return handled

    def _on_estimate_ready(self, est: Any) -> None:
        if self.stage != "estimate":
            return
        self.estimate_label.setText("\n".join(estimate_lines(est)))
        self.start_button.setEnabled(True)
        self.start_button.setDefault(True)

    def _on_start_clicked(self) -> None:
        if not self.controller.start():
            self.result_label.setText(tr("现在不能开始：另一项任务正在运行，或这部小说是只读打开的。"))
            self.result_label.show()
            return
        self.progress_bar.setRange(0, 0)  # busy until the first chapter's count arrives
        self.chapter_label.setText(tr("正在准备…"))
        self.message_label.clear()
        self._show_stage("running")

    def _on_progress(self, done: int, total: int, message: str) -> None:
        if self.stage != "running":
            return
        self.progress_bar.setRange(0, max(total, 1))
        self.progress_bar.setValue(done)
        self.chapter_label.setText(tr("第 {k}/{n} 章").format(k=done, n=total))
        if done >= total:
            message = tr("逐章分析完成，正在归纳人物、设定和故事线，稍后请逐项确认…")
        self.message_label.setText(message)

    def _on_finished(self, summary: AdoptSummary) -> None:
        self.result_label.setText("\n".join([tr("接续分析完成。"), summary_line(summary), summary.next_step]))
        self._show_stage("done")

    def _on_failed(self, message: str) -> None:
        if self.stage == "estimate":  # the estimate could not be computed
            self.estimate_label.setText(message)
            return
        self.result_label.setText(tr("分析没有完成：{why}").format(why=message))
        self._show_stage("failed")

    def _on_cancelled(self, kept: str) -> None:
        self.result_label.setText(tr("已停止。{kept}").format(kept=kept))
        self._show_stage("stopped")

    # ------------------------------------------------------------------ closing
    def reject(self) -> None:
        """Esc or the close box: while it runs, the dialog stays (停止 stops it)."""
        if self.stage == "running":
            return
        super().reject()


__all__ = ["AdoptDialog", "estimate_lines", "summary_line"]
