"""历史版本: every revision of a chapter (kind, time, 字数) and a diff against the draft, the refined text,
the previous version or the current text; "恢复此版本" saves the chosen text as a new manual revision, so
restoring is itself undoable.

The diff is by paragraph, and inside a changed paragraph by character — a line diff of Chinese prose would
mark whole paragraphs for one changed 字.
"""

from __future__ import annotations

import difflib
import html
from datetime import datetime

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.controllers.reader import RevisionInfo
from novel_desktop.domain.text import count_chars
from novel_desktop.i18n import tr, tr_n

KIND_LABELS = {
    "draft": "草稿",
    "refined": "润色稿",
    "manual": "手动修改",
    "revision": "修订稿",
    "imported": "导入",
}
#: Equal stretches longer than this many paragraphs are folded to their first and last paragraph.
CONTEXT = 1

_DEL = "background:#fbe3e3;color:#8a1f1f;text-decoration:line-through;"
_INS = "background:#dff3e4;color:#1d5e2f;"


def kind_label(kind: str) -> str:
    return tr(KIND_LABELS.get(kind, kind))


def local_time(iso: str) -> str:
    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return iso


def _chars_diff(old: str, new: str) -> str:
    out = []
    sm = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for op, a0, a1, b0, b1 in sm.get_opcodes():
        if op == "equal":
            out.append(html.escape(old[a0:a1]))
            continue
        if a1 > a0:
            out.append(f'<span style="{_DEL}">{html.escape(old[a0:a1])}</span>')
        if b1 > b0:
            out.append(f'<span style="{_INS}">{html.escape(new[b0:b1])}</span>')
    return "".join(out)


def diff_stats(old: str, new: str) -> tuple[int, int]:
    """(字 added, 字 removed) from ``old`` to ``new``."""
    added = removed = 0
    sm = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for op, a0, a1, b0, b1 in sm.get_opcodes():
        if op != "equal":
            removed += count_chars(old[a0:a1])
            added += count_chars(new[b0:b1])
    return added, removed


def diff_html(old: str, new: str) -> str:
    """An inline diff of two chapter texts as HTML: removed text struck out in red, added text in green."""
    a = [p for p in old.split("\n") if p.strip()]
    b = [p for p in new.split("\n") if p.strip()]
    parts: list[str] = []

    def para(body: str, style: str = "") -> None:
        parts.append(f'<p style="margin:0 0 10px 0;{style}">{body}</p>')

    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, a0, a1, b0, b1 in sm.get_opcodes():
        if op == "equal":
            run = a[a0:a1]
            if len(run) > 2 * CONTEXT + 1:
                for p in run[:CONTEXT]:
                    para(html.escape(p))
                folded = tr_n("…… 省略 {n} 段相同内容 ……", len(run) - 2 * CONTEXT).format(
                    n=len(run) - 2 * CONTEXT
                )
                para(html.escape(folded), "color:#999;text-align:center;")
                for p in run[-CONTEXT:]:
                    para(html.escape(p))
            else:
                for p in run:
                    para(html.escape(p))
        elif op == "replace":
            olds, news = a[a0:a1], b[b0:b1]
            for i in range(max(len(olds), len(news))):
                o = olds[i] if i < len(olds) else ""
                n = news[i] if i < len(news) else ""
                para(_chars_diff(o, n))
        elif op == "delete":
            for p in a[a0:a1]:
                para(f'<span style="{_DEL}">{html.escape(p)}</span>')
        elif op == "insert":
            for p in b[b0:b1]:
                para(f'<span style="{_INS}">{html.escape(p)}</span>')
    if not parts:
        para(html.escape(tr("两个版本相同。")), "color:#999;")
    return "".join(parts)


