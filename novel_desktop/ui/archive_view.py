"""已移除的章节: the chapters rollbacks (and a restarted trial) removed, listed by rollback; one chapter's
text and each of its revisions; 恢复为下一章. Reads and restores through the rollback controller."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.domain.records import ArchivedChapter, ArchivedChapterInfo
from novel_desktop.i18n import tr, tr_n

_ID = Qt.ItemDataRole.UserRole


def _when(stamp: str) -> str:
    """``2026-11-25T01:44:29+00:00`` → ``2026-11-25 01:44``."""
    return stamp[:16].replace("T", " ")


class ArchiveView(QDialog):
    """A window (not modal) over the archive. ``restore_requested`` carries an archived chapter's id; the
    flow restores it and calls :meth:`show_archive` again."""

    restore_requested = Signal(int)
    #: The author picked a row: the flow answers with :meth:`show_chapter`.
    chapter_selected = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ArchiveView")
        self.setWindowTitle(tr("已移除的章节"))
        self.resize(980, 620)
        self._chapter: ArchivedChapter | None = None
        self._next = 0

        self.hint = QLabel(
            tr("回滚移除的章节都保存在这里，可以查看每个版本；最后一章之后的那一章可以恢复为下一章。")
        )
        self.hint.setWordWrap(True)
        self.list = QTreeWidget()
        self.list.setObjectName("ArchiveList")
        self.list.setHeaderLabels([tr("章节"), tr("字数"), tr("移除时间"), tr("状态")])
        self.list.setRootIsDecorated(True)
        self.list.currentItemChanged.connect(self._on_list_current_item_changed)
        self.revision = QComboBox()
        self.revision.setObjectName("ArchiveRevision")
        self.revision.currentIndexChanged.connect(self._on_revision_current_index_changed)
        self.text = QPlainTextEdit()
        self.text.setObjectName("ArchiveText")
        self.text.setReadOnly(True)
        self.restore_button = QPushButton(tr("恢复为下一章"))
        self.restore_button.setObjectName("ArchiveRestore")
        self.restore_button.setEnabled(False)
        self.restore_button.clicked.connect(self._on_restore_button_clicked)

        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel(tr("版本：")))
        row.addWidget(self.revision, 1)
        row.addWidget(self.restore_button)
        right_layout.addLayout(row)
        right_layout.addWidget(self.text, 1)
        splitter = QSplitter()
        splitter.addWidget(self.list)
        splitter.addWidget(right)
        splitter.setSizes([420, 560])
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.button(QDialogButtonBox.StandardButton.Close).setText(tr("关闭"))
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.hint)
        layout.addWidget(splitter, 1)
        layout.addWidget(buttons)

    # ------------------------------------------------------------------ filled by the flow
    def show_archive(self, chapters: list[ArchivedChapterInfo], next_chapter: int) -> None:
        """List ``chapters`` grouped by rollback; the one numbered ``next_chapter`` can be restored."""
        self.list.clear()
        self._next = next_chapter
        batches: dict[int, QTreeWidgetItem] = {}
        first: QTreeWidgetItem | None = None
        for info in chapters:
            batch = batches.get(info.rollback_id)
            if batch is None:
                name = tr("第 {n} 次回滚").format(n=info.rollback_id)
                batch = QTreeWidgetItem([name, "", _when(info.removed_at)])
                self.list.addTopLevelItem(batch)
                batch.setExpanded(True)
                batches[info.rollback_id] = batch
            label = tr("第{n}章 {title}").format(n=info.chapter, title=info.title)
            if info.staged:
                label += tr("（写作中）")
            if info.restored_at:
                state = tr("已恢复")
            elif info.chapter == next_chapter:
                state = tr("可恢复")
            else:
                state = ""
            item = QTreeWidgetItem([label, f"{info.chars:,}", _when(info.removed_at), state])
            item.setData(0, _ID, info.id)
            item.setData(1, _ID, info)
            batch.addChild(item)
            first = first or item
        for column in range(4):
            self.list.resizeColumnToContents(column)
        if first is None:
            self.text.setPlainText(tr("存档里没有章节。"))
            self.revision.clear()
            self.restore_button.setEnabled(False)
        else:
            self.list.setCurrentItem(first)

    def show_chapter(self, chapter: ArchivedChapter) -> None:
        """Show an archived chapter: its text, with each revision to pick."""
        self._chapter = chapter
        self.revision.blockSignals(True)
        self.revision.clear()
        self.revision.addItem(
            tr_n("移除时的正文（{n} 字）", chapter.info.chars).format(n=f"{chapter.info.chars:,}")
        )
        for i, rev in enumerate(chapter.revisions, 1):
            self.revision.addItem(
                tr_n("{i}. {kind} · {chars} 字 · {when}", rev.chars).format(
                    i=i, kind=rev.kind, chars=f"{rev.chars:,}", when=_when(rev.created_at)
                )
            )
        self.revision.setCurrentIndex(0)
        self.revision.blockSignals(False)
        self.text.setPlainText(chapter.content)
        info = chapter.info
        self.restore_button.setEnabled(info.restored_at is None and info.chapter == self._next)
        self.restore_button.setToolTip(
            tr("恢复为第{n}章；恢复后需要重建").format(n=info.chapter)
            if self.restore_button.isEnabled()
            else tr("只有第{n}章可以恢复为下一章").format(n=self._next)
        )

    def current_id(self) -> int | None:
        item = self.list.currentItem()
        value = item.data(0, _ID) if item is not None else None
        return int(value) if value is not None else None

    # ------------------------------------------------------------------ slots
    def _on_list_current_item_changed(self, current: QTreeWidgetItem | None, _previous: object) -> None:
        value = current.data(0, _ID) if current is not None else None
        if value is not None:
            self.chapter_selected.emit(int(value))

    def _on_revision_current_index_changed(self, index: int) -> None:
        chapter = self._chapter
        if chapter is None or index < 0:
            return
        self.text.setPlainText(chapter.content if index == 0 else chapter.revisions[index - 1].content)

    def _on_restore_button_clicked(self) -> None:
        archive_id = self.current_id()
        if archive_id is not None:
            self.restore_requested.emit(archive_id)
