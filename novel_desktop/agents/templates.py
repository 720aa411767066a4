"""Loading and rendering the agent prompt templates in ``prompts/`` (seed 004 §5, §5.9).

A template file is Markdown with three kinds of marker lines (see ``prompts/README.md``)::

    ...system part, first block (role, goal, constraints, output format)...
    <!-- cache -->
    ...system part, next block (stable context: style profile, blacklist, world rules)...
    <!-- cache -->
    ...system part, last block (volume outline)...
    <!-- user -->
    ...per-call part (chapter outline, summaries, state, draft)...

The system part comes first and holds what changes least, most stable first, so that repeated calls read it
from the provider's prompt cache; each ``<!-- cache -->`` line ends a block, and the LLM client puts a cache
breakpoint at the end of every system block (at most four, the Anthropic limit). Any other line that is a
whole HTML comment (``<!-- ... -->``) is a note for template maintainers and is dropped when loading.

Slots are ``{snake_case}`` names; every other brace is literal text, so JSON examples stay readable. A
literal ``{name}`` is written ``{{name}}``. Values are substituted in one pass: a value that itself contains
``{something}`` is never expanded again.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from novel_desktop.agents.context import estimate_parts
from novel_desktop.paths import prompts_dir

__all__ = [
    "CACHE_MARKER",
    "EMPTY_VALUE",
    "MAX_SYSTEM_BLOCKS",
    "TEMPLATE_NAMES",
    "USER_MARKER",
    "MissingSlotError",
    "PromptTemplate",
    "RenderedPrompt",
    "SlotTokens",
    "TemplateError",
    "TemplateFormatError",
    "UnfilledSlotError",
    "UnknownSlotError",
    "load_template",
    "parse_template",
    "render",
    "render_system",
    "render_template",
]

#: Every agent template shipped in ``prompts/`` (the names match :class:`novel_desktop.llm.roles.AgentRole`).
TEMPLATE_NAMES: tuple[str, ...] = (
    "world_builder",
    "character_weaver",
    "plot_architect",
    "chapter_writer",
    "reviser",
    "summarizer",
    "style_analyzer",
    "style_refiner",
    "quality_judge",
    "consistency_auditor",
    #: The judge's issues as edits the author accepts one by one (called with the reviser's model).
    "fix_suggester",
    #: A draft outside the platform's length range, expanded or tightened by edits (the refiner's model).
    "length_editor",
    #: 接续已有书稿: each imported chapter read into a note (the summarizer's model), then the notes
    #: synthesised into world, characters, storylines, foreshadowing and state (the world builder's model).
    "book_reader",
    "book_synthesis",
)

CACHE_MARKER = "<!-- cache -->"
USER_MARKER = "<!-- user -->"
#: Anthropic accepts at most four cache breakpoints per request; one per system block.
MAX_SYSTEM_BLOCKS = 4
#: What an empty value renders as, so that a section heading is never followed by nothing.
EMPTY_VALUE = "（无）"

# An escaped literal ``{{name}}`` (group 1) or a slot ``{name}`` (group 2). JSON keys are quoted, so
# ``{"chapter": 1}`` never matches.
_SLOT_RE = re.compile(r"\{\{([a-z][a-z0-9_]*)\}\}|\{([a-z][a-z0-9_]*)\}")
_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_COMMENT_LINE_RE = re.compile(r"^\s*<!--.*-->\s*$")


class TemplateError(ValueError):
    """A template cannot be loaded or rendered."""


class TemplateFormatError(TemplateError):
    """The template file breaks the marker conventions."""


class MissingSlotError(TemplateError):
    """The context lacks values for some slots; ``slots`` names every one of them."""

    def __init__(self, template: str, slots: list[str]) -> None:
        self.template = template
        self.slots = tuple(sorted(slots))
        super().__init__(f"模板 {template} 缺少变量：{', '.join(self.slots)}")


class UnknownSlotError(TemplateError):
    """The context has keys the template does not use (usually a misspelt slot name)."""

    def __init__(self, template: str, keys: list[str]) -> None:
        self.template = template
        self.keys = tuple(sorted(keys))
        super().__init__(f"模板 {template} 没有这些变量：{', '.join(self.keys)}")


class UnfilledSlotError(TemplateError):
    """A ``{slot}`` survived rendering outside any substituted value (a defect in the template text)."""

    def __init__(self, template: str, slots: list[str]) -> None:
        self.template = template
        self.slots = tuple(sorted(set(slots)))
        super().__init__(f"模板 {template} 渲染后仍有未填的变量：{', '.join(self.slots)}")


@dataclass(frozen=True)
class PromptTemplate:
    """A parsed template: the system blocks (most stable first), the per-call part and the slot names."""

    name: str
    system_sections: list[str]
    user: str
    slots: frozenset[str]

    @property
    def system_slots(self) -> frozenset[str]:
        """The slots used in the system part (values that should stay stable between calls)."""
        return frozenset(name for section in self.system_sections for name in _slot_names(section))

    @property
    def user_slots(self) -> frozenset[str]:
        """The slots used in the per-call part."""
        return frozenset(_slot_names(self.user))


@dataclass(frozen=True)
class SlotTokens:
    """One filled slot of a rendered prompt: its value's token estimate times the template's uses of it."""

    slot: str
    tokens: int
    uses: int = 1


@dataclass(frozen=True)
class RenderedPrompt:
    """A rendered prompt: system blocks to send in order (each a cache breakpoint) and the user message.

    :func:`render` also keeps the template's name, each slot's rendered value and how many times the template
    uses it, so :meth:`slot_tokens` can say what each part of the prompt costs (the context inspector)."""

    system_blocks: list[str]
    user: str
    template: str = ""
    #: Each slot's value as sent (blank values as :data:`EMPTY_VALUE`), in the order the template uses them.
    values: Mapping[str, str] = field(default_factory=dict)
    uses: Mapping[str, int] = field(default_factory=dict)

    @property
    def system_text(self) -> str:
        """The system blocks joined, for providers without block-level caching."""
        return "\n\n".join(self.system_blocks)

    @property
    def text(self) -> str:
        """The whole prompt as one string (for token estimates and logs)."""
        return self.system_text + "\n\n" + self.user

    @property
    def tokens(self) -> int:
        """The whole prompt's token estimate (:func:`novel_desktop.agents.context.estimate_tokens`)."""
        system = [part for block in self.system_blocks for part in ("\n\n", block)][1:]  # system_text's parts
        return estimate_parts([*system, "\n\n", self.user])

    def slot_tokens(self) -> list[SlotTokens]:
        """Each slot's share of the prompt, in template order; the rest of :attr:`tokens` (``tokens`` minus
        their sum) is the template's own words."""
        return [
            SlotTokens(slot, estimate_parts((value,)) * self.uses.get(slot, 1), self.uses.get(slot, 1))
            for slot, value in self.values.items()
        ]


