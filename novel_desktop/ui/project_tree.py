"""The project tree on the left: volumes → chapters (status icon, 字数), then 角色, 故事线, 世界规则, 伏笔.

:class:`ProjectTreeModel` is a plain :class:`QAbstractItemModel` over small Python nodes built from a few
bulk reads (chapter list, scores, a few JSON documents), so 500 chapters cost one query each, not 500;
labels, icons and tooltips are computed in ``data()`` only for the rows Qt actually paints.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QPointF,
    QRectF,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor, QFont, QIcon, QPainter, QPainterPath, QPen, QPixmap, QPolygonF
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QMenu, QTreeView, QVBoxLayout, QWidget

from novel_desktop.controllers.costs import CostTotals, chapter_costs, discarded_costs
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.controllers.reader import ChapterInfo, NovelReader
from novel_desktop.domain.gate import POLISH_AT
from novel_desktop.i18n import tr, tr_n
from novel_desktop.ui import theme
from novel_desktop.ui.field_drops import field_drops_paused

_ModelIndex = QModelIndex | QPersistentModelIndex

#: "第一章 …" / "第12章：…" at the start of a stored title repeats the number the tree already shows.
_CHAPTER_PREFIX = re.compile(r"^\s*第\s*[0-9〇零一二三四五六七八九十百千两]+\s*章[\s:：、.·—-]*")

#: Node kinds; ``kind`` + ``key`` say what double-clicking opens.
VOLUME, CHAPTER, SECTION, CHARACTER, STORYLINE, RULE, FORESHADOW = (
    "volume",
    "chapter",
    "section",
    "character",
    "storyline",
    "rule",
    "foreshadow",
)
#: Sections after the volumes, in order: (kind of their children, title).
SECTIONS = (
    (CHARACTER, "角色"),
    (STORYLINE, "故事线"),
    (RULE, "世界规则"),
    (FORESHADOW, "伏笔"),
)


@dataclass(eq=False)
class Node:
    kind: str
    label: str
    key: Any = None
    detail: str = ""
    tooltip: str = ""
    status: str = ""
    parent: Node | None = None
    children: list[Node] = field(default_factory=list)
    #: Children read only when first needed (the view expands the node, or code asks for the section).
    pending: Callable[[], list[Node]] | None = None

    def add(self, child: Node) -> Node:
        child.parent = self
        self.children.append(child)
        return child

    def row(self) -> int:
        return self.parent.children.index(self) if self.parent else 0


def chapter_label(info: ChapterInfo) -> str:
    title = _CHAPTER_PREFIX.sub("", info.title).strip()
    base = tr("第{n}章").format(n=info.number)
    return f"{base} {title}" if title else base


def chars_text(chars: int) -> str:
    return tr_n("{n}字", chars).format(n=f"{chars:,}")


def chapter_status(info: ChapterInfo, score: float | None, inflight: int | None) -> str:
    """The one status the icon shows, the most urgent first."""
    if info.number == inflight:
        return "inflight"
    if info.status in ("needs_rebuild", "stale"):
        return info.status
    if score is not None and score < POLISH_AT:
        return "low_score"
    return "committed"


def chapter_cost_text(cost: CostTotals | None, discarded: CostTotals | None = None) -> str:
    """A chapter's cost for its tooltip (every model call of it, revisions and re-judging included), and what
    of it went on early drafts thrown away (``discarded``)."""
    if cost is None or not cost.calls:
        return ""
    text = "\n" + tr_n("花费 ${c:.4f}（{n} 次调用，输入 {i} · 输出 {o} tokens）", cost.calls).format(
        c=cost.cost_usd, n=cost.calls, i=f"{cost.total_input_tokens:,}", o=f"{cost.output_tokens:,}"
    )
    if discarded is not None and discarded.calls:
        text += "\n" + tr("其中作废的预写 ${c:.4f}").format(c=discarded.cost_usd)
    return text


def inflight_label(phase: str, n: int) -> str:
    """The in-flight chapter's label by what it is doing (see ``ProjectTreeModel.inflight_phase``)."""
    if phase == "awaiting_author":
        return tr("第{n}章（待修改）").format(n=n)
    if phase == "paused":
        return tr("第{n}章（已暂停）").format(n=n)
    return tr("第{n}章（生成中）").format(n=n)


