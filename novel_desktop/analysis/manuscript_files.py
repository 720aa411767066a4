"""Reading manuscript files safely: the bytes of a .txt/.md, the text of a .docx or an .epub.

A manuscript is untrusted input: it may be a FIFO or a device, far larger than any novel, an archive that
expands a thousandfold (a zip bomb), or XML that declares entities. So:

* only regular files are opened (a FIFO is refused, never waited on), and a text file is read up to
  :data:`MAX_TEXT_BYTES`;
* an archive's members are checked from its directory (total uncompressed size at most
  :data:`MAX_ARCHIVE_BYTES`, each large member compressed at most :data:`MAX_RATIO`:1) and again while they
  are read, counting the bytes that actually come out, since a directory can lie;
* XML is parsed without DTDs, entities or network access, and with lxml's ``huge_tree`` so a paragraph longer
  than libxml2's 10 MB text-node limit is kept rather than dropped or refused.

The errors carry a message for the author (through :func:`novel_desktop.i18n.tr`) that names the file.
"""

from __future__ import annotations

import codecs
import os
import posixpath
import re
import stat
import zipfile
import zlib
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import IO, Any
from urllib.parse import unquote

from novel_desktop.i18n import tr

#: Largest .txt/.md manuscript read (a 300万字 novel in UTF-8 is about 9 MB).
MAX_TEXT_BYTES = 64 * 1024 * 1024
#: Largest total uncompressed size of the members of a .docx/.epub that are read.
MAX_ARCHIVE_BYTES = 200 * 1024 * 1024
#: Largest compression ratio of an archive member (uncompressed : compressed) ...
MAX_RATIO = 100
#: ... once it is larger than this: small XML parts of repeated markup compress far better than text.
RATIO_FLOOR = 1024 * 1024
_CHUNK = 1 << 16
_MB = 1024 * 1024
#: What a damaged archive raises while a member is opened or inflated (zlib.error is no OSError).
_BROKEN = (zipfile.BadZipFile, zlib.error, OSError, EOFError, RuntimeError, NotImplementedError, ValueError)


class ManuscriptError(Exception):
    """A manuscript that cannot be read; the message is for the author and names the file."""


class ManuscriptTooLarge(ManuscriptError):
    """A manuscript, or an archive member, beyond the reading limits: refused before it fills memory."""


