"""The import preview: what a manuscript splits into, shown before anything is written (the same split as
``novel import-text``). The author sees each detected volume and chapter with its 字数, what was kept aside
(text before the first chapter, trailing boilerplate), the numbering gaps and duplicates, and the encoding;
``导入…`` goes on to choose where the new novel is saved, ``取消`` writes nothing.

Every place the split was unsure of (``SplitResult.notes``: a merged repeated heading, a heading joined from
two lines, a very short or long chapter, a heading-like line left in the text, a guessed encoding) is marked:
the chapter's row says what to check (tooltip: why) and the list below names each place; choosing one selects
its chapter. A chapter title can be corrected in place (double-click); the correction is written into the
split the dialog was given, so the import stores the title the author accepted."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.domain.text import count_chars
from novel_desktop.i18n import join_list, language, tr, tr_n

if TYPE_CHECKING:
    from novel_desktop.domain.manuscript import Manuscript, NoteKind, SplitNote, SplitResult

_PREVIEW_CHARS = 60
_CHAPTER_ROLE = Qt.ItemDataRole.UserRole
_NOTE_ROLE = Qt.ItemDataRole.UserRole + 1
_NOTED_BACKGROUND = QColor(255, 236, 200)
_NOTED_FOREGROUND = QColor(122, 72, 0)
#: The short label of each kind of unsure place, for the chapter's 请检查 cell.
_NOTE_LABELS: dict[NoteKind, str] = {
    "merged_heading": "重复标题已合并",
    "joined_heading": "两行标题已合并",
    "short_chapter": "过短",
    "long_chapter": "过长",
    "unsplit_heading": "含疑似标题",
    "encoding": "编码为推测",
}


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat[:_PREVIEW_CHARS] + ("…" if len(flat) > _PREVIEW_CHARS else "")


class ImportPreviewDialog(QDialog):
    """The detected chapters of one manuscript; :meth:`confirm` returns the title to import under, or None."""

    def __init__(
        self, source: Path, manuscript: Manuscript, split: SplitResult, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.split = split
        self.manuscript = manuscript
        self.setWindowTitle(tr("导入书稿：{name}").format(name=source.name))
        self.resize(720, 640)
        layout = QVBoxLayout(self)

        self.summary_label = QLabel(self._summary_text())
        self.summary_label.setWordWrap(True)
        layout.addWidget(self.summary_label)

        form = QFormLayout()
        self.title_edit = QLineEdit(source.stem)
        form.addRow(tr("书名"), self.title_edit)
        layout.addLayout(form)

        self.tree = QTreeWidget()
        self.tree.setHeaderLabels([tr("章节"), tr("字数"), tr("请检查")])
        self.tree.setRootIsDecorated(bool(split.volumes))
        self.tree.setToolTip(tr("双击章节标题可以修改"))
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self._rows: dict[int, QTreeWidgetItem] = {}  # chapter number -> its row
        self._fill_tree()
        self.tree.setEditTriggers(QTreeWidget.EditTrigger.NoEditTriggers)
        self.tree.itemDoubleClicked.connect(self._on_tree_item_double_clicked)
        self.tree.itemChanged.connect(self._on_tree_item_changed)
        layout.addWidget(self.tree, 3)

        self.notes_label = QLabel()
        self.notes_list = QListWidget()
        self.notes_list.setWordWrap(True)
        self.notes_list.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.notes_list.setStyleSheet("color: #7a4800;")
        self.notes_list.currentItemChanged.connect(self._on_notes_list_current_changed)
        self._fill_notes()
        layout.addWidget(self.notes_label)
        layout.addWidget(self.notes_list, 1)
        self.unjoin_button = QPushButton(tr("拆回两行"))
        self.unjoin_button.setToolTip(tr("标题下一行其实是正文：把它放回正文，标题只留“第X章”"))
        self.unjoin_button.setEnabled(False)
        self.unjoin_button.setVisible(any(n.kind == "joined_heading" for n in split.notes))
        self.unjoin_button.clicked.connect(self._on_unjoin_button_clicked)
        self.split_here_button = QPushButton(tr("在此分章"))
        self.split_here_button.setToolTip(tr("这一行确实是章节标题：从这一行起分出新的一章"))
        self.split_here_button.setEnabled(False)
        self.split_here_button.setVisible(any(n.kind == "unsplit_heading" for n in split.notes))
        self.split_here_button.clicked.connect(self._on_split_here_button_clicked)
        fixes = QHBoxLayout()
        fixes.addWidget(self.unjoin_button)
        fixes.addWidget(self.split_here_button)
        fixes.addStretch(1)
        layout.addLayout(fixes)

        self.aside_label = QLabel(self._aside_text())
        self.aside_label.setWordWrap(True)
        self.aside_label.setStyleSheet("color: palette(dark);")
        layout.addWidget(self.aside_label)

        noted = {n.message for n in split.notes}
        others = [w for w in split.warnings if w not in noted]
        self.warnings_label = QLabel("\n".join(f"⚠ {w}" for w in others))
        self.warnings_label.setWordWrap(True)
        self.warnings_label.setStyleSheet("color: #9a5b00;")
        self.warnings_label.setVisible(bool(others))
        layout.addWidget(self.warnings_label)

        buttons = QDialogButtonBox()
        self.import_button: QPushButton = buttons.addButton(
            tr("导入…"), QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.cancel_button: QPushButton = buttons.addButton(
            tr("取消"), QDialogButtonBox.ButtonRole.RejectRole
        )
        self.import_button.setEnabled(bool(split.chapters))
        self.title_edit.textChanged.connect(self._on_title_edit_text_changed)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def _summary_text(self) -> str:
        """The top line: how many chapters and volumes were found, their 字数, the file's format."""
        split, manuscript = self.split, self.manuscript
        if not split.chapters:
            return tr("没有识别到章节标题（如“第一章 …”“第1回”），无法按章导入。请检查书稿里的章节标题。")
        total = sum(c.chars for c in split.chapters)
        volumes = (
            tr_n("{n} 卷", len(split.volumes)).format(n=len(split.volumes))
            if split.volumes
            else tr("没有分卷标题，全部归入第 1 卷")
        )
        return tr("识别到 {chapters} 章（{volumes}），共 {chars} 字；{fmt} 文件，编码 {encoding}。").format(
            chapters=len(split.chapters), volumes=volumes, chars=f"{total:,}",
            fmt=manuscript.source_format, encoding=manuscript.encoding,
        )  # fmt: skip

    def _fill_tree(self) -> None:
        volumes = {v.number: v for v in self.split.volumes}
        parents: dict[int, QTreeWidgetItem] = {}
        for chapter in self.split.chapters:
            parent: QTreeWidget | QTreeWidgetItem = self.tree
            if volumes:
                if chapter.volume not in parents:
                    v = volumes.get(chapter.volume)
                    item = QTreeWidgetItem(
                        self.tree, [v.title if v else tr("第 {n} 卷").format(n=chapter.volume)]
                    )
                    item.setExpanded(True)
                    parents[chapter.volume] = item
                parent = parents[chapter.volume]
            notes = self.split.notes_for(chapter.number)
            labels = dict.fromkeys(tr(_NOTE_LABELS[n.kind]) for n in notes)
            row = QTreeWidgetItem(
                parent, [chapter.title, f"{chapter.chars:,}", ("⚠ " + join_list(labels)) if notes else ""]
            )
            row.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            row.setData(0, _CHAPTER_ROLE, chapter.number)
            row.setFlags(row.flags() | Qt.ItemFlag.ItemIsEditable)
            if notes:
                for column in range(3):
                    row.setBackground(column, QBrush(_NOTED_BACKGROUND))
                    row.setForeground(column, QBrush(_NOTED_FOREGROUND))
                    row.setToolTip(column, "\n".join(n.message for n in notes))
            self._rows[chapter.number] = row
        self.tree.expandAll()

    def _fill_notes(self) -> None:
        # In reading order: the whole-file notes first, then chapter by chapter.
        notes = sorted(self.split.notes, key=lambda n: (-1 if n.chapter is None else n.chapter, n.offset))
        self.notes_label.setText(
            tr_n("有 {n} 处需要确认：选中一处可定位到它的章节；标题不对可双击修改。", len(notes)).format(
                n=len(notes)
            )
        )
        for note in notes:
            item = QListWidgetItem(self._note_text(note))
            item.setToolTip(note.message)
            item.setData(_CHAPTER_ROLE, note.chapter)
            item.setData(_NOTE_ROLE, note)
            self.notes_list.addItem(item)
        self.notes_label.setVisible(bool(notes))
        self.notes_list.setVisible(bool(notes))

    def _note_text(self, note: SplitNote) -> str:
        where = tr("第 {n} 章").format(n=note.chapter) if note.chapter is not None else tr("整个文件")
        message = note.message
        if language() == "en":
            # The split's messages are "中文 (English)": one language at a time, the whole one in the tooltip.
            english = re.search(r"\(([^()]*)\)\s*$", message)
            message = english.group(1) if english else message
        return "⚠ " + tr("{where} · {label}：{message}").format(
            where=where, label=tr(_NOTE_LABELS[note.kind]), message=message
        )

    def noted_rows(self) -> dict[str, str]:
        """Chapter title -> its 请检查 cell, for every chapter the split was unsure of."""
        return {row.text(0): row.text(2) for row in self._rows.values() if row.text(2).startswith("⚠")}

    def _on_notes_list_current_changed(self, item: QListWidgetItem | None, _previous: object) -> None:
        chapter = item.data(_CHAPTER_ROLE) if item is not None else None
        row = self._rows.get(chapter) if isinstance(chapter, int) else None
        if row is not None:
            self.tree.setCurrentItem(row)
            self.tree.scrollToItem(row)
        note = item.data(_NOTE_ROLE) if item is not None else None
        self.unjoin_button.setEnabled(note in self.split.notes and note.kind == "joined_heading")
        self.split_here_button.setEnabled(note in self.split.notes and note.kind == "unsplit_heading")

    def _on_split_here_button_clicked(self) -> None:
        item = self.notes_list.currentItem()
        note = item.data(_NOTE_ROLE) if item is not None else None
        if note is not None and note.kind == "unsplit_heading":
            self.split_at(note)

    def split_at(self, note: SplitNote) -> None:
        """The author confirmed a heading-like line the split left in the text: a new chapter starts there
        (controllers/import_edits.py); the chapter list and the places to check are shown anew."""
        from novel_desktop.controllers.import_edits import split_at_note

        new = split_at_note(self.split, note, self.manuscript)
        if new is None:
            return
        self.tree.blockSignals(True)
        self.tree.clear()
        self._rows.clear()
        self._fill_tree()
        self.tree.blockSignals(False)
        self.notes_list.blockSignals(True)
        self.notes_list.clear()
        self._fill_notes()
        self.notes_list.blockSignals(False)
        self.summary_label.setText(self._summary_text())  # one chapter more
        self.split_here_button.setEnabled(False)
        self.unjoin_button.setEnabled(False)
        row = self._rows.get(new.number)
        if row is not None:
            self.tree.setCurrentItem(row)

    def _on_unjoin_button_clicked(self) -> None:
        item = self.notes_list.currentItem()
        note = item.data(_NOTE_ROLE) if item is not None else None
        if note is not None and note.kind == "joined_heading":
            self.unjoin(note)

    def unjoin(self, note: SplitNote) -> None:
        """Undo a joined two-line heading: the second line goes back to the chapter's text, the title keeps
        only the first line (第六章). Nothing is lost: heading and text still cover the source."""
        for i, chapter in enumerate(self.split.chapters):
            if chapter.number != note.chapter:
                continue
            first, _, rest = chapter.heading.partition("\n")
            if not rest.strip():
                return
            title = chapter.title.rsplit(" ", 1)[0] if " " in chapter.title else chapter.title
            text = f"{rest.strip()}\n\n{chapter.text}" if chapter.text else rest.strip()
            chapter = self.split.chapters[i] = replace(chapter, title=title, heading=first, text=text)
            self.split.notes.remove(note)
            if note.message in self.split.warnings:
                self.split.warnings.remove(note.message)
            row = self._rows[chapter.number]
            labels = dict.fromkeys(tr(_NOTE_LABELS[n.kind]) for n in self.split.notes_for(chapter.number))
            self.tree.blockSignals(True)
            row.setText(0, chapter.title)
            row.setText(1, f"{chapter.chars:,}")
            row.setText(2, ("⚠ " + join_list(labels)) if labels else tr("已拆回两行"))
            if not labels:
                for column in range(3):
                    row.setBackground(column, QBrush())
                    row.setForeground(column, QBrush())
            self.tree.blockSignals(False)
            current = self.notes_list.currentItem()
            if current is not None:
                current.setText("✓ " + tr("已拆回两行：{title}").format(title=chapter.title))
            self.unjoin_button.setEnabled(False)
            return

    def _on_tree_item_double_clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        if isinstance(item.data(0, _CHAPTER_ROLE), int):
            self.tree.editItem(item, 0)  # only the title is the author's to change

    def _on_tree_item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        number = item.data(0, _CHAPTER_ROLE)
        if column != 0 or not isinstance(number, int):
            return
        title = " ".join(item.text(0).split())
        for i, chapter in enumerate(self.split.chapters):
            if chapter.number == number:
                if title and title != chapter.title:
                    chapter = self.split.chapters[i] = replace(chapter, title=title)
                # An emptied title goes back to what the split found; the size counts the new title.
                self.tree.blockSignals(True)
                item.setText(0, chapter.title)
                item.setText(1, f"{chapter.chars:,}")
                self.tree.blockSignals(False)
                break

    def _aside_text(self) -> str:
        lines = []
        for label, part in ((tr("第一章之前"), self.split.front_matter), (tr("书末"), self.split.trailing)):
            if part.strip():
                lines.append(
                    tr_n("{label}有 {chars} 字，单独保存、不并入章节：{preview}", count_chars(part)).format(
                        label=label, chars=f"{count_chars(part):,}", preview=_preview(part)
                    )
                )
        return "\n".join(lines) or tr("所有文字都在章节里，没有单独保存的部分。")

    def chapter_rows(self) -> list[tuple[str, str]]:
        """(title, 字数) of every chapter row, in order (volume rows excluded)."""
        out: list[tuple[str, str]] = []

        def walk(item: QTreeWidgetItem | None) -> None:
            if item is None:
                return
            if item.childCount():
                for i in range(item.childCount()):
                    walk(item.child(i))
            elif item.text(1):
                out.append((item.text(0), item.text(1)))

        for i in range(self.tree.topLevelItemCount()):
            walk(self.tree.topLevelItem(i))
        return out

    def title(self) -> str:
        return self.title_edit.text().strip()

    def _on_title_edit_text_changed(self, text: str) -> None:
        self.import_button.setEnabled(bool(self.split.chapters) and bool(text.strip()))

    @classmethod
    def preview(
        cls,
        parent: QWidget | None,
        source: Path,
        manuscript: Manuscript,
        split: SplitResult,
        on_import: Callable[[str], None],
    ) -> ImportPreviewDialog:
        """Open the preview window-modally (``open()``, no nested loop); ``on_import(title)`` when the author
        presses 导入…, nothing when they cancel. The dialog deletes itself when closed."""
        dialog = cls(source, manuscript, split, parent)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: on_import(dialog.title()))
        dialog.open()
        return dialog
