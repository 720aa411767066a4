"""Splitting a manuscript into chapters: numerals, heading forms, echoes, numbering checks, kept-aside parts."""

from __future__ import annotations

import re

import pytest

from novel_desktop.analysis.headings import parse_chinese_number
from novel_desktop.analysis.manuscript import split_manuscript
from novel_desktop.domain.manuscript import SplitResult
from tests.conftest import FIXTURES


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def assert_nothing_lost(text: str, result: SplitResult) -> None:
    assert squeeze("".join(result.pieces())) == squeeze(text)


def titles(result: SplitResult) -> list[str]:
    return [c.title for c in result.chapters]


# ---------------------------------------------------------------------------- numerals
@pytest.mark.parametrize(
    ("numeral", "value"),
    [
        ("一", 1),
        ("十", 10),
        ("十四", 14),
        ("二十", 20),
        ("八十七", 87),
        ("八八", 88),
        ("九九", 99),
        ("一○○", 100),
        ("一〇〇", 100),
        ("一二零", 120),
        ("一百零五", 105),
        ("一百二十", 120),
        ("两百", 200),
        ("兩百三十一", 231),
        ("一千零一", 1001),
        ("一万零一", 10001),
        ("廿三", 23),
        ("卅", 30),
        ("壹佰贰拾", 120),
        ("12", 12),
        ("１２", 12),
        ("007", 7),
    ],
)
def test_chinese_numerals(numeral: str, value: int) -> None:
    assert parse_chinese_number(numeral) == value


@pytest.mark.parametrize("not_a_number", ["", "第", "十百", "一百二三", "两两", "三个", "abc", "1二"])
def test_things_that_are_not_numerals(not_a_number: str) -> None:
    assert parse_chinese_number(not_a_number) is None


# ---------------------------------------------------------------------------- heading forms
BODY = "\n　　他推开门，屋里空无一人。\n\n"


@pytest.mark.parametrize(
    ("heading", "expected_title", "number"),
    [
        ("第1章 初入江湖", "第1章 初入江湖", 1),
        ("第１章　初入江湖", "第１章 初入江湖", 1),
        ("第 12 章 初入江湖", "第12章 初入江湖", 12),
        ("第十四章 故人", "第十四章 故人", 14),
        ("第八十七回 鳳仙郡冒天止雨", "第八十七回 鳳仙郡冒天止雨", 87),
        ("第八八回     禪到玉華施法會", "第八八回 禪到玉華施法會", 88),
        ("第一○○回 徑回東土", "第一○○回 徑回東土", 100),
        ("第一二零章 归来", "第一二零章 归来", 120),
        ("第两百章 终局", "第两百章 终局", 200),
        ("第三节 夜谈", "第三节 夜谈", 3),
        ("第七章", "第七章", 7),
        ("第七章：雨夜", "第七章 雨夜", 7),
        ("第七章序", "第七章 序", 7),
        ("　　第二章　優　勝　記　略", "第二章 優勝記略", 2),
        ("   第九章 大团圆", "第九章 大团圆", 9),
        ("# 第五章 风起", "第五章 风起", 5),
        ("【第五章】风起", "第五章 风起", 5),
        ("正文 第5章 风起", "第5章 风起", 5),
        ("第一回     靈根育孕源流出　心性修持大道生", "第一回 靈根育孕源流出 心性修持大道生", 1),
    ],
)
def test_heading_forms_start_a_chapter(heading: str, expected_title: str, number: int) -> None:
    text = f"前言一行。\n{heading}\n{BODY}"
    result = split_manuscript(text)
    assert titles(result) == [expected_title]
    assert result.chapters[0].number == number
    assert result.chapters[0].text == "　　他推开门，屋里空无一人。"
    assert result.front_matter == "前言一行。"
    assert_nothing_lost(text, result)


@pytest.mark.parametrize(
    ("heading", "kind"),
    [
        ("楔子", "prologue"),
        ("序章 血色黎明", "prologue"),
        ("引子", "prologue"),
        ("尾声", "epilogue"),
        ("尾聲　歸去", "epilogue"),
        ("番外", "extra"),
        ("番外一 师父的往事", "extra"),
        ("番外2：重逢", "extra"),
        ("番外篇 小师妹", "extra"),
    ],
)
def test_special_headings_are_chapters_of_their_kind(heading: str, kind: str) -> None:
    text = f"第1章 开始{BODY}{heading}{BODY}"
    result = split_manuscript(text)
    assert len(result.chapters) == 2
    assert result.chapters[1].kind == kind
    assert result.chapters[1].title.startswith(heading.split()[0].split("：")[0].split("　")[0])
    assert_nothing_lost(text, result)


