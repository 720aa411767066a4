"""Files dropped on the window, the project tree or a chapter editor, handled by the one drop table
(controllers/drops.py): a manuscript opens the import preview, samples the style profile, a question when only
the author knows (a short file; anything dropped on the editor), and a clear message for anything else.
Reading the files is a job (a worker thread); every question opens with ``open()`` (ui/alerts.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from novel_desktop.controllers.drops import (
    CHOICE_LABELS,
    Action,
    Choice,
    Content,
    Dropped,
    Target,
    classify,
    decide,
    read_texts,
)
from novel_desktop.i18n import join_list, tr
from novel_desktop.ui import alerts

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from novel_desktop.controllers.jobs import Job
    from novel_desktop.ui.main_window import MainWindow

#: What each answer of the question does, in a sentence (Chinese source strings, shown through tr()).
_CHOICE_HINTS = {
    Choice.IMPORT: "导入为书稿：按章节拆分，新建一部小说（先预览，确认后才写入）。",
    Choice.STYLE: "用作风格样本：测量文风，更新这部小说的文风档案（保存前可修改）。",
    Choice.INSERT: "插入其文本：把文件里的文字插入本章的放下处。",
}


#: Puts a dropped file's text where it was dropped (once the author chose 插入其文本).
Inserter = Callable[[str], None]


class DropFlows:
    def __init__(self, window: MainWindow) -> None:
        from novel_desktop.ui.field_drops import install_field_drops

        self.window = window
        install_field_drops(window, self)  # every other text field of the window: ui/field_drops.py

    def drop(
        self,
        dropped: Dropped,
        target: Target,
        chapter: int = 0,
        position: int = 0,
        *,
        insert: Inserter | None = None,
    ) -> Job | None:
        """Do what the table says for ``dropped`` on ``target`` (``chapter``/``position``: where in which
        editor; ``insert``: where 插入其文本 puts the text, else that chapter's editor). Files are read in a
        job, which is returned; a drop without files is decided at once."""
        into = insert if insert is not None else (lambda text: self._insert(chapter, position, text))
        if not dropped.paths:
            self._act(classify(dropped), dropped, target, into)
            return None
        job = self.window.jobs.run_in_thread("drop", lambda: classify(dropped), title=tr("无法读取文件"))
        job.failed.connect(lambda message: alerts.error(self.window, tr("无法读取文件"), message))
        job.succeeded.connect(lambda content: self._act(content, dropped, target, into))
        return job

    def editor_drop(self, chapter: int, dropped: Any, position: int) -> None:
        """Files dropped (or pasted) on chapter ``chapter``'s editor at ``position``."""
        self.drop(dropped, Target.EDITOR, chapter, position)

    def field_drop(self, field: QWidget, dropped: Dropped, position: int) -> None:
        """Files dropped on another text field of the window (ui/field_drops.py) at ``position``: as on the
        chapter editor, the author is asked; 插入其文本 inserts the text into that field."""
        from novel_desktop.ui.field_drops import insert_into

        self.drop(dropped, Target.EDITOR, insert=lambda text: insert_into(field, position, text))

    def _act(self, content: Content, dropped: Dropped, target: Target, insert: Inserter) -> None:
        decision = decide(content, target)
        w = self.window
        if decision.action is Action.REFUSE:
            alerts.info(w, tr("无法使用这些文件"), decision.message)
        elif decision.action is Action.IMPORT:
            w.import_manuscript(dropped.paths[0])
        elif decision.action is Action.STYLE:
            w.show_style(list(dropped.paths))
        elif decision.action is Action.ASK:
            names = join_list(Path(p).name for p in dropped.paths)
            text = tr("“{names}”要怎么用？").format(names=names) + "\n\n"
            text += "\n".join(tr(_CHOICE_HINTS[c]) for c in decision.choices)
            options = [(c.value, tr(CHOICE_LABELS[c])) for c in decision.choices]
            alerts.choose(w, tr("拖入的文件"), text, options, lambda key: self._chosen(key, dropped, insert))
        # INSERT_TEXT (the editor inserts dragged text itself) and IGNORE: nothing to do here.

    def _chosen(self, key: str | None, dropped: Dropped, insert: Inserter) -> None:
        w = self.window
        if key == Choice.IMPORT:
            w.import_manuscript(dropped.paths[0])
        elif key == Choice.STYLE:
            w.show_style(list(dropped.paths))
        elif key == Choice.INSERT:
            job = w.jobs.run_in_thread("drop", lambda: read_texts(dropped.paths), title=tr("无法读取文件"))
            job.failed.connect(lambda message: alerts.error(w, tr("无法读取文件"), message))
            job.succeeded.connect(insert)

    def _insert(self, chapter: int, position: int, text: str) -> None:
        tab = self.window.chapter_tab(chapter)
        if tab is not None:
            tab.editor.insert_text_at(position, text)
