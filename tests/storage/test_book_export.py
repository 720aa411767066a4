"""Book export as a reader sees the files: txt for platform editors, Markdown, EPUB, DOCX; safe writing."""

from __future__ import annotations

import os
import re
import warnings
import zipfile
from pathlib import Path
from typing import Any

import pytest

from novel_desktop.domain.text import count_chars
from novel_desktop.storage import layout
from novel_desktop.storage.book_export import (
    ChapterRangeError,
    ExportWriteError,
    export_book,
    parse_chapter_range,
)
from novel_desktop.storage.store import NovelStore, dumps

# Chapter 1 as the pipeline writes it (heading, indented paragraphs, blank lines between them);
# chapter 2 as an author might paste it (plain title line, no indentation, Markdown emphasis, a scene break).
CH1 = "# 第1章 桥头少年\n\n　　雨下了三天。\n\n　　少年站在桥头，望着河水。\n"
CH2 = "第2章 夜雨\n他推开门，**她**笑了。\n---\n天亮了。\n"


def _add(store: NovelStore, n: int, text: str, volume: int = 1) -> None:
    store.put_staging(layout.chapter_path(n), text, kind="refined")
    store.commit_chapter(n, volume=volume)


def _name_volume(store: NovelStore, volume: int, title: str) -> None:
    store.put_document(layout.volume_info_path(volume), dumps({"volume": volume, "title": title}))


@pytest.fixture
def two_chapters(store: NovelStore) -> NovelStore:
    _add(store, 1, CH1)
    _add(store, 2, CH2)
    return store


@pytest.fixture
def two_volumes(store: NovelStore) -> NovelStore:
    _add(store, 1, CH1, volume=1)
    _add(store, 2, CH2, volume=1)
    _add(store, 3, "# 第3章 出山\n\n　　他下山了。\n", volume=2)
    _name_volume(store, 1, "风起")
    _name_volume(store, 2, "第二卷 出山")
    return store


def _read_epub(path: Path) -> Any:
    from ebooklib import epub

    with warnings.catch_warnings():  # ebooklib warns about its own future defaults when reading
        warnings.simplefilter("ignore")
        return epub.read_epub(str(path), {"ignore_ncx": False})


def _style(paragraph: Any) -> str:
    return str(paragraph.style.name)


# ---------------------------------------------------------------------------------------------- txt
def test_txt_is_laid_out_for_pasting_into_platform_editors(two_chapters: NovelStore, tmp_path: Path) -> None:
    out = tmp_path / "书.txt"
    result = export_book(two_chapters, out, "txt")
    assert out.read_bytes().decode("utf-8") == (
        "第1章 桥头少年\n"
        "\n"
        "　　雨下了三天。\n"
        "　　少年站在桥头，望着河水。\n"
        "\n"
        "\n"
        "第2章 夜雨\n"
        "\n"
        "　　他推开门，她笑了。\n"
        "　　＊　＊　＊\n"
        "　　天亮了。\n"
    )
    assert not out.read_bytes().startswith(b"\xef\xbb\xbf")  # no BOM: editors would paste it as a character
    assert result.chapters == 2
    assert result.chars == count_chars("雨下了三天。少年站在桥头，望着河水。他推开门，她笑了。＊＊＊天亮了。")


def test_chapter_without_a_heading_keeps_its_first_paragraph(store: NovelStore, tmp_path: Path) -> None:
    _add(store, 7, "山路很长。\n他走了一夜。\n")
    out = tmp_path / "书.txt"
    export_book(store, out, "txt")
    assert out.read_text(encoding="utf-8") == "第7章\n\n　　山路很长。\n　　他走了一夜。\n"


