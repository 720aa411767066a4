"""卷大纲与章节契约: the volume outline and each chapter's contract side by side, both editable.

Left, the volume's chapters (outline sections, written chapters and contracts, with 字数 and score); middle,
the outline Markdown; right, the selected chapter's contract as a form (:mod:`novel_desktop.ui.contract_form`)
whose objectives carry the judge's verdict. Everything is read and written through the
:class:`NovelReader` over the ProjectController.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.controllers.reader import NovelReader
from novel_desktop.domain.outline import outline_sections, section_title
from novel_desktop.i18n import tr
from novel_desktop.ui import alerts
from novel_desktop.ui.contract_form import VERDICT_FAIL, VERDICT_NONE, ContractForm

# ---------------------------------------------------------------------------------------------- the view


class OutlineView(QWidget):
    """The volume outline (middle) and the selected chapter's contract (right) beside the chapter list."""

    chapter_requested = Signal(int)
    #: 修改大纲与契约…: the volume plan's form (volume, the selected chapter or 0), saved to the changelog.
    plan_edit_requested = Signal(int, int)

    #: Columns of the chapter list.
    COL_NUMBER, COL_TITLE, COL_CHARS, COL_SCORE = range(4)

    def __init__(self, project: ProjectController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.reader = NovelReader(project)
        self.volume = 1
        self._headings: tuple[tuple[int, str], ...] = ()
        self._outline_dirty = False
        self._saving = False

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        layout.addWidget(self.splitter)

        # Left: the chapter list.
        self.chapter_list = QTreeWidget()
        self.chapter_list.setRootIsDecorated(False)
        self.chapter_list.setHeaderLabels([tr("章"), tr("标题"), tr("字数"), tr("评分")])
        self.chapter_list.setUniformRowHeights(True)
        header = self.chapter_list.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(self.COL_TITLE, QHeaderView.ResizeMode.Stretch)
        self.chapter_list.currentItemChanged.connect(self._on_chapter_list_current_changed)
        self.chapter_list.itemDoubleClicked.connect(self._on_chapter_list_double_clicked)
        self.chapter_list.setToolTip(tr("双击打开章节"))
        self.splitter.addWidget(self.chapter_list)

        # Middle: the outline editor, or how to get an outline.
        self.outline_stack = QStackedWidget()
        editor_box = QWidget()
        editor_layout = QVBoxLayout(editor_box)
        editor_layout.setContentsMargins(0, 0, 0, 0)
        self.outline_heading = QLabel()
        self.outline_heading.setTextFormat(Qt.TextFormat.PlainText)  # may show the novel's names
        self.outline_heading.setFont(self._heading_font())
        editor_layout.addWidget(self.outline_heading)
        self.outline_edit = QPlainTextEdit()
        self.outline_edit.setTabChangesFocus(False)
        self.outline_edit.textChanged.connect(self._on_outline_edit_text_changed)
        editor_layout.addWidget(self.outline_edit, 1)
        outline_bar = QHBoxLayout()
        self.outline_state = QLabel()
        self.outline_state.setStyleSheet("color: #666;")
        self.save_outline_button = QPushButton(tr("保存"))
        self.save_outline_button.setToolTip(tr("保存大纲（Ctrl+S）"))
        self.save_outline_button.clicked.connect(self.save_outline)
        self.plan_edit_button = QPushButton(tr("修改大纲与契约…"))
        self.plan_edit_button.setToolTip(tr("用表单修改本卷大纲和章节契约，记入变更日志，自指定章节起生效"))
        self.plan_edit_button.clicked.connect(
            lambda _checked=False: self.plan_edit_requested.emit(self.volume, self.selected_chapter() or 0)
        )
        outline_bar.addWidget(self.outline_state, 1)
        outline_bar.addWidget(self.plan_edit_button)
        outline_bar.addWidget(self.save_outline_button)
        editor_layout.addLayout(outline_bar)
        QShortcut(QKeySequence.StandardKey.Save, editor_box, self.save_outline).setContext(
            Qt.ShortcutContext.WidgetWithChildrenShortcut  # PySide6 drops the constructor's context=
        )
        self.outline_empty = self._empty_page(
            tr("本卷还没有大纲"),
            tr(
                "大纲是 Markdown，每章一节，以「## 第N章 标题」开头，下面可写 Storyline、POV、Location、"
                "Conflict 等要点。\n\n可以在「规划」中让 PlotArchitect 生成本卷大纲，"
                "或用命令行 novel outline set 导入手写的大纲，也可以直接在这里开始写。"
            ),
            tr("开始编写大纲"),
            self._start_outline,
        )
        self.outline_stack.addWidget(self.outline_empty)
        self.outline_stack.addWidget(editor_box)
        self.splitter.addWidget(self.outline_stack)

        # Right: the contract form, or how a contract comes about.
        self.contract_stack = QStackedWidget()
        self.contract_form = ContractForm(project)
        self.contract_empty_title = QLabel()
        self.contract_empty = self._empty_page(
            "",
            tr(
                "章节契约写明本章的前置条件、目标、后置条件和验收标准，QualityJudge 按它验收。\n\n"
                "续写本章前，PlotArchitect 会根据大纲生成契约；也可以现在新建一份手动填写。"
            ),
            tr("新建契约"),
            self._new_contract,
            title_label=self.contract_empty_title,
        )
        self.no_chapter_page = self._empty_page(
            tr("没有选中章节"), tr("在左侧选择一章，查看并编辑它的契约。"), None, None
        )
        self.contract_stack.addWidget(self.no_chapter_page)
        self.contract_stack.addWidget(self.contract_empty)
        self.contract_stack.addWidget(self.contract_form)
        self.splitter.addWidget(self.contract_stack)

        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setStretchFactor(2, 1)
        self.splitter.setSizes([260, 560, 620])

        project.document_changed.connect(self._on_project_document_changed)
        project.chapters_changed.connect(self._on_project_chapters_changed)
        if project.is_open:
            self.show_volume(self.reader.current_volume())

    @staticmethod
    def _heading_font() -> QFont:
        font = QFont()
        font.setPointSizeF(font.pointSizeF() * 1.2)
        font.setBold(True)
        return font

    def _empty_page(
        self,
        title: str,
        text: str,
        button_text: str | None,
        on_click: Any,
        *,
        title_label: QLabel | None = None,
    ) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(24, 24, 24, 24)
        layout.addStretch(1)
        heading = title_label or QLabel(title)
        heading.setFont(self._heading_font())
        heading.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(heading)
        body = QLabel(text)
        body.setWordWrap(True)
        body.setAlignment(Qt.AlignmentFlag.AlignCenter)
        body.setStyleSheet("color: #555;")
        layout.addWidget(body)
        if button_text:
            button = QPushButton(button_text)
            button.clicked.connect(on_click)
            row = QHBoxLayout()
            row.addStretch(1)
            row.addWidget(button)
            row.addStretch(1)
            layout.addLayout(row)
        layout.addStretch(2)
        return page

    # ------------------------------------------------------------------ public
    def show_volume(self, volume: int) -> None:
        """Show ``volume``; unsaved contract or outline edits of the current one are settled first."""
        if volume == self.volume:
            self.refresh()
            return
        self._settle_contract(lambda: self._settle_outline(lambda: self._open_volume(volume)))

    def _open_volume(self, volume: int) -> None:
        self.volume = volume
        self.refresh()

    def refresh(self) -> None:
        """Re-read the outline, the chapter list and the selected contract from the project."""
        if not self.project.is_open:
            return
        outline = self.reader.outline(self.volume)
        titles = dict(self.project.volumes())
        name = titles.get(self.volume, "")
        self.outline_heading.setText(
            tr("第 {n} 卷大纲").format(n=self.volume) + (f" · {name}" if name else "")
        )
        self.outline_edit.blockSignals(True)
        self.outline_edit.setPlainText(outline or "")
        self.outline_edit.blockSignals(False)
        self._set_outline_dirty(False)
        self.outline_stack.setCurrentIndex(1 if outline else 0)
        self._rebuild_chapter_list(outline or "")

    def selected_chapter(self) -> int | None:
        item = self.chapter_list.currentItem()
        return int(item.data(self.COL_NUMBER, Qt.ItemDataRole.UserRole)) if item else None

    def select_chapter(self, chapter: int) -> None:
        for index in range(self.chapter_list.topLevelItemCount()):
            item = self.chapter_list.topLevelItem(index)
            if item is not None and item.data(self.COL_NUMBER, Qt.ItemDataRole.UserRole) == chapter:
                self.chapter_list.setCurrentItem(item)
                return

    def save_outline(self) -> None:
        text = self.outline_edit.toPlainText()
        self._saving = True
        try:
            self.reader.save_outline(self.volume, text)
        finally:
            self._saving = False
        self._set_outline_dirty(False)
        self.outline_state.setText(tr("大纲已保存"))

    # ------------------------------------------------------------------ chapter list
    def _rebuild_chapter_list(self, outline: str) -> None:
        current = self.selected_chapter()
        plans = self.reader.chapters(self.volume, outline)
        self._headings = tuple((p.number, p.title) for p in plans if p.section)
        self.chapter_list.blockSignals(True)
        self.chapter_list.clear()
        for plan in plans:
            item = QTreeWidgetItem()
            item.setText(self.COL_NUMBER, str(plan.number))
            item.setData(self.COL_NUMBER, Qt.ItemDataRole.UserRole, plan.number)
            item.setText(self.COL_TITLE, plan.title or tr("（无标题）"))
            item.setTextAlignment(
                self.COL_NUMBER, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
            )
            if plan.info is not None:
                item.setText(self.COL_CHARS, f"{plan.info.chars:,}")
                item.setTextAlignment(
                    self.COL_CHARS, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                )
                evaluation = self.project.evaluation(plan.number) or {}
                overall = evaluation.get("overall")
                if isinstance(overall, int | float):
                    item.setText(self.COL_SCORE, f"{overall:.2f}")
                    item.setTextAlignment(self.COL_SCORE, Qt.AlignmentFlag.AlignCenter)
                    if overall < 3.0:
                        item.setForeground(self.COL_SCORE, QBrush(VERDICT_FAIL))
            else:
                # Not written yet: grey, so planned chapters read apart from finished ones.
                for column in range(4):
                    item.setForeground(column, QBrush(VERDICT_NONE))
                item.setText(self.COL_CHARS, tr("未写"))
            tip = [tr("第 {n} 章 {t}").format(n=plan.number, t=plan.title)]
            if plan.storyline_id:
                tip.append(tr("故事线：{s}").format(s=plan.storyline_id))
            if plan.pov:
                tip.append(tr("视角：{p}").format(p=plan.pov))
            if not plan.section:
                tip.append(tr("大纲里没有这一章"))
            item.setToolTip(self.COL_TITLE, "\n".join(tip))
            self.chapter_list.addTopLevelItem(item)
        self.chapter_list.blockSignals(False)
        if current is not None:
            self.select_chapter(current)
        if self.chapter_list.currentItem() is None and plans:
            # Start on the chapter about to be written: that is the contract the author most likely checks.
            next_chapter = int(self.project.checkpoint().get("last_completed_chapter") or 0) + 1
            target = next((p.number for p in plans if p.number >= next_chapter), plans[0].number)
            self.select_chapter(target)
        if self.chapter_list.currentItem() is None:
            self.contract_stack.setCurrentWidget(self.no_chapter_page)
        elif current is None or self.selected_chapter() != current or not self.contract_form.dirty:
            self._show_contract(self.selected_chapter())

    def chapter_rows(self) -> list[tuple[str, str, str, str]]:
        """What the chapter list shows, row by row (number, title, 字数, score)."""
        rows = []
        for index in range(self.chapter_list.topLevelItemCount()):
            item = self.chapter_list.topLevelItem(index)
            if item is not None:
                rows.append((item.text(0), item.text(1), item.text(2), item.text(3)))
        return rows

    def _on_chapter_list_current_changed(
        self, current: QTreeWidgetItem | None, previous: QTreeWidgetItem | None
    ) -> None:
        if current is None:
            self.contract_stack.setCurrentWidget(self.no_chapter_page)
            return
        chapter = int(current.data(self.COL_NUMBER, Qt.ItemDataRole.UserRole))
        if self.contract_form.dirty and chapter != self.contract_form.chapter:
            # Stay on the edited chapter until the author has decided what happens to the edits.
            self.chapter_list.blockSignals(True)
            if previous is not None:
                self.chapter_list.setCurrentItem(previous)
            self.chapter_list.blockSignals(False)
            self._settle_contract(lambda: self.select_chapter(chapter))
            return
        self._show_contract(chapter)

    def _on_chapter_list_double_clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        self.chapter_requested.emit(int(item.data(self.COL_NUMBER, Qt.ItemDataRole.UserRole)))

    def _settle_contract(self, then: Callable[[], None]) -> None:
        """Run ``then`` once unsaved contract edits are saved or thrown away; 取消 keeps them and stays."""
        if not self.contract_form.dirty:
            then()
            return
        chapter = self.contract_form.chapter

        def answered(choice: alerts.SaveChoice) -> None:
            if choice == "cancel" or (choice == "save" and not self.contract_form.save()):
                return
            if choice == "discard" and chapter is not None:
                self._show_contract(chapter)  # reloads the stored contract: the form is clean again
            then()

        alerts.save_changes(
            self,
            tr("未保存的契约"),
            tr("第 {n} 章的契约有未保存的修改。要保存吗？").format(n=chapter),
            answered,
        )

    def _settle_outline(self, then: Callable[[], None]) -> None:
        """Run ``then`` once unsaved outline edits are saved or thrown away; 取消 keeps them and stays."""
        if not self._outline_dirty:
            then()
            return

        def answered(choice: alerts.SaveChoice) -> None:
            if choice == "cancel":
                return
            if choice == "save":
                self.save_outline()
            else:
                self._set_outline_dirty(False)
            then()

        alerts.save_changes(
            self,
            tr("未保存的大纲"),
            tr("第 {n} 卷的大纲有未保存的修改。要保存吗？").format(n=self.volume),
            answered,
        )

    # ------------------------------------------------------------------ contract
    def _show_contract(self, chapter: int | None) -> None:
        if chapter is None:
            self.contract_stack.setCurrentWidget(self.no_chapter_page)
            return
        data = self.reader.contract_json(self.volume, chapter)
        if data is None:
            self.contract_empty_title.setText(tr("第 {n} 章还没有契约").format(n=chapter))
            self.contract_stack.setCurrentWidget(self.contract_empty)
            self.contract_form.chapter = chapter
            self.contract_form.dirty = False
            return
        try:
            self.contract_form.load(self.volume, chapter, data)
        except ValueError as exc:  # pydantic's ValidationError
            # A contract that no longer parses is shown as empty with the problem, never silently dropped.
            self.contract_form.load(self.volume, chapter, {})
            self.contract_form.error_label.setText(
                tr("契约文件无法解析：{e}").format(e=str(exc).splitlines()[0])
            )
            self.contract_form.error_label.show()
        self.contract_stack.setCurrentWidget(self.contract_form)

    def _new_contract(self) -> None:
        chapter = self.selected_chapter()
        if chapter is None:
            return
        plan = next(
            (
                p
                for p in self.reader.chapters(self.volume, self.outline_edit.toPlainText())
                if p.number == chapter
            ),
            None,
        )
        self.contract_form.load(self.volume, chapter, {}, storyline_hint=plan.storyline_id if plan else None)
        self.contract_form._set_dirty(True)
        self.contract_stack.setCurrentWidget(self.contract_form)

    # ------------------------------------------------------------------ outline
    def _start_outline(self) -> None:
        template = tr(
            "# 第 {v} 卷\n\n## 第 1 章 \n- **Storyline**: \n- **POV**: \n- **Conflict**: \n"
        ).format(v=self.volume)
        self.outline_edit.setPlainText(template)
        self.outline_stack.setCurrentIndex(1)
        self.outline_edit.setFocus()

    def _on_outline_edit_text_changed(self) -> None:
        self._set_outline_dirty(True)
        text = self.outline_edit.toPlainText()
        sections = outline_sections(text)
        headings = tuple((n, section_title(s)) for n, s in sorted(sections.items()))
        # Re-parse on every edit but rebuild the list only when a heading changed, so typing stays smooth.
        if headings != self._headings:
            self._rebuild_chapter_list(text)

    def _set_outline_dirty(self, dirty: bool) -> None:
        self._outline_dirty = dirty
        self.outline_state.setText(tr("大纲有未保存的修改") if dirty else "")

    # ------------------------------------------------------------------ project signals
    def _on_project_document_changed(self, path: str) -> None:
        if self._saving or not path.startswith(self.reader.volume_prefix(self.volume)):
            return
        if path.endswith("outline.md") and self._outline_dirty:
            return  # never overwrite the author's unsaved outline with a pipeline write
        if path.endswith("outline.md"):
            self.refresh()
        else:
            self._rebuild_chapter_list(self.outline_edit.toPlainText())

    def _on_project_chapters_changed(self) -> None:
        self._rebuild_chapter_list(self.outline_edit.toPlainText())
