"""The desktop application's entry point (``novel-desktop``) and the composition root of the GUI.

``novel-desktop [NOVEL] [--project P] [--lang zh|en] [--demo]`` opens the window on a qasync event loop, so
the pipeline's coroutines and the widgets share one thread. ``--screenshot OUT.png [--view V] [--size WxH]``
renders the window offscreen, saves the PNG and exits (for documentation and for looking at a change); with
``--demo`` it shows a demo novel built in a temporary folder.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from novel_desktop.ui.main_window import MainWindow

log = logging.getLogger(__name__)

APP_NAME = "novel_desktop"
VIEWS = ("start", "editor", "outline", "storylines", "foreshadowing", "quality", "analytics", "settings")
DEFAULT_SIZE = (1600, 1000)


def parse_size(text: str) -> tuple[int, int]:
    """``1600x1000`` → (1600, 1000); argparse turns a ValueError into a usage message."""
    w, sep, h = text.lower().partition("x")
    if not sep or not w.isdigit() or not h.isdigit() or int(w) < 320 or int(h) < 240:
        raise argparse.ArgumentTypeError(f"尺寸应写成 宽x高，例如 1600x1000 (size as WxH): {text!r}")
    return int(w), int(h)


def _version() -> str:
    """``novel-desktop 0.1.0``: the installed distribution's version, else the package's own."""
    from importlib.metadata import PackageNotFoundError, version

    from novel_desktop import __version__

    try:
        return f"novel-desktop {version('novel-desktop')}"
    except PackageNotFoundError:
        return f"novel-desktop {__version__}"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="novel-desktop", description="网文长篇创作 (novel_desktop)")
    p.add_argument("--version", action="version", version=_version(), help="显示版本 / show the version")
    p.add_argument("novel", nargs="?", help="要打开的小说 (.novel) / the novel to open")
    p.add_argument("--project", help="要打开的小说 (.novel) / the novel to open")
    p.add_argument("--lang", choices=("zh", "en"), help="界面语言 / UI language")
    p.add_argument("--demo", action="store_true", help="打开示例小说 / open the bundled demo novel")
    p.add_argument(
        "--screenshot", metavar="OUT.png", help="离屏渲染窗口并保存为 PNG 后退出 / render and exit"
    )
    p.add_argument(
        "--view", choices=VIEWS, default="start", help="截图显示的页面 / what the screenshot shows"
    )
    p.add_argument("--size", type=parse_size, default=DEFAULT_SIZE, help="截图尺寸 WxH / screenshot size")
    return p


def _application(argv: Sequence[str]) -> QApplication:
    from PySide6.QtWidgets import QApplication

    from novel_desktop.ui.theme import apply_theme

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(list(argv))
    app.setApplicationName(APP_NAME)
    app.setApplicationDisplayName("novel_desktop")
    apply_theme(app)
    return app


def _select_language(lang: str | None) -> None:
    from novel_desktop.config import load_app_settings
    from novel_desktop.i18n import language, set_language
    from novel_desktop.ui.qt_translations import install_qt_translations

    set_language(lang or load_app_settings().language)
    install_qt_translations(language())


def _demo_novel() -> Path:
    """Hook for ``--demo``: a fresh copy of the bundled demo novel under the user's data folder."""
    from novel_desktop.demo import demo_copy

    return demo_copy()


def create_main_window() -> MainWindow:
    """The main window with no novel open (its start page)."""
    from novel_desktop.ui.main_window import MainWindow

    return MainWindow()


