"""Queued-run benchmark: ``python -m tests.benchmarks.queued [--json]``.

With the fake Messages API server streaming at the fixed token rate of ``tests.benchmarks.pipeline`` (same
replies, same rate), it runs K=3 chapters through the orchestrator (``run_until_blocked(max_chapters=3)``,
what ``novel start -n 3`` and the window's 续写 3 章 do) and measures:

- ``queued_critical_path_ratio``: the wall time of the three chapters divided by the sum of their writer
  stages (issue 18's target ≤ 1.15). Chapter N+1's writer starts once N's summary is made (it reads it), so
  N's refine, judge, gate and commit run beside it; what is left on the path is each chapter's summarizer and
  the last chapter's refine and judge: about 1 + S/W + (J + R)/(K·W) plus our overhead;
- ``sequential_critical_path_ratio``: the same three chapters run one at a time (``max_chapters=1`` three
  times), for comparison;
- ``queued_wall_s`` / ``sequential_wall_s``: the two wall times.

The novel is generated (``tests.benchmarks.longnovel``) with its periodic checks marked done, so nothing but
the chapters is measured. ``--json`` prints the four figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from novel_desktop.llm.settings import LLMSettings, RetrySettings
from novel_desktop.pipeline.checks import CHECKS_META
from novel_desktop.pipeline.interaction import refuse_non_interactive
from novel_desktop.pipeline.orchestrator import Orchestrator
from novel_desktop.session import NovelSession
from novel_desktop.storage.store import NovelStore
from tests.benchmarks.longnovel import generate
from tests.benchmarks.pipeline import TOKEN_RATE, _script
from tests.fakes.anthropic_server import FakeAnthropicServer

K = 3
HEADLINE = (
    "queued_critical_path_ratio",
    "sequential_critical_path_ratio",
    "queued_wall_s",
    "sequential_wall_s",
)


async def _run(path: Path, server: FakeAnthropicServer, max_chapters: int) -> list[int]:
    settings = LLMSettings(retry=RetrySettings(max_attempts=2, base_backoff_s=0.001, max_backoff_s=0.01))
    with NovelStore.open(path) as store:
        session = NovelSession(
            store,
            settings=settings,
            responder=refuse_non_interactive,
            api_key="sk-bench",
            base_url=server.base_url,
        )
        async with session:
            orch = Orchestrator(store, session.agents.planning, session.agents.chapter, session.interaction)
            summary = await orch.run_until_blocked(
                max_chapters=max_chapters, stop_at=frozenset({"VOL_REVIEW"})
            )
    return [c.chapter for c in summary.chapters if c.status == "committed"]


def _writer_ms(path: Path, chapters: list[int]) -> int:
    with NovelStore.open(path, write=False) as store:
        logs = [store.pipeline_log(n) or {} for n in chapters]
    return sum(int(s["duration_ms"]) for log in logs for s in log.get("stages", []) if s["name"] == "draft")


def _novel(root: Path, name: str) -> Path:
    path = generate(root / name, 6, per_volume=50)
    with NovelStore.open(path) as store:  # chapters 7-9 are not due for the periodic checks
        store.set_meta(CHECKS_META, json.dumps({"brief": 5, "drift": 5, "audit": 0}))
    return path


def run() -> dict[str, Any]:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["NOVEL_DESKTOP_DATA_DIR"] = str(root / "data")
        queued = _novel(root, "queued.novel")
        sequential = root / "sequential.novel"
        shutil.copy(queued, sequential)
        with FakeAnthropicServer() as server:
            _script(server, TOKEN_RATE)
            # A throwaway chapter first: one-time costs (the SDK import, jieba) and a warm prompt cache.
            asyncio.run(_run(_novel(root, "warm.novel"), server, 1))

            started = time.perf_counter()
            done = asyncio.run(_run(queued, server, K))
            queued_wall = time.perf_counter() - started
            assert len(done) == K, f"the queued run committed {done}"
            results["queued_critical_path_ratio"] = round(
                queued_wall * 1000 / max(1, _writer_ms(queued, done)), 3
            )

            started = time.perf_counter()
            one_by_one = [n for _ in range(K) for n in asyncio.run(_run(sequential, server, 1))]
            sequential_wall = time.perf_counter() - started
            ratio = sequential_wall * 1000 / max(1, _writer_ms(sequential, one_by_one))
            results["sequential_critical_path_ratio"] = round(ratio, 3)
        results["queued_wall_s"] = round(queued_wall, 2)
        results["sequential_wall_s"] = round(sequential_wall, 2)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    results = run()
    if args.json:
        print(json.dumps({key: results[key] for key in HEADLINE}, ensure_ascii=False))
    else:
        for key, value in results.items():
            print(f"{key:32s} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