def _status_tooltip(status: str, score: float | None) -> str:
    text = {
        "committed": tr("已提交"),
        "needs_rebuild": tr("正文已修改，摘要和状态需要重建"),
        "stale": tr("正文与摘要和故事状态不一致（本章或前面的章节改过），需要重建"),
        "low_score": tr("评分偏低，建议修改"),
        "inflight": tr("正在生成（未提交）"),
        "inflight_running": tr("正在生成（未提交）"),
        "inflight_awaiting_author": tr("评审后交给你修改（未提交）：打开它修改后重新评审，或直接提交"),
        "inflight_paused": tr("已停下（未提交）：续写会从停下的地方接着做"),
        "planned": tr("已规划，尚未写作"),
    }.get(status, status)
    if score is not None:
        text += "\n" + tr("评分 {score:.2f}").format(score=score)
    return text


_ICONS: dict[str, QIcon] = {}


def status_icon(status: str) -> QIcon:
    """Small painted badges: no icon font is needed, and they look the same on every platform."""
    if status in _ICONS:
        return _ICONS[status]
    size = 32  # drawn at 2× and scaled down, so the badge stays sharp on HiDPI screens
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    p = QPainter(pixmap)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    white = QPen(
        QColor("white"), 3.4, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap, Qt.PenJoinStyle.RoundJoin
    )
    circle = QRectF(3, 3, size - 6, size - 6)
    if status in ("needs_rebuild", "stale"):
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor(theme.WARN))
        p.drawPolygon(QPolygonF([QPointF(16, 3), QPointF(30, 28), QPointF(2, 28)]))
        p.setPen(white)
        p.drawLine(QPointF(16, 11), QPointF(16, 19))
        p.drawPoint(QPointF(16, 24))
    elif status == "low_score":
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor(theme.BAD))
        p.drawEllipse(circle)
        p.setPen(white)
        p.drawLine(QPointF(16, 9), QPointF(16, 18))
        p.drawPoint(QPointF(16, 23))
    elif status == "inflight":
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor(theme.INFLIGHT))
        p.drawEllipse(circle)
        p.setBrush(QColor("white"))
        for x in (10, 16, 22):
            p.drawEllipse(QPointF(x, 16), 2.2, 2.2)
    elif status == "planned":
        p.setPen(QPen(QColor("#b9b4aa"), 2.4, Qt.PenStyle.DashLine))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawEllipse(circle)
    else:
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor(theme.OK))
        p.drawEllipse(circle)
        p.setPen(white)
        path = QPainterPath(QPointF(9.5, 16.5))
        path.lineTo(QPointF(14, 21))
        path.lineTo(QPointF(22.5, 11.5))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawPath(path)
    p.end()
    icon = QIcon(pixmap)
    _ICONS[status] = icon
    return icon


def volume_label(number: int, name: str) -> str:
    base = tr("第{n}卷").format(n=number)
    return f"{base} {name}" if name else base


