"""Stale chapters in the window (issue 15 points 2-3): the one 重建 bar above the workspace while any
chapter's summary and state no longer follow from its text, and the 先重建 / 取消 question when 续写 meets
them.

The bar is refreshed whenever what it shows may have changed: a novel opened (an import, or a file changed by
``novel chapter --replace`` while the window did not hold it), a hand edit saved, a commit, a rebuild or any
run ending. 续写 never writes past a stale chapter: the run flow asks first (:meth:`StaleFlows.ask`), and
the pipeline's own refusal (``stale_refused``) asks the same question. 先重建 rebuilds from the first stale
chapter and, once that rebuild succeeded, writes the chapters that were asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from novel_desktop.i18n import join_list, tr
from novel_desktop.ui import alerts

if TYPE_CHECKING:
    from novel_desktop.ui.main_window import MainWindow


def chapter_span(numbers: Sequence[int]) -> str:
    """``4-6`` for a run of chapters, ``4、7`` otherwise."""
    items = list(numbers)
    if len(items) > 1 and items == list(range(items[0], items[-1] + 1)):
        return f"{items[0]}-{items[-1]}"
    return join_list(str(n) for n in items)


class RebuildBar(QFrame):
    """A quiet bar above the workspace: 第 4-6 章需要重建 [重建] [稍后]."""

    rebuild_clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("RebuildBar")
        row = QHBoxLayout(self)
        row.setContentsMargins(12, 6, 8, 6)
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.rebuild_button = QPushButton(tr("重建"))
        self.rebuild_button.setToolTip(
            tr("从第一个过期的章节起重新摘要、重放故事状态，并列出与新状态不一致的后续章节")
        )
        self.later_button = QPushButton(tr("稍后"))
        row.addWidget(self.label, 1)
        row.addWidget(self.rebuild_button)
        row.addWidget(self.later_button)
        self.rebuild_button.clicked.connect(self.rebuild_clicked)
        self.later_button.clicked.connect(self.hide)
        #: The chapters the bar shows (empty: hidden).
        self.chapters: list[int] = []
        self.hide()

    def show_stale(self, chapters: Sequence[int]) -> None:
        self.chapters = list(chapters)
        if not self.chapters:
            self.hide()
            return
        self.label.setText(
            tr("第 {span} 章需要重建：正文改过，摘要和故事状态已过期；重建之前不能续写。").format(
                span=chapter_span(self.chapters)
            )
        )
        self.show()


class StaleFlows:
    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.bar = RebuildBar()
        central = window.centralWidget()
        layout = central.layout() if central is not None else None
        assert isinstance(layout, QVBoxLayout)  # ui/novel_banner.with_banner's
        layout.insertWidget(1, self.bar)  # under the read-only banner, above the start page or the tabs
        #: The chapters the author put off with 稍后: the bar stays away until they change.
        self._dismissed: list[int] | None = None
        #: Chapters to write once the rebuild 先重建 started has succeeded.
        self._then_write: int | None = None
        self._rebuilt = False
        self.bar.rebuild_clicked.connect(self._on_bar_rebuild_clicked)
        self.bar.later_button.clicked.connect(self._on_bar_later_clicked)
        project, pc = window.project, window.pipeline
        project.project_opened.connect(lambda _path: self.refresh())
        project.project_closed.connect(self.refresh)
        # Every change of the chapters is followed by status_changed (one status read, not two).
        project.chapter_saved.connect(lambda _n, _marked: self.refresh())
        project.status_changed.connect(self.refresh)
        pc.rebuild_finished.connect(self._on_pipeline_rebuild_finished)
        pc.finished.connect(self._on_pipeline_finished)
        pc.stale_refused.connect(self._on_pipeline_stale_refused)

    def stale(self) -> list[int]:
        w = self.window
        if not w.project.is_open or w.project.readonly:
            return []
        return w.project.status().stale_chapters

    def refresh(self) -> None:
        stale = self.stale()
        if stale != self._dismissed:
            self._dismissed = None
            self.bar.show_stale(stale)

    def ask(self, chapters: Sequence[int], count: int | None) -> None:
        """续写 met stale chapters: 先重建 (then write ``count`` chapters, if any) or 取消 (nothing sent)."""
        w = self.window
        span = chapter_span(chapters)
        why = tr("第 {span} 章的正文改过，摘要和故事状态已过期。在它们之后续写，新章节会按过期的设定来写。")
        then = tr("先从第 {first} 章起重建故事状态，成功后再续写？")
        text = why.format(span=span) + "\n\n" + then.format(first=chapters[0])
        first = chapters[0]

        def answered(rebuild: bool) -> None:
            if rebuild:
                self._rebuild(first, count)

        alerts.confirm(w, tr("需要先重建"), text, answered, labels=(tr("先重建"), tr("取消")))

    def continues_after_rebuild(self) -> bool:
        """Whether the rebuild running now was started by 先重建, with chapters to write after it."""
        return self._then_write is not None

    def _rebuild(self, first: int, count: int | None) -> None:
        self._then_write, self._rebuilt = count, False
        self.window.runs.request_rebuild(first)
        if not self.window.pipeline.running:  # refused (read-only, another run): nothing to chain
            self._then_write = None

    # ------------------------------------------------------------------ slots
    def _on_bar_rebuild_clicked(self) -> None:
        self.window.runs.rebuild_stale()

    def _on_bar_later_clicked(self) -> None:
        self._dismissed = list(self.bar.chapters)

    def _on_pipeline_rebuild_finished(self, _report: object) -> None:
        self._rebuilt = True

    def _on_pipeline_finished(self) -> None:
        self.refresh()
        pc = self.window.pipeline
        count, self._then_write = self._then_write, None
        if count is not None and pc.run_name == "rebuild" and self._rebuilt:
            # After the job has quite ended; 续写 checks the chapters again (a later one may still be stale).
            QTimer.singleShot(0, lambda: self.window.runs.continue_chapters(count))

    def _on_pipeline_stale_refused(self, chapters: list[int]) -> None:
        pc = self.window.pipeline
        self.ask(chapters, pc.requested_chapters if pc.run_name == "continue" else None)
