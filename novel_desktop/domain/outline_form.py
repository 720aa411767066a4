"""A volume outline edited as forms: its header (title, summary) and one chapter section's fields.

The outline stays Markdown (the agents read it; seed 004 and prompts/plot_architect.md give its form):
``# 第一卷 标题``, a summary, then per chapter ``## 第 N 章 标题`` and ``- **Field**: value`` lines. The
functions here change only the lines whose value changed: every other section, every unknown line and every
blank line stays byte for byte.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from novel_desktop.domain.outline import _CHAPTER_HEADING, _FIELD, _FIELD_ALIASES

#: The per-chapter fields of the outline format, in the order PlotArchitect writes them.
OUTLINE_FIELDS = ("Storyline", "POV", "Location", "Conflict", "Arc", "Foreshadowing", "StateChanges")
_KNOWN = {name.lower(): name for name in OUTLINE_FIELDS}
_VOLUME_HEADING = re.compile(r"^(\s{0,3}#\s*)(.*?)(\s*)$")


@dataclass
class SectionForm:
    """One chapter's outline section: its title, the known fields, and every other line as notes (要点)."""

    number: int
    title: str = ""
    fields: dict[str, str] = field(default_factory=dict)
    notes: str = ""


def _lines(outline: str) -> list[str]:
    return outline.splitlines(keepends=True)


def _field_name(line: str) -> str | None:
    m = _FIELD.match(line.rstrip("\r\n"))
    if not m:
        return None
    key = _FIELD_ALIASES.get(m.group(1), m.group(1).lower())
    return _KNOWN.get(key)


def _span(lines: list[str], number: int) -> tuple[int, int] | None:
    """The lines of chapter ``number``'s section: its heading line up to the next chapter heading, without
    the blank lines before it."""
    start = None
    for i, line in enumerate(lines):
        m = _CHAPTER_HEADING.match(line.rstrip("\r\n"))
        if m and start is not None:
            end = i
            while end > start + 1 and not lines[end - 1].strip():
                end -= 1
            return start, end
        if m and int(m.group(1) or m.group(3)) == number:
            start = i
    if start is None:
        return None
    end = len(lines)
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return start, end


def _heading_title(line: str) -> str:
    m = _CHAPTER_HEADING.match(line.rstrip("\r\n"))
    return (m.group(2) or m.group(4) or "").strip(" ：:·-—") if m else ""


def read_section(outline: str, number: int) -> SectionForm | None:
    """Chapter ``number``'s section as a form (None when the outline has no such section)."""
    lines = _lines(outline)
    span = _span(lines, number)
    if span is None:
        return None
    start, end = span
    form = SectionForm(number, _heading_title(lines[start]))
    notes = []
    for line in lines[start + 1 : end]:
        name = _field_name(line)
        if name is not None and name not in form.fields:
            m = _FIELD.match(line.rstrip("\r\n"))
            form.fields[name] = m.group(2).strip("* ") if m else ""
        else:
            notes.append(line.rstrip("\r\n"))
    form.notes = "\n".join(notes).strip("\n")
    return form


def _with_value(line: str, value: str) -> str:
    """``line`` (a ``- **Field**: old`` line) with ``value`` after its colon, its line end kept."""
    ending = line[len(line.rstrip("\r\n")) :]
    body = line.rstrip("\r\n")
    m = _FIELD.match(body)
    if not m:
        return line
    key = body[: m.start(2)].rstrip()
    return f"{key} {value}{ending}" if value else key + ending


def write_section(outline: str, form: SectionForm) -> str:
    """``outline`` with chapter ``form.number``'s section as ``form`` says; only changed lines differ.
    A chapter the outline has no section for gets a new one after the last."""
    lines = _lines(outline)
    span = _span(lines, form.number)
    if span is None:
        return add_section(outline, form.number, form)
    old = read_section(outline, form.number)
    assert old is not None
    start, end = span
    head = lines[start]
    if form.title.strip() != old.title:
        ending = head[len(head.rstrip("\r\n")) :]
        m = _CHAPTER_HEADING.match(head.rstrip("\r\n"))
        assert m is not None
        cut = m.start(2) if m.group(1) else m.start(4)
        head = head[:cut].rstrip() + (" " + form.title.strip() if form.title.strip() else "") + ending
    body = lines[start + 1 : end]
    if body and not body[-1].endswith("\n"):
        body[-1] += "\n"  # the outline's last line had no line break: the section may grow below it
    if not head.endswith("\n"):
        head += "\n"
    seen: set[str] = set()
    edited: list[str] = []  # the body with changed fields rewritten in place
    last_field = -1
    for line in body:
        name = _field_name(line)
        if name is not None and name not in seen:
            seen.add(name)
            value = form.fields.get(name, "").strip().replace("\n", " ")
            line = line if value == old.fields.get(name, "") else _with_value(line, value)
            last_field = len(edited)
        edited.append(line)
    added = [
        f"- **{name}**: {value}\n"
        for name in OUTLINE_FIELDS  # fields the section did not have yet, in the format's order
        if name not in seen and (value := form.fields.get(name, "").strip().replace("\n", " "))
    ]
    if form.notes.strip("\n") != old.notes:
        fields = [line for line in edited if _field_name(line) is not None]
        notes = [line + "\n" for line in form.notes.strip("\n").split("\n")] if form.notes.strip() else []
        new_body = fields + added + notes
    else:
        new_body = edited[: last_field + 1] + added + edited[last_field + 1 :]
    return "".join([*lines[:start], head, *new_body, *lines[end:]])


