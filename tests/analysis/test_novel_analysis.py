"""Whole-novel analysis: totals, incremental re-analysis by content hash, and the on-disk cache."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from novel_desktop.analysis.ai_phrases import phrases_for_novel
from novel_desktop.analysis.cache import CACHE_FILE_NAME, AnalysisCache
from novel_desktop.analysis.entities import EntityRecords
from novel_desktop.analysis.novel_analysis import NovelAnalyzer, analyze_store, analyzer_for_store
from novel_desktop.analysis.style_metrics import StyleMetrics, drift
from novel_desktop.domain.characters import Character
from novel_desktop.paths import user_data_dir
from novel_desktop.storage import layout
from tests.conftest import CORPUS

_HEADING = re.compile(r"(?m)^\s*第[一二三四五六七八九十百]+回")


@pytest.fixture(scope="module")
def xiyouji() -> list[tuple[int, str]]:
    """The openings of the first twelve 回 of 西游记 (Traditional script, as in the corpus)."""
    text = (CORPUS / "xiyouji_pg23962_excerpt.txt").read_text(encoding="utf-8")
    parts = _HEADING.split(text)[1:13]
    return list(enumerate(parts, 1))


def test_the_whole_and_each_chapter_are_measured(xiyouji: list[tuple[int, str]]) -> None:
    analysis = NovelAnalyzer().analyze(xiyouji)
    assert [c.number for c in analysis.chapters] == list(range(1, 13))
    assert analysis.total_chars == sum(c.chars for c in analysis.chapters) > 5_000
    assert analysis.hits_per_1k == pytest.approx(
        sum(len(c.hits) for c in analysis.chapters) * 1000 / analysis.total_chars
    )
    assert analysis.hits_per_1k < 3  # a human classic is not AI prose
    assert 5 < analysis.metrics.avg_sentence_length < 30
    summary = analysis.summary()
    assert summary["chapters"] == 12 and len(summary["per_chapter"]) == 12


def test_one_edit_recomputes_one_chapter(xiyouji: list[tuple[int, str]]) -> None:
    analyzer = NovelAnalyzer()
    first = analyzer.analyze(xiyouji)
    assert first.recomputed == 12 and analyzer.facts_computed == 12

    edited = list(xiyouji)
    edited[4] = (5, edited[4][1] + "\n行者嘴角微微上扬，眼中闪过一丝狡黠。")
    second = analyzer.analyze(edited)
    assert second.recomputed == 1
    assert (analyzer.facts_computed, analyzer.scans_computed) == (13, 13)
    assert len(second.chapter(5).hits) == len(first.chapter(5).hits) + 2  # type: ignore[union-attr]
    assert second.chapter(4) == first.chapter(4)

    fresh = NovelAnalyzer().analyze(edited)
    assert fresh.summary() == second.summary()


def test_moving_a_chapter_reuses_its_results(xiyouji: list[tuple[int, str]]) -> None:
    analyzer = NovelAnalyzer()
    analyzer.analyze(xiyouji[:3])
    renumbered = [(n + 10, text) for n, text in xiyouji[:3]]
    moved = analyzer.analyze(renumbered)
    assert moved.recomputed == 0
    assert [c.number for c in moved.chapters] == [11, 12, 13]


def test_a_new_phrase_list_rescans_without_segmenting_again(xiyouji: list[tuple[int, str]]) -> None:
    analyzer = NovelAnalyzer()
    before = analyzer.analyze(xiyouji[:3])
    analyzer.set_phrases(phrases_for_novel({"custom_added": ["猴王"]}))
    after = analyzer.analyze(xiyouji[:3])
    assert analyzer.facts_computed == 3  # jieba ran once per chapter
    assert analyzer.scans_computed == 6
    assert after.total_hits > before.total_hits
    assert after.hits_by_category()["自定义"] > 0


def test_results_persist_across_a_restart(tmp_path: Path, xiyouji: list[tuple[int, str]]) -> None:
    path = tmp_path / "cache.sqlite"
    analyzer = NovelAnalyzer(cache=AnalysisCache(path))
    first = analyzer.analyze(xiyouji[:4])
    analyzer.cache.close()
    reopened = NovelAnalyzer(cache=AnalysisCache(path))
    again = reopened.analyze(xiyouji[:4])
    assert again.recomputed == 0 and reopened.scans_computed == 0
    assert again.summary() == first.summary()
    assert again.chapter(2) == first.chapter(2)


def test_the_default_cache_lives_in_the_user_data_folder_not_in_the_novel(store: Any) -> None:
    store.put_staging(layout.chapter_path(1), "# 第1章\n\n他深吸一口气。\n", chapter=1, kind="refined")
    store.commit_chapter(1)
    cache = AnalysisCache.default()
    analysis = analyze_store(store, analyzer_for_store(store, cache))
    cache.close()
    assert analysis.total_hits == 1
    assert (user_data_dir() / CACHE_FILE_NAME).is_file()
    assert "analysis" not in " ".join(store.list_documents())


def test_an_unusable_cache_file_leaves_analysis_working(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, xiyouji: list[tuple[int, str]]
) -> None:
    def refuse(*_args: object, **_kwargs: object) -> sqlite3.Connection:
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(sqlite3, "connect", refuse)
    cache = AnalysisCache(tmp_path / "cache.sqlite")
    assert not (tmp_path / "cache.sqlite").exists()
    analysis = NovelAnalyzer(cache=cache).analyze(xiyouji[:2])
    assert analysis.recomputed == 2
    cache.close()


def test_a_corrupt_cache_row_is_recomputed(tmp_path: Path, xiyouji: list[tuple[int, str]]) -> None:
    path = tmp_path / "cache.sqlite"
    analyzer = NovelAnalyzer(cache=AnalysisCache(path))
    analyzer.analyze(xiyouji[:1])
    analyzer.cache.close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE results SET payload = '{\"metrics\": 1}'")
    reopened = NovelAnalyzer(cache=AnalysisCache(path))
    assert reopened.analyze(xiyouji[:1]).recomputed == 1


def test_the_novels_blacklist_and_records_are_used(store: Any) -> None:
    store.put_document("ai-blacklist.json", '{"custom_added": ["山门"], "custom_removed": ["深吸一口气"]}')
    lin = Character(id="lin-feng", name="林枫")
    store.put_document("characters/active/lin-feng.json", lin.model_dump_json())
    store.put_staging(
        layout.chapter_path(1), "# 第1章\n\n林枫深吸一口气，走进山门。\n", chapter=1, kind="refined"
    )
    store.commit_chapter(1)
    analysis = analyze_store(store)
    assert [h.matched for h in analysis.chapters[0].hits] == ["山门"]
    assert analysis.entities.appearances["lin-feng"].chapters == (1,)


def test_a_chapter_drifts_from_the_ones_before_it() -> None:
    calm = "门开着。屋里一股药味。林枫喊了一声，没人应。他把柴刀换到左手。\n" * 20
    rambling = (
        "他沿着被雨水打湿的青石台阶一级一级地往上走，一直走到山门前那棵据说有三百年的老松树底下才停住脚步。\n"
        * 20
    )
    analysis = NovelAnalyzer(records=EntityRecords()).analyze([(1, calm), (2, calm), (3, rambling)])
    calm_metrics = [c.metrics for c in analysis.chapters if c.number < 3]
    assert "avg_sentence_length" in {
        i.metric for i in drift(StyleMetrics.combine(calm_metrics), analysis.chapters[2].metrics)
    }
    assert drift(analysis.chapters[0].metrics, analysis.chapters[1].metrics) == []


def test_the_novels_checks_never_segment_an_unchanged_chapter_again(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # analyze_store (the pipeline's style-drift and entity checks, the volume review) reads the shared cache
    # in the user data folder: a chapter is segmented once, not at every check, nor after a restart.
    from novel_desktop.analysis import cache as cache_module
    from novel_desktop.analysis import novel_analysis, segment

    segmented: list[str] = []
    real = segment.tokenize
    monkeypatch.setattr(novel_analysis.segment, "tokenize", lambda text: segmented.append(text) or real(text))
    for number, text in ((1, "林枫深吸一口气，走进山门。"), (2, "山门外，苏瑶等了很久。")):
        store.put_staging(
            layout.chapter_path(number), f"# 第{number}章\n\n{text}\n", chapter=number, kind="refined"
        )
        store.commit_chapter(number)
    first = analyze_store(store)
    assert len(segmented) == 2
    assert analyze_store(store).summary() == first.summary()
    assert len(segmented) == 2

    cache_module.shared_cache().close()  # the app quits; a new process starts with an empty memory
    monkeypatch.setattr(cache_module, "_shared", None)
    assert analyze_store(store).summary() == first.summary()
    assert len(segmented) == 2

    store.put_staging(
        layout.chapter_path(2), "# 第2章\n\n山门外，苏瑶又等了很久。\n", chapter=2, kind="refined"
    )
    store.commit_chapter(2)
    assert analyze_store(store).chapter(2).chars > first.chapter(2).chars  # type: ignore[union-attr]
    assert len(segmented) == 3
