"""A volume outline read as chapters: ``## 第N章 标题`` sections and their ``- **Field**: value`` lines.

Pure text functions shared by the agents (the writer's outline section), the pipeline (which chapters a volume
plans), the CLI (``novel outline``) and the views (the outline and storyline views).
"""

from __future__ import annotations

import re

_CHAPTER_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*第\s*(\d+)\s*章(.*)$|^\s*第\s*(\d+)\s*章(.*)$")

#: ``- **POV**: 林枫`` — the per-chapter fields of an outline section (seed 004: Storyline/POV/Location/…).
_FIELD = re.compile(r"^\s*(?:[-*+]\s*)?\**\s*([A-Za-z\u4e00-\u9fff]+)\s*\**\s*[:：]\s*\**\s*(.*?)\s*$")
#: Chinese spellings an author may use for the same outline fields.
_FIELD_ALIASES = {"故事线": "storyline", "视角": "pov", "地点": "location", "冲突": "conflict"}


def outline_sections(outline: str) -> dict[int, str]:
    """Chapter number → that chapter's section of a volume outline (``## 第N章 …`` headings)."""
    sections: dict[int, str] = {}
    current: int | None = None
    lines: list[str] = []
    for line in outline.splitlines():
        m = _CHAPTER_HEADING.match(line)
        if m:
            if current is not None:
                sections[current] = "\n".join(lines).strip()
            current = int(m.group(1) or m.group(3))
            lines = [line]
        elif current is not None:
            lines.append(line)
    if current is not None:
        sections[current] = "\n".join(lines).strip()
    return sections


def section_title(section: str) -> str:
    """The title in a section's ``## 第N章 标题`` heading ("" when it has none)."""
    first = section.splitlines()[0] if section else ""
    m = _CHAPTER_HEADING.match(first)
    if not m:
        return ""
    return (m.group(2) or m.group(4) or "").strip(" ：:·-—")


def outline_field(section: str, name: str) -> str:
    """The value of ``- **Name**: value`` in an outline section ("" when absent); names match case-blind."""
    wanted = name.lower()
    for line in section.splitlines()[1:]:
        m = _FIELD.match(line)
        if not m:
            continue
        key = m.group(1).lower()
        if _FIELD_ALIASES.get(m.group(1), key) == wanted:
            return m.group(2).strip("* ")
    return ""
