"""EPUB and DOCX renderings of a :class:`~novel_desktop.storage.book_export.Book` (the text formats stay
in :mod:`novel_desktop.storage.book_export`). Every text from the novel reaches the XML as text: titles, TOC
entries and paragraphs are escaped, never markup.
"""

from __future__ import annotations

import copy
import html
import io
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from novel_desktop.storage import layout

if TYPE_CHECKING:
    from novel_desktop.storage.book_export import Book

#: Body and heading fonts for DOCX; Word on a Chinese system knows them by these names.
DOCX_BODY_FONT = "宋体"
DOCX_HEADING_FONT = "黑体"
DOCX_BODY_SIZE_PT = 12

#: CJK-friendly font stack for EPUB: reading systems fall back along it to a font that has the glyphs.
EPUB_CSS = """\
body { font-family: "Songti SC", "Noto Serif CJK SC", "Source Han Serif SC", "SimSun", "宋体", serif;
  line-height: 1.8; }
h1, h2 { font-family: "PingFang SC", "Noto Sans CJK SC", "Source Han Sans SC", "Microsoft YaHei",
  "SimHei", "黑体", sans-serif; text-align: center; font-weight: bold; }
h1 { margin-top: 30%; }
h2 { margin: 1em 0 1.5em; }
p { text-indent: 2em; margin: 0 0 0.4em; text-align: justify; }
"""


def render_epub(book: Book) -> bytes:
    """EPUB 3 (with an NCX for older readers): one XHTML per chapter and a table of contents."""
    from ebooklib import epub

    ebook = epub.EpubBook()
    ebook.set_identifier(book.identifier)
    ebook.set_title(book.title)
    ebook.set_language("zh-CN")
    if book.author:
        ebook.add_author(book.author)
    css = epub.EpubItem(uid="style", file_name="style/book.css", media_type="text/css", content=EPUB_CSS)
    ebook.add_item(css)

    def page(uid: str, file_name: str, title: str, body: str) -> Any:
        item = epub.EpubHtml(uid=uid, title=title, file_name=file_name, lang="zh-CN")
        item.content = f"<html><head><title>{html.escape(title)}</title></head><body>{body}</body></html>"
        item.add_item(css)  # both at the top of the package, so the link "style/book.css" resolves
        ebook.add_item(item)
        return item

    # Grouping the contents by volume only helps when there is more than one volume to choose from.
    grouped = len(book.volumes) > 1
    toc: list[Any] = []
    spine: list[Any] = ["nav"]
    for volume in book.volumes:
        entries: list[Any] = []
        if grouped:
            vol_page = page(
                f"vol-{volume.number:02d}",
                f"vol-{volume.number:02d}.xhtml",
                volume.heading,
                f"<h1>{html.escape(volume.heading)}</h1>",
            )
            spine.append(vol_page)
        for chapter in volume.chapters:
            body = f"<h2>{html.escape(chapter.title)}</h2>" + "".join(
                f"<p>{html.escape(p)}</p>" for p in chapter.paragraphs
            )
            item = page(
                f"chapter-{layout.num(chapter.number)}",
                f"chapter-{layout.num(chapter.number)}.xhtml",
                chapter.title,
                body,
            )
            spine.append(item)
            entries.append(item)
        if grouped:
            toc.append((epub.Section(volume.heading, href=vol_page.file_name), entries))
        else:
            toc.extend(entries)
    ebook.toc = toc
    ebook.add_item(epub.EpubNcx())
    ebook.add_item(epub.EpubNav(title="目录"))
    ebook.spine = spine
    buffer = io.BytesIO()
    epub.write_epub(buffer, ebook, {"raise_exceptions": True})
    return buffer.getvalue()


def _set_east_asian_font(element: Any, font: str) -> None:
    """Name the East Asian font on a run or style so Word does not fall back to a Latin font for 汉字.

    A theme attribute (``w:eastAsiaTheme``) would win over the explicit name, so it is removed.
    """
    from docx.oxml.ns import qn

    rpr = element.get_or_add_rPr()
    fonts = rpr.get_or_add_rFonts()
    fonts.set(qn("w:eastAsia"), font)
    fonts.attrib.pop(qn("w:eastAsiaTheme"), None)


def render_docx(book: Book) -> bytes:
    """Word: a title, volume headings (Heading 1) when volumes show, chapter headings, indented paragraphs.

    Every chapter starts on a new page (the page break sits on the volume heading for a volume's first
    chapter). Paragraphs get a first-line indent of two characters (``w:firstLineChars``, what Word's
    "首行缩进 2 字符" writes, plus the same length in points for programs that ignore it).
    """
    import docx
    import docx.text.paragraph
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn
    from docx.shared import Pt

    document = docx.Document()
    document.core_properties.title = book.title
    document.core_properties.language = "zh-CN"
    if book.author:
        document.core_properties.author = book.author
    normal = document.styles["Normal"]
    normal.font.size = Pt(DOCX_BODY_SIZE_PT)
    _set_east_asian_font(normal.element, DOCX_BODY_FONT)
    # Tells Word to treat the text as Chinese (line breaking, punctuation compression, proofing).
    normal_rpr = normal.element.get_or_add_rPr()
    lang = normal_rpr.find(qn("w:lang"))
    if lang is None:
        lang = normal_rpr.makeelement(qn("w:lang"), {})
        normal_rpr.append(lang)
    lang.set(qn("w:eastAsia"), "zh-CN")
    for name in ("Title", "Heading 1", "Heading 2"):
        _set_east_asian_font(document.styles[name].element, DOCX_HEADING_FONT)

    # python-docx's add_paragraph() searches the whole body for the section properties each time, which
    # is quadratic (minutes for a 300万字 novel). Paragraphs are instead inserted before the sectPr found
    # once, body paragraphs as copies of one fully formatted template.
    body = document.element.body
    sect_pr = body.find(qn("w:sectPr"))  # the default template always ends the body with one
    insert: Callable[[Any], None] = sect_pr.addprevious if sect_pr is not None else body.append

    def add(style: str, text: str, *, page_break: bool = False) -> None:
        paragraph = docx.text.paragraph.Paragraph(OxmlElement("w:p"), document._body)
        insert(paragraph._p)
        paragraph.style = document.styles[style]
        paragraph.paragraph_format.page_break_before = page_break or None
        _set_east_asian_font(paragraph.add_run(text)._r, DOCX_HEADING_FONT)

    template = docx.text.paragraph.Paragraph(OxmlElement("w:p"), document._body)
    template.paragraph_format.first_line_indent = Pt(DOCX_BODY_SIZE_PT * 2)
    template._p.get_or_add_pPr().get_or_add_ind().set(qn("w:firstLineChars"), "200")
    _set_east_asian_font(template.add_run("正文")._r, DOCX_BODY_FONT)
    template_p = template._p
    text_path = f"{qn('w:r')}/{qn('w:t')}"
    template_p.find(text_path).set("{http://www.w3.org/XML/1998/namespace}space", "preserve")

    add("Title", book.title)
    chapter_style = "Heading 2" if book.shows_volumes else "Heading 1"
    for volume in book.volumes:
        if book.shows_volumes:
            add("Heading 1", volume.heading, page_break=True)
        for i, chapter in enumerate(volume.chapters):
            add(chapter_style, chapter.title, page_break=not (book.shows_volumes and i == 0))
            for text in chapter.paragraphs:
                p = copy.deepcopy(template_p)
                p.find(text_path).text = text
                insert(p)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()
