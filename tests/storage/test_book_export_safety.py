"""Export can never destroy the novel or a file the author did not mean to replace; text from the novel stays
text in every format; a chapter with invalid bytes does not stop the others."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from novel_desktop.storage import layout
from novel_desktop.storage.book_export import (
    ExportError,
    ExportTargetExists,
    ExportTargetIsNovel,
    ExportTargetReadOnly,
    ExportWriteError,
    export_book,
)
from novel_desktop.storage.store import NovelStore, dumps

FORMATS = ["txt", "md", "epub", "docx"]


def _add(store: NovelStore, n: int, text: str, volume: int = 1) -> None:
    store.put_staging(layout.chapter_path(n), text, kind="refined")
    store.commit_chapter(n, volume=volume)


@pytest.fixture
def novel(store: NovelStore) -> NovelStore:
    for n in (1, 2, 3):
        _add(store, n, f"# 第{n}章 标题{n}\n\n　　第{n}章的正文。\n")
    return store


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _text_of(path: Path, fmt: str) -> str:
    """What a reader of the exported file sees, as one string."""
    if fmt in ("txt", "md"):
        return path.read_text(encoding="utf-8")
    if fmt == "docx":
        import docx

        return "\n".join(p.text for p in docx.Document(str(path)).paragraphs)
    with zipfile.ZipFile(path) as z:
        return "\n".join(z.read(n).decode("utf-8") for n in sorted(z.namelist()) if n.endswith(".xhtml"))


# ---------------------------------------------------------------------------------------------- the novel
def _spellings(novel: Path, tmp_path: Path) -> dict[str, Path]:
    link = tmp_path / "链接.txt"
    link.symlink_to(novel)
    hard = tmp_path / "硬链接.txt"
    os.link(novel, hard)
    sub = tmp_path / "子目录"
    sub.mkdir()
    return {
        "same path": novel,
        "dot-dot": sub / ".." / novel.name,
        "relative": Path(os.path.relpath(novel)),
        "symlink": link,
        "hard link": hard,
        "other case": novel.with_name(novel.name.upper()),
        "wal": novel.with_name(novel.name + "-wal"),
        "shm": novel.with_name(novel.name + "-shm"),
        "journal": novel.with_name(novel.name + "-journal"),
        "lock": novel.with_name(novel.name + ".lock"),
    }


@pytest.mark.parametrize(
    "spelling",
    [
        "same path",
        "dot-dot",
        "relative",
        "symlink",
        "hard link",
        "other case",
        "wal",
        "shm",
        "journal",
        "lock",
    ],
)
def test_export_never_writes_the_novel_or_its_journal_even_when_forced(
    novel: NovelStore, tmp_path: Path, spelling: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path = novel.path
    before = _digest(path)
    out = _spellings(path, tmp_path)[spelling]
    existed = os.path.lexists(out)
    with pytest.raises(ExportTargetIsNovel, match="就是小说文件"):
        export_book(novel, out, "txt", force=True)
    assert _digest(path) == before
    assert os.path.lexists(out) == existed
    assert [c.number for c in novel.list_chapters()] == [1, 2, 3]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_refusal_is_an_export_error_the_cli_maps_to_exit_2(novel: NovelStore) -> None:
    # cli/export.py turns every ExportError except a bad range into exit 2 with the message.
    with pytest.raises(ExportError):
        export_book(novel, novel.path, "epub")


# ---------------------------------------------------------------------------------------------- replacing
def test_an_existing_file_is_not_replaced_without_force(novel: NovelStore, tmp_path: Path) -> None:
    out = tmp_path / "书.txt"
    out.write_text("作者自己的笔记", encoding="utf-8")
    with pytest.raises(ExportTargetExists, match=r"已存在.*--force"):
        export_book(novel, out, "txt")
    assert out.read_text(encoding="utf-8") == "作者自己的笔记"
    export_book(novel, out, "txt", force=True)
    assert out.read_text(encoding="utf-8").startswith("第1章 标题1")


def test_a_dangling_link_counts_as_an_existing_file(novel: NovelStore, tmp_path: Path) -> None:
    out = tmp_path / "书.txt"
    out.symlink_to(tmp_path / "不存在")
    with pytest.raises(ExportTargetExists):
        export_book(novel, out, "txt")


def test_a_read_only_file_is_never_replaced(novel: NovelStore, tmp_path: Path) -> None:
    out = tmp_path / "书.docx"
    out.write_bytes(b"published version")
    out.chmod(stat.S_IRUSR | stat.S_IRGRP)
    for force in (False, True):  # without force too: --force would not help, so it is not suggested
        with pytest.raises(ExportTargetReadOnly, match="只读"):
            export_book(novel, out, "docx", force=force)
    assert out.read_bytes() == b"published version"
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("测试小说")) == ["书.docx"]


def test_an_interrupted_write_leaves_the_old_file_and_no_temporary_file(
    novel: NovelStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "书.epub"
    out.write_bytes(b"old export")

    def interrupted(_fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        export_book(novel, out, "epub", force=True)
    assert out.read_bytes() == b"old export"
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("测试小说")) == ["书.epub"]


def test_the_new_file_goes_through_a_temporary_file_in_the_same_folder(
    novel: NovelStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "书.md"
    out.write_text("旧", encoding="utf-8")
    renames: list[tuple[Path, Path]] = []
    real_replace = os.replace

    def spy(src: Any, dst: Any) -> None:
        renames.append((Path(src), Path(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    export_book(novel, out, "md", force=True)
    [(src, dst)] = renames
    assert dst == out and src.parent == out.parent and src != out
    assert not src.exists()


def test_a_file_that_appears_while_rendering_is_not_overwritten(
    novel: NovelStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from novel_desktop.storage import book_export

    out = tmp_path / "书.txt"
    real = book_export.RENDERERS["txt"]

    def render_and_race(book: Any) -> bytes:
        out.write_text("别的程序刚写的", encoding="utf-8")
        return real(book)

    monkeypatch.setitem(book_export.RENDERERS, "txt", render_and_race)
    with pytest.raises(ExportTargetExists):
        export_book(novel, out, "txt")
    assert out.read_text(encoding="utf-8") == "别的程序刚写的"


def test_errors_are_write_errors_for_callers_that_catch_those(novel: NovelStore, tmp_path: Path) -> None:
    out = tmp_path / "书.txt"
    out.write_text("x", encoding="utf-8")
    with pytest.raises(ExportWriteError):
        export_book(novel, out, "txt")


# ---------------------------------------------------------------------------------------------- bad bytes
def _corrupt(path: Path, sql: str) -> None:
    connection = sqlite3.connect(path)
    with connection:
        connection.execute(sql)
    connection.close()


# "# 第2章 坏" + invalid UTF-8 (0xFF 0x80) + a UTF-8-encoded lone surrogate (ED A0 80) + "尾"
BAD_CONTENT = "CAST(x'2320e7acac32e7aba020e59d8f0a0ae6ada3ff80eda080e5b0be0a' AS TEXT)"


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_chapter_with_invalid_bytes_is_reported_and_the_others_still_export(
    novel: NovelStore, tmp_path: Path, fmt: str
) -> None:
    _corrupt(
        novel.path,
        f"UPDATE chapter_revisions SET content = {BAD_CONTENT}"
        " WHERE id = (SELECT current_revision_id FROM chapters WHERE number = 2)",
    )
    out = tmp_path / f"书.{fmt}"
    result = export_book(novel, out, fmt)
    assert result.chapters == 3
    assert [(p.number, p.title) for p in result.problems] == [(2, "第2章 坏")]
    assert "第 2 章「第2章 坏」" in result.problems[0].message
    text = _text_of(out, fmt)
    assert "第1章的正文。" in text and "第3章的正文。" in text
    assert "正\ufffd" in text and "尾" in text  # the damaged chapter keeps what can be read


def test_a_chapter_title_with_invalid_bytes_does_not_stop_the_export(
    novel: NovelStore, tmp_path: Path
) -> None:
    _corrupt(novel.path, "UPDATE chapters SET title = CAST(x'e5ff' AS TEXT) WHERE number = 3")
    result = export_book(novel, tmp_path / "书.txt", "txt")
    assert result.chapters == 3
    assert [p.number for p in result.problems] == [3]


def test_a_lone_surrogate_in_chapter_text_is_repaired_and_reported(
    novel: NovelStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = NovelStore.chapter_text

    def with_surrogate(self: NovelStore, number: int) -> str | None:
        text = real(self, number)
        return text.replace("正文", "正\udc80文") if number == 1 and text else text

    monkeypatch.setattr(NovelStore, "chapter_text", with_surrogate)
    out = tmp_path / "书.epub"
    result = export_book(novel, out, "epub")
    assert [p.number for p in result.problems] == [1]
    assert "正\ufffd文" in _text_of(out, "epub")


# ---------------------------------------------------------------------------------------------- markup
HOSTILE = "<script>alert('x')</script> & <b>粗</b>"


@pytest.fixture
def hostile(store: NovelStore) -> NovelStore:
    store.set_meta("title", f"书名{HOSTILE}")
    store.set_meta("author", f"作者{HOSTILE}")
    _add(store, 1, f"# 第1章 {HOSTILE}\n\n　　正文{HOSTILE}\n\n- 不是列表\n\n1. 不是编号\n\n+ 也不是\n")
    _add(store, 2, "# 第2章 平常\n\n　　[链接](javascript:alert(1)) 和 *星号* 与 `代码`\n", volume=2)
    store.put_document(layout.volume_info_path(2), dumps({"volume": 2, "title": HOSTILE}))
    return store


def test_markdown_export_shows_html_and_markdown_as_text(hostile: NovelStore, tmp_path: Path) -> None:
    out = tmp_path / "书.md"
    export_book(hostile, out, "md")
    md = out.read_text(encoding="utf-8")
    assert "<" not in md and ">" not in md  # no tag, no quote: every one is an entity
    assert "&lt;script&gt;alert('x')&lt;/script&gt; &amp; &lt;b&gt;粗&lt;/b&gt;" in md
    lines = md.splitlines()
    assert lines[0] == "# 书名&lt;script&gt;alert('x')&lt;/script&gt; &amp; &lt;b&gt;粗&lt;/b&gt;"
    assert "\\- 不是列表" in lines and "1\\. 不是编号" in lines and "\\+ 也不是" in lines
    assert "\\[链接\\](javascript:alert(1)) 和 \\*星号\\* 与 \\`代码\\`" in lines
    assert sum(line.startswith("#") for line in lines) == 5  # book, two volumes, two chapters


def test_epub_export_keeps_titles_toc_entries_and_paragraphs_as_text(
    hostile: NovelStore, tmp_path: Path
) -> None:
    from lxml import etree

    out = tmp_path / "书.epub"
    export_book(hostile, out, "epub")
    with zipfile.ZipFile(out) as z:
        parts = {n: z.read(n) for n in z.namelist() if n.endswith((".xhtml", ".ncx", ".opf"))}
    texts = []
    for name, data in parts.items():
        root = etree.fromstring(data)  # every part is well-formed XML
        assert not [e for e in root.iter() if etree.QName(e).localname in ("script", "b")], name
        texts.append("".join(root.itertext()))
    joined = "\n".join(texts)
    assert f"第1章 {HOSTILE}" in joined  # chapter heading and its TOC entries, as text
    assert f"正文{HOSTILE}" in joined
    assert f"书名{HOSTILE}" in joined and f"作者{HOSTILE}" in joined
    assert f"第二卷 {HOSTILE}" in joined


def test_docx_export_keeps_html_in_titles_as_text(hostile: NovelStore, tmp_path: Path) -> None:
    out = tmp_path / "书.docx"
    export_book(hostile, out, "docx")
    text = _text_of(out, "docx")
    assert f"书名{HOSTILE}" in text and f"第1章 {HOSTILE}" in text and f"正文{HOSTILE}" in text


# ---------------------------------------------------------------------------------------------- language
def test_every_message_of_export_and_manuscript_reading_has_an_english_translation() -> None:
    import ast
    import json
    import re

    from novel_desktop.paths import resource

    catalogue = json.loads(resource("i18n", "en", "book_files.json").read_text(encoding="utf-8"))
    package = Path(__file__).resolve().parents[2] / "novel_desktop"
    sources = []
    for name in (
        "storage/book_export.py",
        "storage/export_file.py",
        "analysis/manuscript.py",
        "analysis/manuscript_files.py",
    ):
        for node in ast.walk(ast.parse((package / name).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tr" and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    sources.append(arg.value)
    assert [s for s in sources if s not in catalogue] == []
    assert sorted(set(sources)) == sorted(catalogue)  # nothing stale in the catalogue either
    for source, english in catalogue.items():
        assert set(re.findall(r"\{\w+\}", source)) == set(re.findall(r"\{\w+\}", english)), source


def test_in_english_a_refused_export_says_so_in_english(novel: NovelStore, tmp_path: Path) -> None:
    from novel_desktop import i18n

    out = tmp_path / "book.txt"
    out.write_text("x", encoding="utf-8")
    i18n.set_language("en")
    try:
        with pytest.raises(ExportTargetExists, match=r"already exists: .*book\.txt.*--force"):
            export_book(novel, out, "txt")
    finally:
        i18n.set_language("zh")


@pytest.mark.timeout(60)
def test_a_chapter_line_with_a_huge_blank_run_exports(store: NovelStore, tmp_path: Path) -> None:
    # "# a" + spaces + "b" made the heading pattern backtrack cubically (5000 spaces took minutes).
    _add(store, 1, "# 第1章 开端\n\n　　正文。\n")
    # Stored directly, so that only the export is measured.
    line = "# 第1章 开端" + " " * 1_000_000 + "尾"
    connection = sqlite3.connect(store.path)
    with connection:
        connection.execute("UPDATE chapter_revisions SET content = ?", (f"{line}\n\n　　正文。\n",))
    connection.close()
    out = tmp_path / "书.txt"
    export_book(store, out, "txt")
    assert out.read_text(encoding="utf-8").startswith("第1章 开端" + " " * 1_000_000 + "尾\n\n　　正文。")


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=40))
def test_markdown_escaping_hides_every_mark_and_loses_nothing(text: str) -> None:
    import html
    import re

    from novel_desktop.storage.book_export import _md_escape

    escaped = _md_escape(text)
    assert "<" not in escaped and ">" not in escaped
    # Every Markdown mark left in the output is preceded by a backslash, and removing the escapes gives the
    # author's text back.
    assert not re.search(r"(?<!\\)[`*_\[\]~]", escaped.replace("\\\\", ""))
    assert not re.match(r"[#+\-=|]|\d+[.)](\s|$)", escaped)
    assert html.unescape(re.sub(r"\\(.)", r"\1", escaped)) == text