class ProjectTreeModel(QAbstractItemModel):
    """Two columns: the name (with status icon) and the 字数 of chapters and volumes."""

    def __init__(self, project: ProjectController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.reader = NovelReader(project)
        self._root = Node(SECTION, "")
        #: What the chapter in flight is doing: "running", "awaiting_author" (the gate handed it back for
        #: 手动改) or "paused" (a stop, a failure, a quit: 续写 resumes it). The draft flows know.
        self.inflight_phase: Callable[[], str] = lambda: "running"

    # ------------------------------------------------------------------ building
    def reload(self) -> None:
        """Re-read everything the tree shows (a few bulk reads)."""
        self.beginResetModel()
        self._root = Node(SECTION, "")
        if self.project.is_open:
            self._build()
        self.endResetModel()

    def _build(self) -> None:
        p = self.project
        chapters = p.chapters()
        scores = p.chapter_scores()
        costs, discarded = chapter_costs(p), discarded_costs(p)
        inflight = self.reader.inflight_chapter()
        by_volume: dict[int, list[ChapterInfo]] = {}
        for info in chapters:
            by_volume.setdefault(info.volume, []).append(info)
        for number, name in p.volumes():
            infos = by_volume.get(number, [])
            total = sum(c.chars for c in infos)
            vol = self._root.add(
                Node(
                    VOLUME,
                    volume_label(number, name),
                    number,
                    chars_text(total) if infos else "",
                    tr("{count} 章，共 {chars} 字").format(count=len(infos), chars=f"{total:,}"),
                )
            )
            for info in infos:
                score = scores.get(info.number)
                status = chapter_status(info, score, inflight)
                vol.add(
                    Node(
                        CHAPTER,
                        chapter_label(info),
                        info.number,
                        chars_text(info.chars),
                        _status_tooltip(status, score)
                        + chapter_cost_text(costs.get(info.number), discarded.get(info.number)),
                        status,
                    )
                )
            if inflight and inflight not in {c.number for c in infos} and number == self._current_volume():
                phase = self.inflight_phase()
                vol.add(
                    Node(
                        CHAPTER,
                        inflight_label(phase, inflight),
                        inflight,
                        "",
                        _status_tooltip(f"inflight_{phase}", None),
                        "inflight",
                    )
                )
        for kind, title in SECTIONS:
            section = self._root.add(Node(SECTION, tr(title), kind))
            if kind == CHARACTER:
                # One card (a JSON document) per character: read when the section is opened, counted now.
                cards = self.project.documents("characters/active/")
                count = sum(1 for path in cards if path.endswith(".json"))
                section.detail = str(count) if count else ""
                section.pending = (lambda: self._section_children(CHARACTER)) if count else None
                continue
            for child in self._section_children(kind):
                section.add(child)
            section.detail = str(len(section.children)) if section.children else ""

    def _current_volume(self) -> int:
        return self.reader.current_volume()

    def _section_children(self, kind: str) -> list[Node]:
        reader = self.reader
        out: list[Node] = []
        if kind == CHARACTER:
            for path, data in reader.active_characters_json():
                name = str(data.get("name") or path.rsplit("/", 1)[-1][:-5])
                out.append(
                    Node(
                        CHARACTER, name, path, str(data.get("role") or ""), str(data.get("description") or "")
                    )
                )
        elif kind == STORYLINE:
            for line in reader.storylines_json():
                out.append(
                    Node(
                        STORYLINE,
                        str(line.get("name") or line.get("id")),
                        line.get("id"),
                        tr(str(line.get("status") or "")),
                        str(line.get("description") or ""),
                    )
                )
        elif kind == RULE:
            for rule in reader.world_rules_json():
                text = str(rule.get("rule") or "")
                short = text if len(text) <= 18 else text[:17] + "…"
                hard = rule.get("constraint_type") == "hard"
                out.append(Node(RULE, short, rule.get("id"), tr("硬") if hard else tr("软"), text))
        elif kind == FORESHADOW:
            for item in reader.global_foreshadowing_json():
                desc = str(item.get("description") or item.get("id"))
                short = desc if len(desc) <= 18 else desc[:17] + "…"
                status = str(item.get("status") or "")
                label = {"planted": tr("已埋"), "advanced": tr("推进中"), "resolved": tr("已回收")}
                out.append(Node(FORESHADOW, short, item.get("id"), label.get(status, status), desc))
        return out

    # ------------------------------------------------------------------ lookups
    def node(self, index: _ModelIndex) -> Node:
        if not index.isValid():
            return self._root
        node: Node = index.internalPointer()
        return node

    def chapter_index(self, number: int) -> QModelIndex:
        for vol in self._root.children:
            if vol.kind != VOLUME:
                continue
            for child in vol.children:
                if child.kind == CHAPTER and child.key == number:
                    return self.createIndex(child.row(), 0, child)
        return QModelIndex()

    def chapter_rows(self) -> list[tuple[str, str]]:
        """(label, 字数) of every chapter row, in order — what the author reads in the tree."""
        return [
            (c.label, c.detail)
            for vol in self._root.children
            if vol.kind == VOLUME
            for c in vol.children
            if c.kind == CHAPTER
        ]

    def section(self, kind: str) -> Node | None:
        node = next((n for n in self._root.children if n.kind == SECTION and n.key == kind), None)
        if node is not None and node.pending is not None:
            self.fetchMore(self.createIndex(node.row(), 0, node))
        return node

    def hasChildren(self, parent: _ModelIndex = QModelIndex()) -> bool:
        node = self.node(parent)
        return node.pending is not None or self.rowCount(parent) > 0

    def canFetchMore(self, parent: _ModelIndex) -> bool:
        return self.node(parent).pending is not None

    def fetchMore(self, parent: _ModelIndex) -> None:
        node = self.node(parent)
        load, node.pending = node.pending, None
        children = load() if load is not None else []
        if children:
            self.beginInsertRows(parent, 0, len(children) - 1)
            for child in children:
                node.add(child)
            self.endInsertRows()

    # ------------------------------------------------------------------ QAbstractItemModel
    def index(self, row: int, column: int, parent: _ModelIndex = QModelIndex()) -> QModelIndex:
        node = self.node(parent)
        if 0 <= row < len(node.children) and 0 <= column < 2:
            return self.createIndex(row, column, node.children[row])
        return QModelIndex()

    def parent(self, index: _ModelIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        node = self.node(index).parent
        if node is None or node is self._root:
            return QModelIndex()
        return self.createIndex(node.row(), 0, node)

    def rowCount(self, parent: _ModelIndex = QModelIndex()) -> int:
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self.node(parent).children)

    def columnCount(self, parent: _ModelIndex = QModelIndex()) -> int:
        return 2

    def data(self, index: _ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        node = self.node(index)
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return node.label if col == 0 else node.detail
        if role == Qt.ItemDataRole.DecorationRole and col == 0 and node.kind == CHAPTER:
            return status_icon(node.status)
        if role == Qt.ItemDataRole.ToolTipRole:
            return node.tooltip or None
        if role == Qt.ItemDataRole.ForegroundRole and col == 1:
            return QBrush(QColor(theme.MUTED))
        if role == Qt.ItemDataRole.TextAlignmentRole and col == 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.FontRole and node.kind in (VOLUME, SECTION) and col == 0:
            font = QFont()
            font.setBold(True)
            return font
        return None

    def flags(self, index: _ModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


class ProjectTree(QWidget):
    """The tree view; double-clicking asks the window to open a chapter, a view or a document."""

    chapter_requested = Signal(int)
    #: A view by name ("outline", "storylines", "foreshadowing", "world", "characters") and a volume (0: any).
    view_requested = Signal(str, int)
    #: A stored document to show read-only: its path and a tab title.
    document_requested = Signal(str, str)
    #: 修改…: a form's kind ("characters", "storylines", "world") and the item's key (slug, id; "" for all).
    edit_requested = Signal(str, str)
    #: 回滚到此章: remove every chapter after this one (the rollback flow confirms first).
    rollback_requested = Signal(int)
    #: 查看上下文… on a chapter: what each agent's prompt held (the context inspector).
    context_requested = Signal(int)

    def __init__(self, project: ProjectController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.model = ProjectTreeModel(project, self)
        self.view = QTreeView()
        self.view.setObjectName("ProjectTree")
        self.view.setModel(self.model)
        self.view.setHeaderHidden(True)
        self.view.setUniformRowHeights(True)  # lets Qt skip measuring 500 rows
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setExpandsOnDoubleClick(True)
        header = self.view.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)
        # activated is the platform's "open" gesture (double-click, or Enter), so one handler serves both.
        self.view.activated.connect(self._on_view_activated)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._on_view_context_menu_requested)

    @field_drops_paused()
    def reload(self) -> None:
        expanded = self._expanded_keys()
        current = self.model.node(self.view.currentIndex())
        current_key = (current.kind, current.key)
        self.model.reload()
        self._restore_expanded(expanded)
        if current_key[0] == CHAPTER:
            self.select_chapter(int(current_key[1]))

    def select_chapter(self, number: int) -> None:
        index = self.model.chapter_index(number)
        if index.isValid():
            self.view.setCurrentIndex(index)
            self.view.scrollTo(index)

    def _expanded_keys(self) -> set[tuple[str, Any]] | None:
        if self.model.rowCount() == 0:
            return None
        keys = set()
        for row in range(self.model.rowCount()):
            idx = self.model.index(row, 0)
            if self.view.isExpanded(idx):
                node = self.model.node(idx)
                keys.add((node.kind, node.key))
        return keys

    def _restore_expanded(self, keys: set[tuple[str, Any]] | None) -> None:
        current_volume = self.model.reader.current_volume()
        for row in range(self.model.rowCount()):
            idx = self.model.index(row, 0)
            node = self.model.node(idx)
            if keys is None:
                # First load: the current volume is open, the rest folded away.
                expand = node.kind == VOLUME and node.key == current_volume
            else:
                expand = (node.kind, node.key) in keys
            self.view.setExpanded(idx, expand)

    def _on_view_activated(self, index: QModelIndex) -> None:
        self.open_index(index)

    def edit_target(self, index: _ModelIndex) -> tuple[str, str] | None:
        """What 修改… edits for a row: the form's kind and the item's key; None for rows without a form."""
        node = self.model.node(index)
        kind = node.key if node.kind == SECTION else node.kind
        forms = {CHARACTER: "characters", STORYLINE: "storylines", RULE: "world"}
        if kind not in forms:
            return None
        key = "" if node.kind == SECTION else str(node.key or "")
        if node.kind == CHARACTER:
            key = key.rsplit("/", 1)[-1].removesuffix(".json")
        return forms[kind], key

    def _on_view_context_menu_requested(self, pos: QPoint) -> None:
        menu = self.context_menu(self.view.indexAt(pos))
        if menu is not None:
            menu.popup(self.view.viewport().mapToGlobal(pos))

    def context_menu(self, index: _ModelIndex) -> QMenu | None:
        """The row's menu: 修改… for a character, storyline or rule; 回滚到此章 for a committed chapter and
        查看上下文… for any chapter."""
        if self.project.readonly:
            return None
        node = self.model.node(index)
        target = self.edit_target(index)
        menu = QMenu(self)
        if target is not None:
            action = menu.addAction(tr("修改…"))
            action.triggered.connect(lambda _checked=False: self.edit_requested.emit(*target))
        elif node.kind == CHAPTER:
            number = int(node.key)
            if number in {c.number for c in self.project.chapters()}:
                action = menu.addAction(tr("回滚到此章…"))
                action.setObjectName("RollbackAction")
                action.triggered.connect(lambda _checked=False: self.rollback_requested.emit(number))
            context = menu.addAction(tr("查看上下文…"))
            context.setObjectName("ContextAction")
            context.triggered.connect(lambda _checked=False: self.context_requested.emit(number))
        else:
            menu.deleteLater()
            return None
        return menu

    def open_index(self, index: _ModelIndex) -> None:
        node = self.model.node(index)
        if node.kind == CHAPTER:
            self.chapter_requested.emit(int(node.key))
        elif node.kind == VOLUME:
            self.view_requested.emit("outline", int(node.key))
        elif node.kind == STORYLINE or (node.kind == SECTION and node.key == STORYLINE):
            self.view_requested.emit("storylines", 0)
        elif node.kind == FORESHADOW or (node.kind == SECTION and node.key == FORESHADOW):
            self.view_requested.emit("foreshadowing", 0)
        elif node.kind == RULE or (node.kind == SECTION and node.key == RULE):
            self.document_requested.emit("world/rules.md", tr("世界规则"))
        elif node.kind == CHARACTER:
            path = str(node.key)
            md = path[:-5] + ".md"
            self.document_requested.emit(md if self.project.document(md) else path, node.label)
