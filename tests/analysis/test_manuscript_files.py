"""Reading untrusted manuscript files: size and ratio limits, special files, huge paragraphs, round trips."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from novel_desktop.analysis import manuscript_files
from novel_desktop.analysis.manuscript import (
    ManuscriptError,
    ManuscriptTooLarge,
    read_manuscript,
    split_manuscript,
)
from novel_desktop.analysis.manuscript_files import SafeArchive

CONTAINER = (
    '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
    '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
    "</rootfiles></container>"
)


def _opf(members: list[str]) -> str:
    items = "".join(
        f'<item id="c{i}" href="{name}" media-type="application/xhtml+xml"/>'
        for i, name in enumerate(members)
    )
    refs = "".join(f'<itemref idref="c{i}"/>' for i in range(len(members)))
    return (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        f'<manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
        f'{items}</manifest><spine><itemref idref="nav"/>{refs}</spine></package>'
    )


def _xhtml(body: str) -> str:
    return f'<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title></head><body>{body}</body></html>'


def _write_epub(path: Path, chapters: dict[str, str]) -> None:
    """A minimal EPUB: ``chapters`` maps member names under OEBPS/ to XHTML bodies."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        z.writestr("META-INF/container.xml", CONTAINER)
        z.writestr("OEBPS/content.opf", _opf(list(chapters)))
        z.writestr("OEBPS/nav.xhtml", _xhtml("<nav><h1>目录</h1></nav>"))
        for name, body in chapters.items():
            z.writestr(f"OEBPS/{name}", _xhtml(body))


def _han(n: int, seed: int = 0) -> str:
    """``n`` varied Han characters: text that compresses like prose, not like a run of one character."""
    pool = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
    return "".join(random.Random(seed).choices(pool, k=n))


# ---------------------------------------------------------------------------------------------- text files
def test_a_text_file_beyond_the_limit_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(manuscript_files, "MAX_TEXT_BYTES", 1000)
    path = tmp_path / "巨稿.txt"
    path.write_text("第一章 开端\n" + "字" * 400, encoding="utf-8")
    with pytest.raises(ManuscriptTooLarge, match=r"巨稿\.txt.*超过"):
        read_manuscript(path)
    path.write_text("第一章 开端\n" + "字" * 300, encoding="utf-8")  # 906 bytes: under the limit
    assert read_manuscript(path).text.startswith("第一章")


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    path = tmp_path / "稿.txt"
    os.mkfifo(path)
    with pytest.raises(ManuscriptError, match="不是普通文件"):
        read_manuscript(path)


def test_a_link_to_a_device_is_refused_not_read_until_memory_runs_out(tmp_path: Path) -> None:
    path = tmp_path / "稿.txt"
    path.symlink_to("/dev/zero")
    with pytest.raises(ManuscriptError, match="不是普通文件"):
        read_manuscript(path)


# ---------------------------------------------------------------------------------------------- archives
def test_an_archive_over_the_total_limit_is_refused_from_its_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "大.epub"
    _write_epub(path, {"c1.xhtml": "<h2>第一章 开端</h2><p>" + "字" * 4000 + "</p>"})
    assert path.stat().st_size < 5000  # the file is small; what it expands to is not
    monkeypatch.setattr(manuscript_files, "MAX_ARCHIVE_BYTES", 5000)
    with pytest.raises(ManuscriptTooLarge, match=r"大\.epub 中的 OEBPS/c1\.xhtml.*压缩炸弹"):
        read_manuscript(path)


def test_an_archive_file_beyond_the_limit_is_refused_before_its_directory_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "巨.docx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for i in range(200):  # a directory of many entries is what makes parsing it costly
            z.writestr(f"word/media/{i}.bin", os.urandom(64))
    monkeypatch.setattr(manuscript_files, "MAX_ARCHIVE_BYTES", 10_000)
    monkeypatch.setattr(zipfile, "ZipFile", None)  # never reached
    with pytest.raises(ManuscriptTooLarge, match=r"巨\.docx 超过"):
        read_manuscript(path)


