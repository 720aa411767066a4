"""Files dropped on the window, the project tree or a chapter editor, handled by the one drop table
(controllers/drops.py): a manuscript opens the import preview, samples the style profile, a question when only
the author knows (a short file; anything dropped on the editor), and a clear message for anything else.
Reading the files is a job (a worker thread); every question opens with ``open()`` (ui/alerts.py)."""

from __future__ import annotations

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
    from novel_desktop.controllers.jobs import Job
    from novel_desktop.ui.main_window import MainWindow

#: What each answer of the question does, in a sentence (Chinese source strings, shown through tr()).
_CHOICE_HINTS = {
    Choice.IMPORT: "导入为书稿：按章节拆分，新建一部小说（先预览，确认后才写入）。",
    Choice.STYLE: "用作风格样本：测量文风，更新这部小说的文风档案（保存前可修改）。",
    Choice.INSERT: "插入其文本：把文件里的文字插入本章的放下处。",
}


class DropFlows:
    def __init__(self, window: MainWindow) -> None:
        self.window = window

    def drop(self, dropped: Dropped, target: Target, chapter: int = 0, position: int = 0) -> Job | None:
        """Do what the table says for ``dropped`` on ``target`` (``chapter``/``position``: where in which
        editor). Files are read in a job, which is returned; a drop without files is decided at once."""
        if not dropped.paths:
            self._act(classify(dropped), dropped, target, chapter, position)
            return None
        job = self.window.jobs.run_in_thread("drop", lambda: classify(dropped), title=tr("无法读取文件"))
        job.failed.connect(lambda message: alerts.error(self.window, tr("无法读取文件"), message))
        job.succeeded.connect(lambda content: self._act(content, dropped, target, chapter, position))
        return job

    def editor_drop(self, chapter: int, dropped: Any, position: int) -> None:
        """Files dropped (or pasted) on chapter ``chapter``'s editor at ``position``."""
        self.drop(dropped, Target.EDITOR, chapter, position)

    def _act(self, content: Content, dropped: Dropped, target: Target, chapter: int, position: int) -> None:
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
            alerts.choose(
                w, tr("拖入的文件"), text, options, lambda key: self._chosen(key, dropped, chapter, position)
            )
        # INSERT_TEXT (the editor inserts dragged text itself) and IGNORE: nothing to do here.

    def _chosen(self, key: str | None, dropped: Dropped, chapter: int, position: int) -> None:
        w = self.window
        if key == Choice.IMPORT:
            w.import_manuscript(dropped.paths[0])
        elif key == Choice.STYLE:
            w.show_style(list(dropped.paths))
        elif key == Choice.INSERT:
            job = w.jobs.run_in_thread("drop", lambda: read_texts(dropped.paths), title=tr("无法读取文件"))
            job.failed.connect(lambda message: alerts.error(w, tr("无法读取文件"), message))
            job.succeeded.connect(lambda text: self._insert(chapter, position, text))

    def _insert(self, chapter: int, position: int, text: str) -> None:
        tab = self.window.chapter_tab(chapter)
        if tab is not None:
            tab.editor.insert_text_at(position, text)
