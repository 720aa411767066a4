"""AnalysisController (project.analysis): AI-phrase underlines and density over the GUI's one analysis cache."""

from __future__ import annotations

import json
from pathlib import Path

from novel_desktop.analysis.ai_phrases import PhraseEntry, phrases_for_novel
from novel_desktop.analysis.cache import CACHE_FILE_NAME
from novel_desktop.controllers.analysis_controller import PhraseMatcher
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.paths import user_data_dir

AI_TEXT = "他的嘴角微微上扬，眼中闪过一丝精光。不禁倒吸一口凉气。"


def test_one_controller_per_project(project: ProjectController) -> None:
    assert project.analysis is project.analysis


def test_the_matcher_finds_ai_phrases_where_they_are(project: ProjectController) -> None:
    matcher = project.analysis.phrase_matcher()
    assert len(matcher) > 0
    hits = matcher.hits("平常的一句话。" + AI_TEXT)
    assert hits
    assert all(AI_TEXT.find(hit.matched) >= 0 for hit in hits)
    assert all(hit.start >= len("平常的一句话。") for hit in hits)
    assert matcher.hits("") == []


def test_a_matcher_narrowed_to_a_text_finds_in_its_paragraphs_what_the_whole_list_finds(
    project: ProjectController,
) -> None:
    matcher = project.analysis.phrase_matcher()
    text = "平常的一句话。\n" + AI_TEXT + "\n她的嘴角微微上扬。\n没有套话的一段。"
    narrowed = matcher.narrowed(text)
    assert 0 < len(narrowed) < len(matcher)
    for paragraph in text.split("\n"):
        assert narrowed.hits(paragraph) == matcher.hits(paragraph)
    # An expression that reads where the scanned text starts may match a paragraph but not the whole: kept.
    anchored = PhraseMatcher([PhraseEntry("^她", "测试", regex=True), PhraseEntry("不存在的词", "测试")])
    kept = anchored.narrowed("开头。\n她来了。")
    assert len(kept) == 1 and kept.hits("她来了。") == anchored.hits("她来了。") != []
    assert matcher.narrowed("") is matcher


def test_density_rises_with_ai_phrases_and_lands_in_the_one_cache_file(project: ProjectController) -> None:
    analysis = project.analysis
    project.save_chapter(2, project.chapter_text(2) + "\n" + AI_TEXT)
    counter = analysis.ai_counter()
    first, second = analysis.ai_density(counter, 1), analysis.ai_density(counter, 2)
    assert first is not None and second is not None and second > first
    assert analysis.ai_density(counter, 99) is None
    analysis.flush()
    assert analysis.cache.path == user_data_dir() / CACHE_FILE_NAME
    assert (user_data_dir() / CACHE_FILE_NAME).is_file()


def test_closing_the_novel_closes_the_cache_and_the_counts_come_back_from_disk(
    project: ProjectController, tmp_path: Path
) -> None:
    analysis = project.analysis
    project.save_chapter(2, project.chapter_text(2) + "\n" + AI_TEXT)
    density = analysis.ai_density(analysis.ai_counter(), 2)
    assert density is not None and density > 0
    path = project.path
    assert path is not None
    project.close()
    assert analysis._cache is None
    project.open(path)
    counter = analysis.ai_counter()
    # The count is read from the cache file: a poisoned scan would give another figure.
    counter.phrases = []
    assert analysis.ai_density(counter, 2) == density


def test_a_blacklist_that_does_not_parse_falls_back_to_the_shipped_list(project: ProjectController) -> None:
    shipped = phrases_for_novel(None)
    assert len(project.analysis.novel_phrases()) > len(shipped)  # the seed novel adds its own phrases
    project.save_document("ai-blacklist.json", json.dumps({"phrases": 3}))
    assert project.analysis.novel_phrases() == shipped