# ---------------------------------------------------------------------------------------------- screenshot
def render_screenshot(
    out: str | Path,
    *,
    project: str | Path | None = None,
    view: str = "start",
    size: tuple[int, int] = DEFAULT_SIZE,
    language: str | None = None,
) -> Path:
    """Render the window at ``size`` showing ``view`` (of ``project``, if given) and save it as a PNG."""
    from PySide6.QtCore import QRect, Qt
    from PySide6.QtGui import QColor, QPainter
    from PySide6.QtWidgets import QApplication

    from novel_desktop.ui import alerts
    from novel_desktop.ui.main_window import MainWindow

    app = _application([sys.argv[0]])
    _select_language(language)
    # Nobody is at the screen: an alert goes to stderr and never blocks the render.
    previous_alerts = alerts.use(alerts.HeadlessAlerts())
    window = MainWindow()
    window.resize(*size)
    try:
        if project is not None and not window.open_novel(project, remember=False):
            # The alert (on stderr) said why; exit 2 like the CLI for a file the user has to fix.
            print(f"无法打开 {project} (cannot open the novel)", file=sys.stderr)
            raise SystemExit(2)
        window.show()
        _settle(app)
        dialog = None
        if view == "start":
            window.show_start_page()
        elif view in ("editor", "quality"):
            window.show_workspace()
            if view == "quality":
                window.quality_dock.show()
                window.resizeDocks([window.quality_dock], [int(size[0] * 0.32)], Qt.Orientation.Horizontal)
        elif view in ("outline", "storylines", "foreshadowing", "analytics"):
            window.open_view(view)
        elif view == "settings":
            from novel_desktop.ui.settings_dialog import SettingsDialog

            window.show_workspace() if window.project.is_open else window.show_start_page()
            dialog = SettingsDialog(window)
            dialog.show()
        _settle(app)
        image = window.grab().toImage()
        if dialog is not None:
            # A dialog is its own top-level window offscreen: draw it over the dimmed window, centred.
            _settle(app)
            shot = dialog.grab()
            painter = QPainter(image)
            painter.fillRect(image.rect(), QColor(0, 0, 0, 70))
            x = max(0, (image.width() - shot.width()) // 2)
            y = max(0, (image.height() - shot.height()) // 2)
            painter.drawPixmap(QRect(x, y, shot.width(), shot.height()), shot)
            painter.end()
            dialog.close()
        path = Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not image.save(str(path)):  # the format follows the suffix (.png)
            raise OSError(f"无法写入 {path} (cannot write the PNG)")
        return path
    finally:
        alerts.use(previous_alerts)
        window.project.close()
        window.hide()
        window.deleteLater()
        QApplication.processEvents()


def _settle(app: QApplication) -> None:
    """Let layouts, resizes and first paints happen before grabbing."""
    for _ in range(5):
        app.processEvents()


def _screenshot_of_demo(args: argparse.Namespace) -> int:
    """``--screenshot --demo``: render a demo novel built in a temporary folder, so no copy is left behind."""
    import tempfile

    from novel_desktop.demo import build_demo

    with tempfile.TemporaryDirectory(prefix="novel-demo-") as folder:
        novel = build_demo(Path(folder) / "demo.novel")
        render_screenshot(args.screenshot, project=novel, view=args.view, size=args.size, language=args.lang)
    return 0


def _on_uncaught(kind: type[BaseException], exc: BaseException, tb: object) -> None:
    """sys.excepthook of the window: a bug in a slot is logged (scrubbed) and told in one line, the window
    stays; never a traceback on the author's screen."""
    if isinstance(exc, KeyboardInterrupt):
        sys.__excepthook__(kind, exc, tb)  # type: ignore[arg-type]
        return
    from novel_desktop.crash import write_crash_log

    where = write_crash_log(exc)
    message = f"意外错误 / unexpected error: {type(exc).__name__}（详情见 details in {where or '-'}）"
    print(message, file=sys.stderr)
    from PySide6.QtWidgets import QApplication

    from novel_desktop.ui import alerts

    if QApplication.instance() is not None:
        alerts.error(None, "novel_desktop", message)


# ---------------------------------------------------------------------------------------------- the app
def collect_garbage_in_the_gui_thread() -> QTimer:
    """Python's cyclic garbage collector runs in whichever thread happens to allocate; in a job's worker
    thread it would destroy Qt objects there (a crash). Automatic collection is switched off and this timer
    collects, generation by generation as Python would, in the GUI thread."""
    import gc

    from PySide6.QtCore import QTimer

    def collect() -> None:
        counts, thresholds = gc.get_count(), gc.get_threshold()
        generation = -1
        for gen in range(3):
            if counts[gen] > thresholds[gen]:
                generation = gen
        if generation >= 0:
            gc.collect(generation)

    gc.disable()
    timer = QTimer()
    timer.timeout.connect(collect)
    timer.start(200)
    return timer


async def _freeze_startup_objects(window: MainWindow) -> None:
    """Once the warm-up has imported the heavy libraries, move every object alive then (modules, the SDK's
    schemas, the open novel's window: ~340,000 objects) out of the collector's sight (``gc.freeze``, which
    costs nothing). They live as long as the process; without this every full collection the timer makes
    walks them all again, a 40-200 ms stall of the window in the middle of whatever the author is doing."""
    import gc

    try:
        await window.pipeline.wait_ready()
    except Exception:  # a failed warm-up is reported by the run that needs it; freeze what there is
        log.debug("warm-up failed before the freeze", exc_info=True)
    gc.freeze()


def _loop_class(base: type[asyncio.AbstractEventLoop]) -> type[asyncio.AbstractEventLoop]:
    """qasync's loop with asyncio's async-generator hooks, which qasync (0.28) does not install.

    Without them an async generator left unfinished (an HTTP stream's chain of generators in httpx and
    httpcore when a call is cancelled mid-reply) is closed by the garbage collector outside any task, and
    httpcore's close then fails ("no running event loop") instead of releasing its connection; with them its
    close runs as a task of this loop, and the Runner's shutdown_asyncgens closes the rest at exit.
    """

    class HookedLoop(base):  # type: ignore[misc,valid-type]
        def run_forever(self) -> None:
            old = sys.get_asyncgen_hooks()
            sys.set_asyncgen_hooks(
                firstiter=self._asyncgen_firstiter_hook, finalizer=self._asyncgen_finalizer_hook
            )
            try:
                super().run_forever()
            finally:
                sys.set_asyncgen_hooks(*old)

    return HookedLoop


async def run_window(window: MainWindow) -> int:
    """Show the window and run until it is closed; then cancel what runs and release the lock."""
    from PySide6.QtWidgets import QApplication

    collector = collect_garbage_in_the_gui_thread()
    closed = asyncio.Event()
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.lastWindowClosed.connect(closed.set)
    window.show()
    window.pipeline.warm_up()  # the slow imports load in worker threads while the author looks around
    settle = asyncio.get_running_loop().create_task(_freeze_startup_objects(window))
    await closed.wait()
    settle.cancel()
    await window.shutdown()
    collector.stop()
    import gc

    gc.enable()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(argv) if argv is not None else sys.argv[1:])
    if args.screenshot:
        # Rendering needs no screen: offscreen unless the caller chose a platform.
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        if args.demo:
            return _screenshot_of_demo(args)
        render_screenshot(
            args.screenshot,
            project=args.project or args.novel,
            view=args.view,
            size=args.size,
            language=args.lang,
        )
        return 0

    import qasync

    from novel_desktop.controllers import warm_up
    from novel_desktop.ui.main_window import MainWindow

    warm_up.before_window()
    _application([sys.argv[0]])
    _select_language(args.lang)
    sys.excepthook = _on_uncaught
    window = MainWindow()
    path = args.project or args.novel
    if args.demo:
        path = str(_demo_novel())
    if path:
        window.open_novel(path)
    else:
        window.show_start_page()
    with asyncio.Runner(loop_factory=_loop_class(qasync.QEventLoop)) as runner:
        return runner.run(run_window(window))