def _slot_names(text: str) -> list[str]:
    return [m.group(2) for m in _SLOT_RE.finditer(text) if m.group(2) is not None]


def parse_template(name: str, text: str) -> PromptTemplate:
    """Parse a template's text (see the module docstring for the format).

    Raises :class:`TemplateFormatError` when ``<!-- user -->`` is missing or repeated, when the system part
    has more than :data:`MAX_SYSTEM_BLOCKS` blocks, or when a block is empty.
    """
    system_lines: list[list[str]] = [[]]
    user_lines: list[str] = []
    in_user = False
    for line in text.replace("\r\n", "\n").split("\n"):
        marker = line.strip()
        if marker == USER_MARKER:
            if in_user:
                raise TemplateFormatError(f"模板 {name} 有多个 {USER_MARKER} 行")
            in_user = True
            continue
        if marker == CACHE_MARKER:
            if in_user:
                raise TemplateFormatError(f"模板 {name} 的 {CACHE_MARKER} 必须在 {USER_MARKER} 之前")
            system_lines.append([])
            continue
        if _COMMENT_LINE_RE.match(line):
            continue
        (user_lines if in_user else system_lines[-1]).append(line)
    if not in_user:
        raise TemplateFormatError(f"模板 {name} 缺少 {USER_MARKER} 行")
    sections = ["\n".join(lines).strip() for lines in system_lines]
    if len(sections) > MAX_SYSTEM_BLOCKS:
        raise TemplateFormatError(
            f"模板 {name} 的 system 部分有 {len(sections)} 段，最多 {MAX_SYSTEM_BLOCKS} 段"
            f"（{CACHE_MARKER} 最多 {MAX_SYSTEM_BLOCKS - 1} 个）"
        )
    if any(not section for section in sections):
        raise TemplateFormatError(f"模板 {name} 的 system 部分有空段")
    user = "\n".join(user_lines).strip()
    if not user:
        raise TemplateFormatError(f"模板 {name} 的 user 部分为空")
    slots = frozenset(name for part in [*sections, user] for name in _slot_names(part))
    return PromptTemplate(name=name, system_sections=sections, user=user, slots=slots)


