"""Applying the StyleRefiner's edits to a draft (seed 004 §5.7, §7 Layer 3).

The refiner returns edits (``original`` → ``refined`` with a reason) instead of a whole new chapter; the
program applies them itself. That keeps output tokens low, gives the author a visible change log, and lets
code — not the model's promise — enforce the seed's limits: at most 15% of the text changed, and dialogue
content never changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pydantic import Field

from novel_desktop.domain.common import SeedModel

MAX_CHANGE_RATIO = 0.15

_DIALOGUE_RE = re.compile(r"“[^”]*”|「[^」]*」|『[^』]*』|\"[^\"\n]*\"")


class RefineEdit(SeedModel):
    """One edit: an exact substring of the draft, its replacement, and why."""

    original: str = Field(min_length=1)
    refined: str
    reason: str = ""


class RefineEdits(SeedModel):
    """The StyleRefiner's output."""

    edits: list[RefineEdit] = Field(default_factory=list)


@dataclass
class RejectedEdit:
    edit: RefineEdit
    reason: str


@dataclass
class RefineOutcome:
    """The refined text and the change log."""

    text: str
    applied: list[RefineEdit] = field(default_factory=list)
    rejected: list[RejectedEdit] = field(default_factory=list)
    changed_chars: int = 0


def _dialogue_spans(text: str) -> list[tuple[int, int]]:
    return [(m.start() + 1, m.end() - 1) for m in _DIALOGUE_RE.finditer(text)]


def _touches_dialogue(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    """Whether [start, end) overlaps the spoken words of a quotation (the quote marks themselves excluded)."""
    return any(start < s_end and end > s_start for s_start, s_end in spans)


def apply_edits(
    draft: str,
    edits: list[RefineEdit],
    *,
    max_ratio: float = MAX_CHANGE_RATIO,
    budget: int | None = None,
) -> RefineOutcome:
    """Apply edits in order, each to the first occurrence of its ``original`` not already edited.

    An edit is rejected (and reported) when its ``original`` is not in the draft, when it overlaps an earlier
    edit, when it changes words inside a quotation (dialogue content is off limits), or when it would take
    the changed share of the text past ``max_ratio`` — or past ``budget`` characters when given (a second
    polish gets what the first pass left of the chapter's 15%). The budget counts, per edit, the longer of
    the original and the replacement.
    """
    limit = int(len(draft) * max_ratio)
    if budget is not None:
        limit = min(limit, max(0, budget))
    spans = _dialogue_spans(draft)
    taken: list[tuple[int, int, RefineEdit]] = []
    rejected: list[RejectedEdit] = []
    used = 0
    for edit in edits:
        if edit.original == edit.refined:
            rejected.append(RejectedEdit(edit, "没有改动"))
            continue
        start = _free_occurrence(draft, edit.original, taken)
        if start is None:
            reason = "原文中找不到这段文字" if edit.original not in draft else "与前面的修改重叠"
            rejected.append(RejectedEdit(edit, reason))
            continue
        end = start + len(edit.original)
        if _touches_dialogue(start, end, spans):
            rejected.append(RejectedEdit(edit, "改动了对话内容（对话只由作者或写作阶段决定）"))
            continue
        cost = max(len(edit.original), len(edit.refined))
        if used + cost > limit:
            why = f"超过本章 {int(max_ratio * 100)}% 的修改上限（本次可改 {limit} 个字符）"
            rejected.append(RejectedEdit(edit, why))
            continue
        used += cost
        taken.append((start, end, edit))
    pieces: list[str] = []
    cursor = 0
    for start, end, edit in sorted(taken, key=lambda t: t[0]):
        pieces.append(draft[cursor:start])
        pieces.append(edit.refined)
        cursor = end
    pieces.append(draft[cursor:])
    applied = [edit for _, _, edit in sorted(taken, key=lambda t: t[0])]
    return RefineOutcome("".join(pieces), applied, rejected, used)


def _free_occurrence(text: str, needle: str, taken: list[tuple[int, int, RefineEdit]]) -> int | None:
    start = text.find(needle)
    while start != -1:
        end = start + len(needle)
        if not any(start < t_end and end > t_start for t_start, t_end, _ in taken):
            return start
        start = text.find(needle, start + 1)
    return None
