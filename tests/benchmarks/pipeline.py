"""Pipeline benchmark: ``python -m tests.benchmarks.pipeline [--json]``.

With the fake Messages API server streaming at a fixed token rate, it measures:

- ``critical_path_ratio``: a chapter's wall time divided by the writer stage's time (the seed's sequential
  design is about 2.4; Summarizer and StyleRefiner run concurrently here and the refiner returns edits);
- ``overhead_ms_ch5`` / ``overhead_ms_ch500``: the whole chapter with an instant server, at chapter 5 and at
  chapter 500 of a generated long novel (all of it is our overhead: SQLite, context, HTTP, parsing), the
  fastest of five runs each (the chapters take turns). Chapter 500 ends volume 10, a key chapter: a second
  judge makes one model call more than chapter 5 makes; ``--details`` adds chapter 499, an ordinary one (like
  with like for chapter 5). The server runs in a process of its own (tests/fakes/server_process.py), as the
  real API is on another machine: inside this one its threads took 13-19 ms of CPU a chapter from under our
  GIL. ``--details`` adds the same chapters with the server in this process (``*_inproc``), the way the
  figures before 2026-11-25 were taken (then one run each);
- ``writer_prompt_tokens_ch30`` / ``_ch500``: the ChapterWriter prompt (pessimistic estimate: 1 token per CJK
  character);
- ``cacheable_input_share``: input tokens read from the prompt cache over all input tokens of the chapter's
  calls (cache writes are not savings); the fake applies each model's minimum cacheable prefix;
- ``refiner_output_share``: the refiner's output tokens over the chapter's (writer's) output tokens;
- ``chapter_cost_usd``: the paced chapter's cost with the default Anthropic models at the fake's usage (1
  token per 汉字; replies of realistic size: a ~3,000-字 chapter, a ~1.7K-token judge in three
  ~0.55K-token panels, a ~0.7K summary in two parts: the summary and patch, the storyline memory).

The paced chapter is a day's second one: a chapter before it warms the prompt cache. ``--json`` prints
exactly these eight figures; ``--details`` adds the paced chapter's wall time and per-stage usage, and for
the overhead chapters their CPU time (``cpu_ms_*``: this process's, with the fake server's when in it) and the time
Python's full garbage collections took inside them (``gc_full_ms_*``).

The overhead chapters follow a warm-up chapter on a throwaway novel, which pays the one-time costs
(importing the SDK, loading the segmenter): its imports leave ~130K new objects for the cyclic collector,
whose next full pass (~40-200 ms over the ~210K objects of the process) would land in whichever measured
chapter crosses the collector's threshold (it was chapter 500's, single runs 115-128 ms instead of ~90). The
warm-up ends with that pass (``gc.collect()``), as a process that has run a chapter has already paid it.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from novel_desktop.agents.chapter import LLMChapterAgents, writer_prompt
from novel_desktop.agents.context import estimate_tokens, load_facts
from novel_desktop.agents.judge_panels import PANELS
from novel_desktop.agents.summary_parts import SUMMARY_PARTS
from novel_desktop.llm.client import LLMClient
from novel_desktop.llm.settings import LLMSettings, RetrySettings
from novel_desktop.pipeline.chapter import ChapterPipeline
from novel_desktop.pipeline.interaction import InteractionManager, refuse_non_interactive
from novel_desktop.storage.store import NovelStore
from tests.benchmarks.longnovel import generate
from tests.e2e.replies import (
    panel_json,
    realistic_judge_json,
    realistic_refiner_json,
    realistic_summarizer_json,
    summary_part_json,
    writer_text,
)
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.fakes.server_process import Served, ServerProcess

#: The figures ``--json`` prints, in the issue's order.
HEADLINE = (
    "critical_path_ratio",
    "overhead_ms_ch5",
    "overhead_ms_ch500",
    "writer_prompt_tokens_ch30",
    "writer_prompt_tokens_ch500",
    "cacheable_input_share",
    "refiner_output_share",
    "chapter_cost_usd",
)
TOKEN_RATE = 1500.0  # output tokens per second for every role: a fast provider, so the run stays short


def _script(server: FakeAnthropicServer, rate: float | None) -> None:
    def reply(text: str) -> Reply:
        return Reply(text, chunk_size=24, token_rate=rate)

    server.set_default("chapter_writer", reply(writer_text(7)))
    server.set_default("summarizer", reply(realistic_summarizer_json()))
    for part in SUMMARY_PARTS:  # the pipeline's summarizer is two parts: summary and patch; the memory
        server.set_default(f"summarizer#{part}", reply(summary_part_json(realistic_summarizer_json(), part)))
    server.set_default("style_refiner", reply(realistic_refiner_json()))
    server.set_default("quality_judge", reply(realistic_judge_json(4.2)))
    for panel in PANELS:  # the pipeline's judge is three panels, each writing its part (~0.55K tokens)
        server.set_default(f"quality_judge#{panel}", reply(panel_json(realistic_judge_json(4.2), panel)))
    server.set_default("judge_secondary", reply(realistic_judge_json(4.2)))


class _FullCollections:
    """The time Python's full (generation 2) garbage collections take while installed."""

    def __init__(self) -> None:
        self.ms = 0.0
        self._started = 0.0

    def _note(self, phase: str, info: dict[str, Any]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.ms += (time.perf_counter() - self._started) * 1000

    def __enter__(self) -> _FullCollections:
        gc.callbacks.append(self._note)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._note)


def script_instant(server: FakeAnthropicServer) -> None:
    """The instant server's replies (:class:`~tests.fakes.server_process.ServerProcess` scripts it by name)."""
    _script(server, None)


