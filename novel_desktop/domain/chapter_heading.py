"""A stored chapter as its heading and its body: the editor shows the title as a field, the body as text.

A chapter is stored (and read by every agent, the export and the CLI) as Markdown: a heading line
``# 第六章 标题``, a blank line, the body. :func:`split_heading` takes it apart into the fixed label
(``第六章``), the editable title and the body; :func:`join_heading` puts an edited title and body back into
exactly that form. Nothing changed gives the stored text back byte for byte.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SPACE = " \t\u3000"
#: ``#`` marks, then ``第六章`` / ``第 6 章`` / ``第十回`` (optional), then separators, then the title.
_HEADING = re.compile(
    rf"^([{_SPACE}]*#{{1,6}}[{_SPACE}]*)"
    rf"(第[{_SPACE}]*[0-9０-９零〇一二两三四五六七八九十百千万]+[{_SPACE}]*[章回节])?"
    rf"([{_SPACE}:：·.、\-—]*)(.*)$"
)
#: The line break after the heading and any blank lines before the body.
_SEPARATOR = re.compile(rf"\n(?:[{_SPACE}]*\n)*")


@dataclass(frozen=True)
class ChapterHeading:
    """A stored chapter taken apart. ``prefix`` is everything of the heading line before the title
    (``# 第六章 ``; "" when the text has no heading line), ``label`` the chapter's number as the heading
    names it (``第六章``; for a text without a heading, the label a new heading would get)."""

    prefix: str
    label: str
    title: str
    suffix: str
    separator: str
    body: str
    #: The text this was split from (given back unchanged when neither title nor body changed).
    source: str

    @property
    def has_heading(self) -> bool:
        return bool(self.prefix)

    @property
    def body_offset(self) -> int:
        """Where the body starts in the stored text."""
        return len(self.source) - len(self.body)

    @property
    def title_offset(self) -> int:
        """Where the title starts in the stored text."""
        return len(self.prefix)


def split_heading(text: str, number: int | None = None) -> ChapterHeading:
    """``text`` as heading label, title and body (``number`` names the label when there is no heading)."""
    fallback = f"第{number}章" if number is not None else ""
    lead = len(text) - len(text.lstrip("\n"))
    end = text.find("\n", lead)
    line = text[lead:] if end < 0 else text[lead:end]
    m = _HEADING.match(line)
    if m is None or not line.lstrip(_SPACE).startswith("#"):
        return ChapterHeading("", fallback, "", "", "", text, text)
    title = m.group(4).rstrip(_SPACE)
    suffix = m.group(4)[len(title) :]
    prefix = text[:lead] + m.group(1) + (m.group(2) or "") + m.group(3)
    rest = "" if end < 0 else text[end:]
    sep = _SEPARATOR.match(rest)
    separator = sep.group(0) if sep else rest
    label = re.sub(f"[{_SPACE}]", "", m.group(2) or "")
    return ChapterHeading(prefix, label, title, suffix, separator, rest[len(separator) :], text)


def join_heading(parts: ChapterHeading, title: str, body: str) -> str:
    """The stored text of the chapter ``parts`` was split from, with ``title`` and ``body``."""
    title = title.strip(_SPACE).replace("\n", " ")
    if title == parts.title and body == parts.body:
        return parts.source
    if parts.has_heading:
        if title:
            gap = "" if parts.prefix[-1] in _SPACE + ":：·.、-—#" else " "  # "# 第6章" + title
            heading = parts.prefix + gap + title + parts.suffix
        else:
            heading = parts.prefix.rstrip(_SPACE + ":：·.、-—")
            if heading.strip(_SPACE + "#") == "":
                heading = ""  # "# 楔子" with its title cleared: no heading left at all
    else:
        heading = f"# {parts.label} {title}".rstrip() if title else ""
    if not heading:
        return body
    separator = parts.separator or ("\n\n" if body else "")
    if not body:
        return heading + "\n"
    return heading + separator + body


def body_of(text: str) -> str:
    """The chapter's text without its heading line (what the story is made of)."""
    return split_heading(text).body


__all__ = ["ChapterHeading", "body_of", "join_heading", "split_heading"]
