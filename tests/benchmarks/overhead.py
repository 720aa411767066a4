"""Where a chapter's own overhead goes: ``python -m tests.benchmarks.overhead [--repeat N] [--profile] [--json]``.

The pipeline benchmark's ``overhead_ms_ch5`` / ``overhead_ms_ch500`` measured alone (a chapter through the real
pipeline, the real SDK and the fake Messages API server replying instantly), repeated ``--repeat`` times on fresh
copies of the same novel; the best run counts (the machine's other load only ever adds). The server runs in a
process of its own (tests/fakes/server_process.py), as the real API is elsewhere; ``--in-process`` runs it in
this one, as the figures before 2026-11-25 were taken (its threads then take 13-19 ms of CPU a chapter from
under our GIL). ``cpu_ms_*`` is the process's CPU time over the chapter, which a loaded machine disturbs much
less than the wall time. ``ch500`` is a key chapter (the end of a volume: a second judge runs),
``ch499`` the ordinary chapter before it, to compare with ``ch5`` like with like. ``--profile`` adds
what the time went on: the event loop's functions (cProfile, our code only) and the store calls run in worker
threads (``db()`` / ``asyncio.to_thread``: wall time per function), at chapter 5 and at chapter 500.
A warm-up chapter first pays the one-time costs (imports, the segmenter) and the full garbage collection its
imports are due (``gc.collect()``; see tests/benchmarks/pipeline.py).

Nothing is asserted: the figures are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import json
import os
import pstats
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from novel_desktop.agents.chapter import LLMChapterAgents
from novel_desktop.llm.client import LLMClient
from novel_desktop.llm.settings import LLMSettings, RetrySettings
from novel_desktop.pipeline.chapter import ChapterPipeline
from novel_desktop.pipeline.interaction import InteractionManager, refuse_non_interactive
from novel_desktop.storage.store import NovelStore
from tests.benchmarks.longnovel import generate
from tests.e2e.replies import judge_json, refiner_json, summarizer_json, writer_text
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.fakes.server_process import Served, ServerProcess


def _in_process() -> FakeAnthropicServer:
    server = FakeAnthropicServer()
    script(server)
    return server


def script(server: FakeAnthropicServer) -> None:
    """The instant server's replies."""
    server.set_default("chapter_writer", Reply(writer_text(8), chunk_size=24))
    server.set_default("summarizer", Reply(summarizer_json(), chunk_size=24))
    server.set_default("style_refiner", Reply(refiner_json(), chunk_size=24))
    server.set_default("quality_judge", Reply(judge_json(4.2), chunk_size=24))
    server.set_default("judge_secondary", Reply(judge_json(4.2), chunk_size=24))


async def _chapter(path: Path, server: Served, profile: cProfile.Profile | None) -> tuple[float, float]:
    settings = LLMSettings(retry=RetrySettings(max_attempts=2, base_backoff_s=0.001, max_backoff_s=0.01))
    with NovelStore.open(path) as store:
        async with LLMClient(settings, api_key="sk-bench", base_url=server.base_url) as client:
            pipeline = ChapterPipeline(
                store, LLMChapterAgents(store, client), InteractionManager(refuse_non_interactive)
            )
            if profile is not None:
                profile.enable()
            started, cpu = time.perf_counter(), time.process_time()
            await pipeline.run_chapter()
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            if profile is not None:
                profile.disable()
    return wall, cpu


class _ThreadSpans:
    """Wall time of every function run through ``asyncio.to_thread`` (the store calls), while installed."""

    def __init__(self) -> None:
        self.spans: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
        self._original: Callable[..., Any] = asyncio.to_thread

    def __enter__(self) -> _ThreadSpans:
        original = self._original
        spans = self.spans

        async def timed(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
            name = getattr(fn, "__qualname__", repr(fn))

            def run() -> Any:
                started = time.perf_counter()
                try:
                    return fn(*args, **kwargs)
                finally:
                    span = spans[name]
                    span[0] += 1
                    span[1] += time.perf_counter() - started

            return await original(run)

        asyncio.to_thread = timed
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.to_thread = self._original

    def lines(self, top: int) -> list[str]:
        ranked = sorted(self.spans.items(), key=lambda kv: -kv[1][1])[:top]
        return [f"{total * 1000:8.1f} ms {int(calls):3d}x  {name}" for name, (calls, total) in ranked]


def _profile_lines(profile: cProfile.Profile, top: int) -> list[str]:
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out)
    stats.sort_stats("cumulative").print_stats(r"novel_desktop/(?!llm/client)", top)
    return [line for line in out.getvalue().splitlines() if line.strip()][-top - 1 :]


def run(repeat: int, profile: bool, in_process: bool = False) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["NOVEL_DESKTOP_DATA_DIR"] = str(root / "data")
        novels = {
            "ch5": generate(root / "short.novel", 4, per_volume=50),
            # Chapter 500 ends a volume: a key chapter, judged a second time (two more model calls than
            # chapter 5). Chapter 499 of the same long novel is an ordinary one: like with like for ch5.
            "ch499": generate(root / "long499.novel", 498, per_volume=50),
            "ch500": generate(root / "long.novel", 499, per_volume=50),
        }
        with _in_process() if in_process else ServerProcess("tests.benchmarks.overhead:script") as server:
            asyncio.run(_chapter(generate(root / "warm.novel", 2, per_volume=50), server, None))
            gc.collect()  # the full pass the warm-up's imports are due, not one of the measured chapters'
            for name, novel in novels.items():
                walls, cpus = [], []
                for i in range(repeat):
                    copy = root / f"{name}-{i}.novel"
                    shutil.copy(novel, copy)
                    wall, cpu = asyncio.run(_chapter(copy, server, None))
                    walls.append(wall * 1000)
                    cpus.append(cpu * 1000)
                results[f"overhead_ms_{name}"] = round(min(walls), 1)
                results[f"cpu_ms_{name}"] = round(min(cpus), 1)
                results[f"runs_ms_{name}"] = [round(w, 1) for w in walls]
                if profile:
                    copy = root / f"{name}-profiled.novel"
                    shutil.copy(novel, copy)
                    prof = cProfile.Profile()
                    with _ThreadSpans() as spans:
                        asyncio.run(_chapter(copy, server, prof))
                    results[f"event_loop_{name}"] = _profile_lines(prof, 25)
                    results[f"worker_threads_{name}"] = spans.lines(15)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs per novel; the best counts")
    parser.add_argument("--profile", action="store_true", help="also print where the time went")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--in-process", action="store_true", help="run the fake server in this process")
    args = parser.parse_args(argv)
    results = run(max(1, args.repeat), args.profile, args.in_process)
    if args.json:
        print(json.dumps(results, ensure_ascii=False))
        return 0
    for key, value in results.items():
        if isinstance(value, list) and value and isinstance(value[0], str):
            print(f"{key}:")
            for line in value:
                print(f"  {line}")
        else:
            print(f"{key:24s} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
