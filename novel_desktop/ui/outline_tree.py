"""The left of the outline view: a tree of volumes and their chapters (number, title, 字数, score, whether a
contract exists, written or planned)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QFont
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem, QWidget

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.controllers.reader import ChapterPlan
from novel_desktop.i18n import tr
from novel_desktop.ui.contract_form import VERDICT_FAIL, VERDICT_NONE

#: Columns of the tree.
COL_NUMBER, COL_TITLE, COL_CHARS, COL_SCORE, COL_CONTRACT, COL_STATE = range(6)
#: Item data: ("volume", n) or ("chapter", n) under UserRole of the number column.
KIND_ROLE = Qt.ItemDataRole.UserRole + 1
NUMBER_ROLE = Qt.ItemDataRole.UserRole


class OutlineTree(QTreeWidget):
    """Volumes (top level) and their chapters."""

    def __init__(self, project: ProjectController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.setObjectName("OutlineTree")
        self.setHeaderLabels([tr("章"), tr("标题"), tr("字数"), tr("评分"), tr("契约"), tr("状态")])
        self.setUniformRowHeights(True)
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(COL_TITLE, QHeaderView.ResizeMode.Stretch)
        self.setToolTip(tr("双击打开章节"))

    @staticmethod
    def kind(item: QTreeWidgetItem | None) -> tuple[str, int] | None:
        if item is None:
            return None
        return str(item.data(COL_NUMBER, KIND_ROLE)), int(item.data(COL_NUMBER, NUMBER_ROLE))

    def volume_item(self, volume: int) -> QTreeWidgetItem | None:
        for index in range(self.topLevelItemCount()):
            item = self.topLevelItem(index)
            if item is not None and self.kind(item) == ("volume", volume):
                return item
        return None

    def chapter_item(self, volume: int, chapter: int) -> QTreeWidgetItem | None:
        parent = self.volume_item(volume)
        for index in range(parent.childCount() if parent else 0):
            item = parent.child(index) if parent else None
            if item is not None and self.kind(item) == ("chapter", chapter):
                return item
        return None

    def fill(self, volumes: list[tuple[int, str, list[ChapterPlan], set[int]]], current: int) -> None:
        """Rebuild from (volume, its name, its chapters, its contracted chapters); ``current`` expanded."""
        self.blockSignals(True)
        self.clear()
        bold = QFont(self.font())
        bold.setBold(True)
        for volume, name, plans, contracts in volumes:
            top = QTreeWidgetItem()
            top.setText(COL_NUMBER, tr("第 {n} 卷").format(n=volume))
            top.setText(COL_TITLE, name)
            top.setData(COL_NUMBER, KIND_ROLE, "volume")
            top.setData(COL_NUMBER, NUMBER_ROLE, volume)
            written = sum(1 for p in plans if p.info is not None)
            # A count, the sentence in its tip: the column as narrow as a chapter's 已写, in English too.
            top.setText(COL_STATE, f"{written}/{len(plans)}")
            top.setToolTip(COL_STATE, tr("{w}/{n} 章已写").format(w=written, n=len(plans)))
            top.setFirstColumnSpanned(False)
            for column in range(6):
                top.setFont(column, bold)
            self.addTopLevelItem(top)
            for plan in plans:
                top.addChild(self._chapter_item(plan, plan.number in contracts))
            top.setExpanded(volume == current)
        self.blockSignals(False)

    def _chapter_item(self, plan: ChapterPlan, has_contract: bool) -> QTreeWidgetItem:
        item = QTreeWidgetItem()
        item.setText(COL_NUMBER, str(plan.number))
        item.setData(COL_NUMBER, KIND_ROLE, "chapter")
        item.setData(COL_NUMBER, NUMBER_ROLE, plan.number)
        item.setText(COL_TITLE, plan.title or tr("（无标题）"))
        right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        item.setTextAlignment(COL_NUMBER, right)
        item.setText(COL_CONTRACT, "✓" if has_contract else "")
        item.setTextAlignment(COL_CONTRACT, Qt.AlignmentFlag.AlignCenter)
        if plan.info is not None:
            item.setText(COL_CHARS, f"{plan.info.chars:,}")
            item.setTextAlignment(COL_CHARS, right)
            item.setText(COL_STATE, tr("已写"))
            evaluation = self.project.evaluation(plan.number) or {}
            overall = evaluation.get("overall")
            if isinstance(overall, int | float):
                item.setText(COL_SCORE, f"{overall:.2f}")
                item.setTextAlignment(COL_SCORE, Qt.AlignmentFlag.AlignCenter)
                if overall < 3.0:
                    item.setForeground(COL_SCORE, QBrush(VERDICT_FAIL))
        else:
            # Not written yet: grey, so planned chapters read apart from finished ones.
            for column in range(6):
                item.setForeground(column, QBrush(VERDICT_NONE))
            # Its 字数 cell stays empty (a planned chapter's row is grey and says 计划 in the last column).
            item.setText(COL_STATE, tr("计划") if plan.section else tr("未写"))
        tip = [tr("第 {n} 章 {t}").format(n=plan.number, t=plan.title)]
        if plan.storyline_id:
            tip.append(tr("故事线：{s}").format(s=plan.storyline_id))
        if plan.pov:
            tip.append(tr("视角：{p}").format(p=plan.pov))
        if not plan.section:
            tip.append(tr("大纲里没有这一章"))
        item.setToolTip(COL_TITLE, "\n".join(tip))
        return item

    def chapter_rows(self, volume: int) -> list[tuple[str, str, str, str]]:
        """What the tree shows for ``volume``'s chapters, row by row (number, title, 字数, score)."""
        parent = self.volume_item(volume)
        rows = []
        for index in range(parent.childCount() if parent else 0):
            item = parent.child(index) if parent else None
            if item is not None:
                rows.append((item.text(0), item.text(1), item.text(2), item.text(3)))
        return rows
