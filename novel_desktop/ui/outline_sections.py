"""删除 / 上移 / 下移 of a chapter's section in the outline view.

Deleting a section moves every later one a number down (第 8 章 becomes 第 7 章); moving swaps a section with
its neighbour and the two exchange numbers, so the planned chapters stay numbered in order. Each chapter's
contract follows its section (domain/outline_form.py, NovelReader.save_renumbered_outline: the outline and
the contracts in one transaction). A chapter already written keeps its number: its section is neither
deleted nor moved, nor is any section whose move would renumber it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QHBoxLayout, QPushButton

from novel_desktop.domain.outline_form import delete_section, move_section, section_numbers
from novel_desktop.i18n import tr
from novel_desktop.ui import alerts

if TYPE_CHECKING:
    from novel_desktop.ui.outline_view import OutlineView


class SectionTools:
    """The three buttons under the chapter tree, for the selected chapter's section."""

    def __init__(self, view: OutlineView, row: QHBoxLayout) -> None:
        self.view = view
        self.delete_button = QPushButton(tr("删除本节"))
        self.delete_button.setToolTip(tr("删除这一章的大纲和契约；后面的章节依次前移一号"))
        self.up_button = QPushButton(tr("上移"))
        self.up_button.setToolTip(tr("和前一章交换位置与章号"))
        self.down_button = QPushButton(tr("下移"))
        self.down_button.setToolTip(tr("和后一章交换位置与章号"))
        self.delete_button.clicked.connect(lambda _checked=False: self.delete())
        self.up_button.clicked.connect(lambda _checked=False: self.move(-1))
        self.down_button.clicked.connect(lambda _checked=False: self.move(1))
        for button in (self.delete_button, self.up_button, self.down_button):
            button.setEnabled(False)  # until a section is selected
            row.addWidget(button)
        row.addStretch(1)

    def _written(self) -> set[int]:
        return {c.number for c in self.view.project.chapters()}

    def update(self) -> None:
        """Enable what the selected section allows."""
        chapter = self.view.selected_chapter()
        numbers = section_numbers(self.view.outline_text()) if chapter is not None else []
        if chapter is None or chapter not in numbers or self.view.project.readonly:
            for button in (self.delete_button, self.up_button, self.down_button):
                button.setEnabled(False)
            return
        written = self._written()
        at = numbers.index(chapter)
        free = chapter not in written
        self.delete_button.setEnabled(free and not written.intersection(numbers[at + 1 :]))
        self.up_button.setEnabled(free and at > 0 and numbers[at - 1] not in written)
        self.down_button.setEnabled(free and at + 1 < len(numbers) and numbers[at + 1] not in written)

    def delete(self) -> None:
        chapter = self.view.selected_chapter()
        if chapter is None:
            return

        def answered(yes: bool) -> None:
            if yes:
                self.view._settle_contract(
                    lambda: self._apply(chapter, delete_section(self.view.outline_text(), chapter))
                )

        alerts.confirm(
            self.view,
            tr("删除第 {n} 章的大纲？").format(n=chapter),
            tr("这一章的大纲和契约都会删除，后面的章节依次前移一号（第 {next} 章变成第 {n} 章）。").format(
                n=chapter, next=chapter + 1
            ),
            answered,
            default=False,
        )

    def move(self, step: int) -> None:
        chapter = self.view.selected_chapter()
        if chapter is not None:
            self.view._settle_contract(
                lambda: self._apply(chapter, move_section(self.view.outline_text(), chapter, step))
            )

    def _apply(self, chapter: int, result: tuple[str, dict[int, int | None]] | None) -> None:
        if result is None:
            return
        text, moved = result
        written = sorted(self._written().intersection(moved))
        if written:
            alerts.info(
                self.view,
                tr("已写的章节不能改号"),
                tr("第 {n} 章已经写成：它的大纲不能删除或移动，章号也不能变。").format(n=written[0]),
            )
            return
        view = self.view
        view.reader.save_renumbered_outline(view.volume, text, moved)
        view._outline = text
        view._set_outline_dirty(False)
        view.outline_state.setText(tr("大纲已保存"))
        view._rebuild_chapter_list()
        follow = moved.get(chapter)
        numbers = section_numbers(text)
        if follow is None:  # deleted: the section now at its place, else the one before
            follow = chapter if chapter in numbers else max((n for n in numbers if n < chapter), default=None)
        if follow is not None:
            view.select_chapter(follow)
        self.update()


__all__ = ["SectionTools"]
