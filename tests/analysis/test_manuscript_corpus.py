"""Excerpts of public-domain novels (tests/fixtures/corpus) split into their true chapter counts with no text lost."""

from __future__ import annotations

import re

import pytest

from novel_desktop.analysis.manuscript import read_manuscript, split_manuscript
from tests.conftest import CORPUS


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize(
    ("name", "chapters", "first", "last"),
    [
        (
            "xiyouji_pg23962_excerpt.txt",
            100,
            "第一回 靈根育孕源流出 心性修持大道生",
            "第一○○回 徑回東土 五聖成真",
        ),
        ("ershinian_pg24099_ch01-10.txt", 10, "第一回 楔子", "第十回 老伯母強作周旋話 惡洋奴欺凌同族人"),
        ("aq_zhengzhuan_pg25332_excerpt.txt", 9, "第一章 序", "第九章 大團圓"),
    ],
)
def test_corpus_novel_splits_into_its_true_chapters_with_no_text_lost(
    name: str, chapters: int, first: str, last: str
) -> None:
    manuscript = read_manuscript(CORPUS / name)
    result = split_manuscript(manuscript.text)

    assert manuscript.encoding == "utf-8"
    assert len(result.chapters) == chapters
    assert [c.number for c in result.chapters] == list(range(1, chapters + 1))
    assert (result.chapters[0].title, result.chapters[-1].title) == (first, last)
    assert result.gaps == [] and result.duplicates == []
    assert all(c.kind == "chapter" and c.text for c in result.chapters)
    assert squeeze("".join(result.pieces())) == squeeze(manuscript.text)


def test_xiyouji_keeps_its_gutenberg_footer_aside_and_its_closing_line_in_the_last_chapter() -> None:
    result = split_manuscript(read_manuscript(CORPUS / "xiyouji_pg23962_excerpt.txt").text)
    assert result.trailing.startswith("End of the Project Gutenberg EBook of Journey to the West")
    assert result.chapters[-1].text.endswith("《西遊記》至此終。")
    assert "Gutenberg" not in result.chapters[-1].text


def test_xiyouji_mixed_numerals_and_prose_lines_starting_with_di() -> None:
    result = split_manuscript(read_manuscript(CORPUS / "xiyouji_pg23962_excerpt.txt").text)
    by_number = {c.number: c for c in result.chapters}
    assert by_number[87].title.startswith("第八十七回")  # written with a unit, unlike its neighbours
    assert by_number[88].title.startswith("第八八回")
    assert by_number[83].title.startswith("第八三回")  # a heading with a leading space
    # 「第二的名玉蘭，第三的名翠蘭」 is prose in chapter 18, not a heading.
    assert "第二的名玉蘭" in by_number[18].text


def test_aq_front_matter_is_its_title_and_spaced_out_titles_are_joined() -> None:
    result = split_manuscript(read_manuscript(CORPUS / "aq_zhengzhuan_pg25332_excerpt.txt").text)
    assert result.front_matter == "阿Ｑ正傳"
    assert result.trailing == ""
    assert result.chapters[1].title == "第二章 優勝記略"
    assert result.chapters[1].heading == "第二章　優　勝　記　略"
    assert result.chapters[-1].text.endswith("一九二一年十二月。")
