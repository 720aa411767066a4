"""Lifecycle cost benchmark: ``python -m tests.benchmarks.lifecycle [--json] [--provider anthropic|deepseek|…]``.

Runs the whole path of the lifecycle end-to-end test — an empty file, the quick start (setup, world,
characters, style from a sample, three trial chapters), a 10-chapter plan of volume 1, chapters 4-10 with
the quality briefs, drift checks and the audit, the volume review, volume 2's plan and its first chapter —
through ``novel start`` against the fake Messages API server, and reads the usage the program accounted:
each chapter's pipeline log (every stage's input, output, cache-write and cache-read tokens and cost) and
the planning calls outside chapters. Prices are the provider preset's table (Anthropic: the seed's split,
Opus for world/character/plot/refiner/revisions, Sonnet for writer/summarizer/judge).

The fake server counts input tokens from the real prompts the program sends (1 token per CJK character,
pessimistic) and simulates prompt caching; the writer's reply is a 3,400-字 chapter, so output tokens are
those of a real chapter. Summarizer, refiner and judge replies are the canned ones of the tests (shorter
than a real model's), so their output share is a lower bound.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from statistics import mean
from typing import Any

from novel_desktop.domain.ledger import CostTotals
from tests.e2e.lifecycle_replies import STYLE_SAMPLE, answers, plan_json, script_planning
from tests.e2e.replies import script_defaults, writer_text
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply

#: writer_text(9) is 3,448 字: a qidian-length chapter.
CHAPTER_REPEAT = 9


def run(provider: str) -> dict[str, Any]:
    from novel_desktop.cli import main
    from novel_desktop.domain.text import count_chars
    from novel_desktop.llm.settings import LLMSettings, RetrySettings, save_settings
    from novel_desktop.storage.store import NovelStore

    with tempfile.TemporaryDirectory() as tmp, FakeAnthropicServer() as server:
        root = Path(tmp)
        os.environ["NOVEL_DESKTOP_CONFIG_DIR"] = str(root / "config")
        os.environ["NOVEL_DESKTOP_DATA_DIR"] = str(root / "data")
        os.environ["ANTHROPIC_API_KEY"] = "sk-ant-benchmark"
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        retry = RetrySettings(max_attempts=2, base_backoff_s=0.001, max_backoff_s=0.01)
        save_settings(LLMSettings.for_provider(provider, retry=retry))
        script_defaults(server)
        script_planning(server)
        server.set_default("chapter_writer", Reply(writer_text(CHAPTER_REPEAT), chunk_size=200))
        server.script("plot_architect", plan_json(1, 4, 10), plan_json(2, 11, 20))
        sample = root / "样本.txt"
        sample.write_text(STYLE_SAMPLE, encoding="utf-8")
        answers_file = root / "answers.json"
        answers_file.write_text(json.dumps(answers(), ensure_ascii=False), encoding="utf-8")
        novel = root / "青石问道.novel"
        argv = ["start", str(novel), "--answers-file", str(answers_file), "--non-interactive"]
        argv += ["--samples", str(sample), "--chapters", "10", "-n", "8"]
        streams = sys.stdout, sys.stderr
        with open(os.devnull, "w", encoding="utf-8") as devnull:  # the CLI's progress lines
            sys.stdout = sys.stderr = devnull
            try:
                code = main(argv)
            finally:
                sys.stdout, sys.stderr = streams
        if code != 0:
            raise SystemExit(f"novel start exited {code}")

        with NovelStore.open(novel, write=False) as store:
            chapters = []
            for info in store.list_chapters():
                log = store.pipeline_log(info.number) or {}
                stages = log.get("stages") or []
                chapters.append(
                    {
                        "chapter": info.number,
                        "chars": count_chars(store.chapter_text(info.number)),
                        "input_tokens": sum(s.get("input_tokens", 0) for s in stages),
                        "cache_write_tokens": sum(s.get("cache_creation_input_tokens", 0) for s in stages),
                        "cache_read_tokens": sum(s.get("cache_read_input_tokens", 0) for s in stages),
                        "output_tokens": sum(s.get("output_tokens", 0) for s in stages),
                        "cost_usd": round(sum(s.get("cost_usd") or 0.0 for s in stages), 4),
                    }
                )
            # Everything outside a chapter (planning, quick start) from the cost ledger.
            planning = {"cost_usd": store.cost_report().by_chapter.get(None, CostTotals()).cost_usd}
    per = {
        key: round(mean(c[key] for c in chapters), 1)
        for key in ("chars", "input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens")
    }
    chapter_cost = mean(c["cost_usd"] for c in chapters)
    planning_cost = float(planning.get("cost_usd") or 0.0)
    return {
        "provider": provider,
        "chapters": len(chapters),
        "per_chapter": {**per, "cost_usd": round(chapter_cost, 4)},
        "cost_per_10k_chars_usd": round(chapter_cost / per["chars"] * 10_000, 4) if per["chars"] else None,
        "planning_cost_usd": round(planning_cost, 4),
        "total_cost_usd": round(sum(c["cost_usd"] for c in chapters) + planning_cost, 4),
        "by_chapter": chapters,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--provider", default="anthropic", help="price table: anthropic, deepseek, kimi, glm, qwen"
    )
    args = parser.parse_args(argv)
    result = run(args.provider)
    if args.json:
        print(json.dumps({k: v for k, v in result.items() if k != "by_chapter"}, ensure_ascii=False))
        return 0
    print(f"provider {result['provider']}: {result['chapters']} chapters")
    for c in result["by_chapter"]:
        print(
            f"  第{c['chapter']:>2}章 {c['chars']:>5}字  in {c['input_tokens']:>6}  cache w {c['cache_write_tokens']:>6}"
            f"  cache r {c['cache_read_tokens']:>6}  out {c['output_tokens']:>5}  ${c['cost_usd']:.4f}"
        )
    print(json.dumps({k: v for k, v in result.items() if k != "by_chapter"}, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