@pytest.mark.parametrize("suffix", [".epub", ".docx"])
def test_a_member_compressed_beyond_the_ratio_is_refused(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"炸{suffix}"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("META-INF/container.xml", CONTAINER)
        z.writestr("word/document.xml", b" " * (3 * 1024 * 1024))  # 3 MB of spaces: about 1000:1
    with pytest.raises(ManuscriptTooLarge, match=r"word/document\.xml"):
        read_manuscript(path)


def test_a_member_that_yields_more_than_its_directory_declares_is_stopped_while_reading(
    tmp_path: Path,
) -> None:
    path = tmp_path / "谎.epub"
    _write_epub(path, {"c1.xhtml": "<p>" + _han(20000) + "</p>"})
    with SafeArchive(path, "EPUB") as archive:
        reader = archive.open("OEBPS/c1.xhtml")
        archive.zip.getinfo("OEBPS/c1.xhtml").file_size = 1000  # what a lying directory would say
        with pytest.raises(ManuscriptTooLarge, match=r"c1\.xhtml"):
            list(reader.chunks())
        reader.close()


def test_the_total_is_counted_while_reading_across_members(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "多.epub"
    _write_epub(path, {f"c{i}.xhtml": f"<h2>第{i}章 标题</h2><p>{_han(3000, i)}</p>" for i in range(1, 4)})
    with SafeArchive(path, "EPUB") as archive:
        monkeypatch.setattr(manuscript_files, "MAX_ARCHIVE_BYTES", 20000)  # after the directory check
        archive.read("OEBPS/c1.xhtml")
        archive.read("OEBPS/c2.xhtml")
        with pytest.raises(ManuscriptTooLarge):
            archive.read("OEBPS/c3.xhtml")


BOMB_READER = textwrap.dedent(
    """
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    from novel_desktop.analysis.manuscript import ManuscriptTooLarge, read_manuscript
    try:
        read_manuscript(sys.argv[1])
    except ManuscriptTooLarge as exc:
        print("REFUSED", exc)
        sys.exit(0)
    print("READ")
    sys.exit(1)
    """
)


@pytest.mark.parametrize("suffix", [".epub", ".docx"])
def test_a_zip_bomb_is_refused_within_a_memory_limit(tmp_path: Path, suffix: str) -> None:
    # 512 MB of zeros in 500 KB: reading it whole (as ebooklib and python-docx do) fails under 1 GB of memory.
    path = tmp_path / f"炸弹{suffix}"
    member = "OEBPS/c1.xhtml" if suffix == ".epub" else "word/document.xml"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        z.writestr("META-INF/container.xml", CONTAINER)
        z.writestr("OEBPS/content.opf", _opf(["c1.xhtml"]))
        with z.open(member, "w", force_zip64=True) as fh:
            chunk = bytes(1 << 20)
            for _ in range(512):
                fh.write(chunk)
    assert path.stat().st_size < 5 * 1024 * 1024
    run = subprocess.run(
        [sys.executable, "-c", BOMB_READER, str(path)], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("REFUSED")
    assert path.name in run.stdout and "压缩炸弹" in run.stdout


def test_a_docx_with_entity_declarations_is_refused(tmp_path: Path) -> None:
    laughs = '<!DOCTYPE w [<!ENTITY a "哈哈哈哈哈哈哈哈"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
    xml = (
        f'<?xml version="1.0"?>{laughs}'
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        "<w:body><w:p><w:r><w:t>&b;</w:t></w:r></w:p></w:body></w:document>"
    )
    path = tmp_path / "实体.docx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("word/document.xml", xml)
    with pytest.raises(ManuscriptError, match=r"实体\.docx.*DTD"):
        read_manuscript(path)


# ---------------------------------------------------------------------------------------------- content
def test_an_epub_chapter_that_is_one_huge_paragraph_is_kept(tmp_path: Path) -> None:
    paragraph = _han(3_600_000)  # about 10.8 MB of UTF-8 in one <p>: over libxml2's text-node limit
    path = tmp_path / "长.epub"
    _write_epub(
        path,
        {
            "c1.xhtml": f"<h2>第一章 开端</h2><p>{paragraph}</p>",
            "c2.xhtml": "<h2>第二章 结尾</h2><p>完。</p>",
        },
    )
    result = split_manuscript(read_manuscript(path).text)
    assert [c.title for c in result.chapters] == ["第一章 开端", "第二章 结尾"]
    assert result.chapters[0].text == paragraph


def test_a_docx_paragraph_over_ten_megabytes_is_kept(tmp_path: Path) -> None:
    import docx

    paragraph = _han(3_600_000)
    document = docx.Document()
    document.add_paragraph("第一章 开端")
    document.add_paragraph(paragraph)
    document.add_paragraph("第二章 结尾")
    document.add_paragraph("完。")
    path = tmp_path / "长.docx"
    document.save(str(path))
    result = split_manuscript(read_manuscript(path).text)
    assert [c.title for c in result.chapters] == ["第一章 开端", "第二章 结尾"]
    assert result.chapters[0].text == paragraph


def test_docx_runs_tabs_breaks_tables_and_links_are_read_as_word_shows_them(tmp_path: Path) -> None:
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    body = (
        "<w:p><w:r><w:t>第一章 </w:t></w:r><w:r><w:t>开端</w:t></w:r></w:p>"
        "<w:p><w:r><w:t>他说</w:t><w:tab/><w:t>走</w:t><w:br/><w:t>吧。</w:t></w:r>"
        "<w:hyperlink><w:r><w:t>链接</w:t></w:r></w:hyperlink>"
        "<w:del><w:r><w:delText>删掉的</w:delText></w:r></w:del></w:p>"
        "<w:tbl><w:tr><w:tc><w:p><w:r><w:t>表格里的字</w:t></w:r></w:p></w:tc></w:tr></w:tbl>"
    )
    xml = f'<?xml version="1.0"?><w:document xmlns:w="{w}"><w:body>{body}<w:sectPr/></w:body></w:document>'
    path = tmp_path / "格式.docx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("word/document.xml", xml)
    assert read_manuscript(path).text == "第一章 开端\n他说\t走\n吧。链接\n表格里的字"


def test_epub_members_with_encoded_names_in_subfolders_are_found(tmp_path: Path) -> None:
    path = tmp_path / "目录.epub"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("META-INF/container.xml", CONTAINER)
        z.writestr("OEBPS/content.opf", _opf(["text/%E7%AB%A0.xhtml#top"]))
        z.writestr("OEBPS/text/章.xhtml", _xhtml("<h2>第一章 开端</h2><p>他来了。</p>"))
    assert read_manuscript(path).text == "第一章 开端\n他来了。"


def test_an_epub_without_a_package_document_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "空.epub"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/epub+zip")
    with pytest.raises(ManuscriptError, match=r"空\.epub.*EPUB.*META-INF/container.xml"):
        read_manuscript(path)


# ---------------------------------------------------------------------------------------------- hostile lines
@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "line",
    [
        " " * 1_000_000 + "x",
        "\u3000" * 1_000_000 + "第",
        "x" + " " * 1_000_000 + "y",
        "（" + " " * 500_000 + "完",
    ],
)
def test_a_line_with_a_huge_blank_run_is_split_not_hung_on(line: str) -> None:
    # The heading patterns backtracked quadratically over such a run: a million spaces took hours.
    text = f"第一章 开端\n{line}\n第二章 结尾\n完。\n{line}\n"
    result = split_manuscript(text)
    assert [c.title for c in result.chapters] == ["第一章 开端", "第二章 结尾"]
    assert result.chapters[0].text == line.rstrip()


@pytest.mark.parametrize("suffix", [".docx", ".epub"])
def test_a_damaged_or_encrypted_member_is_reported_as_an_invalid_file(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"坏{suffix}"
    member = "word/document.xml" if suffix == ".docx" else "OEBPS/c1.xhtml"
    _write_epub(path, {"c1.xhtml": "<h2>第一章 开端</h2><p>" + _han(20000) + "</p>"})
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as z:
        if suffix == ".docx":
            z.writestr(member, "<w:document>" + _han(20000) + "</w:document>")
        info = z.getinfo(member)
    data = bytearray(path.read_bytes())
    middle = info.header_offset + 100 + info.compress_size // 2
    data[middle : middle + 64] = bytes(64)  # damaged in the middle of the deflate stream
    path.write_bytes(bytes(data))
    with pytest.raises(ManuscriptError, match=rf"坏\{suffix} 不是有效的"):
        read_manuscript(path)

    encrypted = tmp_path / f"密{suffix}"
    _write_epub(encrypted, {"c1.xhtml": "<p>正文</p>"})
    raw = bytearray(encrypted.read_bytes())
    with zipfile.ZipFile(encrypted) as z:
        offsets = [i.header_offset for i in z.infolist()]
    for offset in offsets:  # the "encrypted" flag in every local header; the directory keeps its own
        raw[offset + 6] |= 1
    encrypted.write_bytes(bytes(raw))
    with zipfile.ZipFile(encrypted) as z:
        directory_offset = z.start_dir
    pos = directory_offset
    while raw[pos : pos + 4] == b"PK\x01\x02":
        raw[pos + 8] |= 1
        pos += (
            46
            + int.from_bytes(raw[pos + 28 : pos + 30], "little")
            + int.from_bytes(raw[pos + 30 : pos + 32], "little")
            + int.from_bytes(raw[pos + 32 : pos + 34], "little")
        )
    encrypted.write_bytes(bytes(raw))
    with pytest.raises(ManuscriptError, match=rf"密\{suffix} 不是有效的"):
        read_manuscript(encrypted)