def load_template(name: str, directory: Path | None = None) -> PromptTemplate:
    """Read and parse ``prompts/<name>.md`` (from :func:`novel_desktop.paths.prompts_dir` by default)."""
    if not _NAME_RE.match(name):
        raise TemplateError(f"模板名不合法：{name!r}")
    path = (directory if directory is not None else prompts_dir()) / f"{name}.md"
    try:
        stat = path.stat()
    except FileNotFoundError as exc:
        raise TemplateError(f"找不到模板文件：{path}") from exc
    # Every agent call loads its template on the event loop: a file read and parsed once, and again only
    # when it changed (its size or modification time).
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    cached = _PARSED.get(key)
    if cached is None:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise TemplateError(f"找不到模板文件：{path}") from exc
        cached = parse_template(name, text)
        if len(_PARSED) > 256:
            _PARSED.clear()
        _PARSED[key] = cached
    return cached


_PARSED: dict[tuple[str, int, int], PromptTemplate] = {}


def _fill(template_name: str, text: str, values: Mapping[str, str]) -> str:
    pieces: list[str] = []
    value_spans: list[tuple[int, int]] = []
    cursor = 0
    length = 0
    for match in _SLOT_RE.finditer(text):
        literal = text[cursor : match.start()]
        pieces.append(literal)
        length += len(literal)
        escaped, slot = match.group(1), match.group(2)
        if slot is None:
            piece = "{" + escaped + "}"
            pieces.append(piece)
            value_spans.append((length, length + len(piece)))
            length += len(piece)
        else:
            value = values[slot]
            pieces.append(value)
            value_spans.append((length, length + len(value)))
            length += len(value)
        cursor = match.end()
    pieces.append(text[cursor:])
    out = "".join(pieces)
    # Defence in depth: a slot pattern in the output that is not wholly inside a substituted value (or an
    # escape) was made by the template text, e.g. a stray brace next to a slot, not by the author's content.
    leftovers = [
        m.group(2)
        for m in _SLOT_RE.finditer(out)
        if m.group(2) in values and not any(s <= m.start() and m.end() <= e for s, e in value_spans)
    ]
    if leftovers:
        raise UnfilledSlotError(template_name, leftovers)
    return out


def render(
    template: PromptTemplate, context: Mapping[str, str], *, allow_unknown: bool = False
) -> RenderedPrompt:
    """Fill every slot of ``template`` from ``context``.

    Raises :class:`MissingSlotError` naming every slot without a value, and :class:`UnknownSlotError` for
    context keys the template does not use (unless ``allow_unknown``, for a shared base context). Values
    must be strings; an empty or blank value renders as :data:`EMPTY_VALUE` so that no section is left
    dangling. Values are inserted verbatim and never expanded again.
    """
    missing = [slot for slot in template.slots if slot not in context]
    if missing:
        raise MissingSlotError(template.name, missing)
    if not allow_unknown:
        unknown = [key for key in context if key not in template.slots]
        if unknown:
            raise UnknownSlotError(template.name, unknown)
    values: dict[str, str] = {}
    for slot in template.slots:
        value = context[slot]
        if not isinstance(value, str):
            raise TypeError(f"模板 {template.name} 的变量 {slot} 必须是字符串，实际是 {type(value).__name__}")
        values[slot] = value.strip() or EMPTY_VALUE
    blocks = [_fill(template.name, section, values) for section in template.system_sections]
    uses = Counter(name for part in [*template.system_sections, template.user] for name in _slot_names(part))
    ordered = {slot: values[slot] for slot in uses}
    return RenderedPrompt(
        system_blocks=blocks,
        user=_fill(template.name, template.user, values),
        template=template.name,
        values=ordered,
        uses=dict(uses),
    )


def render_template(
    name: str, context: Mapping[str, str], *, allow_unknown: bool = False, directory: Path | None = None
) -> RenderedPrompt:
    """Load ``prompts/<name>.md`` and render it with ``context`` (see :func:`render`)."""
    return render(load_template(name, directory), context, allow_unknown=allow_unknown)


def render_system(template: PromptTemplate, context: Mapping[str, str]) -> list[str]:
    """Only the system blocks of ``template``, filled from ``context`` (which may hold other keys): the
    stable part, for a prefix several templates share (agents/review_prefix.py). Raises
    :class:`MissingSlotError` for a system slot without a value."""
    missing = [slot for slot in template.system_slots if slot not in context]
    if missing:
        raise MissingSlotError(template.name, missing)
    values = {slot: (context[slot].strip() or EMPTY_VALUE) for slot in template.system_slots}
    return [_fill(template.name, section, values) for section in template.system_sections]
