"""Benchmark of the deterministic analysis on the whole 西游记 (about 700,000 字, 100 回).

    python -m tests.benchmarks.analysis [--json] [--corpus PATH]

Imports the manuscript into a new .novel (read + split + write: ``import_s``), analyses every chapter cold
(segmentation, metrics, AI phrases, entities; building the segmenter's dictionary and its HMM tagger's tables,
which the app's warm-up does, is reported apart as ``segmenter_init_s``), then
again after a one-chapter edit (``incremental_ms``, one chapter recomputed), then with a fresh analyzer over
the same on-disk cache (``reopen_s``: what opening the novel again costs). Prints figures; asserts nothing.

``--json`` prints exactly the figures the issue names, ``{"cold_s", "incremental_ms", "chars_per_s",
"import_s", "reopen_s"}``; add ``--details`` for the others (segmenter load, counts).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from novel_desktop.analysis import segment
from novel_desktop.analysis.cache import AnalysisCache
from novel_desktop.analysis.manuscript import read_manuscript, split_manuscript
from novel_desktop.analysis.novel_analysis import NovelAnalyzer
from novel_desktop.storage.manuscript_import import import_manuscript
from tests.benchmarks import CORPUS, require_corpus

XIYOUJI = CORPUS / "xiyouji_pg23962_full.txt"
EDIT = "\n行者嘴角微微上扬，眼中闪过一丝狡黠。"
#: The figures ``--json`` prints, in this order.
HEADLINE = ("cold_s", "incremental_ms", "chars_per_s", "import_s", "reopen_s")


def run(corpus: Path) -> dict[str, object]:
    """Run the benchmark and return its figures."""
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        manuscript = read_manuscript(corpus)
        split = split_manuscript(manuscript.text)
        import_manuscript(split, Path(tmp) / "西游记.novel", title="西游记", encoding=manuscript.encoding)
        import_s = time.perf_counter() - t0
        chapters = [(c.number, c.stored_text()) for c in split.chapters]

        t0 = time.perf_counter()
        segment.ensure_ready()
        segment.warm_tagger()  # as the app's warm-up does, in a worker thread
        segmenter_init_s = time.perf_counter() - t0

        cache_path = Path(tmp) / "analysis-cache.sqlite"
        analyzer = NovelAnalyzer(cache=AnalysisCache(cache_path))
        t0, c0 = time.perf_counter(), time.process_time()
        cold = analyzer.analyze(chapters)
        cold_s = time.perf_counter() - t0
        # CPU time too: on a shared machine wall time also measures the neighbours.
        cold_cpu_s = time.process_time() - c0

        middle = len(chapters) // 2
        number, text = chapters[middle]
        chapters[middle] = (number, text + EDIT)
        t0, c0 = time.perf_counter(), time.process_time()
        edited = analyzer.analyze(chapters)
        incremental_ms = (time.perf_counter() - t0) * 1000
        incremental_cpu_ms = (time.process_time() - c0) * 1000

        reopened = NovelAnalyzer(cache=AnalysisCache(cache_path))
        t0 = time.perf_counter()
        again = reopened.analyze(chapters)
        reopen_s = time.perf_counter() - t0
        reopened.cache.close()
        analyzer.cache.close()

    return {
        "cold_s": round(cold_s, 3),
        "incremental_ms": round(incremental_ms, 1),
        "chars_per_s": round(cold.total_chars / cold_s) if cold_s else None,
        "import_s": round(import_s, 3),
        "cold_cpu_s": round(cold_cpu_s, 3),
        "incremental_cpu_ms": round(incremental_cpu_ms, 1),
        "segmenter_init_s": round(segmenter_init_s, 3),
        "reopen_s": round(reopen_s, 3),
        "chapters": len(chapters),
        "chars": cold.total_chars,
        "recomputed_after_edit": edited.recomputed,
        "recomputed_after_reopen": again.recomputed,
        "ai_hits_per_1k": round(edited.hits_per_1k, 3),
        "entities": len(edited.entities.appearances),
        "findings": len(edited.entities.findings),
    }


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: print the figures as JSON (``--json``) or as lines for a person."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--corpus", type=Path, default=XIYOUJI, help="the manuscript to analyse")
    parser.add_argument("--details", action="store_true", help="with --json: add the secondary figures")
    args = parser.parse_args(argv)
    figures = run(require_corpus(args.corpus))
    if args.json:
        shown = figures if args.details else {key: figures[key] for key in HEADLINE}
        print(json.dumps(shown, ensure_ascii=False))
        return 0
    print(f"语料：{args.corpus.name}，{figures['chapters']} 章，{figures['chars']} 字")
    print(f"导入（读取+分章+写入 .novel）：{figures['import_s']} s")
    print(f"分词词典加载：{figures['segmenter_init_s']} s")
    print(f"冷分析：{figures['cold_s']} s（{figures['chars_per_s']} 字/秒）")
    print(f"改一章后再分析：{figures['incremental_ms']} ms（重算 {figures['recomputed_after_edit']} 章）")
    print(f"重新打开（磁盘缓存）：{figures['reopen_s']} s（重算 {figures['recomputed_after_reopen']} 章）")
    print(
        f"AI 套话 {figures['ai_hits_per_1k']} 次/千字；实体 {figures['entities']} 个；"
        f"连续性提示 {figures['findings']} 条"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
