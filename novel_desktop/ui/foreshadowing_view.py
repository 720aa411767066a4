"""伏笔: every foreshadowing thread with the chapters that planted, advanced and resolved it.

Rows come from ``foreshadowing/global.json``; threads that only a volume plan names
(``volumes/vol-NN/foreshadowing.json``) are shown as 计划 rows. Threads past their resolve deadline
(``domain.foreshadowing.overdue`` at the chapter about to be written) are marked with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QStyle,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.controllers.reader import NovelReader
from novel_desktop.domain.foreshadowing import (
    ForeshadowItem,
    VolumeForeshadowItem,
    overdue,
)
from novel_desktop.i18n import ONE, join_list, labelled, paren, tr
from novel_desktop.ui.theme import heading_label

_STATUS_TEXT = {"planned": "计划", "planted": "已埋设", "advanced": "推进中", "resolved": "已回收"}
_ACTION_TEXT = {"planted": "埋设", "advanced": "推进", "resolved": "回收"}
_OVERDUE_BG = QColor("#fde2e1")
_OVERDUE_FG = QColor("#b3261e")
_RESOLVED_FG = QColor("#2e7d32")
_PLAN_FG = QColor("#7a7a7a")

_ModelIndex = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True)
class ForeshadowRow:
    """One row of the table: a thread, whether only a volume plan names it, and why it is overdue."""

    item: ForeshadowItem
    plan_volume: int | None = None
    overdue_reason: str = ""

    @property
    def is_plan(self) -> bool:
        return self.plan_volume is not None

    @property
    def is_overdue(self) -> bool:
        return bool(self.overdue_reason)

    @property
    def is_open(self) -> bool:
        return not self.is_plan and self.item.status in ("planted", "advanced")

    def latest_chapter(self) -> int | None:
        """The last chapter that touched the thread (or, for a plan, where it is to be planted)."""
        item = self.item
        if item.resolved_chapter is not None:
            return item.resolved_chapter
        if item.advanced_chapters:
            return max(item.advanced_chapters)
        if item.planted_chapter is not None:
            return item.planted_chapter
        if isinstance(item, VolumeForeshadowItem):
            return item.planned_plant_chapter
        return None


def _range_text(value: tuple[int, int] | None) -> str:
    if value is None:
        return ""
    return str(value[0]) if value[0] == value[1] else f"{value[0]}–{value[1]}"


class ForeshadowingModel(QAbstractTableModel):
    """The threads as a table; ``RowRole`` gives the :class:`ForeshadowRow` behind a row."""

    (
        COL_ID,
        COL_DESCRIPTION,
        COL_STATUS,
        COL_PLANTED,
        COL_ADVANCED,
        COL_RESOLVED,
        COL_TARGET,
        COL_STORYLINE,
    ) = range(8)
    COL_NOTE = 8
    HEADERS = ("ID", "描述", "状态", "埋设", "推进", "回收", "目标回收", "故事线", "提示")
    RowRole = Qt.ItemDataRole.UserRole + 1
    #: A number-aware sort key, so chapter 10 sorts after chapter 9.
    SortRole = Qt.ItemDataRole.UserRole + 2

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[ForeshadowRow] = []

    def set_rows(self, rows: list[ForeshadowRow]) -> None:
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()

    def rows(self) -> list[ForeshadowRow]:
        return list(self._rows)

    def rowCount(self, parent: _ModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _ModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return tr(self.HEADERS[section], ONE)  # one item per row: 故事线 is "Storyline"
        return None

    def data(self, index: _ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self._rows[index.row()]
        column = index.column()
        if role == self.RowRole:
            return row
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(row, column)
        if role == self.SortRole:
            return self._sort_key(row, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row)
        if role == Qt.ItemDataRole.BackgroundRole and row.is_overdue:
            return QBrush(_OVERDUE_BG)
        if role == Qt.ItemDataRole.ForegroundRole:
            if row.is_overdue and column in (self.COL_STATUS, self.COL_TARGET, self.COL_NOTE):
                return QBrush(_OVERDUE_FG)
            if row.is_plan:
                return QBrush(_PLAN_FG)
            if column == self.COL_STATUS and row.item.status == "resolved":
                return QBrush(_RESOLVED_FG)
        if role == Qt.ItemDataRole.FontRole and row.is_overdue and column in (self.COL_ID, self.COL_NOTE):
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (
            self.COL_PLANTED,
            self.COL_ADVANCED,
            self.COL_RESOLVED,
            self.COL_TARGET,
        ):
            return int(Qt.AlignmentFlag.AlignCenter)
        return None

    def _text(self, row: ForeshadowRow, column: int) -> str:
        item = row.item
        if column == self.COL_ID:
            return item.id
        if column == self.COL_DESCRIPTION:
            return item.description
        if column == self.COL_STATUS:
            if row.is_plan:
                return tr("计划（第 {v} 卷）").format(v=row.plan_volume)
            status = tr(_STATUS_TEXT.get(item.status, item.status))
            return status + (tr(" · 逾期") if row.is_overdue else "")
        if column == self.COL_PLANTED:
            if item.planted_chapter is not None:
                return str(item.planted_chapter)
            if isinstance(item, VolumeForeshadowItem) and item.planned_plant_chapter is not None:
                return tr("计划 {n}").format(n=item.planned_plant_chapter)
            return ""
        if column == self.COL_ADVANCED:
            return join_list(str(n) for n in item.advanced_chapters)
        if column == self.COL_RESOLVED:
            return "" if item.resolved_chapter is None else str(item.resolved_chapter)
        if column == self.COL_TARGET:
            text = _range_text(item.target_resolve_range)
            if isinstance(item, VolumeForeshadowItem) and item.planned_resolve_chapter is not None:
                planned = tr("计划 {n}").format(n=item.planned_resolve_chapter)
                text = text + paren(planned) if text else planned
            return text
        if column == self.COL_STORYLINE:
            return item.storyline_id or ""
        if column == self.COL_NOTE:
            return row.overdue_reason
        return ""

    def _sort_key(self, row: ForeshadowRow, column: int) -> Any:
        item = row.item
        big = 1 << 30  # empty chapter cells sort last
        if column == self.COL_PLANTED:
            return item.planted_chapter if item.planted_chapter is not None else big
        if column == self.COL_ADVANCED:
            return max(item.advanced_chapters) if item.advanced_chapters else big
        if column == self.COL_RESOLVED:
            return item.resolved_chapter if item.resolved_chapter is not None else big
        if column == self.COL_TARGET:
            deadline = item.resolve_deadline()
            return deadline if deadline is not None else big
        return self._text(row, column)

    def _tooltip(self, row: ForeshadowRow) -> str:
        item = row.item
        lines = [labelled(item.id, item.description)]
        if row.overdue_reason:
            lines.append(row.overdue_reason)
        for event in item.history:
            action = tr(_ACTION_TEXT.get(event.action, event.action))
            lines.append(
                tr("第 {n} 章 {a}").format(n=event.chapter, a=action)
                + (tr("：") + event.detail if event.detail else "")
            )
        return "\n".join(lines)


class ForeshadowingFilter(QSortFilterProxyModel):
    """Shows all threads, or only open, overdue, resolved or planned ones."""

    MODES = ("all", "open", "overdue", "resolved", "planned")

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.mode = "all"
        self.setSortRole(ForeshadowingModel.SortRole)

    def set_mode(self, mode: str) -> None:
        self.beginFilterChange()
        self.mode = mode
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: _ModelIndex) -> bool:
        model = self.sourceModel()
        row = model.data(model.index(source_row, 0, source_parent), ForeshadowingModel.RowRole)
        if not isinstance(row, ForeshadowRow):
            return False
        if self.mode == "open":
            return row.is_open
        if self.mode == "overdue":
            return row.is_overdue
        if self.mode == "resolved":
            return not row.is_plan and row.item.status == "resolved"
        if self.mode == "planned":
            return row.is_plan or row.item.status == "planned"
        return True


class ForeshadowingView(QWidget):
    """The foreshadowing table with a status filter, a summary line and the selected thread's history."""

    chapter_requested = Signal(int)

    FILTERS = (
        ("all", "全部"),
        ("open", "未回收"),
        ("overdue", "逾期"),
        ("resolved", "已回收"),
        ("planned", "计划"),
    )

    def __init__(self, project: ProjectController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.reader = NovelReader(project)
        self.current_chapter = 1

        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        top = QHBoxLayout()
        heading = heading_label(tr("伏笔"))
        top.addWidget(heading)
        self.summary_label = QLabel()
        self.summary_label.setTextFormat(Qt.TextFormat.RichText)
        top.addWidget(self.summary_label, 1)
        top.addWidget(QLabel(tr("显示")))
        self.filter_combo = QComboBox()
        for mode, text in self.FILTERS:
            self.filter_combo.addItem(tr(text), mode)
        self.filter_combo.currentIndexChanged.connect(self._on_filter_combo_changed)
        top.addWidget(self.filter_combo)
        layout.addLayout(top)

        self.model = ForeshadowingModel(self)
        self.proxy = ForeshadowingFilter(self)
        self.proxy.setSourceModel(self.model)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(ForeshadowingModel.COL_PLANTED, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        self.table.setAlternatingRowColors(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(ForeshadowingModel.COL_DESCRIPTION, QHeaderView.ResizeMode.Stretch)
        # The overdue note is long; sized to its text it took the description's room (the row's detail pane
        # and the tooltip show it whole).
        header.setSectionResizeMode(ForeshadowingModel.COL_NOTE, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(ForeshadowingModel.COL_NOTE, 160)
        # The description takes what is left: a little left, a stretched section gets the minimum size;
        # none, the default size. Neither is less than its header here (English "Description" was clipped).
        margin = 2 * header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)
        need = header.fontMetrics().horizontalAdvance(tr("描述", ONE)) + margin + 8
        header.setMinimumSectionSize(max(header.minimumSectionSize(), need))
        header.setDefaultSectionSize(max(header.defaultSectionSize(), need))
        self.table.doubleClicked.connect(self._on_table_double_clicked)
        self.table.selectionModel().currentRowChanged.connect(self._on_table_current_changed)
        self.table.setToolTip(tr("双击打开章节：点在埋设、推进或回收列上打开那一章，其他列打开最近的一章"))

        self.detail = QPlainTextEdit()
        self.detail.setReadOnly(True)
        self.detail.setPlaceholderText(tr("选中一条伏笔，查看它的来龙去脉。"))
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 4)
        splitter.setStretchFactor(1, 1)
        layout.addWidget(splitter, 1)

        self.empty = QLabel(
            tr(
                "本书还没有伏笔。\n\n伏笔记录在 foreshadowing/global.json：规划阶段 PlotArchitect "
                "写入各卷的伏笔计划，每章提交时 Summarizer 会记下埋设、推进和回收。"
            )
        )
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setStyleSheet("color: #555; padding: 40px;")
        layout.addWidget(self.empty, 1)
        self._splitter = splitter

        project.document_changed.connect(self._on_project_document_changed)
        project.chapters_changed.connect(self.refresh)
        self.refresh()

    # ------------------------------------------------------------------ reading
    def refresh(self) -> None:
        """Re-read the global and volume foreshadowing files and the current chapter."""
        if not self.project.is_open:
            return
        # The chapter about to be written: a thread due in it is not overdue yet (see domain overdue()).
        self.current_chapter = self.reader.next_chapter()
        global_items = self.reader.global_foreshadowing()
        plans = self.reader.volume_foreshadowing()
        late = {item.id for item in overdue(global_items, self.current_chapter)}
        rows = [
            ForeshadowRow(item, None, self._reason(item) if item.id in late else "") for item in global_items
        ]
        known = {item.id for item in global_items}
        for volume, plan in plans:
            late_plans = {item.id for item in overdue(plan.foreshadowing, self.current_chapter)}
            for vitem in plan.foreshadowing:
                if vitem.id in known:
                    continue
                known.add(vitem.id)
                reason = self._reason(vitem) if vitem.id in late_plans else ""
                rows.append(ForeshadowRow(vitem, volume, reason))
        self.model.set_rows(rows)
        self._update_summary()
        has_rows = bool(rows)
        self._splitter.setVisible(has_rows)
        self.empty.setVisible(not has_rows)
        if has_rows:
            self.table.resizeColumnToContents(ForeshadowingModel.COL_STATUS)

    def _reason(self, item: ForeshadowItem) -> str:
        deadline = item.resolve_deadline()
        if isinstance(item, VolumeForeshadowItem) and item.planned_resolve_chapter is not None:
            where = tr("计划第 {n} 章回收").format(n=item.planned_resolve_chapter)
        elif item.target_resolve_range is not None:
            where = tr("应在第 {r} 章回收").format(r=_range_text(item.target_resolve_range))
        else:
            where = tr("应在第 {n} 章前回收").format(n=deadline)
        return tr("逾期：{where}，现已写到第 {n} 章").format(where=where, n=self.current_chapter - 1)

    def _update_summary(self) -> None:
        rows = self.model.rows()
        open_count = sum(1 for row in rows if row.is_open)
        overdue_count = sum(1 for row in rows if row.is_overdue)
        resolved = sum(1 for row in rows if not row.is_plan and row.item.status == "resolved")
        planned = sum(1 for row in rows if row.is_plan or row.item.status == "planned")
        overdue_text = tr("逾期 {n}").format(n=overdue_count)
        if overdue_count:
            overdue_text = f"<b style='color:{_OVERDUE_FG.name()}'>{overdue_text}</b>"
        self.summary_label.setText(
            tr("　").join(
                [
                    tr("未回收 {n}").format(n=open_count),
                    overdue_text,
                    tr("已回收 {n}").format(n=resolved),
                    tr("计划 {n}").format(n=planned),
                    "<span style='color:#777'>{}</span>".format(
                        tr("（按第 {n} 章计）").format(n=self.current_chapter)
                    ),
                ]
            )
        )

    def summary_text(self) -> str:
        """The summary line as plain text."""
        return re.sub(r"<[^>]+>", "", self.summary_label.text())

    # ------------------------------------------------------------------ interaction
    def set_filter(self, mode: str) -> None:
        index = self.filter_combo.findData(mode)
        if index >= 0:
            self.filter_combo.setCurrentIndex(index)

    def visible_ids(self) -> list[str]:
        """The ids of the rows the table shows now, top to bottom."""
        return [
            str(self.proxy.data(self.proxy.index(r, ForeshadowingModel.COL_ID)))
            for r in range(self.proxy.rowCount())
        ]

    def _on_filter_combo_changed(self, _index: int) -> None:
        self.proxy.set_mode(str(self.filter_combo.currentData()))

    def _row_at(self, index: _ModelIndex) -> ForeshadowRow | None:
        row = self.proxy.data(self.proxy.index(index.row(), 0), ForeshadowingModel.RowRole)
        return row if isinstance(row, ForeshadowRow) else None

    def chapter_for(self, index: _ModelIndex) -> int | None:
        """The chapter a double-click opens: the cell's own chapter on a chapter column, else the latest."""
        row = self._row_at(index)
        if row is None:
            return None
        item = row.item
        column = index.column()
        if column == ForeshadowingModel.COL_PLANTED and item.planted_chapter is not None:
            return item.planted_chapter
        if column == ForeshadowingModel.COL_ADVANCED and item.advanced_chapters:
            return max(item.advanced_chapters)
        if column == ForeshadowingModel.COL_RESOLVED and item.resolved_chapter is not None:
            return item.resolved_chapter
        return row.latest_chapter()

    def _on_table_double_clicked(self, index: QModelIndex) -> None:
        chapter = self.chapter_for(index)
        if chapter is not None:
            self.chapter_requested.emit(chapter)

    def _on_table_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        row = self._row_at(current) if current.isValid() else None
        if row is None:
            self.detail.clear()
            return
        item = row.item
        lines = [item.id + tr("　") + item.description]
        status = tr(_STATUS_TEXT.get(item.status, item.status))
        scope = {"novel": "全书", "multi_volume": "跨卷", "volume": "本卷"}.get(item.scope or "", "")
        lines.append(
            tr("状态：{s}").format(s=status)
            + (tr("　范围：{x}").format(x=tr(scope)) if scope else "")
            + (tr("　故事线：{l}").format(l=item.storyline_id) if item.storyline_id else "")
        )
        if row.overdue_reason:
            lines.append(row.overdue_reason)
        if row.is_plan:
            lines.append(tr("只在第 {v} 卷的伏笔计划中，尚未写入正文。").format(v=row.plan_volume))
        for event in item.history:
            action = tr(_ACTION_TEXT.get(event.action, event.action))
            lines.append(
                tr("第 {n} 章 {a}").format(n=event.chapter, a=action)
                + (tr("：") + event.detail if event.detail else "")
            )
        self.detail.setPlainText("\n".join(lines))

    def _on_project_document_changed(self, path: str) -> None:
        if self.reader.is_foreshadowing(path):
            self.refresh()
