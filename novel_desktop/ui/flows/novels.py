"""Opening, creating and closing novels from the window (a held lock explained, a stale one cleared)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog, QInputDialog

from novel_desktop.controllers.project_controller import ProjectController, ProjectLocked
from novel_desktop.controllers.settings_controller import save_app_settings
from novel_desktop.i18n import labelled, tr
from novel_desktop.ui import alerts
from novel_desktop.ui.field_drops import field_drops_paused

if TYPE_CHECKING:
    from novel_desktop.ui.main_window import MainWindow

log = logging.getLogger(__name__)


def open_failure(path: Path, exc: BaseException) -> str:
    """What the author reads when ``path`` does not open: the store's own message (it names the file and
    what to do); for anything unforeseen, the file and a plain suggestion, never library text."""
    if isinstance(exc, OSError) or type(exc).__module__.startswith("novel_desktop."):
        message = str(exc)
        return message if str(path) in message or path.name in message else labelled(str(path), message)
    log.error("opening %s failed", path, exc_info=exc)
    return tr(
        "打开 {path} 失败：文件可能已损坏或不是小说文件。请用备份（同目录下的 .bak-* 文件）恢复。"
    ).format(path=path)


class NovelFlows:
    def __init__(self, window: MainWindow) -> None:
        self.window = window

    @field_drops_paused()  # the tree, the first chapter's tab and the panels are built in one go
    def open_novel(self, path: str | Path, *, remember: bool = True) -> bool:
        """Open a novel for writing; a lock held elsewhere is explained (and cleared if stale and agreed).
        False when it is not open (yet: a stale lock opens it once the author agrees)."""
        w = self.window
        path = Path(path)
        if w.project.is_open and w.project.path and w.project.path.resolve() == path.resolve():
            w.show_workspace()
            return True
        if not self.close_novel():
            return False
        with w.project.reading():  # the views read the chapter list once between them
            try:
                w.project.open(path)
            except ProjectLocked as exc:
                opened: list[bool] = []
                self._resolve_lock(path, exc, lambda: opened.append(self._open_again(path, remember)))
                return bool(opened and opened[0])
            except Exception as exc:  # a broken file, a newer schema, a missing file: say so, keep the window
                alerts.error(w, tr("无法打开"), open_failure(path, exc))
                return False
            self._opened(path, remember)
        return True

    def _open_again(self, path: Path, remember: bool) -> bool:
        ProjectController.clear_stale_lock(path)
        try:
            self.window.project.open(path)
        except Exception as again:
            alerts.error(self.window, tr("无法打开"), open_failure(path, again))
            return False
        self._opened(path, remember)
        return True

    def _opened(self, path: Path, remember: bool) -> None:
        if remember:
            self.remember(path)
        self.window._update_for_project()
        self.window.show_workspace()

    def _resolve_lock(self, path: Path, exc: ProjectLocked, clear_and_open: Callable[[], object]) -> None:
        who = exc.holder.describe()
        if not exc.stale:
            alerts.warning(
                self.window,
                tr("小说正在别处打开"),
                tr("《{name}》正被另一个窗口或命令写入：\n{who}\n\n请先关闭它，再打开。").format(
                    name=path.stem, who=who
                ),
            )
            return
        alerts.confirm(
            self.window,
            tr("清除失效的锁？"),
            tr(
                "《{name}》的写入锁属于另一台电脑上的程序，它已很久没有心跳：\n{who}\n\n确认那个程序已经退出后，可以清除这个锁并打开。"
            ).format(name=path.stem, who=who),
            lambda yes: clear_and_open() if yes else None,
            default=False,
        )

    def remember(self, path: Path) -> None:
        self.window.settings.add_recent(path)
        try:
            save_app_settings(self.window.settings)
        except OSError:
            log.warning("could not save the recent novels", exc_info=True)

    def close_novel(self) -> bool:
        """Save and close the open novel (refused while the pipeline runs)."""
        w = self.window
        if not w.project.is_open:
            return True
        if w.pipeline.running:
            alerts.info(w, tr("正在续写"), tr("请先停止正在运行的续写或重建。"))
            return False
        w.save_all()
        w.close_all_tabs()
        w.project.close()
        w._update_for_project()
        return True

    def new_novel(self) -> None:
        w = self.window
        title, ok = QInputDialog.getText(w, tr("新建小说"), tr("书名："))
        title = title.strip()
        if not ok or not title:
            return
        default = str(Path.home() / f"{title}.novel")
        path, _ = QFileDialog.getSaveFileName(w, tr("保存为"), default, tr("小说 (*.novel)"))
        if not path:
            return
        if not path.endswith(".novel"):
            path += ".novel"
        if not self.close_novel():
            return
        try:
            w.project.create(path, title=title, genre=None, platform="web")
        except Exception as exc:
            alerts.error(w, tr("无法新建"), str(exc))
            return
        self.remember(Path(path))
        w._update_for_project()
        w.show_start_page()  # a new novel's next step is its quick start: the start page says so
        alerts.confirm(
            w,
            tr("快速起步"),
            tr(
                "《{title}》已建好。现在快速起步吗？（题材、主角、冲突、平台 → 设定、角色、文风 → 试写 3 章）"
            ).format(title=title),
            lambda yes: w.runs.run_lifecycle("quick_start") if yes else None,
        )

    def open_demo(self) -> bool:
        """Open a fresh copy of the bundled demo novel (the same copy ``--demo`` opens)."""
        try:
            path = ProjectController.demo_copy()
        except Exception as exc:  # a broken bundle or a full disk: say so, keep the window
            alerts.error(self.window, tr("无法打开示例"), str(exc))
            return False
        return self.open_novel(path)

    def open_novel_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.window, tr("打开小说"), str(Path.home()), tr("小说 (*.novel)")
        )
        if path:
            self.open_novel(path)
