"""卷大纲与章节契约: the volume outline and each chapter's contract side by side, both as forms.

Left, a tree of volumes and their chapters (:mod:`novel_desktop.ui.outline_tree`: 字数, score, contract,
written or planned); middle, the volume's header and the selected chapter's outline section as a form
(:mod:`novel_desktop.ui.outline_form`; the outline stays Markdown, written back changing only the edited
lines, exported with 导出 Markdown…); right, the chapter's contract as a form
(:mod:`novel_desktop.ui.contract_form`) whose objectives carry the judge's verdict.
Everything is read and written through the :class:`NovelReader`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.controllers.reader import NovelReader
from novel_desktop.domain.outline_form import add_section, next_chapter_number
from novel_desktop.i18n import tr
from novel_desktop.ui import alerts
from novel_desktop.ui.contract_form import ContractForm
from novel_desktop.ui.outline_form import OutlineForm
from novel_desktop.ui.outline_sections import SectionTools
from novel_desktop.ui.outline_tree import OutlineTree

# ---------------------------------------------------------------------------------------------- the view


class OutlineView(QWidget):
    """The volume/chapter tree, the outline forms (middle) and the selected chapter's contract (right)."""

    chapter_requested = Signal(int)
    #: 修改大纲与契约…: the volume plan's form (volume, the selected chapter or 0), saved to the changelog.
    plan_edit_requested = Signal(int, int)

    def __init__(self, project: ProjectController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.reader = NovelReader(project)
        self.volume = 1
        #: The volume's outline as stored (or as started here, before its first save).
        self._outline = ""
        self._outline_dirty = False
        self._saving = False
        self._markdown_dialog: QDialog | None = None

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        layout.addWidget(self.splitter)

        # Left: volumes and their chapters.
        self.chapter_list = OutlineTree(project)
        self.chapter_list.currentItemChanged.connect(self._on_chapter_list_current_changed)
        self.chapter_list.itemDoubleClicked.connect(self._on_chapter_list_double_clicked)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.chapter_list, 1)
        section_row = QHBoxLayout()
        left_layout.addLayout(section_row)
        self.splitter.addWidget(left)

        # Middle: the outline as forms, or how to get an outline.
        self.outline_stack = QStackedWidget()
        editor_box = QWidget()
        editor_layout = QVBoxLayout(editor_box)
        editor_layout.setContentsMargins(0, 0, 0, 0)
        self.outline_heading = QLabel()
        self.outline_heading.setTextFormat(Qt.TextFormat.PlainText)  # may show the novel's names
        self.outline_heading.setFont(self._heading_font())
        editor_layout.addWidget(self.outline_heading)
        self.form = OutlineForm()
        self.form.edited.connect(lambda: self._set_outline_dirty(True))
        editor_layout.addWidget(self.form, 1)
        tools = QHBoxLayout()
        self.add_chapter_button = QPushButton(tr("添加章节"))
        self.add_chapter_button.setToolTip(tr("在本卷大纲的最后一章之后加一节"))
        self.add_chapter_button.clicked.connect(self.add_chapter)
        self.markdown_button = QPushButton(tr("查看 Markdown"))
        self.markdown_button.setToolTip(tr("只读查看本卷大纲的 Markdown 原文"))
        self.markdown_button.clicked.connect(self.show_markdown)
        self.export_button = QPushButton(tr("导出 Markdown…"))
        self.export_button.setToolTip(tr("把本卷大纲存成 Markdown 文件"))
        self.export_button.clicked.connect(lambda _checked=False: self.export_markdown())
        tools.addWidget(self.add_chapter_button)
        self.sections = SectionTools(self, section_row)  # 删除本节 / 上移 / 下移, under the tree
        tools.addStretch(1)
        tools.addWidget(self.markdown_button)
        tools.addWidget(self.export_button)
        editor_layout.addLayout(tools)
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
                "大纲每章一节：标题、故事线、视角、地点、冲突等要点。\n\n可以在「规划」中让 PlotArchitect "
                "生成本卷大纲，或用命令行 novel outline set 导入手写的大纲，也可以直接在这里开始写。"
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
        self.splitter.setSizes([380, 580, 600])

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
        """Re-read the outline, the tree and the selected contract from the project."""
        if not self.project.is_open:
            return
        self._outline = self.reader.outline(self.volume) or ""
        name = dict(self.project.volumes()).get(self.volume, "")
        self.outline_heading.setText(
            tr("第 {n} 卷大纲").format(n=self.volume) + (f" · {name}" if name else "")
        )
        self._set_outline_dirty(False)
        self.outline_stack.setCurrentIndex(1 if self._outline else 0)
        self._rebuild_chapter_list()

    def outline_text(self) -> str:
        """The volume's outline as the forms show it (unsaved edits included)."""
        return self.form.apply(self._outline)

    def selected_chapter(self) -> int | None:
        kind = OutlineTree.kind(self.chapter_list.currentItem())
        return kind[1] if kind and kind[0] == "chapter" else None

    def select_chapter(self, chapter: int) -> None:
        item = self.chapter_list.chapter_item(self.volume, chapter)
        if item is not None:
            self.chapter_list.setCurrentItem(item)

    def save_outline(self) -> None:
        """Write the forms back into the volume's outline (one save)."""
        text = self.outline_text()
        self._saving = True
        try:
            self.reader.save_outline(self.volume, text)
        finally:
            self._saving = False
        self._outline = text
        self._set_outline_dirty(False)
        self.outline_state.setText(tr("大纲已保存"))
        self._rebuild_chapter_list()

    def add_chapter(self) -> None:
        """添加章节: a new section after the last (saved at once, with any unsaved form edits)."""
        text = self.outline_text()
        plans = self.reader.chapters(self.volume, text)
        written = max((c.number for c in self.project.chapters()), default=0)
        after = max((p.number for p in plans), default=written)
        number = next_chapter_number(text, after)
        self._outline = add_section(text, number)
        self.outline_stack.setCurrentIndex(1)
        self.save_outline()
        self.select_chapter(number)
        self.form.focus_title()

    def export_markdown(self, path: str | Path | None = None) -> Path | None:
        """导出 Markdown…: the volume's outline (as the forms show it) to a file the author picks."""
        if path is None:
            default = str(Path.home() / tr("第{n}卷大纲.md").format(n=self.volume))
            chosen, _ = QFileDialog.getSaveFileName(self, tr("导出大纲"), default, tr("Markdown (*.md)"))
            if not chosen:
                return None
            path = chosen
        target = Path(path)
        try:
            self.reader.export_outline(target, self.outline_text())
        except OSError as exc:
            alerts.warning(self, tr("导出大纲"), tr("无法写入 {path}：{e}").format(path=target, e=exc))
            return None
        self.outline_state.setText(tr("大纲已导出到 {path}").format(path=target))
        return target

    def show_markdown(self) -> QDialog:
        """查看 Markdown: the outline's text, read-only."""
        dialog = self._markdown_dialog or QDialog(self)
        if self._markdown_dialog is None:
            dialog.resize(720, 640)
            box = QVBoxLayout(dialog)
            text = QPlainTextEdit()
            text.setReadOnly(True)
            text.setObjectName("OutlineMarkdown")
            box.addWidget(text)
            self._markdown_dialog = dialog
        dialog.setWindowTitle(tr("第 {n} 卷大纲（Markdown）").format(n=self.volume))
        view = dialog.findChild(QPlainTextEdit, "OutlineMarkdown")
        if view is not None:
            view.setPlainText(self.outline_text())
        if dialog.isVisible():
            dialog.raise_()  # already open behind the window: bring it forward
        dialog.show()
        return dialog

    # ------------------------------------------------------------------ the tree
    def _rebuild_chapter_list(self) -> None:
        current = self.selected_chapter()
        volumes = sorted({*dict(self.project.volumes()), self.volume})
        names = dict(self.project.volumes())
        rows = []
        for volume in volumes:
            outline = self._outline if volume == self.volume else None
            plans = self.reader.chapters(volume, outline)
            rows.append((volume, names.get(volume, ""), plans, set(self.reader.contract_numbers(volume))))
        self.chapter_list.fill(rows, self.volume)
        plans = next(p for v, _n, p, _c in rows if v == self.volume)
        self.chapter_list.blockSignals(True)
        if current is not None:
            self.select_chapter(current)
        if self.chapter_list.currentItem() is None and plans:
            # Start on the chapter about to be written: that is the contract the author most likely checks.
            next_chapter = int(self.project.checkpoint().get("last_completed_chapter") or 0) + 1
            target = next((p.number for p in plans if p.number >= next_chapter), plans[0].number)
            self.select_chapter(target)
        if self.chapter_list.currentItem() is None and (top := self.chapter_list.volume_item(self.volume)):
            self.chapter_list.setCurrentItem(top)
        self.chapter_list.blockSignals(False)
        chapter = self.selected_chapter()
        if not self._outline_dirty:
            self.form.load(self.volume, self._outline, chapter)
        if chapter is None:
            self.contract_stack.setCurrentWidget(self.no_chapter_page)
        elif current is None or chapter != current or not self.contract_form.dirty:
            self._show_contract(chapter)
        self.sections.update()

    def chapter_rows(self) -> list[tuple[str, str, str, str]]:
        """What the tree shows for the volume's chapters, row by row (number, title, 字数, score)."""
        return self.chapter_list.chapter_rows(self.volume)

    def _on_chapter_list_current_changed(
        self, current: QTreeWidgetItem | None, previous: QTreeWidgetItem | None
    ) -> None:
        kind = OutlineTree.kind(current)
        if kind is None:
            self.contract_stack.setCurrentWidget(self.no_chapter_page)
            return
        what, number = kind
        volume = number if what == "volume" else self.volume
        chapter = number if what == "chapter" else None
        if what == "chapter":
            parent = current.parent() if current is not None else None
            volume = int(parent.data(0, Qt.ItemDataRole.UserRole)) if parent is not None else self.volume
        leaving_contract = self.contract_form.dirty and chapter != self.contract_form.chapter
        leaving_form = self._outline_dirty and (chapter != self.form.chapter or volume != self.volume)
        if leaving_contract or leaving_form:
            # Stay where the edits are until the author has decided what happens to them.
            if previous is not None:
                self.chapter_list.blockSignals(True)
                self.chapter_list.setCurrentItem(previous)
                self.chapter_list.blockSignals(False)
            self._settle_contract(lambda: self._settle_outline(lambda: self._go_to(volume, chapter)))
            return
        self._go_to(volume, chapter)

    def _go_to(self, volume: int, chapter: int | None) -> None:
        if volume != self.volume:
            self._open_volume(volume)
            if chapter is not None:
                self.select_chapter(chapter)
            return
        item = self.chapter_list.chapter_item(volume, chapter) if chapter is not None else None
        item = item or self.chapter_list.volume_item(volume)
        if item is not None and item is not self.chapter_list.currentItem():
            self.chapter_list.blockSignals(True)
            self.chapter_list.setCurrentItem(item)
            self.chapter_list.blockSignals(False)
        self.form.load(self.volume, self._outline, chapter)
        self._show_contract(chapter)
        self.sections.update()

    def _on_chapter_list_double_clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        kind = OutlineTree.kind(item)
        if kind is not None and kind[0] == "chapter":
            self.chapter_requested.emit(kind[1])

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
                self._outline = self.reader.outline(self.volume) or ""
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
        plans = self.reader.chapters(self.volume, self.outline_text())
        plan = next((p for p in plans if p.number == chapter), None)
        self.contract_form.load(self.volume, chapter, {}, storyline_hint=plan.storyline_id if plan else None)
        self.contract_form._set_dirty(True)
        self.contract_stack.setCurrentWidget(self.contract_form)

    # ------------------------------------------------------------------ outline
    def _start_outline(self) -> None:
        self._outline = add_section(f"# 第 {self.volume} 卷\n", 1)  # the novel's text: Chinese
        self.outline_stack.setCurrentIndex(1)
        self._rebuild_chapter_list()
        self.select_chapter(1)
        self._set_outline_dirty(True)
        self.form.focus_title()

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
            self._rebuild_chapter_list()

    def _on_project_chapters_changed(self) -> None:
        self._rebuild_chapter_list()
