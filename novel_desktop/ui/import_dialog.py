"""The import preview: what a manuscript splits into, shown before anything is written (the same split as
``novel import-text``). The author sees each detected volume and chapter with its 字数, what was kept aside
(text before the first chapter, trailing boilerplate), the numbering gaps and duplicates, and the encoding;
``导入…`` goes on to choose where the new novel is saved, ``取消`` writes nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.domain.text import count_chars
from novel_desktop.i18n import tr

if TYPE_CHECKING:
    from novel_desktop.domain.manuscript import Manuscript, SplitResult

_PREVIEW_CHARS = 60


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
        self.setWindowTitle(tr("导入书稿：{name}").format(name=source.name))
        self.resize(720, 640)
        layout = QVBoxLayout(self)

        total = sum(c.chars for c in split.chapters)
        volumes = (
            tr("{n} 卷").format(n=len(split.volumes))
            if split.volumes
            else tr("没有分卷标题，全部归入第 1 卷")
        )
        self.summary_label = QLabel(
            tr("识别到 {chapters} 章（{volumes}），共 {chars} 字；{fmt} 文件，编码 {encoding}。").format(
                chapters=len(split.chapters), volumes=volumes, chars=f"{total:,}",
                fmt=manuscript.source_format, encoding=manuscript.encoding,
            )
        )  # fmt: skip
        self.summary_label.setWordWrap(True)
        layout.addWidget(self.summary_label)

        form = QFormLayout()
        self.title_edit = QLineEdit(source.stem)
        form.addRow(tr("书名"), self.title_edit)
        layout.addLayout(form)

        self.tree = QTreeWidget()
        self.tree.setHeaderLabels([tr("章节"), tr("字数")])
        self.tree.setRootIsDecorated(bool(split.volumes))
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self._fill_tree()
        layout.addWidget(self.tree, 1)

        self.aside_label = QLabel(self._aside_text())
        self.aside_label.setWordWrap(True)
        self.aside_label.setStyleSheet("color: palette(dark);")
        layout.addWidget(self.aside_label)

        self.warnings_label = QLabel("\n".join(f"⚠ {w}" for w in split.warnings))
        self.warnings_label.setWordWrap(True)
        self.warnings_label.setStyleSheet("color: #9a5b00;")
        self.warnings_label.setVisible(bool(split.warnings))
        layout.addWidget(self.warnings_label)

        if not split.chapters:
            self.summary_label.setText(
                tr("没有识别到章节标题（如“第一章 …”“第1回”），无法按章导入。请检查书稿里的章节标题。")
            )
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
            row = QTreeWidgetItem(parent, [chapter.title, f"{chapter.chars:,}"])
            row.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.tree.expandAll()

    def _aside_text(self) -> str:
        lines = []
        for label, part in ((tr("第一章之前"), self.split.front_matter), (tr("书末"), self.split.trailing)):
            if part.strip():
                lines.append(
                    tr("{label}有 {chars} 字，单独保存、不并入章节：{preview}").format(
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
