"""故事线泳道: which storyline each chapter of a volume follows, with POV and convergence events.

Rows are the novel's storylines (``storylines/storylines.json``), columns the volume's chapters (outline
sections and written chapters). A chapter's line comes from its contract, else the outline's Storyline
field, else the chapter record. Convergence events of ``storyline-schedule.json`` are drawn as bands by the
:class:`SwimlaneCanvas` (:mod:`novel_desktop.ui.storyline_canvas`). Reads go through the :class:`NovelReader`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.controllers.reader import ChapterPlan, NovelReader
from novel_desktop.domain.storylines import StorylineSchedule, StorylinesFile
from novel_desktop.i18n import ONE, join_list, paren, tr
from novel_desktop.ui.storyline_canvas import (
    DORMANT,
    PALETTE,
    ROLE_TEXT,
    STATUS_TEXT,
    Lane,
    Legend,
    SwimlaneCanvas,
    summary_first_line,
)
from novel_desktop.ui.theme import heading_label


class StorylineView(QWidget):
    """The swimlane of one volume, with its theme and the legend."""

    chapter_requested = Signal(int)

    def __init__(self, project: ProjectController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.reader = NovelReader(project)
        self.volume = 1

        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        self.heading = heading_label()
        layout.addWidget(self.heading)
        self.subheading = QLabel()
        self.subheading.setTextFormat(Qt.TextFormat.PlainText)  # may show the novel's names
        self.subheading.setWordWrap(True)
        self.subheading.setStyleSheet("color: #555;")
        layout.addWidget(self.subheading)

        self.canvas = SwimlaneCanvas()
        self.canvas.cell_clicked.connect(self.chapter_requested)
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidget(self.canvas)
        self.scroll_area.setWidgetResizable(False)
        self.scroll_area.setFrameShape(QFrame.Shape.StyledPanel)
        self.scroll_area.setStyleSheet("QScrollArea { background: white; }")
        self.canvas.attach(self.scroll_area)
        layout.addWidget(self.scroll_area)

        self.empty = QLabel()
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setStyleSheet("color: #555; padding: 40px;")
        layout.addWidget(self.empty, 1)

        legend_row = QHBoxLayout()
        self.legend = Legend()
        legend_row.addWidget(self.legend)
        legend_row.addStretch(1)
        layout.addLayout(legend_row)
        self.events_label = QLabel()
        self.events_label.setTextFormat(Qt.TextFormat.PlainText)  # may show the novel's names
        self.events_label.setWordWrap(True)
        layout.addWidget(self.events_label)

        # The volume's plan per line under the grid: the numbers the swimlane shows as shapes.
        self.plan_heading = QLabel(tr("本卷调度"))
        bold = self.plan_heading.font()
        bold.setBold(True)
        self.plan_heading.setFont(bold)
        layout.addWidget(self.plan_heading)
        self.plan_table = QTableWidget(0, 6)
        self.plan_table.setHorizontalHeaderLabels(
            [tr("故事线", ONE), tr("本卷角色"), tr("计划章数"), tr("大纲中"), tr("已写"), tr("本卷目标")]
        )
        self.plan_table.verticalHeader().setVisible(False)
        self.plan_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.plan_table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.plan_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.plan_table.horizontalHeader().setStretchLastSection(True)
        self.plan_table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        layout.addWidget(self.plan_table)
        layout.addStretch(1)

        project.document_changed.connect(self._on_project_document_changed)
        project.chapters_changed.connect(self.refresh)
        if project.is_open:
            self.show_volume(self.reader.current_volume())

    def show_volume(self, volume: int) -> None:
        self.volume = volume
        self.refresh()

    def refresh(self) -> None:
        """Re-read storylines, the volume's schedule and chapters, and repaint."""
        if not self.project.is_open:
            return
        storylines = self.reader.storylines()
        schedule = self.reader.storyline_schedule(self.volume)
        chapters = self.reader.chapters(self.volume)
        lanes = self._lanes(storylines, schedule, chapters)
        events = schedule.convergence_events if schedule else []
        next_chapter = self.reader.next_chapter()
        self.canvas.set_data(lanes, chapters, events, next_chapter)
        self.canvas.summaries = {
            plan.number: summary_first_line(self.project.summary(plan.number))
            for plan in chapters
            if plan.written
        }

        name = dict(self.project.volumes()).get(self.volume, "")
        self.heading.setText(tr("第 {n} 卷故事线").format(n=self.volume) + (f" · {name}" if name else ""))
        parts = []
        if schedule and schedule.volume_theme:
            parts.append(tr("本卷主题：{t}").format(t=schedule.volume_theme))
        parts.append(
            tr("{c} 章 · {l} 条故事线 · {e} 处交汇").format(c=len(chapters), l=len(lanes), e=len(events))
        )
        if schedule and schedule.dormant_storylines:
            parts.append(tr("休眠：{ids}").format(ids=join_list(schedule.dormant_storylines)))
        self.subheading.setText(tr("　").join(parts))
        self.events_label.setText(
            "\n".join(
                tr("交汇 第 {a}–{b} 章：{who}").format(
                    a=e.chapter_range[0], b=e.chapter_range[1], who=join_list(e.involved_storylines)
                )
                + (f" — {e.trigger}" if e.trigger else "")
                for e in events
            )
        )
        self.events_label.setVisible(bool(events))
        self._fill_plan_table(lanes, schedule, chapters)
        # The grid is as tall as its rows (up to a third of a small screen); the page scrolls the rest.
        full = (
            self.canvas.height()
            + 2 * self.scroll_area.frameWidth()
            + self.scroll_area.horizontalScrollBar().sizeHint().height()
        )
        self.scroll_area.setMaximumHeight(full)
        self.scroll_area.setMinimumHeight(min(full, 300))
        self.plan_table.resizeRowsToContents()
        rows = sum(self.plan_table.rowHeight(r) for r in range(self.plan_table.rowCount()))
        self.plan_table.setFixedHeight(
            self.plan_table.horizontalHeader().sizeHint().height() + rows + 2 * self.plan_table.frameWidth()
        )

        has_grid = bool(lanes and chapters)
        self.scroll_area.setVisible(has_grid)
        self.legend.setVisible(has_grid)
        self.plan_heading.setVisible(bool(lanes))
        self.plan_table.setVisible(bool(lanes))
        self.empty.setVisible(not has_grid)
        if not lanes:
            self.empty.setText(
                tr(
                    "本书还没有故事线。\n\n故事线在 storylines/storylines.json 中定义，"
                    "规划阶段由 PlotArchitect 生成；每章大纲写上「Storyline: 线的 id」，"
                    "章节就会出现在对应的泳道里。"
                )
            )
        elif not chapters:
            self.empty.setText(
                tr(
                    "第 {n} 卷还没有章节或大纲。写好本卷大纲（每章以「## 第N章 标题」开头）后，"
                    "这里会显示各章走哪条线。"
                ).format(n=self.volume)
            )

    def _fill_plan_table(
        self, lanes: list[Lane], schedule: StorylineSchedule | None, chapters: list[ChapterPlan]
    ) -> None:
        self.plan_table.setRowCount(0)
        for lane in lanes:
            entry = None
            if schedule:
                entry = next(
                    (a for a in schedule.active_storylines if a.storyline_id == lane.storyline_id), None
                )
            on_line = [plan for plan in chapters if plan.storyline_id == lane.storyline_id]
            role = tr(ROLE_TEXT.get(lane.role, lane.role)) if lane.role else tr("本卷未安排")
            if lane.status != "active":
                role += paren(tr(STATUS_TEXT.get(lane.status, lane.status)))
            values = [
                lane.name + paren(lane.storyline_id),
                role,
                str(entry.target_chapters) if entry else "—",
                str(len(on_line)),
                str(sum(1 for plan in on_line if plan.written)),
                entry.arc_goal if entry else "",
            ]
            row = self.plan_table.rowCount()
            self.plan_table.insertRow(row)
            for column, text in enumerate(values):
                item = QTableWidgetItem(text)
                if lane.dormant:
                    item.setForeground(QBrush(DORMANT.darker(120)))
                if column == 0:
                    item.setForeground(QBrush(QColor(DORMANT if lane.dormant else lane.color).darker(110)))
                self.plan_table.setItem(row, column, item)

    @staticmethod
    def _lanes(
        storylines: StorylinesFile | None, schedule: StorylineSchedule | None, chapters: list[ChapterPlan]
    ) -> list[Lane]:
        """Rows in reading order: the volume's lines by role, then the rest, then unregistered ids."""
        known = storylines.storylines if storylines else []
        role_rank = {"primary": 0, "secondary": 1, "seasoning": 2}
        dormant = set(schedule.dormant_storylines) if schedule else set()

        def rank(index: int) -> tuple[int, int]:
            role = schedule.role_of(known[index].id) if schedule else None
            return (role_rank.get(role, 3) if role else 3, index)

        lanes: list[Lane] = []
        for index in sorted(range(len(known)), key=rank):
            line = known[index]
            status = "dormant" if line.id in dormant and line.status == "active" else line.status
            lanes.append(
                Lane(
                    storyline_id=line.id,
                    name=line.name,
                    color=QColor(PALETTE[len(lanes) % len(PALETTE)]),
                    role=schedule.role_of(line.id) if schedule else None,
                    status=status,
                    pov_characters=list(line.pov_characters),
                )
            )
        ids = {lane.storyline_id for lane in lanes}
        for plan in chapters:
            # A chapter on a line missing from storylines.json gets a flagged row rather than vanishing.
            if plan.storyline_id and plan.storyline_id not in ids:
                ids.add(plan.storyline_id)
                lanes.append(
                    Lane(
                        plan.storyline_id,
                        plan.storyline_id,
                        QColor(PALETTE[len(lanes) % len(PALETTE)]),
                        registered=False,
                    )
                )
        return lanes

    def _on_project_document_changed(self, path: str) -> None:
        if path.startswith(("storylines/", "summaries/", self.reader.volume_prefix(self.volume))):
            self.refresh()