# ====================================================================== plain files
def open_regular(path: Path) -> IO[bytes]:
    """Open ``path`` for reading if it is a regular file (a FIFO, device or socket is refused, not read).

    ``O_NONBLOCK`` makes opening a FIFO return at once instead of waiting for a writer; the type is then
    checked on the open descriptor, so a file swapped for a FIFO after a check cannot slip through.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ManuscriptError(
                tr("{name} 不是普通文件（可能是管道或设备），无法作为书稿读取").format(name=path.name)
            )
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_text_bytes(path: Path, limit: int | None = None) -> bytes:
    """The bytes of a text manuscript, at most ``limit`` (default :data:`MAX_TEXT_BYTES`) of them.

    Raises :class:`ManuscriptTooLarge` for a larger file (its size is found by reading, not trusted from
    the file system: /proc files and growing files report less than they hold).
    """
    cap = MAX_TEXT_BYTES if limit is None else limit
    with open_regular(path) as fh:
        data = fh.read(cap + 1)
    if len(data) > cap:
        raise _file_too_large(path, cap)
    return data


def _file_too_large(path: Path, limit: int) -> ManuscriptTooLarge:
    return ManuscriptTooLarge(
        tr("{name} 超过 {limit} MB，不像一部书稿，已拒绝读取；请拆分后再导入").format(
            name=path.name, limit=max(limit // _MB, 1)
        )
    )


# ====================================================================== archives
class _CappedReader:
    """A member of an archive read through the limits: the bytes that actually come out are counted."""

    def __init__(self, archive: SafeArchive, info: zipfile.ZipInfo) -> None:
        self._archive = archive
        self._info = info
        self._raw = archive.zip.open(info)
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        want = _CHUNK if size is None or size < 0 else min(size, _CHUNK)
        data = self._raw.read(want)
        self.count += len(data)
        self._archive.account(self._info, self.count, len(data))
        return data

    def chunks(self) -> Iterator[bytes]:
        while data := self.read(_CHUNK):
            yield data

    def close(self) -> None:
        self._raw.close()


class SafeArchive:
    """A .docx/.epub opened for reading within the limits (see the module docstring)."""

    def __init__(self, path: Path, kind: str) -> None:
        self.path = path
        self.kind = kind
        self.used = 0
        self._fh = open_regular(path)
        try:
            # ZipFile parses the whole directory: a file beyond the limit could hold millions of entries.
            if os.fstat(self._fh.fileno()).st_size > MAX_ARCHIVE_BYTES:
                raise _file_too_large(path, MAX_ARCHIVE_BYTES)
            self.zip = zipfile.ZipFile(self._fh)
        except (zipfile.BadZipFile, ValueError, EOFError) as exc:
            self._fh.close()
            raise self.invalid(exc) from None
        except BaseException:
            self._fh.close()
            raise
        self._check_directory()

    def __enter__(self) -> SafeArchive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.zip.close()
        self._fh.close()

    def invalid(self, detail: object = "") -> ManuscriptError:
        message = tr("{name} 不是有效的 {kind} 文件").format(name=self.path.name, kind=self.kind)
        return ManuscriptError(f"{message}: {detail}" if detail else message)

    def too_large(self, member: str) -> ManuscriptTooLarge:
        return ManuscriptTooLarge(
            tr(
                "{name} 中的 {member} 解压后过大（超过 {limit} MB 或压缩比超过 {ratio}:1），"
                "可能是压缩炸弹，已拒绝读取"
            ).format(name=self.path.name, member=member, limit=MAX_ARCHIVE_BYTES // _MB, ratio=MAX_RATIO)
        )

    def _check_directory(self) -> None:
        total = 0
        for info in self.zip.infolist():
            total += info.file_size
            if total > MAX_ARCHIVE_BYTES or _ratio_exceeded(info.file_size, info.compress_size):
                self.close()
                raise self.too_large(info.filename)

    def account(self, info: zipfile.ZipInfo, count: int, added: int) -> None:
        """Count ``added`` bytes just read of ``info`` (``count`` of it so far); refuse beyond the limits."""
        self.used += added
        if (
            count > info.file_size  # more than the directory declared: a lying archive
            or self.used > MAX_ARCHIVE_BYTES
            or _ratio_exceeded(count, info.compress_size)
        ):
            raise self.too_large(info.filename)

    def open(self, name: str) -> _CappedReader:
        try:
            info = self.zip.getinfo(name)
        except KeyError:
            raise self.invalid(tr("缺少 {member}").format(member=name)) from None
        try:
            return _CappedReader(self, info)
        except _BROKEN as exc:  # encrypted, an unknown compression, a damaged local header
            raise self.invalid(exc) from None

    def has(self, name: str) -> bool:
        return name in self.zip.NameToInfo

    def read(self, name: str) -> bytes:
        reader = self.open(name)
        try:
            return b"".join(reader.chunks())
        except _BROKEN as exc:
            raise self.invalid(exc) from None
        finally:
            reader.close()


def _ratio_exceeded(size: int, compressed: int) -> bool:
    return size > RATIO_FLOOR and size > MAX_RATIO * max(compressed, 1)


def _xml(archive: SafeArchive, name: str) -> Any:
    """A small XML part of the archive, parsed without DTDs, entities or network."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    try:
        root = etree.fromstring(archive.read(name), parser)
    except etree.XMLSyntaxError as exc:
        raise archive.invalid(exc) from None
    _refuse_dtd(archive, root.getroottree())
    return root


def _refuse_dtd(archive: SafeArchive, tree: Any) -> None:
    # No part of a .docx or an .epub package needs entity declarations; they are how XML bombs work.
    dtd = tree.docinfo.internalDTD
    if dtd is not None and any(True for _ in dtd.iterentities()):
        raise archive.invalid(tr("含有 DTD 实体声明"))


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


# ====================================================================== .docx
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_R_OFFICE = "officeDocument"
#: Inside a paragraph these hold no text of the paragraph itself (text boxes, drawings, deleted text).
_DOCX_SKIPPED = frozenset(
    f"{_W}{t}" for t in ("del", "drawing", "pict", "object", "txbxContent", "pPr", "rPr", "instrText")
) | {"{http://schemas.openxmlformats.org/markup-compatibility/2006}AlternateContent"}


def _docx_part(archive: SafeArchive) -> str:
    """The main document part, as the package's relationships name it (``word/document.xml`` by default)."""
    if archive.has("_rels/.rels"):
        for rel in _xml(archive, "_rels/.rels"):
            if str(rel.get("Type", "")).endswith("/" + _R_OFFICE) and rel.get("Target"):
                return posixpath.normpath(str(rel.get("Target")).lstrip("/"))
    return "word/document.xml"


def _paragraph_text(p: Any) -> str:
    parts: list[str] = []
    stack = list(reversed(list(p)))
    while stack:
        e = stack.pop()
        tag = e.tag
        if tag in _DOCX_SKIPPED or not isinstance(tag, str):
            continue
        if tag == f"{_W}t":
            parts.append(e.text or "")
        elif tag in (f"{_W}tab", f"{_W}ptab"):
            parts.append("\t")
        elif tag == f"{_W}br":
            parts.append("\n" if e.get(f"{_W}type", "textWrapping") == "textWrapping" else "")
        elif tag == f"{_W}cr":
            parts.append("\n")
        elif tag == f"{_W}noBreakHyphen":
            parts.append("-")
        elif tag != f"{_W}p":  # a paragraph nested in this one (a text box) is not its text
            stack.extend(reversed(list(e)))
    return "".join(parts)


