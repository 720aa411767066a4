"""质量报告: the QualityJudge's verdict on one chapter, and the quality of the whole novel over time.

本章 (:mod:`novel_desktop.ui.quality_chapter`): overall score, recommendation and the gate's path
(``3.2 → 修订 → 3.8，通过``), the eight weighted dimensions with reasons and clickable evidence, contract
checks, violations, risk flags, required fixes, issues and strengths.
全书 (:mod:`novel_desktop.ui.quality_trend`): the overall score per chapter against the 3.5 / 4.0 gate lines,
and AI-phrase hits per 1,000 字.

Reads go through the :class:`ProjectController`; the AI-phrase density through its
:class:`AnalysisController` (``project.analysis``), which owns the one analysis cache.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QTimer, Signal
from PySide6.QtWidgets import QLabel, QTabWidget, QVBoxLayout, QWidget

from novel_desktop.controllers.analysis_controller import AiPhraseCounter
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.evaluation import Evaluation
from novel_desktop.i18n import tr
from novel_desktop.ui.dimension_bars import DimensionBars
from novel_desktop.ui.quality_chapter import ChapterReportMixin
from novel_desktop.ui.quality_text import ClickableLabel
from novel_desktop.ui.quality_trend import NovelTrendMixin, TrendPoint

#: How long the window's panel waits for the chapter report before reading the novel's (milliseconds).
FIRST_REFRESH_MS = 200


class QualityPanel(ChapterReportMixin, NovelTrendMixin, QWidget):
    """The quality report; see the module docstring."""

    #: Show chapter ``int`` in the editor with the passage ``str`` selected.
    jump_requested = Signal(int, str)
    #: Open chapter ``int`` (from the trend charts or 在编辑器中打开).
    chapter_requested = Signal(int)

    def __init__(
        self, project: ProjectController, parent: QWidget | None = None, *, defer_first: bool = False
    ) -> None:
        """``defer_first``: read the novel on the next event-loop turn, not now (the window, which shows a
        chapter's report at once after opening a novel)."""
        super().__init__(parent)
        self.project = project
        self.chapter: int | None = None
        self.evaluation: Evaluation | None = None
        self._shown_key: str | None = None
        self._report_generation = 0
        self._parts_pending = 0
        #: What the chapter view shows, for tests and for keyboard navigation.
        self.dimension_chart: DimensionBars | None = None
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
        self._refresh_timer = QTimer(self, singleShot=True, interval=0)
        self._refresh_timer.timeout.connect(self.refresh)

        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.tabs = QTabWidget()
        outer.addWidget(self.tabs)
        self.tabs.addTab(self._build_chapter_tab(), tr("本章"))
        self.tabs.addTab(self._build_novel_tab(), tr("全书", "tab"))
        self._connect()
        if defer_first:
            # The window shows the last chapter's report at once (show_chapter), which makes this re-read
            # unnecessary; it still comes when no chapter is shown (a novel without chapters).
            self._refresh_timer.start(FIRST_REFRESH_MS)
        else:
            self.refresh()

    def _connect(self) -> None:
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)
        self.chapter_combo.activated.connect(self._on_chapter_combo_activated)
        self.open_button.clicked.connect(self._on_open_button_clicked)
        self.score_series.clicked.connect(self._on_trend_clicked)
        self.ai_series.clicked.connect(self._on_trend_clicked)
        self._scan_timer.timeout.connect(self._on_scan_timer_timeout)
        # After a commit the tree re-reads first; the report follows on a turn of its own.
        self.project.chapters_changed.connect(self._on_project_chapters_changed)
        self.project.project_opened.connect(self._on_project_opened)
        self.project.project_closed.connect(self.refresh)
        self.project.document_changed.connect(self._on_project_document_changed)

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

    def show_chapter(self, number: int, *, in_parts: bool = False) -> None:
        """Show chapter ``number``'s report on the 本章 tab (``in_parts``: its later parts in later event-loop
        turns, when the window follows a chapter as it is committed)."""
        if self._refresh_timer.isActive():  # this is the re-read a pending refresh would do
            self._refresh_timer.stop()
            self._trend_dirty = True
        self._fill_chapter_combo()
        self._show(number, in_parts=in_parts)
        self.tabs.setCurrentIndex(0)

    def show_novel(self) -> None:
        """Show the 全书 tab (building its charts if they are out of date)."""
        self.tabs.setCurrentIndex(1)
        if self._trend_dirty:
            self._build_trend()

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

    def _on_project_chapters_changed(self) -> None:
        self._refresh_timer.start(0)

    def _on_project_opened(self, _path: str) -> None:
        self.chapter = None
        self._shown_key = None
        self.refresh()

    def _on_project_document_changed(self, path: str) -> None:
        if path.startswith("evaluations/") or path == "ai-blacklist.json":
            self.refresh()