@pytest.mark.parametrize(
    "prose",
    [
        "第三回里那人说过，做人要厚道。",
        "第三回里那人说过……",
        "第二章的内容我早就忘了。",
        "第十章中，他终于死了，大家都很难过，哭成一片。",
        "第二的名玉蘭，第三的名翠蘭。",
        "第一望他神氣色，潤枯肥瘦起和眠；",
        "第五章 他站起来说：“我们走吧。”然后头也不回地出去了。",
        "楔子里写的那个人，后来再也没出现。",
        "引子说完了，正戏开场。",
    ],
)
def test_a_prose_line_that_begins_like_a_heading_is_not_one(prose: str) -> None:
    text = f"第1章 开始\n　　前文。\n{prose}\n　　后文。\n"
    result = split_manuscript(text)
    assert titles(result) == ["第1章 开始"]
    assert prose in result.chapters[0].text


def test_sections_are_chapters_only_when_there_are_no_chapter_headings() -> None:
    only_sections = f"第一节 上{BODY}第二节 下{BODY}"
    assert titles(split_manuscript(only_sections)) == ["第一节 上", "第二节 下"]

    nested = f"第一章 山{BODY}第一节 上{BODY}第二节 下{BODY}第二章 水{BODY}"
    result = split_manuscript(nested)
    assert titles(result) == ["第一章 山", "第二章 水"]
    assert "第二节 下" in result.chapters[0].text
    assert any("小节" in w for w in result.warnings)


# ---------------------------------------------------------------------------- volumes and numbering
def test_volume_headings_create_volumes_and_chapters_know_their_volume() -> None:
    text = (
        f"楔子{BODY}第一卷 潜龙在渊\n本卷简介：少年出山。\n第1章 出山{BODY}第2章 下山{BODY}"
        f"第二卷　风起云涌\n第3章 进城{BODY}"
    )
    result = split_manuscript(text)
    assert [(v.number, v.title) for v in result.volumes] == [(1, "潜龙在渊"), (2, "风起云涌")]
    assert [(c.title, c.volume) for c in result.chapters] == [
        ("楔子", 1),
        ("第1章 出山", 1),
        ("第2章 下山", 1),
        ("第3章 进城", 2),
    ]
    assert result.volumes[0].text == "本卷简介：少年出山。"
    assert_nothing_lost(text, result)


def test_prologue_before_chapter_one_is_chapter_zero_and_numbers_follow_the_headings() -> None:
    result = split_manuscript(f"楔子{BODY}第1章 a{BODY}第2章 b{BODY}尾声{BODY}番外 c{BODY}")
    assert [(c.number, c.kind) for c in result.chapters] == [
        (0, "prologue"),
        (1, "chapter"),
        (2, "chapter"),
        (3, "epilogue"),
        (4, "extra"),
    ]


def test_numbering_that_restarts_per_volume_continues_the_sequence_without_warnings_of_gaps() -> None:
    text = f"第一卷 上\n第1章 a{BODY}第2章 b{BODY}第二卷 下\n第1章 c{BODY}第2章 d{BODY}"
    result = split_manuscript(text)
    assert [c.number for c in result.chapters] == [1, 2, 3, 4]
    assert [c.volume for c in result.chapters] == [1, 1, 2, 2]
    assert result.gaps == []
    assert result.duplicates == []


def test_gaps_are_flagged_and_the_headings_numbers_kept() -> None:
    result = split_manuscript(f"第1章 a{BODY}第2章 b{BODY}第5章 e{BODY}第6章 f{BODY}")
    assert [c.number for c in result.chapters] == [1, 2, 5, 6]
    assert result.gaps == [3, 4]
    assert any("缺少第 3–4 章" in w for w in result.warnings)


def test_two_chapters_with_the_same_number_and_text_stay_two_and_are_flagged() -> None:
    result = split_manuscript(f"第1章 a{BODY}第2章 b{BODY}第2章 b2{BODY}第3章 c{BODY}")
    assert len(result.chapters) == 4
    assert result.duplicates == [2]
    numbers = [c.number for c in result.chapters]
    assert len(set(numbers)) == 4  # each can be stored


def test_a_heading_repeated_directly_is_one_chapter() -> None:
    text = f"第1章 a{BODY}第2章 重逢\n第2章 重逢\n{BODY}第3章 c{BODY}"
    result = split_manuscript(text)
    assert titles(result) == ["第1章 a", "第2章 重逢", "第3章 c"]
    assert result.duplicates == [2]
    assert "第2章" not in result.chapters[0].text
    assert any("合并为一章" in w for w in result.warnings)
    assert_nothing_lost(text, result)