def test_txt_names_volumes_when_the_novel_has_them(two_volumes: NovelStore, tmp_path: Path) -> None:
    out = tmp_path / "书.txt"
    export_book(two_volumes, out, "txt")
    text = out.read_text(encoding="utf-8")
    assert text.startswith("第一卷 风起\n\n第1章 桥头少年\n")
    assert "\n\n\n第二卷 出山\n\n第3章 出山\n\n　　他下山了。\n" in text
    assert text.count("第二卷") == 1  # a volume title that already says 第二卷 is not doubled


# ---------------------------------------------------------------------------------------------- md
def test_markdown_has_book_and_chapter_headings(two_chapters: NovelStore, tmp_path: Path) -> None:
    out = tmp_path / "书.md"
    export_book(two_chapters, out, "md")
    assert out.read_text(encoding="utf-8") == (
        "# 测试小说\n\n## 第1章 桥头少年\n\n雨下了三天。\n\n少年站在桥头，望着河水。\n\n"
        "## 第2章 夜雨\n\n他推开门，她笑了。\n\n＊　＊　＊\n\n天亮了。\n"
    )


def test_markdown_puts_chapters_under_named_volumes(two_volumes: NovelStore, tmp_path: Path) -> None:
    out = tmp_path / "书.md"
    export_book(two_volumes, out, "md")
    headings = [line for line in out.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    assert headings == [
        "# 测试小说",
        "## 第一卷 风起",
        "### 第1章 桥头少年",
        "### 第2章 夜雨",
        "## 第二卷 出山",
        "### 第3章 出山",
    ]


# ---------------------------------------------------------------------------------------------- epub
def test_epub_opens_with_a_table_of_contents_and_the_chapter_text(
    two_chapters: NovelStore, tmp_path: Path
) -> None:
    out = tmp_path / "书.epub"
    export_book(two_chapters, out, "epub")
    book = _read_epub(out)
    assert book.get_metadata("DC", "title")[0][0] == "测试小说"
    assert book.get_metadata("DC", "language")[0][0] == "zh-CN"
    assert [link.title for link in book.toc] == ["第1章 桥头少年", "第2章 夜雨"]
    chapter = book.get_item_with_href(book.toc[1].href).get_content().decode("utf-8")
    assert "<h2>第2章 夜雨</h2>" in chapter
    assert "<p>他推开门，她笑了。</p>" in chapter
    assert "<p>天亮了。</p>" in chapter
    assert "**" not in chapter
    css = next(i for i in book.get_items() if i.file_name.endswith(".css")).get_content().decode("utf-8")
    assert "text-indent: 2em" in css
    assert "SimSun" in css


def test_epub_table_of_contents_is_grouped_by_volume(two_volumes: NovelStore, tmp_path: Path) -> None:
    out = tmp_path / "书.epub"
    export_book(two_volumes, out, "epub")
    toc = _read_epub(out).toc
    grouped = [(section.title, [link.title for link in links]) for section, links in toc]
    assert grouped == [
        ("第一卷 风起", ["第1章 桥头少年", "第2章 夜雨"]),
        ("第二卷 出山", ["第3章 出山"]),
    ]
    # The nav document a reading system shows lists the same entries.
    with zipfile.ZipFile(out) as z:
        nav = z.read("EPUB/nav.xhtml").decode("utf-8")
    assert re.findall(r">(第[^<]+)<", nav) == [
        "第一卷 风起",
        "第1章 桥头少年",
        "第2章 夜雨",
        "第二卷 出山",
        "第3章 出山",
    ]


def test_epub_identifier_is_the_same_on_every_export(two_chapters: NovelStore, tmp_path: Path) -> None:
    # A reading app recognises a re-export as the same book (updated), not a second copy.
    first, second = tmp_path / "a.epub", tmp_path / "b.epub"
    export_book(two_chapters, first, "epub")
    _add(two_chapters, 3, "# 第3章 又一章\n\n　　新的一章。\n")
    export_book(two_chapters, second, "epub")
    ids = [_read_epub(p).get_metadata("DC", "identifier")[0][0] for p in (first, second)]
    assert ids[0] == ids[1]
    assert ids[0]


# ---------------------------------------------------------------------------------------------- docx
def test_docx_has_headings_indented_paragraphs_and_a_chinese_font(
    two_volumes: NovelStore, tmp_path: Path
) -> None:
    import docx
    from docx.oxml.ns import qn
    from docx.shared import Pt

    out = tmp_path / "书.docx"
    export_book(two_volumes, out, "docx")
    document = docx.Document(str(out))
    outline = [(_style(p), p.text) for p in document.paragraphs if _style(p) != "Normal"]
    assert outline == [
        ("Title", "测试小说"),
        ("Heading 1", "第一卷 风起"),
        ("Heading 2", "第1章 桥头少年"),
        ("Heading 2", "第2章 夜雨"),
        ("Heading 1", "第二卷 出山"),
        ("Heading 2", "第3章 出山"),
    ]
    body = [p for p in document.paragraphs if _style(p) == "Normal"]
    assert [p.text for p in body][:3] == ["雨下了三天。", "少年站在桥头，望着河水。", "他推开门，她笑了。"]
    for paragraph in body:
        assert paragraph.paragraph_format.first_line_indent == Pt(24)  # two characters of 12 pt
        p_xml: Any = paragraph._p
        assert p_xml.pPr.ind.get(qn("w:firstLineChars")) == "200"  # Word's "首行缩进 2 字符"
        for run in paragraph.runs:
            r_xml: Any = run._r
            assert r_xml.rPr.rFonts.get(qn("w:eastAsia")) == "宋体"
    # Every chapter starts a new page: on the volume heading for a volume's first chapter, else its own.
    starts_page = {p.text: p.paragraph_format.page_break_before for p in document.paragraphs}
    assert starts_page["第一卷 风起"] and starts_page["第二卷 出山"] and starts_page["第2章 夜雨"]
    assert not starts_page["第1章 桥头少年"]


def test_docx_without_volumes_uses_chapter_headings_on_new_pages(
    two_chapters: NovelStore, tmp_path: Path
) -> None:
    import docx

    out = tmp_path / "书.docx"
    export_book(two_chapters, out, "docx")
    headings = [p for p in docx.Document(str(out)).paragraphs if _style(p) == "Heading 1"]
    assert [p.text for p in headings] == ["第1章 桥头少年", "第2章 夜雨"]
    assert all(p.paragraph_format.page_break_before for p in headings)


# ---------------------------------------------------------------------------------------------- ranges
@pytest.mark.parametrize(
    ("spec", "first", "last"),
    [("3-10", 3, 10), ("5", 5, 5), (" 2 - 4 ", 2, 4), ("3～5", 3, 5), ("20-", 20, 10**9)],
)
def test_chapter_ranges_parse(spec: str, first: int, last: int) -> None:
    chapters = parse_chapter_range(spec)
    assert first in chapters and last in chapters
    assert first - 1 not in chapters


def test_open_range_has_no_end() -> None:
    assert 10**6 in parse_chapter_range("20-")
    assert 4 not in parse_chapter_range("3-3")


@pytest.mark.parametrize(
    ("spec", "message"),
    [("abc", "格式不对"), ("", "格式不对"), ("0-3", "从 1 开始"), ("9-2", "起点大于终点")],
)
def test_bad_chapter_ranges_are_explained(spec: str, message: str) -> None:
    with pytest.raises(ChapterRangeError, match=message):
        parse_chapter_range(spec)


def test_export_of_a_range_contains_only_those_chapters(two_volumes: NovelStore, tmp_path: Path) -> None:
    out = tmp_path / "书.txt"
    result = export_book(two_volumes, out, "txt", parse_chapter_range("2-3"))
    text = out.read_text(encoding="utf-8")
    assert "第1章" not in text and "雨下了三天" not in text
    assert "第2章 夜雨" in text and "第3章 出山" in text
    assert result.chapters == 2


def test_a_range_without_chapters_says_which_exist(two_chapters: NovelStore, tmp_path: Path) -> None:
    out = tmp_path / "书.txt"
    with pytest.raises(ChapterRangeError, match=r"第 5-9 章范围内没有章节.*第 1–2 章"):
        export_book(two_chapters, out, "txt", parse_chapter_range("5-9"))
    assert not out.exists()


def test_a_novel_without_chapters_cannot_be_exported(store: NovelStore, tmp_path: Path) -> None:
    with pytest.raises(ChapterRangeError, match="还没有已提交的章节"):
        export_book(store, tmp_path / "书.epub", "epub")


# ---------------------------------------------------------------------------------------------- writing
def _raise_oserror(*_args: object, **_kwargs: object) -> None:
    raise OSError(28, "No space left on device")


@pytest.mark.parametrize("fmt", ["txt", "epub"])
def test_failed_write_keeps_the_existing_file(
    two_chapters: NovelStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    out = tmp_path / f"书.{fmt}"
    out.write_bytes(b"old export")
    monkeypatch.setattr(os, "replace", _raise_oserror)
    with pytest.raises(ExportWriteError, match=r"无法写入.*No space left"):
        export_book(two_chapters, out, fmt, force=True)
    assert out.read_bytes() == b"old export"
    leftovers = [p.name for p in tmp_path.iterdir() if not p.name.startswith("测试小说.novel")]
    assert leftovers == [out.name]  # no temporary file left next to it


def test_failed_write_leaves_no_half_file(
    two_chapters: NovelStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out_dir = tmp_path / "导出"
    out_dir.mkdir()
    monkeypatch.setattr(os, "fsync", _raise_oserror)
    with pytest.raises(ExportWriteError):
        export_book(two_chapters, out_dir / "书.docx", "docx")
    assert list(out_dir.iterdir()) == []


def test_export_replaces_an_existing_file_when_forced(two_chapters: NovelStore, tmp_path: Path) -> None:
    out = tmp_path / "书.txt"
    out.write_text("上一次导出的内容", encoding="utf-8")
    export_book(two_chapters, out, "txt", force=True)
    assert out.read_text(encoding="utf-8").startswith("第1章 桥头少年\n")


def test_missing_folder_is_reported(two_chapters: NovelStore, tmp_path: Path) -> None:
    with pytest.raises(ExportWriteError, match="目录不存在"):
        export_book(two_chapters, tmp_path / "没有这个目录" / "书.txt", "txt")


def test_output_path_that_is_a_folder_is_reported(two_chapters: NovelStore, tmp_path: Path) -> None:
    folder = tmp_path / "书.txt"
    folder.mkdir()
    with pytest.raises(ExportWriteError, match="文件夹"):
        export_book(two_chapters, folder, "txt")
    assert folder.is_dir()


def test_exported_file_is_readable_by_others_like_any_new_file(
    two_chapters: NovelStore, tmp_path: Path
) -> None:
    # A temp file from mkstemp would be 0600; an export should get the same mode as any file the user creates.
    out = tmp_path / "书.txt"
    export_book(two_chapters, out, "txt")
    reference = tmp_path / "reference"
    reference.write_text("x")
    assert os.stat(out).st_mode & 0o777 == os.stat(reference).st_mode & 0o777


@pytest.mark.parametrize("fmt", ["epub", "docx"])
def test_control_characters_in_a_chapter_do_not_break_the_export(
    store: NovelStore, tmp_path: Path, fmt: str
) -> None:
    # Text pasted from other programs can carry invisible control characters that XML cannot hold.
    _add(store, 1, "# 第1章 乱码\n\n他\x07来了\x00。\n")
    out = tmp_path / f"书.{fmt}"
    export_book(store, out, fmt)
    with zipfile.ZipFile(out) as z:
        xml = "".join(
            z.read(n).decode("utf-8")
            for n in z.namelist()
            if n.endswith(("chapter-001.xhtml", "document.xml"))
        )
    assert "他来了。" in xml
