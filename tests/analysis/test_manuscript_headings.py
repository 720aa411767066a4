"""Real manuscripts' heading shapes (issue 19 point 2): a heading repeated with only a rule line between the
copies is one chapter; 第六章 on one line and its title on the next is one heading; in UTF-8 (with and without
BOM), UTF-16, GB18030 and Big5; and every place the split was unsure of is a note the author is shown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from novel_desktop.analysis.manuscript import (
    decode_with_confidence,
    read_manuscript,
    split_for_import,
    split_manuscript,
)
from novel_desktop.domain.manuscript import Manuscript, SplitResult
from tests.conftest import FIXTURES

HEADINGS = FIXTURES / "manuscripts" / "headings"
SIMPLIFIED_TITLES = ["第一章 灯下", "第二章 夜客", "第三章 旧信", "第四章 归途", "第五章 渡口"]
TRADITIONAL_TITLES = ["第一章 燈下", "第二章 夜客", "第三章 舊信", "第四章 歸途", "第五章 渡口"]
BODY = "\n　　他推开门，屋里空无一人。桌上的茶还是热的。\n\n"


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def assert_nothing_lost(text: str, result: SplitResult) -> None:
    assert squeeze("".join(result.pieces())) == squeeze(text)


def kinds(result: SplitResult) -> list[tuple[str, int | None]]:
    return [(n.kind, n.chapter) for n in result.notes]


@pytest.mark.parametrize(
    ("name", "encoding", "titles"),
    [
        ("simplified.txt", "utf-8", SIMPLIFIED_TITLES),
        ("simplified.utf8bom.txt", "utf-8-sig", SIMPLIFIED_TITLES),
        ("simplified.utf16.txt", "utf-16", SIMPLIFIED_TITLES),
        ("simplified.gb18030.txt", "gb18030", SIMPLIFIED_TITLES),
        ("traditional.txt", "utf-8", TRADITIONAL_TITLES),
        ("traditional.big5.txt", "big5", TRADITIONAL_TITLES),
        ("traditional.gb18030.txt", "gb18030", TRADITIONAL_TITLES),
    ],
)
def test_both_heading_shapes_split_right_in_every_encoding(
    name: str, encoding: str, titles: list[str]
) -> None:
    manuscript = read_manuscript(HEADINGS / name)
    result = split_for_import(manuscript)
    assert manuscript.encoding == encoding
    assert [c.title for c in result.chapters] == titles
    assert [c.number for c in result.chapters] == [1, 2, 3, 4, 5]
    # No empty chapter from a repeated heading, and no copy of a heading or rule line left in any text.
    for chapter in result.chapters:
        assert chapter.text.startswith("　　"), chapter.title
        assert "第" not in chapter.text.split("\n")[0]
        assert not any(mark in chapter.text for mark in ("-----", "＊＊＊", "====", "☆☆☆"))
    assert_nothing_lost(manuscript.text, result)
    merged = [("merged_heading", 1), ("merged_heading", 3), ("merged_heading", 5)]
    joined = [("joined_heading", 2), ("joined_heading", 4)]
    assert sorted(kinds(result)) == sorted(merged + joined)
    assert not any(n.kind == "encoding" for n in result.notes)


@pytest.mark.parametrize("name", ["traditional.big5.txt", "traditional.gb18030.txt"])
def test_traditional_text_stays_as_written(name: str) -> None:
    written = (HEADINGS / "traditional.txt").read_text(encoding="utf-8")
    assert read_manuscript(HEADINGS / name).text == written


@pytest.mark.parametrize(
    "rule",
    [
        "-----",
        "＊＊＊",
        "====",
        "☆☆☆",
        "",
        "\n\n",
        "——————",
        "* * *",
        "－－－－",
        "━━━━",
        "※※※",
        "……",
        "＊　＊　＊",
        "~~~~",
    ],
)
def test_a_heading_repeated_with_a_decoration_line_between_is_one_chapter(rule: str) -> None:
    text = f"第1章 甲{BODY}第2章 重逢\n{rule}\n第2章 重逢\n{BODY}第3章 丙{BODY}"
    result = split_manuscript(text)
    assert [c.title for c in result.chapters] == ["第1章 甲", "第2章 重逢", "第3章 丙"]
    assert result.chapters[1].text.startswith("　　他推开门")
    assert result.chapters[1].heading.startswith("第2章 重逢") and result.chapters[1].heading.endswith("重逢")
    assert kinds(result) == [("merged_heading", 2)]
    assert_nothing_lost(text, result)


def test_three_copies_of_a_heading_are_one_chapter() -> None:
    text = f"第1章 甲{BODY}第2章 乙\n-----\n第2章 乙\n*****\n第2章 乙\n{BODY}"
    result = split_manuscript(text)
    assert [c.title for c in result.chapters] == ["第1章 甲", "第2章 乙"]
    assert result.chapters[1].text.startswith("　　")
    assert_nothing_lost(text, result)


def test_two_chapters_with_one_heading_and_text_between_stay_two() -> None:
    text = f"第1章 甲{BODY}第2章 乙{BODY}第2章 乙{BODY}"
    result = split_manuscript(text)
    assert len(result.chapters) == 3
    assert result.duplicates == [2]
    assert not any(n.kind == "merged_heading" for n in result.notes)


@pytest.mark.parametrize("between", ["\n", "\n\n"])
def test_a_heading_split_over_two_lines_is_one_heading(between: str) -> None:
    text = f"第五章 前{BODY}第六章{between}风起\n{BODY}第七章 后{BODY}"
    result = split_manuscript(text)
    assert [c.title for c in result.chapters] == ["第五章 前", "第六章 风起", "第七章 后"]
    assert result.chapters[1].text.startswith("　　他推开门")
    assert result.chapters[1].stored_text().startswith("# 第六章 风起\n\n　　")
    assert kinds(result) == [("joined_heading", 6)]
    assert_nothing_lost(text, result)


@pytest.mark.parametrize(
    "first_line",
    [
        "　　风起",  # indented: the first paragraph
        "风起了，他站在窗前。",  # a sentence
        "“走吧。”",  # speech
        "这一行太长了不像一个标题的样子啊啊啊",  # longer than a title line
        "-----",  # decoration
    ],
)
def test_a_bare_heading_keeps_its_first_paragraph_in_the_text(first_line: str) -> None:
    text = f"第五章 前{BODY}第六章\n{first_line}\n　　后面的正文。\n"
    result = split_manuscript(text)
    assert result.chapters[1].title == "第六章"
    assert not any(n.kind == "joined_heading" for n in result.notes)
    assert_nothing_lost(text, result)


def test_a_bare_heading_followed_by_the_next_heading_is_not_joined() -> None:
    result = split_manuscript(f"第一章\n第二章 雨{BODY}第一章\n{BODY}")
    assert not any(n.kind == "joined_heading" for n in result.notes)


def test_very_short_and_very_long_chapters_are_noted() -> None:
    paragraph = "　　" + "他沿着河堤往城外走，河水涨了不少。" * 20 + "\n"
    usual = paragraph * 3
    text = (
        f"第1章 甲\n{usual}第2章 乙\n{usual}第3章 丙\n　　短。\n第4章 丁\n{usual}"
        f"第5章 戊\n{paragraph * 60}第6章 己\n{usual}"
    )
    result = split_manuscript(text)
    assert ("short_chapter", 3) in kinds(result)
    assert ("long_chapter", 5) in kinds(result)
    assert {n.chapter for n in result.notes} == {3, 5}


def test_a_heading_like_line_left_inside_the_text_is_noted() -> None:
    text = f"第1章 甲{BODY}第三回里那人\n{BODY}第2章 乙{BODY}"
    result = split_manuscript(text)
    assert [c.title for c in result.chapters] == ["第1章 甲", "第2章 乙"]
    notes = [n for n in result.notes if n.kind == "unsplit_heading"]
    assert [n.chapter for n in notes] == [1]
    assert "第三回里那人" in notes[0].message
    assert text[notes[0].offset :].startswith("第三回里那人")


def test_a_sentence_that_begins_like_a_heading_is_not_noted() -> None:
    result = split_manuscript(f"第1章 甲{BODY}第三回里那人说过，试炼最难。\n{BODY}第2章 乙{BODY}")
    assert result.notes == []


def test_every_note_is_also_a_warning_and_in_the_json() -> None:
    result = split_manuscript((HEADINGS / "simplified.txt").read_text(encoding="utf-8"))
    assert all(n.message in result.warnings for n in result.notes)
    data = result.to_json("utf-8")
    assert data["notes"] == [
        {"kind": n.kind, "chapter": n.chapter, "message": n.message} for n in result.notes
    ]


def test_an_encoding_guessed_from_a_few_bytes_is_noted() -> None:
    data = "第一章 开".encode("gb18030")
    text, encoding, confidence = decode_with_confidence(data)
    assert (text, encoding) == ("第一章 开", "gb18030")
    assert confidence < 0.8
    result = split_for_import(Manuscript(text, encoding, "txt", confidence))
    assert [n.kind for n in result.notes] == ["encoding"]
    assert "gb18030" in result.notes[0].message


def test_a_file_over_the_size_cap_is_refused_in_chinese(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from novel_desktop.analysis import manuscript_files
    from novel_desktop.analysis.manuscript import ManuscriptTooLarge

    monkeypatch.setattr(manuscript_files, "MAX_TEXT_BYTES", 1000)
    path = tmp_path / "big.txt"
    path.write_text("第一章 甲\n" + "字" * 2000, encoding="utf-8")
    with pytest.raises(ManuscriptTooLarge) as err:
        read_manuscript(path)
    assert "big.txt" in str(err.value)
    assert re.search(r"[\u4e00-\u9fff]", str(err.value))


def test_a_manuscript_that_indents_every_line_still_joins_its_two_line_headings() -> None:
    text = "　　第五章 前\n　　他推开门。\n　　第六章\n　　风起\n　　天亮了。\n　　第七章 后\n　　完了。\n"
    result = split_manuscript(text)
    assert [c.title for c in result.chapters] == ["第五章 前", "第六章 风起", "第七章 后"]
    assert result.chapters[1].text.strip() == "天亮了。"
    assert_nothing_lost(text, result)


def test_a_two_line_heading_written_twice_around_a_rule_is_one_chapter() -> None:
    text = f"第五章 前{BODY}第六章\n风起\n-----\n第六章\n风起\n{BODY}第七章 后{BODY}"
    result = split_manuscript(text)
    assert [c.title for c in result.chapters] == ["第五章 前", "第六章 风起", "第七章 后"]
    assert result.chapters[1].text.startswith("　　他推开门")
    assert sorted(kinds(result)) == [("joined_heading", 6), ("merged_heading", 6)]
    assert_nothing_lost(text, result)


def test_a_volume_heading_split_over_two_lines_is_joined_but_a_bare_prologue_keeps_its_first_line() -> None:
    text = f"第一卷\n初入仙门\n楔子\n那年冬天\n{BODY}第1章 甲{BODY}"
    result = split_manuscript(text)
    assert [v.title for v in result.volumes] == ["初入仙门"]
    assert result.chapters[0].title == "楔子"
    assert result.chapters[0].text.startswith("那年冬天")