class RevisionDialog(QDialog):
    """The revision history of one chapter, with a diff and 恢复此版本."""

    #: A revision was restored (saved as a new manual revision): the chapter and its marked chapters.
    revision_restored = Signal(int, list)

    #: What the selected revision is compared with.
    COMPARE_PREVIOUS, COMPARE_DRAFT, COMPARE_REFINED, COMPARE_CURRENT = range(4)

    def __init__(self, project: ProjectController, chapter: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.chapter = chapter
        self.setWindowTitle(tr("第{n}章 · 历史版本").format(n=chapter))
        self.resize(1100, 680)
        self._texts: dict[int, str] = {}

        self.list = QTreeWidget()
        self.list.setRootIsDecorated(False)
        self.list.setHeaderLabels([tr("版本"), tr("类型"), tr("时间"), tr("字数")])
        self.list.setUniformRowHeights(True)
        header = self.list.header()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.compare = QComboBox()
        self.compare.addItems([tr("上一版本"), tr("草稿"), tr("润色稿"), tr("当前正文")])
        self.stats = QLabel()
        self.stats.setTextFormat(Qt.TextFormat.PlainText)  # may show the novel's names
        self.stats.setStyleSheet("color: palette(dark);")
        self.view = QTextBrowser()
        self.view.setOpenLinks(False)
        font = self.view.font()
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.view.setFont(font)

        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        top.addWidget(QLabel(tr("对比：")))
        top.addWidget(self.compare)
        top.addStretch(1)
        top.addWidget(self.stats)
        rl.addLayout(top)
        rl.addWidget(self.view, 1)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.list)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([340, 760])

        self.restore_button = QPushButton(tr("恢复此版本"))
        self.restore_button.setToolTip(tr("把选中的版本存为新的手动修改版本；当前正文仍保留在历史里"))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.restore_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        buttons.button(QDialogButtonBox.StandardButton.Close).setText(tr("关闭"))

        self.notice = QLabel()
        self.notice.setTextFormat(Qt.TextFormat.PlainText)  # may show the novel's names
        self.notice.setStyleSheet("color: #2e7d4f;")
        bottom = QHBoxLayout()
        bottom.addWidget(self.notice, 1)
        bottom.addWidget(buttons)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter, 1)
        layout.addLayout(bottom)

        self.list.currentItemChanged.connect(self._on_list_current_changed)
        self.compare.currentIndexChanged.connect(self._on_compare_changed)
        self.restore_button.clicked.connect(self._on_restore_clicked)
        self.reload()

    # ------------------------------------------------------------------ data
    def reload(self) -> None:
        self.revisions: list[RevisionInfo] = self.project.revisions(self.chapter)
        self.list.clear()
        for i, rev in enumerate(reversed(self.revisions)):  # the newest on top
            number = len(self.revisions) - i
            item = QTreeWidgetItem(
                [f"#{number}", kind_label(rev.kind), local_time(rev.created_at), f"{rev.chars:,}"]
            )
            item.setData(0, Qt.ItemDataRole.UserRole, rev.id)
            item.setTextAlignment(3, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if rev.note:
                item.setToolTip(0, rev.note)
            self.list.addTopLevelItem(item)
        first = self.list.topLevelItem(0)
        if first is not None:
            self.list.setCurrentItem(first)

    def text_of(self, revision_id: int) -> str:
        if revision_id not in self._texts:
            self._texts[revision_id] = self.project.revision_text(revision_id)
        return self._texts[revision_id]

    def selected_revision(self) -> RevisionInfo | None:
        item = self.list.currentItem()
        if item is None:
            return None
        rid = item.data(0, Qt.ItemDataRole.UserRole)
        return next((r for r in self.revisions if r.id == rid), None)

    def select_revision(self, revision_id: int) -> None:
        for i in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(i)
            if item is not None and item.data(0, Qt.ItemDataRole.UserRole) == revision_id:
                self.list.setCurrentItem(item)
                return

    def _base(self, rev: RevisionInfo) -> tuple[str, str] | None:
        """(label, text) the selected revision is compared with, per the 对比 choice."""
        mode = self.compare.currentIndex()
        if mode == self.COMPARE_CURRENT:
            return tr("当前正文"), self.project.chapter_text(self.chapter)
        if mode == self.COMPARE_PREVIOUS:
            older = [r for r in self.revisions if r.id < rev.id]
            return (kind_label(older[-1].kind), self.text_of(older[-1].id)) if older else None
        kind = "draft" if mode == self.COMPARE_DRAFT else "refined"
        found = [r for r in self.revisions if r.kind == kind]
        return (kind_label(kind), self.text_of(found[-1].id)) if found else None

    def _show_diff(self) -> None:
        rev = self.selected_revision()
        self.restore_button.setEnabled(rev is not None and not self.project.readonly)
        if rev is None:
            self.view.clear()
            self.stats.clear()
            return
        text = self.text_of(rev.id)
        base = self._base(rev)
        if base is None:
            self.stats.setText(tr("没有可对比的版本，显示全文"))
            self.view.setHtml(diff_html(text, text))
            return
        label, old = base
        added, removed = diff_stats(old, text)
        self.stats.setText(
            tr("相对{base}：+{added} 字，−{removed} 字").format(base=label, added=added, removed=removed)
        )
        self.view.setHtml(diff_html(old, text))

    # ------------------------------------------------------------------ slots
    def _on_list_current_changed(self, *_args: object) -> None:
        self._show_diff()

    def _on_compare_changed(self, _index: int) -> None:
        self._show_diff()

    def _on_restore_clicked(self) -> None:
        rev = self.selected_revision()
        if rev is None:
            return
        self.restore(rev.id)
        self.notice.setText(
            tr("已把{kind}（{time}）存为新的手动修改版本。").format(
                kind=kind_label(rev.kind), time=local_time(rev.created_at)
            )
        )

    def restore(self, revision_id: int) -> list[int]:
        """Save the revision's text as a new manual revision; returns the chapters marked needs_rebuild."""
        marked = self.project.save_chapter(self.chapter, self.text_of(revision_id))
        self.reload()
        self.revision_restored.emit(self.chapter, marked)
        return marked

    @classmethod
    def show_history(cls, parent: QWidget | None, project: ProjectController, chapter: int) -> RevisionDialog:
        """Open the dialog (non-modal, so the author can keep the text beside it) and return it."""
        dialog = cls(project, chapter, parent)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog
