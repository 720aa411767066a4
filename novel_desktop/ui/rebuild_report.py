"""重建报告: what a rebuild did, chapter by chapter (how the story state after each chapter changed), and the
later chapters whose summaries now contradict the state (the cascade check), with a button that re-judges
them in one batch. Opened with ``open()`` (never ``exec()``) when a rebuild finishes."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.i18n import join_list, tr


def _by_chapter(data: Any) -> dict[int, list[str]]:
    if not isinstance(data, dict):
        return {}
    return {int(k): [str(x) for x in v] for k, v in data.items() if str(k).isdigit() and isinstance(v, list)}


class RebuildReportDialog(QDialog):
    """The rebuild report: a ``RebuildReport`` as the dict ``PipelineController.rebuild_finished`` sends."""

    #: The author asked to re-judge the listed chapters (one batch).
    rejudge_requested = Signal(list)

    def __init__(self, report: dict[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("RebuildReportDialog")
        self.setWindowTitle(tr("重建报告"))
        self.resize(720, 520)
        self.changes = _by_chapter(report.get("changes"))
        self.cascade = _by_chapter(report.get("disagreeing"))
        start = int(report.get("chapter") or 0)
        again = join_list(str(n) for n in report.get("resummarized") or [start])

        layout = QVBoxLayout(self)
        lines = [
            tr("已从第{n}章重建，重新摘要了第{list}章；其余章节按原来的状态变更重放。").format(
                n=start, list=again
            )
        ]
        lines += [str(note) for note in report.get("notes") or []]
        cost = float(report.get("cost_usd") or 0.0)
        lines.append(tr("费用：${cost}").format(cost=f"{cost:.4f}"))
        self.summary_label = QLabel("\n".join(lines))
        self.summary_label.setWordWrap(True)
        layout.addWidget(self.summary_label)

        layout.addWidget(QLabel(tr("各章之后的故事状态变化（与重建前相比）")))
        self.changes_tree = self._tree()
        for chapter, items in sorted(self.changes.items()):
            top = QTreeWidgetItem(
                [tr("第{n}章").format(n=chapter), tr("{count} 处变化").format(count=len(items))]
            )
            for line in items:
                top.addChild(QTreeWidgetItem(["", line]))
            if not items:
                top.setText(1, tr("无变化"))
            self.changes_tree.addTopLevelItem(top)
        for reason in report.get("dropped_ops") or []:
            self.changes_tree.addTopLevelItem(QTreeWidgetItem([tr("丢弃的变更"), str(reason)]))
        self.changes_tree.expandAll()
        layout.addWidget(self.changes_tree, 3)

        if self.cascade:
            title = tr("以下后续章节的摘要与新状态矛盾（仅供参考，可继续写作）：")
        else:
            title = tr("后续章节与新状态一致。")
        self.cascade_label = QLabel(title)
        layout.addWidget(self.cascade_label)
        self.cascade_tree = self._tree()
        for chapter, reasons in sorted(self.cascade.items()):
            top = QTreeWidgetItem(
                [tr("第{n}章").format(n=chapter), tr("{count} 处矛盾").format(count=len(reasons))]
            )
            for reason in reasons:
                top.addChild(QTreeWidgetItem(["", reason]))
            self.cascade_tree.addTopLevelItem(top)
        self.cascade_tree.expandAll()
        self.cascade_tree.setVisible(bool(self.cascade))
        layout.addWidget(self.cascade_tree, 2)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.rejudge_button = QPushButton(tr("重新评审这些章节"))
        self.rejudge_button.setToolTip(tr("把上面列出的章节一次性重新评审"))
        self.rejudge_button.setEnabled(bool(self.cascade))
        buttons.addButton(self.rejudge_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.rejudge_button.setVisible(bool(self.cascade))
        buttons.rejected.connect(self.reject)
        self.rejudge_button.clicked.connect(self._on_rejudge_button_clicked)
        layout.addWidget(buttons)

    def _tree(self) -> QTreeWidget:
        tree = QTreeWidget()
        tree.setColumnCount(2)
        tree.setHeaderHidden(True)
        tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        tree.setTextElideMode(Qt.TextElideMode.ElideNone)
        tree.setWordWrap(True)
        return tree

    def _on_rejudge_button_clicked(self) -> None:
        self.rejudge_requested.emit(sorted(self.cascade))
        self.accept()


def show_rebuild_report(parent: QWidget, report: dict[str, Any], on_rejudge: Any) -> RebuildReportDialog:
    """Open the report (non-blocking); ``on_rejudge(chapters)`` runs when the author asks to re-judge."""
    dialog = RebuildReportDialog(report, parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.rejudge_requested.connect(on_rejudge)
    dialog.open()
    return dialog
