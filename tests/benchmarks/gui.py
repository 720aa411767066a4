"""GUI benchmark: ``python -m tests.benchmarks.gui [--json]``.

- ``max_stall_ms`` / ``p99_stall_ms``: while one chapter runs through the main window (续写: the pipeline
  controller, the live draft tab, the dock, the tree and the quality panel on the qasync loop) with the
  fake Messages API server streaming at a fixed token rate, a Qt timer ticks every 5 ms; a tick's stall is
  how much later than 5 ms after the previous one it fired. The aim is no stall over 50 ms. The details add
  ``max_turn_cpu_ms`` / ``p99_turn_cpu_ms``: the GUI thread's CPU time between two ticks, the stall an idle
  machine would show (a loaded machine delays the wake-up too, which the wall-clock stall counts).
- ``open_500_ms``: a generated 500-chapter novel, from nothing open until its last chapter is shown. The
  main window is used when ``novel_desktop.ui.main_window.MainWindow`` exists; otherwise the measure is
  ProjectController.open + a volume/chapter tree model of all 500 chapters + the last chapter loaded into a
  read-only QPlainTextEdit that is shown and painted (``open_500_mode`` on stderr says which). Aim: under 1 s.
  The details add ``open_500_cpu_ms``, the GUI thread's CPU time over it (closing the window included), which
  a loaded machine does not inflate.

Nothing is asserted: the figures are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

TOKEN_RATE = 400.0  # output tokens per second: a typical streaming speed, so the run has a long stream
TICK_MS = 5
#: How many project frames (innermost first) the stall probe names per sample.
DEPTH = int(os.environ.get("GUI_BENCH_DEPTH", "3"))


def _script(server: Any) -> None:
    from tests.e2e.replies import judge_json, refiner_json, summarizer_json, writer_text
    from tests.fakes.anthropic_server import Reply

    def reply(text: str) -> Reply:
        return Reply(text, chunk_size=12, token_rate=TOKEN_RATE)

    server.set_default("chapter_writer", reply(writer_text(8)))
    server.set_default("summarizer", reply(summarizer_json()))
    server.set_default("style_refiner", reply(refiner_json()))
    server.set_default("quality_judge", reply(judge_json(4.2)))
    server.set_default("judge_secondary", reply(judge_json(4.2)))


class StallProbe:
    """Samples the GUI thread's Python stack every millisecond from a helper thread, so a late tick can be
    blamed on what ran during it: the innermost project frame (``novel_desktop``) and the outermost one."""

    def __init__(self) -> None:
        import threading

        self._target = threading.get_ident()
        self._samples: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(0.001):
            frame = sys._current_frames().get(self._target)
            names: list[str] = []
            while frame is not None:
                code = frame.f_code
                if "novel_desktop" in code.co_filename or "anthropic" in code.co_filename:
                    short = code.co_filename.rsplit("/", 1)[-1]
                    names.append(f"{short}:{code.co_name}")
                frame = frame.f_back
            if names:
                self._samples.append((time.perf_counter(), " < ".join(names[:DEPTH])))

    def blame(self, windows: list[tuple[float, float, float, float]], top: int = 8) -> list[str]:
        """What was sampled during each stall window (start, end, stall ms, GUI-thread CPU ms), the windows
        with the most CPU first."""
        lines = []
        for start, end, stall, busy in sorted(windows, key=lambda w: -w[3])[:top]:
            seen: dict[str, int] = {}
            for at, where in self._samples:
                if start <= at <= end:
                    seen[where] = seen.get(where, 0) + 1
            common = sorted(seen.items(), key=lambda kv: -kv[1])[:3]
            head = f"{stall:.1f} ms (CPU {busy:.1f} ms): "
            lines.append(head + ("; ".join(f"{w} ×{n}" for w, n in common) or "(Qt/C++)"))
        return lines


class Ticker:
    """A 5 ms Qt timer recording how late each tick fires (and when the long ones were, for the probe)."""

    def __init__(self) -> None:
        from PySide6.QtCore import Qt, QTimer

        self.stalls: list[float] = []
        #: The GUI thread's CPU time between two ticks (ms): what a stall would be on an idle machine, which
        #: another process's load (it only delays the wake-up) does not inflate.
        self.busy: list[float] = []
        self.windows: list[tuple[float, float, float, float]] = []
        self._last = 0.0
        self._cpu = 0.0
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._tick)

    def start(self) -> None:
        self._last = time.perf_counter()
        self._cpu = time.thread_time()
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()

    def _tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        stall = max(0.0, (now - self._last) * 1000 - TICK_MS)
        busy = (cpu - self._cpu) * 1000
        self.stalls.append(stall)
        self.busy.append(busy)
        if stall > 8 or busy > 8:
            self.windows.append((self._last, now, stall, busy))
        self._last, self._cpu = now, cpu


def _p99(values: list[float]) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[98]


async def _run_chapter(novel: Path) -> dict[str, Any]:
    from novel_desktop.config import AppSettings
    from novel_desktop.controllers.warm_up import before_window
    from novel_desktop.ui.main_window import MainWindow

    before_window()  # as app.main does: the segmenter's dictionary is built before the window exists
    # The whole window, as the author has it: tree, editor tabs, the live draft, the quality panel and the
    # pipeline dock all follow the run.
    window = MainWindow(settings=AppSettings())
    window.resize(1600, 1000)
    window.show()
    if not window.open_novel(novel, remember=False):
        raise RuntimeError(f"cannot open {novel}")
    project, controller = window.project, window.pipeline

    failures: list[str] = []
    deltas: list[int] = []
    controller.failed.connect(failures.append)
    controller.text_delta.connect(lambda _c, t: deltas.append(len(t)))
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    controller.finished.connect(lambda: done.done() or done.set_result(None))
    # The window warms the heavy libraries up in the background once it is shown, as the app does; the
    # stalls of that first-use loading are reported apart from the run's.
    probe = StallProbe()
    probe.start()
    warm = Ticker()
    warm.start()
    warm_started = time.perf_counter()
    controller.warm_up()
    await controller.wait_ready()
    warm_s = time.perf_counter() - warm_started
    await asyncio.sleep(0.2)
    warm.stop()
    ticker = Ticker()
    ticker.start()
    started = time.perf_counter()
    window.continue_action.trigger()
    await asyncio.wait_for(done, 300)
    elapsed = time.perf_counter() - started
    ticker.stop()
    probe.stop()
    committed = len(project.chapters())
    project.close()
    window.close()
    if failures:
        raise RuntimeError(f"the chapter failed: {failures[0]}")
    return {
        "stalls": ticker.stalls,
        "busy": ticker.busy,
        "warm_up_s": warm_s,
        "warm_up_max_stall_ms": max(warm.stalls, default=0.0),
        "warm_up_stalls": probe.blame(warm.windows, top=4),
        "run_stalls": probe.blame(ticker.windows),
        "run_s": elapsed,
        "deltas": len(deltas),
        "chars": sum(deltas),
        "chapters": committed,
    }


def _open_500(novel: Path) -> tuple[float, float, str]:
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    try:
        from novel_desktop.ui import main_window  # the main window, once it exists
    except ImportError:
        main_window = None  # type: ignore[assignment]
    # The GUI thread's CPU time of the open too: what a quiet machine would show (load delays only the wall).
    cpu = time.thread_time()
    if main_window is not None and hasattr(main_window, "MainWindow"):
        elapsed = _open_500_main_window(app, novel, main_window.MainWindow)
        mode = "MainWindow"
    else:
        elapsed = _open_500_parts(app, novel)
        mode = "ProjectController.open + tree model + QPlainTextEdit"
    return elapsed, (time.thread_time() - cpu) * 1000, mode


def _open_500_main_window(app: Any, novel: Path, window_class: Any) -> float:
    from novel_desktop.controllers.project_controller import ProjectController

    started = time.perf_counter()
    window = window_class()
    window.resize(1600, 1000)
    window.show()
    opener = getattr(window, "open_novel", None) or getattr(window, "open_project", None)
    if opener is None:
        project = getattr(window, "project", None) or ProjectController()
        project.open(novel)
    else:
        opener(str(novel))
    last = getattr(window, "show_chapter", None)
    if last is not None:
        last(500)
    app.processEvents()
    window.repaint()
    elapsed = (time.perf_counter() - started) * 1000
    window.close()
    return elapsed


def _open_500_parts(app: Any, novel: Path) -> float:
    from PySide6.QtGui import QStandardItem, QStandardItemModel
    from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QTreeView, QWidget

    from novel_desktop.controllers.project_controller import ProjectController

    window = QWidget()
    layout = QHBoxLayout(window)
    tree = QTreeView()
    editor = QPlainTextEdit()
    editor.setReadOnly(True)
    layout.addWidget(tree, 1)
    layout.addWidget(editor, 3)
    window.resize(1600, 1000)
    window.show()
    app.processEvents()

    started = time.perf_counter()
    project = ProjectController()
    project.open(novel)
    model = QStandardItemModel()
    volumes: dict[int, QStandardItem] = {}
    titles = dict(project.volumes())
    chapters = project.chapters()
    for info in chapters:
        parent = volumes.get(info.volume)
        if parent is None:
            name = titles.get(info.volume) or ""
            parent = volumes[info.volume] = QStandardItem(f"第{info.volume}卷 {name}".strip())
            model.appendRow(parent)
        parent.appendRow(QStandardItem(f"第{info.number}章 {info.title}（{info.chars}字）"))
    tree.setModel(model)
    last = chapters[-1]
    editor.setPlainText(project.chapter_text(last.number))
    tree.setCurrentIndex(model.indexFromItem(volumes[last.volume].child(volumes[last.volume].rowCount() - 1)))
    window.repaint()  # painted: the author sees the chapter
    app.processEvents()
    elapsed = (time.perf_counter() - started) * 1000
    project.close()
    window.close()
    return elapsed


def run() -> tuple[dict[str, float], dict[str, Any]]:
    import qasync
    from PySide6.QtWidgets import QApplication

    from novel_desktop.llm.settings import LLMSettings, RetrySettings, save_settings
    from novel_desktop.storage.folder import import_folder
    from tests.benchmarks.longnovel import generate
    from tests.conftest import FIXTURES
    from tests.fakes.anthropic_server import FakeAnthropicServer

    app = QApplication.instance() or QApplication(sys.argv[:1])
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropicServer() as server:
        root = Path(tmp)
        os.environ["NOVEL_DESKTOP_CONFIG_DIR"] = str(root / "config")
        os.environ["NOVEL_DESKTOP_DATA_DIR"] = str(root / "data")
        os.environ["ANTHROPIC_API_KEY"] = "sk-bench-gui"
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        save_settings(
            LLMSettings(retry=RetrySettings(max_attempts=2, base_backoff_s=0.001, max_backoff_s=0.01))
        )
        _script(server)
        novel = root / "青石问道.novel"
        import_folder(FIXTURES / "seed_project", novel)

        loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)
        try:
            chapter = loop.run_until_complete(_run_chapter(novel))
        finally:
            loop.close()
            asyncio.set_event_loop(None)

        long_novel = generate(root / "long.novel", 500, per_volume=50)
        open_ms, open_cpu_ms, mode = _open_500(long_novel)

    stalls = chapter.pop("stalls")
    busy = chapter.pop("busy")
    figures = {
        "max_stall_ms": round(max(stalls), 1),
        "p99_stall_ms": round(_p99(stalls), 1),
        "open_500_ms": round(open_ms, 1),
    }
    details = {
        "open_500_mode": mode,
        # The GUI thread's CPU during the open (includes closing the window afterwards, a few ms).
        "open_500_cpu_ms": round(open_cpu_ms, 1),
        "ticks": len(stalls),
        # The GUI thread's CPU between two ticks: the stalls an idle machine would show (load-proof).
        "max_turn_cpu_ms": round(max(busy, default=0.0), 1),
        "p99_turn_cpu_ms": round(_p99(busy), 1),
        "stalls_over_50ms": sum(1 for s in stalls if s > 50),
        "run_s": round(chapter["run_s"], 2),
        "warm_up_s": round(chapter["warm_up_s"], 2),
        "warm_up_max_stall_ms": round(chapter["warm_up_max_stall_ms"], 1),
        # The longest stalls and what the GUI thread ran during each (sampled), the run's and the warm-up's.
        "run_stalls": chapter["run_stalls"],
        "warm_up_stalls": chapter["warm_up_stalls"],
        "streamed_pieces": chapter["deltas"],
        "streamed_chars": chapter["chars"],
        "chapters_after_run": chapter["chapters"],
    }
    return figures, details


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    figures, details = run()
    if args.json:
        print(json.dumps(figures, ensure_ascii=False))
        print(json.dumps(details, ensure_ascii=False), file=sys.stderr)
    else:
        for key, value in {**figures, **details}.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