#: Runs of each overhead chapter, each on a fresh copy of its novel; the fastest counts (a machine's other load
#: only ever adds to a run).
OVERHEAD_RUNS = 5


def _overhead(path: Path, server: Served) -> tuple[float, float, float]:
    """One chapter with the instant server: its wall time (the figure), CPU time and full collections (ms)."""
    cpu = time.process_time()
    with _FullCollections() as full:
        wall = asyncio.run(_one_chapter(path, server))[0]
    return wall * 1000, (time.process_time() - cpu) * 1000, full.ms


def _overheads(root: Path, novels: dict[str, Path], results: dict[str, Any]) -> None:
    """The overhead chapters, each run on fresh copies, the chapters taking turns: with the server in its own
    process (the figures: the real API is on another machine) and, for comparison with the figures before,
    inside this process."""
    for suffix, serve in (
        ("", lambda: ServerProcess("tests.benchmarks.pipeline:script_instant")),
        ("_inproc", _in_process),
    ):
        with serve() as server:
            # One chapter first, on a throwaway novel, so that one-time costs (importing the SDK, loading
            # the segmenter) are not counted; then the full pass its imports are due (module docstring).
            asyncio.run(_one_chapter(generate(root / f"warm{suffix}.novel", 2, per_volume=50), server))
            gc.collect()
            runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in novels}
            for i in range(OVERHEAD_RUNS):
                for name, novel in novels.items():
                    copy = root / f"{name}{suffix}-{i}.novel"
                    shutil.copy(novel, copy)
                    runs[name].append(_overhead(copy, server))
            for name, measured in runs.items():
                wall, cpu, full = min(measured)
                results[f"overhead_ms_{name}{suffix}"] = round(wall, 1)
                results[f"cpu_ms_{name}{suffix}"] = round(cpu, 1)
                results[f"gc_full_ms_{name}{suffix}"] = round(full, 1)
                results[f"runs_ms_{name}{suffix}"] = [round(run[0], 1) for run in measured]


def _in_process() -> FakeAnthropicServer:
    server = FakeAnthropicServer()
    _script(server, None)
    return server


async def _one_chapter(path: Path, server: Served) -> tuple[float, dict[str, Any]]:
    settings = LLMSettings(retry=RetrySettings(max_attempts=2, base_backoff_s=0.001, max_backoff_s=0.01))
    with NovelStore.open(path) as store:
        async with LLMClient(settings, api_key="sk-bench", base_url=server.base_url) as client:
            pipeline = ChapterPipeline(
                store, LLMChapterAgents(store, client), InteractionManager(refuse_non_interactive)
            )
            started = time.perf_counter()
            outcome = await pipeline.run_chapter()
            wall = time.perf_counter() - started
        log = store.pipeline_log(outcome.chapter) or {}
    return wall, log


def _writer_prompt_tokens(path: Path, chapter: int) -> int:
    with NovelStore.open(path, write=False) as store:
        facts = load_facts(store, chapter)
    return estimate_tokens(writer_prompt(facts).text)


def run() -> dict[str, Any]:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["NOVEL_DESKTOP_DATA_DIR"] = str(root / "data")
        short = generate(root / "short.novel", 4, per_volume=50)
        long_ = generate(root / "long.novel", 499, per_volume=50)
        ch30 = generate(root / "ch30.novel", 29, per_volume=50)
        results["writer_prompt_tokens_ch30"] = _writer_prompt_tokens(ch30, 30)
        results["writer_prompt_tokens_ch500"] = _writer_prompt_tokens(long_, 500)

        # Chapter 500 ends volume 10: a key chapter, judged a second time (one more model call than chapter 5);
        # chapter 499 (of a 498-chapter copy) is an ordinary one, like with like for chapter 5.
        long499 = generate(root / "long499.novel", 498, per_volume=50)
        _overheads(root, {"ch5": short, "ch499": long499, "ch500": long_}, results)

        with FakeAnthropicServer() as server:
            _script(server, TOKEN_RATE)
            paced = generate(root / "paced.novel", 6, per_volume=50)
            asyncio.run(
                _one_chapter(paced, server)
            )  # warms the prompt cache, as a day's second chapter would
            wall, log = asyncio.run(_one_chapter(paced, server))
        stages = log.get("stages", [])
        draft_ms = sum(s["duration_ms"] for s in stages if s["name"] == "draft")
        results["critical_path_ratio"] = round(wall * 1000 / max(1, draft_ms), 2)
        total_in = sum(
            s["input_tokens"] + s["cache_creation_input_tokens"] + s["cache_read_input_tokens"]
            for s in stages
        )
        read = sum(s["cache_read_input_tokens"] for s in stages)
        results["cacheable_input_share"] = round(read / max(1, total_in), 3)
        writer_out = sum(s["output_tokens"] for s in stages if s["name"] == "draft")
        refiner_out = sum(s["output_tokens"] for s in stages if s["name"] == "refine")
        results["refiner_output_share"] = round(refiner_out / max(1, writer_out), 3)
        results["chapter_wall_s"] = round(wall, 2)
        results["stages"] = [
            {
                k: s.get(k)
                for k in (
                    "name",
                    "model",
                    "input_tokens",
                    "cache_creation_input_tokens",
                    "cache_read_input_tokens",
                    "output_tokens",
                    "duration_ms",
                    "cost_usd",
                )
            }
            for s in stages
        ]
        results["chapter_cost_usd"] = round(float(log.get("total_cost_usd", 0.0)), 4)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--details", action="store_true", help="with --json: add the secondary figures")
    args = parser.parse_args(argv)
    results = run()
    if args.json:
        shown = results if args.details else {key: results[key] for key in HEADLINE}
        print(json.dumps(shown, ensure_ascii=False))
    else:
        for key, value in results.items():
            print(f"{key:28s} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