def add_section(outline: str, number: int, form: SectionForm | None = None) -> str:
    """``outline`` with a new ``## 第 N 章`` section after the last (its fields empty unless given)."""
    form = form or SectionForm(number)
    title = form.title.strip()
    lines = [f"## 第 {number} 章" + (f" {title}" if title else "")]
    for name in OUTLINE_FIELDS:
        lines.append(f"- **{name}**: {form.fields.get(name, '').strip()}".rstrip())
    if form.notes.strip():
        lines.append(form.notes.strip("\n"))
    base = outline.rstrip("\n")
    return (base + "\n\n" if base else "") + "\n".join(lines) + "\n"


def read_header(outline: str) -> tuple[str, str]:
    """The volume's title (its ``# `` line) and summary (the other lines before the first chapter)."""
    title = ""
    summary: list[str] = []
    for line in outline.splitlines():
        if _CHAPTER_HEADING.match(line):
            break
        m = _VOLUME_HEADING.match(line)
        if m and not title and line.lstrip().startswith("# "):
            title = m.group(2)
        else:
            summary.append(line)
    return title, "\n".join(summary).strip("\n")


def write_header(outline: str, title: str, summary: str) -> str:
    """``outline`` with the volume's title and summary replaced; the chapter sections stay as they are."""
    if read_header(outline) == (title, summary.strip("\n")):
        return outline
    lines = _lines(outline)
    first = next(
        (i for i, line in enumerate(lines) if _CHAPTER_HEADING.match(line.rstrip("\r\n"))), len(lines)
    )
    header = []
    if title.strip():
        header.append(f"# {title.strip()}\n")
    if summary.strip():
        header.append("\n" + summary.strip("\n") + "\n")
    if header and first < len(lines):
        header.append("\n")
    return "".join(header + lines[first:])


def next_chapter_number(outline: str, after: int = 0) -> int:
    """The number a chapter added after the outline's last section gets."""
    heads = (_CHAPTER_HEADING.match(line) for line in outline.splitlines())
    numbers = [int(m.group(1) or m.group(3)) for m in heads if m]
    return max([after, *numbers]) + 1


def _chunks(outline: str) -> tuple[list[str], list[tuple[int, list[str], list[str]]]]:
    """The lines before the first chapter heading, and each chapter section as (number, its lines without
    the blank lines after it, those blank lines)."""
    lines = _lines(outline)
    starts = [i for i, line in enumerate(lines) if _CHAPTER_HEADING.match(line.rstrip("\r\n"))]
    head = lines[: starts[0]] if starts else lines
    sections = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        body_end = end
        while body_end > start + 1 and not lines[body_end - 1].strip():
            body_end -= 1
        m = _CHAPTER_HEADING.match(lines[start].rstrip("\r\n"))
        assert m is not None
        sections.append((int(m.group(1) or m.group(3)), lines[start:body_end], lines[body_end:end]))
    return head, sections


def _numbered(section: list[str], number: int) -> list[str]:
    """A section's lines with its heading's chapter number set to ``number`` (the rest of the line kept)."""
    head = section[0]
    m = _CHAPTER_HEADING.match(head.rstrip("\r\n"))
    assert m is not None
    group = 1 if m.group(1) else 3
    return [head[: m.start(group)] + str(number) + head[m.end(group) :], *section[1:]]


def _join(head: list[str], sections: list[tuple[list[str], list[str]]]) -> str:
    """The outline from its head and its sections (lines, blank lines after); a section that was the last
    (its last line without a line break) and is followed by another now gets one."""
    out = list(head)
    for k, (section, gap) in enumerate(sections):
        if k + 1 < len(sections) and not section[-1].endswith("\n"):
            section = [*section[:-1], section[-1] + "\n"]
            gap = gap or ["\n"]
        out += [*section, *gap]
    return "".join(out)


def section_numbers(outline: str) -> list[int]:
    """The chapter numbers of the outline's sections, in the order they are written."""
    return [number for number, _lines, _gap in _chunks(outline)[1]]


def delete_section(outline: str, number: int) -> tuple[str, dict[int, int | None]] | None:
    """``outline`` without chapter ``number``'s section, every later section one number lower (第 8 章
    becomes 第 7 章), and how the numbers moved (``{old: new}``, the deleted one ``None``). None when the
    outline has no such section. Every other line stays as it was."""
    head, sections = _chunks(outline)
    at = next((k for k, (n, _s, _g) in enumerate(sections) if n == number), None)
    if at is None:
        return None
    moved: dict[int, int | None] = {number: None}
    kept = []
    for k, (n, section, gap) in enumerate(sections):
        if k == at:
            continue
        if k > at:
            moved[n] = n - 1
            section = _numbered(section, n - 1)
        kept.append((section, gap))
    if at == len(sections) - 1 and kept:  # the last one went: the one before ends the outline now
        kept[-1] = (kept[-1][0], sections[at][2])
    return _join(head, kept), moved


def move_section(outline: str, number: int, step: int) -> tuple[str, dict[int, int | None]] | None:
    """``outline`` with chapter ``number``'s section swapped with the one before (``step`` -1) or after
    (+1); the two exchange their numbers, so the chapters stay numbered in order (上移 第 5 章: its text is
    第 4 章 now, and the former 第 4 章 is 第 5 章). Also how the numbers moved. None when there is no such
    section or nothing to swap it with."""
    head, sections = _chunks(outline)
    at = next((k for k, (n, _s, _g) in enumerate(sections) if n == number), None)
    other = at + step if at is not None else -1
    if at is None or step not in (-1, 1) or not 0 <= other < len(sections):
        return None
    a, b = sections[at], sections[other]
    # The sections' texts swap places; each place keeps its number and the blank lines after it.
    sections[at] = (a[0], _numbered(b[1], a[0]), a[2])
    sections[other] = (b[0], _numbered(a[1], b[0]), b[2])
    return _join(head, [(section, gap) for _n, section, gap in sections]), {a[0]: b[0], b[0]: a[0]}
