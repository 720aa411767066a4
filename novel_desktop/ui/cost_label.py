"""The status bar's cost: what the open novel's model calls cost so far (every call, the cost ledger)."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QWidget

from novel_desktop.controllers.costs import CostTotals, novel_cost
from novel_desktop.controllers.pipeline_controller import PipelineController
from novel_desktop.i18n import tr, tr_n


def cost_text(total: CostTotals) -> str:
    """``总花费 $1.2345`` for a label."""
    return tr("总花费 ${c:.4f}").format(c=total.cost_usd)


def cost_tooltip(total: CostTotals) -> str:
    return tr_n(
        "{n} 次模型调用 · 输入 {i} · 输出 {o} tokens（含失败、取消和中断的调用）", total.calls
    ).format(n=total.calls, i=f"{total.total_input_tokens:,}", o=f"{total.output_tokens:,}")


#: How often the total follows a streaming run (milliseconds).
LIVE_REFRESH_MS = 1000


class CostLabel(QLabel):
    """The novel's total cost; read again when a novel opens and whenever a run or a step ends."""

    def __init__(self, pipeline: PipelineController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("CostLabel")
        self.pipeline = pipeline
        project = pipeline.project
        project.project_opened.connect(self.refresh)
        project.project_closed.connect(self.refresh)
        pipeline.chapter_committed.connect(self.refresh)
        pipeline.running_changed.connect(self.refresh)
        pipeline.step_finished.connect(self.refresh)
        # Live usage arrives with every streamed piece: the ledger is read again at most once a second.
        self._live_timer = QTimer(self, singleShot=True, interval=LIVE_REFRESH_MS)
        self._live_timer.timeout.connect(self.refresh)
        pipeline.usage_updated.connect(self._on_pipeline_usage_updated)
        self.refresh()

    def _on_pipeline_usage_updated(self, *_args: object) -> None:
        if not self._live_timer.isActive():
            self._live_timer.start()

    def refresh(self, *_args: object) -> None:
        project = self.pipeline.project
        if not project.is_open:
            self.setText("")
            self.setToolTip("")
            return
        total = novel_cost(project)
        self.setText(cost_text(total))
        self.setToolTip(cost_tooltip(total))