def read_docx(path: Path) -> str:
    """The paragraphs of a .docx (body and table cells, in order), one per line.

    Raises :class:`ManuscriptError` for a broken file, :class:`ManuscriptTooLarge` beyond the limits.
    """
    from lxml import etree

    with SafeArchive(path, "Word (.docx)") as archive:
        reader = archive.open(_docx_part(archive))
        lines: list[str] = []
        depth = 0
        try:
            events = etree.iterparse(
                reader,
                events=("start", "end"),
                resolve_entities=False,
                no_network=True,
                load_dtd=False,
                huge_tree=True,  # a paragraph over 10 MB is kept (libxml2 refuses it otherwise)
            )
            checked = False
            for event, element in events:
                if not checked:
                    _refuse_dtd(archive, element.getroottree())
                    checked = True
                if element.tag != f"{_W}p":
                    continue
                if event == "start":
                    depth += 1
                    continue
                depth -= 1
                if depth == 0:
                    lines.append(_paragraph_text(element))
                    # Done with it: free what has been read so memory stays flat on a long novel.
                    element.clear(keep_tail=True)
                    parent = element.getparent()
                    if parent is not None and parent.tag == f"{_W}body":
                        while element.getprevious() is not None:
                            del parent[0]
        except etree.XMLSyntaxError as exc:
            raise archive.invalid(exc) from None
        except _BROKEN as exc:
            raise archive.invalid(exc) from None
        finally:
            reader.close()
    return "\n".join(lines)


# ====================================================================== .epub
class HtmlText(HTMLParser):
    """Text of an XHTML chapter: block elements become line breaks; head, script and style are skipped."""

    BLOCKS = frozenset(
        {"p", "div", "br", "h1", "h2", "h3", "h4", "h5", "h6", "li", "tr", "section", "article"}
        | {"blockquote", "pre", "hr", "title", "dt", "dd"}
    )
    SKIPPED = frozenset(("head", "script", "style"))

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIPPED:
            self._skip += 1
        elif tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIPPED:
            self._skip = max(0, self._skip - 1)
        elif tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            # Source indentation of the XHTML is not text; a line break inside a paragraph is a space.
            self.parts.append(re.sub(r"[\r\n\t]+", "", data))

    def text(self) -> str:
        # Block elements open and close with a line break: one paragraph is one line, as in a .txt manuscript.
        return re.sub(r"\n[ \t]*(?:\n[ \t]*)+", "\n", "".join(self.parts)).strip("\n")


_XHTML_TYPES = frozenset(("application/xhtml+xml", "text/html"))


def _epub_documents(archive: SafeArchive) -> list[str]:
    """The XHTML members of the spine in reading order. A navigation page in the spine is read too: its list
    of headings becomes front matter when the manuscript is split, as a table of contents in a .txt does."""
    container = _xml(archive, "META-INF/container.xml")
    opf_path = next(
        (
            str(e.get("full-path"))
            for e in container.iter()
            if _local(e.tag) == "rootfile" and e.get("full-path")
        ),
        None,
    )
    if opf_path is None:
        raise archive.invalid(tr("找不到内容清单（OPF）"))
    opf_path = unquote(opf_path).lstrip("/")
    opf = _xml(archive, opf_path)
    manifest: dict[str, tuple[str, str]] = {}
    spine: list[str] = []
    for e in opf.iter():
        name = _local(e.tag)
        if name == "item" and e.get("id") and e.get("href"):
            manifest[str(e.get("id"))] = (str(e.get("href")), str(e.get("media-type", "")))
        elif name == "itemref" and e.get("idref"):
            spine.append(str(e.get("idref")))
    base = posixpath.dirname(opf_path)
    members: list[str] = []
    for idref in spine:
        entry = manifest.get(idref)
        if entry is None:
            continue
        href, media_type = entry
        if media_type not in _XHTML_TYPES:
            continue
        members.append(posixpath.normpath(posixpath.join(base, unquote(href.split("#", 1)[0]))))
    return members


def read_epub(path: Path) -> str:
    """The chapters of an .epub in spine order, one paragraph per line, chapters apart by a blank line.

    Raises :class:`ManuscriptError` for a broken file, :class:`ManuscriptTooLarge` beyond the limits.
    """
    texts: list[str] = []
    with SafeArchive(path, "EPUB (.epub)") as archive:
        for member in _epub_documents(archive):
            if not archive.has(member):
                continue
            reader = archive.open(member)
            parser = HtmlText()
            decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
            try:
                for chunk in reader.chunks():
                    parser.feed(decoder.decode(chunk))
                parser.feed(decoder.decode(b"", final=True))
                parser.close()
            except _BROKEN as exc:
                raise archive.invalid(exc) from None
            finally:
                reader.close()
            if chunk_text := parser.text():
                texts.append(chunk_text)
    return "\n\n".join(texts)
