"""Reading manuscripts: encodings detected and reported, .docx and .epub, clear errors for the rest."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from novel_desktop.analysis.manuscript import (
    ManuscriptError,
    decode_bytes,
    read_manuscript,
    split_manuscript,
)

SIMPLIFIED = "第一章 开端\n\n　　他走进房间，看见桌上放着一封信。信上写着：明天中午见。\n\n第二章 赴约\n\n　　第二天中午，他准时到了茶馆。\n"
TRADITIONAL = "第一章 開端\n\n　　他走進房間，看見桌上放著一封信。信上寫著：明天中午見。\n"


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (SIMPLIFIED.encode("utf-8"), "utf-8"),
        (b"\xef\xbb\xbf" + SIMPLIFIED.encode("utf-8"), "utf-8-sig"),
        (SIMPLIFIED.encode("utf-16"), "utf-16"),
        (SIMPLIFIED.encode("utf-16-be"), "utf-16-be"),
        (SIMPLIFIED.encode("utf-16-le"), "utf-16-le"),
        (SIMPLIFIED.encode("gbk"), "gb18030"),
        (SIMPLIFIED.encode("gb18030"), "gb18030"),
    ],
)
def test_encodings_are_detected_and_reported(data: bytes, encoding: str) -> None:
    text, detected = decode_bytes(data)
    assert detected == encoding
    assert text == SIMPLIFIED  # no BOM character, nothing garbled


def test_big5_traditional_text_is_not_read_as_gbk() -> None:
    text, detected = decode_bytes(TRADITIONAL.encode("big5"))
    assert (text, detected) == (TRADITIONAL, "big5")


def test_windows_line_ends_become_newlines() -> None:
    text, _ = decode_bytes(SIMPLIFIED.replace("\n", "\r\n").encode("gbk"))
    assert text == SIMPLIFIED


@pytest.mark.parametrize(("name", "codec"), [("稿.txt", "gbk"), ("稿.md", "utf-16"), ("稿.TXT", "utf-8-sig")])
def test_read_manuscript_splits_text_files_in_any_encoding(tmp_path: Path, name: str, codec: str) -> None:
    path = tmp_path / name
    path.write_bytes(SIMPLIFIED.encode(codec))
    manuscript = read_manuscript(path)
    assert manuscript.source_format == ("md" if name.endswith(".md") else "txt")
    assert [c.title for c in split_manuscript(manuscript.text).chapters] == ["第一章 开端", "第二章 赴约"]


def test_docx_paragraphs_are_read_in_order(tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_paragraph("书名：测试")
    document.add_heading("第一章 开端", level=1)
    document.add_paragraph("　　他走进房间。")
    document.add_heading("第二章 赴约", level=1)
    document.add_paragraph("　　他准时到了茶馆。")
    path = tmp_path / "稿.docx"
    document.save(str(path))

    manuscript = read_manuscript(path)
    result = split_manuscript(manuscript.text)
    assert manuscript.source_format == "docx"
    assert [c.title for c in result.chapters] == ["第一章 开端", "第二章 赴约"]
    assert result.chapters[1].text == "　　他准时到了茶馆。"
    assert result.front_matter == "书名：测试"


def _epub(path: Path, chapters: list[tuple[str, str]]) -> None:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("test-id")
    book.set_title("测试")
    book.set_language("zh")
    items = []
    for i, (heading, body) in enumerate(chapters, start=1):
        item = epub.EpubHtml(title=heading, file_name=f"c{i}.xhtml", lang="zh")
        paragraphs = "".join(f"<p>{p}</p>" for p in body.split("\n"))
        item.content = f"<html><body><h2>{heading}</h2>\n  {paragraphs}</body></html>"
        book.add_item(item)
        items.append(item)
    book.toc = items
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *items]
    epub.write_epub(str(path), book)


def test_epub_chapters_are_read_in_spine_order_and_the_nav_is_front_matter(tmp_path: Path) -> None:
    path = tmp_path / "稿.epub"
    _epub(path, [("第一章 开端", "　　他走进房间。\n　　桌上有信。"), ("第二章 赴约", "　　他到了茶馆。")])

    manuscript = read_manuscript(path)
    result = split_manuscript(manuscript.text)
    assert manuscript.source_format == "epub"
    assert [c.title for c in result.chapters] == ["第一章 开端", "第二章 赴约"]
    assert result.chapters[0].text == "　　他走进房间。\n　　桌上有信。"
    assert result.duplicates == []  # the navigation page lists the headings once more


@pytest.mark.parametrize("name", ["稿.pdf", "稿.doc", "稿"])
def test_unsupported_formats_are_refused_in_chinese(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"%PDF-1.4")
    with pytest.raises(ManuscriptError, match="不支持的文件格式"):
        read_manuscript(path)


def test_a_missing_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ManuscriptError, match="找不到文件"):
        read_manuscript(tmp_path / "没有.txt")


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("图.txt", bytes(range(256)) * 8, "二进制|编码"),
        ("坏.docx", b"not a zip", "Word"),
        ("坏.epub", b"not a zip", "EPUB"),
    ],
)
def test_unreadable_files_raise_a_clear_error(tmp_path: Path, name: str, data: bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ManuscriptError, match=message):
        read_manuscript(path)


def test_an_os_error_while_reading_is_a_manuscript_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "稿.txt"
    path.write_text(SIMPLIFIED, encoding="utf-8")

    real_open = os.open

    def refuse(file: Any, *args: Any, **kwargs: Any) -> int:
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied")
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(ManuscriptError, match="无法读取"):
        read_manuscript(path)