def test_a_table_of_contents_at_the_top_goes_to_the_front_matter() -> None:
    text = f"书名\n目录\n第一章 山\n第二章 水\n第三章 风\n\n第一章 山{BODY}第二章 水{BODY}第三章 风{BODY}"
    result = split_manuscript(text)
    assert titles(result) == ["第一章 山", "第二章 水", "第三章 风"]
    assert result.front_matter.splitlines() == ["书名", "目录", "第一章 山", "第二章 水", "第三章 风"]
    assert result.duplicates == []
    assert any("目录" in w for w in result.warnings)
    assert_nothing_lost(text, result)


def test_a_large_jump_in_numbering_is_a_typo_not_missing_chapters() -> None:
    result = split_manuscript(f"第1章 a{BODY}第2章 b{BODY}第200章 c{BODY}第4章 d{BODY}")
    assert [c.number for c in result.chapters] == [1, 2, 3, 4]
    assert result.gaps == []
    assert any("跳到" in w for w in result.warnings)


# ---------------------------------------------------------------------------- kept aside
def test_front_matter_and_trailing_boilerplate_are_kept_aside() -> None:
    text = (
        "《青云志异》\n作者：某某\n\n"
        f"第1章 a{BODY}第2章 b\n　　最后一段。\n　　（全书完）\n\n完本感言\n　　谢谢大家。\n"
    )
    result = split_manuscript(text)
    assert result.front_matter == "《青云志异》\n作者：某某"
    assert result.chapters[-1].text.endswith("（全书完）")
    assert result.trailing == "完本感言\n　　谢谢大家。"
    assert_nothing_lost(text, result)


def test_a_per_chapter_end_mark_stays_in_its_chapter() -> None:
    result = split_manuscript("第1章 a\n　　正文。\n　　（本章完）\n第2章 b\n　　正文。\n　　（本章完）\n")
    assert [c.text.endswith("（本章完）") for c in result.chapters] == [True, True]
    assert result.trailing == ""


@pytest.mark.parametrize("mark", ["第一章完", "第一章 完", "第一章（完）"])
def test_a_chapter_end_mark_written_like_a_heading_does_not_start_a_chapter(mark: str) -> None:
    result = split_manuscript(f"第一章 山\n　　正文。\n{mark}\n第二章 水\n　　正文。\n")
    assert titles(result) == ["第一章 山", "第二章 水"]
    assert result.chapters[0].text.endswith(mark)
    assert result.duplicates == []


def test_a_gutenberg_footer_is_trailing() -> None:
    text = (
        "*** START OF THE PROJECT GUTENBERG EBOOK 測試 ***\n\n"
        f"第一回 甲{BODY}第二回 乙{BODY}"
        "*** END OF THE PROJECT GUTENBERG EBOOK 測試 ***\n\nSection 1. General Terms of Use\n"
    )
    result = split_manuscript(text)
    assert titles(result) == ["第一回 甲", "第二回 乙"]
    assert result.front_matter.startswith("*** START OF THE PROJECT GUTENBERG")
    assert result.trailing.startswith("*** END OF THE PROJECT GUTENBERG")
    assert "Section 1" in result.trailing
    assert "GUTENBERG" not in result.chapters[-1].text


def test_text_without_headings_has_no_chapters_and_keeps_everything_as_front_matter() -> None:
    text = "　　只是一段没有标题的文字。\n　　第二段。\n"
    result = split_manuscript(text)
    assert result.chapters == []
    assert squeeze(result.front_matter) == squeeze(text)
    assert result.warnings


# ---------------------------------------------------------------------------- stored form and JSON
def test_stored_chapter_is_a_markdown_heading_then_the_body_and_counts_its_heading() -> None:
    chapter = split_manuscript("第1章 开始\n\n　　正文。\n").chapters[0]
    assert chapter.stored_text() == "# 第1章 开始\n\n　　正文。\n"
    assert chapter.chars == 8  # 第 1 章 开 始 + 正 文 。 (the "#" and spaces are not 字数)


def test_dry_run_json_shape() -> None:
    text = (FIXTURES / "manuscripts" / "web_novel.txt").read_text(encoding="utf-8")
    data = split_manuscript(text).to_json("utf-8")
    assert set(data) == {
        "chapters",
        "volumes",
        "front_matter_chars",
        "trailing_chars",
        "encoding",
        "warnings",
        "notes",
    }
    assert data["chapters"][:2] == [
        {"number": 0, "title": "楔子", "chars": 21},
        {"number": 1, "title": "第1章 山村少年", "chars": 44},
    ]
    assert data["volumes"] == [{"number": 1, "title": "初入仙门"}, {"number": 2, "title": "风起云涌"}]
    assert data["trailing_chars"] > 0
    assert data["front_matter_chars"] > 0
