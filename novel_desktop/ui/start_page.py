"""The start page: the state-aware recommendation of ``/novel:start`` first, then 新建 / 打开 / 导入 and the
recent novels.

The recommendation is :func:`novel_desktop.pipeline.orchestrator.recommend` (through the project controller),
the same logic ``novel start`` prints: no novel → 创建新项目; the volume unfinished → 继续写作; the volume
written → 卷末回顾 / 规划新卷; plus what a quick start or a pause needs.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.ui.i18n import tr

COLUMN_WIDTH = 720


class StartPage(QScrollArea):
    """Scrolls on a small screen; the content is a centred column."""

    #: The recommended action ("create", "quick_start", "continue", "plan", "review").
    action_requested = Signal(str)
    new_requested = Signal()
    open_requested = Signal()
    import_requested = Signal()
    demo_requested = Signal()
    #: A recent novel was clicked: its path.
    recent_requested = Signal(str)

    def __init__(self, project: ProjectController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.action = "create"
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        page = QWidget()
        page.setObjectName("StartPage")
        self.setWidget(page)

        column = QWidget()
        column.setMaximumWidth(COLUMN_WIDTH)
        outer = QHBoxLayout(page)
        outer.setContentsMargins(24, 48, 24, 24)
        outer.addStretch(1)
        outer.addWidget(column, 3)
        outer.addStretch(1)

        v = QVBoxLayout(column)
        v.setSpacing(10)
        title = QLabel(tr("网文长篇创作"))
        title.setObjectName("StartTitle")
        self.subtitle = QLabel()
        self.subtitle.setObjectName("StartSubtitle")
        self.subtitle.setWordWrap(True)
        v.addWidget(title)
        v.addWidget(self.subtitle)
        v.addSpacing(14)

        next_title = QLabel(tr("下一步"))
        next_title.setObjectName("SectionTitle")
        v.addWidget(next_title)
        self.recommend_button = QPushButton()
        self.recommend_button.setObjectName("PrimaryAction")
        self.recommend_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.reason = QLabel()
        self.reason.setObjectName("StartSubtitle")
        self.reason.setWordWrap(True)
        v.addWidget(self.recommend_button)
        v.addWidget(self.reason)
        v.addSpacing(10)

        row = QHBoxLayout()
        row.setSpacing(10)
        self.new_button = QPushButton(tr("新建小说"))
        self.open_button = QPushButton(tr("打开小说"))
        self.import_button = QPushButton(tr("导入书稿"))
        self.import_button.setToolTip(tr("从 txt、docx 或 epub 书稿按章拆分，建成一部新小说"))
        self.demo_button = QPushButton(tr("打开示例小说"))
        self.demo_button.setToolTip(tr("打开一部写好 6 章的示例小说的副本，不需要 API 密钥就能看遍每个页面"))
        for button in (self.new_button, self.open_button, self.import_button, self.demo_button):
            button.setObjectName("SecondaryAction")
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            row.addWidget(button)
        row.addStretch(1)
        v.addLayout(row)
        v.addSpacing(18)

        recent_title = QLabel(tr("最近打开"))
        recent_title.setObjectName("SectionTitle")
        v.addWidget(recent_title)
        self.recent_list = QListWidget()
        self.recent_list.setObjectName("RecentList")
        self.recent_list.setCursor(Qt.CursorShape.PointingHandCursor)
        self.recent_list.setMinimumHeight(180)
        self.recent_empty = QLabel(tr("还没有打开过小说。"))
        self.recent_empty.setObjectName("StartSubtitle")
        v.addWidget(self.recent_list, 1)
        v.addWidget(self.recent_empty)
        v.addStretch(1)

        self.recommend_button.clicked.connect(self._on_recommend_clicked)
        self.new_button.clicked.connect(self.new_requested)
        self.open_button.clicked.connect(self.open_requested)
        self.import_button.clicked.connect(self.import_requested)
        self.demo_button.clicked.connect(self.demo_requested)
        self.recent_list.itemClicked.connect(self._on_recent_list_item_clicked)

    def refresh(self, recent: list[str]) -> None:
        """Show the recommendation for the open novel (or none) and the recent novels."""
        rec = self.project.recommendation()
        self.action = rec.action
        self.recommend_button.setText(tr(rec.label))
        self.reason.setText(tr(rec.reason))
        if self.project.is_open:
            status = self.project.status()
            self.subtitle.setText(
                tr("《{title}》 · 第 {volume} 卷 · 已写 {chapters} 章 · {chars} 字").format(
                    title=status.title, volume=status.current_volume, chapters=status.chapters,
                    chars=f"{status.total_chars:,}",
                )
            )  # fmt: skip
        else:
            self.subtitle.setText(tr("一卷一卷写长篇：大纲、续写、质量评审、故事线和伏笔，一处看全。"))
        self.recent_list.clear()
        current = str(self.project.path.resolve()) if self.project.path else ""
        for path in recent:
            p = Path(path)
            exists = p.exists()
            label = p.stem + ("" if exists else tr("（文件不存在）"))
            if path == current:
                label += tr("（已打开）")
            item = QListWidgetItem(f"{label}\n{p.parent}")
            item.setData(Qt.ItemDataRole.UserRole, path)
            item.setToolTip(path)
            if not exists:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
            self.recent_list.addItem(item)
        self.recent_list.setVisible(bool(recent))
        self.recent_empty.setVisible(not recent)

    def recent_paths(self) -> list[str]:
        return [
            str(self.recent_list.item(i).data(Qt.ItemDataRole.UserRole))
            for i in range(self.recent_list.count())
        ]

    def _on_recommend_clicked(self) -> None:
        self.action_requested.emit(self.action)

    def _on_recent_list_item_clicked(self, item: QListWidgetItem) -> None:
        path = item.data(Qt.ItemDataRole.UserRole)
        if path and Path(path).exists():
            self.recent_requested.emit(str(path))
