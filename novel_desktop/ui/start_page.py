"""The start page: the state-aware recommendation of ``/novel:start`` first, then 新建 / 打开 / 导入 and the
recent novels.

With no novel open it is the first-run guide instead: the three ways in (新建小说, 导入书稿, 打开示例小说),
each with a sentence on what happens next, and the provider setup (设置模型与密钥) that writing needs.

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
from novel_desktop.i18n import tr, tr_n, tr_phrase, tr_phrases

COLUMN_WIDTH = 720
#: The guide's cards (the window's theme styles the rest of the page by object name).
CARD_STYLE = """
QFrame#StartCard { background: white; border: 1px solid #e2ded5; border-radius: 8px; }
QLabel#StartCardTitle { font-size: 12pt; font-weight: bold; color: #2b2b2b; }
QLabel#StartCardText { color: #6b6b6b; }
"""


class StartPage(QScrollArea):
    """Scrolls on a small screen; the content is a centred column."""

    #: The recommended action ("create", "quick_start", "continue", "plan", "review").
    action_requested = Signal(str)
    new_requested = Signal()
    open_requested = Signal()
    import_requested = Signal()
    demo_requested = Signal()
    #: The provider setup (the settings dialog with 测试连接).
    settings_requested = Signal()
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
        outer.setContentsMargins(24, 32, 24, 24)
        outer.addStretch(1)
        outer.addWidget(column, 8)
        outer.addStretch(1)

        v = QVBoxLayout(column)
        v.setSpacing(10)
        title = QLabel(tr("网文长篇创作"))
        title.setObjectName("StartTitle")
        self.subtitle = QLabel()
        self.subtitle.setObjectName("StartSubtitle")
        self.subtitle.setWordWrap(True)
        self.subtitle.setTextFormat(Qt.TextFormat.PlainText)  # it shows the novel's title: never HTML
        page.setStyleSheet(CARD_STYLE)
        v.addWidget(title)
        v.addWidget(self.subtitle)
        v.addSpacing(14)

        # With no novel open: the first-run guide. Each way in is a card that says what happens next.
        self.guide = QWidget()
        self.guide.setObjectName("StartGuide")
        g = QVBoxLayout(self.guide)
        g.setContentsMargins(0, 0, 0, 0)
        g.setSpacing(10)
        guide_title = QLabel(tr("从这里开始"))
        guide_title.setObjectName("SectionTitle")
        g.addWidget(guide_title)
        self.guide_new_button, self.new_card = self._card(
            g,
            tr("新建小说"),
            tr(
                "从一个想法开始：起个书名，建好一个 .novel 文件；再照“下一步”的提示定下世界观、主角和第一卷大纲，一章章续写。"  # noqa: E501
            ),
            tr("新建小说…"),
            primary=True,
        )
        self.guide_import_button, self.import_card = self._card(
            g,
            tr("导入书稿"),
            tr(
                "已经写了一部分？导入 txt、md、docx 或 epub 书稿，按章节标题自动分卷分章，建成一部新小说，之后接着续写。"  # noqa: E501
            ),
            tr("导入书稿…"),
        )
        self.guide_demo_button, self.demo_card = self._card(
            g,
            tr("打开示例小说"),
            tr(
                "先看看写好的样子：已写 6 章，大纲、故事线、伏笔和质量报告都有内容。打开的是副本，随便改，不需要 API 密钥。"  # noqa: E501
            ),
            tr("打开示例小说"),
        )
        g.addSpacing(8)
        setup_title = QLabel(tr("续写之前"))
        setup_title.setObjectName("SectionTitle")
        g.addWidget(setup_title)
        self.settings_button, self.settings_card = self._card(
            g,
            tr("设置模型与密钥"),
            tr(
                "续写要调用大模型：选服务商（Anthropic、DeepSeek、Kimi、GLM、通义千问或兼容地址），填 API 密钥，点“测试连接”。连不上时会说清是密钥、余额、模型名还是网络的问题。"  # noqa: E501
            ),
            tr("设置…"),
        )
        existing_row = QHBoxLayout()
        existing_row.setSpacing(10)
        existing_label = QLabel(tr("已经有 .novel 文件？"))
        existing_label.setObjectName("StartSubtitle")
        self.guide_open_button = QPushButton(tr("打开小说"))
        self.guide_open_button.setObjectName("SecondaryAction")
        self.guide_open_button.setCursor(Qt.CursorShape.PointingHandCursor)
        existing_row.addWidget(existing_label)
        existing_row.addWidget(self.guide_open_button)
        existing_row.addStretch(1)
        g.addSpacing(4)
        g.addLayout(existing_row)
        v.addWidget(self.guide)

        # With a novel open: the recommended next step, then the other ways in as one row.
        self.workspace = QWidget()
        w = QVBoxLayout(self.workspace)
        w.setContentsMargins(0, 0, 0, 0)
        w.setSpacing(10)
        next_title = QLabel(tr("下一步"))
        next_title.setObjectName("SectionTitle")
        w.addWidget(next_title)
        self.recommend_button = QPushButton()
        self.recommend_button.setObjectName("PrimaryAction")
        self.recommend_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.reason = QLabel()
        self.reason.setTextFormat(Qt.TextFormat.PlainText)
        self.reason.setObjectName("StartSubtitle")
        self.reason.setWordWrap(True)
        w.addWidget(self.recommend_button)
        w.addWidget(self.reason)
        w.addSpacing(10)

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
        w.addLayout(row)
        v.addWidget(self.workspace)
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
        self.guide_new_button.clicked.connect(self.new_requested)
        self.guide_open_button.clicked.connect(self.open_requested)
        self.guide_import_button.clicked.connect(self.import_requested)
        self.guide_demo_button.clicked.connect(self.demo_requested)
        self.settings_button.clicked.connect(self.settings_requested)
        self.recent_list.itemClicked.connect(self._on_recent_list_item_clicked)

    def refresh(self, recent: list[str]) -> None:
        """Show the recommendation for the open novel (or none) and the recent novels."""
        rec = self.project.recommendation()
        self.action = rec.action
        self.recommend_button.setText(tr_phrase(rec.label_phrase))
        reason = tr_phrases(rec.reason_phrases)
        if rec.action == "adopt":  # what the step does, before the author clicks it
            reason += "\n" + tr(
                "逐章分析书稿，归纳人物、设定、故事线、伏笔和文风，逐项确认后就能续写；开始前先显示费用。"
            )
        self.reason.setText(reason)
        self.guide.setVisible(not self.project.is_open)
        self.workspace.setVisible(self.project.is_open)
        if self.project.is_open:
            status = self.project.status()
            # /novel:status at a glance: where the novel is, how good it is, what is still open.
            parts = [
                tr("《{title}》 · 第 {volume} 卷 · 已写 {chapters} 章 · {chars} 字").format(
                    title=status.title, volume=status.current_volume, chapters=status.chapters,
                    chars=f"{status.total_chars:,}",
                )
            ]  # fmt: skip
            if status.mean_score is not None:
                parts.append(tr("平均分 {score:.2f}").format(score=status.mean_score))
            parts.append(tr("未回收伏笔 {n}").format(n=status.open_foreshadowing))
            if status.stale_chapters:
                parts.append(
                    tr_n("{n} 章待重建", len(status.stale_chapters)).format(n=len(status.stale_chapters))
                )
            self.subtitle.setText(" · ".join(parts))
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

    def _card(
        self, layout: QVBoxLayout, title: str, text: str, button_text: str, *, primary: bool = False
    ) -> tuple[QPushButton, QFrame]:
        """A bordered card: a title, what this way in does, and its button on the right."""
        card = QFrame()
        card.setObjectName("StartCard")
        h = QHBoxLayout(card)
        h.setContentsMargins(18, 14, 18, 14)
        h.setSpacing(18)
        texts = QVBoxLayout()
        texts.setSpacing(4)
        heading = QLabel(title)
        heading.setObjectName("StartCardTitle")
        body = QLabel(text)
        body.setObjectName("StartCardText")
        body.setWordWrap(True)
        texts.addWidget(heading)
        texts.addWidget(body)
        h.addLayout(texts, 1)
        button = QPushButton(button_text)
        button.setObjectName("PrimaryAction" if primary else "SecondaryAction")
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        button.setMinimumWidth(132)
        h.addWidget(button, 0, Qt.AlignmentFlag.AlignVCenter)
        layout.addWidget(card)
        return button, card

    def guide_texts(self) -> list[str]:
        """The guide cards' titles and explanations, top to bottom (what a newcomer reads)."""
        texts = []
        for card in (self.new_card, self.import_card, self.demo_card, self.settings_card):
            texts += [label.text() for label in card.findChildren(QLabel)]
        return texts

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
