"""Files in and out of the window: importing a manuscript (preview first), exporting the book, the style
profile; files dropped on the window go through ui/flows/drops.py. Reading, splitting and writing are jobs
(worker threads); every dialog opens with ``open()`` from a job's end signal, emitted outside its task."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QFileDialog

from novel_desktop.controllers.drops import Dropped, Target
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.i18n import tr, tr_n
from novel_desktop.ui import alerts
from novel_desktop.ui.flows.drops import DropFlows

if TYPE_CHECKING:
    from novel_desktop.controllers.jobs import Job
    from novel_desktop.ui.main_window import MainWindow
    from novel_desktop.ui.style_drop import StyleProfileDialog


class FileFlows:
    def __init__(self, window: MainWindow) -> None:
        self.window = window
        #: Files dropped on the window, the tree or an editor (ui/flows/drops.py).
        self.drops = DropFlows(window)

    def _job(self, name: str, work: Any, error_title: str) -> Job:
        """``work`` in a worker thread; a failure is reported under ``error_title``."""
        job = self.window.jobs.run_in_thread(name, work, title=error_title)
        job.failed.connect(lambda message: alerts.error(self.window, error_title, message))
        return job

    # ------------------------------------------------------------------ import
    def import_manuscript_dialog(self) -> None:
        source, _ = QFileDialog.getOpenFileName(
            self.window, tr("导入书稿"), str(Path.home()), tr("书稿 (*.txt *.md *.docx *.epub)")
        )
        if source:
            self.window.import_manuscript(source)

    def import_manuscript(self, source: str | Path) -> Job:
        """Read and split a manuscript (a job), show what it splits into, and only when the author confirms,
        write it as a new novel (another job) and open it."""
        src = Path(source)
        job = self._job("import", lambda: ProjectController.read_manuscript(src), tr("无法读取书稿"))
        job.succeeded.connect(lambda result: self._preview(src, *result))
        return job

    def _preview(self, src: Path, manuscript: Any, split: Any) -> None:
        from novel_desktop.ui.import_dialog import ImportPreviewDialog

        ImportPreviewDialog.preview(
            self.window, src, manuscript, split, lambda title: self._write(src, manuscript, split, title)
        )

    def _write(self, src: Path, manuscript: Any, split: Any, title: str) -> None:
        w = self.window
        target, _ = QFileDialog.getSaveFileName(
            w, tr("新小说保存为"), str(src.with_suffix(".novel")), tr("小说 (*.novel)")
        )
        if not target:
            return
        if not target.endswith(".novel"):
            target += ".novel"
        if Path(target).exists():
            alerts.warning(
                w,
                tr("导入失败"),
                tr("{path} 已经存在，导入不会覆盖已有的小说。请换一个文件名。").format(path=target),
            )
            return

        def done(summary: Any) -> None:
            alerts.info(
                w,
                tr("导入完成"),
                tr("《{title}》：{chapters} 章，{volumes} 卷，共 {chars} 字。").format(
                    title=summary.title, chapters=summary.chapters, volumes=summary.volumes,
                    chars=f"{summary.total_chars:,}",
                ),
            )  # fmt: skip
            w.open_novel(target)

        job = self._job(
            "import",
            lambda: ProjectController.write_manuscript(src, manuscript, split, target, title=title),
            tr("导入失败"),
        )
        job.succeeded.connect(done)

    # ------------------------------------------------------------------ export
    def export_dialog(self) -> None:
        w = self.window
        if not w.project.is_open:
            return
        w.save_all()
        default = str(Path.home() / f"{w.project.title() or 'novel'}.txt")
        path, _ = QFileDialog.getSaveFileName(
            w, tr("导出"), default, tr("文本 (*.txt);;Markdown (*.md);;EPUB (*.epub);;Word (*.docx)")
        )
        if not path:
            return
        fmt = ProjectController.export_format(path)
        # The save dialog has asked about replacing an existing file: force=True. The novel itself, its
        # journal or a read-only file are still refused (the error names the file).
        job = self._job("export", lambda: w.project.export_book(path, fmt, force=True), tr("导出失败"))
        job.succeeded.connect(lambda result: self._exported(path, result))

    def _exported(self, path: str, result: Any) -> None:
        w = self.window
        done = tr_n("已导出 {chapters} 章到 {path}", result.chapters).format(
            chapters=result.chapters, path=path
        )
        w.statusBar().showMessage(done, 8000)
        problems = list(getattr(result, "problems", ()) or ())
        if problems:
            lines = [
                tr("第{n}章《{title}》：{message}").format(n=p.number, title=p.title, message=p.message)
                for p in problems
            ]
            alerts.warning(
                w,
                tr("导出完成，有章节需要检查"),
                done + "\n\n" + tr("这些章节导出时做了修补，请检查：") + "\n" + "\n".join(lines),
            )

    # ------------------------------------------------------------------ style and drops
    def show_style(self, paths: list[str] | None = None) -> StyleProfileDialog | None:
        """The style profile: measured from sample files (when given), editable, saved to the novel."""
        from novel_desktop.ui.style_drop import StyleProfileDialog

        w = self.window
        if not w.project.is_open:
            alerts.info(w, tr("文风档案"), tr("先打开或新建一部小说，再设置它的文风。"))
            return None
        dialog = StyleProfileDialog.show_for(w, w.project, paths or [], jobs=w.jobs)

        def import_instead(path: str) -> None:  # a whole book dropped on the style page
            dialog.reject()
            w.import_manuscript(path)

        dialog.page.manuscript_dropped.connect(import_instead)
        return dialog

    def handle_dropped_files(self, paths: list[str]) -> Job | None:
        """Files dropped on the window: what they are decides (controllers/drops.py, ui/flows/drops.py)."""
        return self.drops.drop(Dropped(tuple(paths)), Target.WINDOW)
