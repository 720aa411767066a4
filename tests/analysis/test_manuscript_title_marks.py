"""Import leftovers (issue 19 point 2): a title ending ！ or ？ on the line after a bare 第X章 is joined to it,
and a heading-like line the split left in the text is split at once the author confirms it — in UTF-8,
GB18030 and Big5 files of our own small texts."""

from __future__ import annotations

from pathlib import Path

import pytest

from novel_desktop.analysis.manuscript import read_manuscript, split_for_import
from novel_desktop.analysis.manuscript_edits import split_at_note

BODY = "　　{name}推开门，院里的雪已经没过脚踝，远处传来几声狗叫。\n\n"
TRAD_BODY = "　　{name}推開門，院裡的雪已經沒過腳踝，遠處傳來幾聲狗叫。\n\n"

SIMPLIFIED = (
    "第十一章\n山雨\n\n" + BODY.format(name="林枫") * 3
    + "第十二章\n风起！\n\n" + BODY.format(name="沈青") * 3
    + "第十三章\n\n谁在敲门？\n\n" + BODY.format(name="老周") * 3
    + "第十四章\n走！快走！\n\n" + BODY.format(name="阿九") * 3
)  # fmt: skip
TRADITIONAL = (
    "第十一章\n山雨\n\n" + TRAD_BODY.format(name="林楓") * 3
    + "第十二章\n風起！\n\n" + TRAD_BODY.format(name="沈青") * 3
    + "第十三章\n\n誰在敲門？\n\n" + TRAD_BODY.format(name="老周") * 3
    + "第十四章\n走！快走！\n\n" + TRAD_BODY.format(name="阿九") * 3
)  # fmt: skip


@pytest.mark.parametrize(
    ("encoding", "text", "titles"),
    [
        ("utf-8", SIMPLIFIED, ["山雨", "风起！", "谁在敲门？"]),
        ("gb18030", SIMPLIFIED, ["山雨", "风起！", "谁在敲门？"]),
        ("big5", TRADITIONAL, ["山雨", "風起！", "誰在敲門？"]),
    ],
)
def test_a_title_ending_in_an_exclamation_or_question_mark_is_joined(
    tmp_path: Path, encoding: str, text: str, titles: list[str]
) -> None:
    path = tmp_path / f"book-{encoding}.txt"
    path.write_bytes(text.encode(encoding))
    split = split_for_import(read_manuscript(path))
    chapters = split.chapters
    assert [c.title for c in chapters[:3]] == [
        f"第十{n}章 {t}" for n, t in zip("一二三", titles, strict=True)
    ]
    assert all(c.text.startswith("　　") for c in chapters[:3])  # the title line left the text
    # A line with punctuation inside it is the first line of prose, not a title.
    assert chapters[3].title == "第十四章" and chapters[3].text.startswith("走！快走！")
    assert [n.kind for n in split.notes].count("joined_heading") == 3
    assert "".join("".join(p.split()) for p in split.pieces()) == "".join(text.split())


def _unsure(body: str, lamp: str, home: str) -> str:
    return (
        f"第一章 {lamp}下\n\n" + body.format(name="林楓") * 3
        + "第二回里\n\n" + body.format(name="沈青") * 3
        + "第三章 渡口\n\n" + body.format(name="老周") * 3
        + f"第四章 {home}途\n\n" + body.format(name="阿九") * 3
    )  # fmt: skip


@pytest.mark.parametrize("encoding", ["utf-8", "gb18030", "big5"])
def test_a_confirmed_heading_like_line_becomes_a_chapter(tmp_path: Path, encoding: str) -> None:
    text = _unsure(BODY, "灯", "归") if encoding != "big5" else _unsure(TRAD_BODY, "燈", "歸")
    path = tmp_path / f"unsure-{encoding}.txt"
    path.write_bytes(text.encode(encoding))
    manuscript = read_manuscript(path)
    split = split_for_import(manuscript)
    assert [c.number for c in split.chapters] == [1, 3, 4]
    [note] = [n for n in split.notes if n.kind == "unsplit_heading"]
    assert note.chapter == 1

    new = split_at_note(split, note, manuscript.text)
    assert new is not None and (new.number, new.title, new.heading) == (2, "第二回里", "第二回里")
    assert [c.number for c in split.chapters] == [1, 2, 3, 4]  # it took the number the gap left
    assert split.chapters[0].text.endswith("狗叫。") and "第二回里" not in split.chapters[0].text
    assert split.chapters[1].text.startswith("　　沈青") and split.chapters[1].text.endswith("狗叫。")
    assert split.chapters[1].text == split.chapters[2].text.replace("老周", "沈青")  # tidied alike
    assert note not in split.notes and note.message not in split.warnings
    assert "".join("".join(p.split()) for p in split.pieces()) == "".join(manuscript.text.split())
    assert split_at_note(split, note, manuscript.text) is None  # done once


def test_later_chapters_move_up_when_the_new_one_takes_their_number(tmp_path: Path) -> None:
    text = "第一章 灯下\n\n" + BODY.format(name="林枫") * 2 + "第二回里\n\n" + BODY.format(name="沈青") * 2
    text += "第二章 渡口\n\n" + BODY.format(name="老周") * 2
    split = split_for_import(read_manuscript(_write(tmp_path, text)))
    [note] = [n for n in split.notes if n.kind == "unsplit_heading"]
    split_at_note(split, note, text)
    assert [(c.number, c.title) for c in split.chapters] == [
        (1, "第一章 灯下"),
        (2, "第二回里"),
        (3, "第二章 渡口"),
    ]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "book.txt"
    path.write_text(text, encoding="utf-8")
    return path
