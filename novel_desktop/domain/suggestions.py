"""The judge's issues as suggestions: concrete edits the author accepts or rejects one by one.

An agent (prompts/fix_suggester.md) turns the QualityJudge's issues, required fixes and violations of a
chapter into edits shaped like the StyleRefiner's (an exact ``original`` passage, its ``replacement``, why).
Unlike the refiner's edits nothing is applied on the model's word: each suggestion is located in the text,
numbered (``S1``, ``S2`` …) and shown; only those the author accepts change the chapter. There is no change
budget and dialogue may change, because the author decides each one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from novel_desktop.domain.common import SeedModel


class Suggestion(SeedModel):
    """One proposed edit: an exact passage of the chapter, what to put instead, why, and which issue."""

    original: str = Field(min_length=1)
    replacement: str
    reason: str = ""
    issue: str = ""


class SuggestionsReply(SeedModel):
    """The fix suggester's reply."""

    suggestions: list[Suggestion] = Field(default_factory=list)


class ChapterSuggestion(Suggestion):
    """A suggestion found in the chapter: its id and where its ``original`` starts."""

    id: str
    start: int = Field(ge=0)

    @property
    def end(self) -> int:
        return self.start + len(self.original)


class SuggestionSet(SeedModel):
    """The suggestions for one version of a chapter (``text_hash``), kept so the CLI can apply them by id."""

    chapter: int
    text_hash: str
    staged: bool = False
    suggestions: list[ChapterSuggestion] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list)

    def get(self, suggestion_id: str) -> ChapterSuggestion | None:
        wanted = suggestion_id.strip().upper()
        return next((s for s in self.suggestions if s.id.upper() == wanted), None)


@dataclass
class Located:
    suggestions: list[ChapterSuggestion]
    dropped: list[str]


def judge_issues(evaluation: Mapping[str, Any] | None) -> list[str]:
    """The judge's findings of a chapter as lines: violations, required fixes, then issues."""
    if not evaluation:
        return []
    lines: list[str] = []
    for v in evaluation.get("violations") or []:
        if isinstance(v, Mapping):
            evidence = f"（证据：{v.get('evidence')}）" if v.get("evidence") else ""
            lines.append(f"违规 {v.get('rule_id', '')}：{v.get('description', '')}{evidence}".strip())
        elif str(v).strip():
            lines.append(f"违规：{v}")
    for f in evaluation.get("required_fixes") or []:
        if isinstance(f, Mapping):
            lines.append(f"必须修改（{f.get('target', '')}）：{f.get('instruction', '')}")
        elif str(f).strip():
            lines.append(f"必须修改：{f}")
    lines += [f"问题：{i}" for i in evaluation.get("issues") or [] if str(i).strip()]
    return lines


def locate(text: str, suggestions: list[Suggestion]) -> Located:
    """Number the suggestions found in ``text``; each takes the first occurrence of its ``original`` that no
    earlier one took. One not in the text, overlapping another or changing nothing is dropped (with why)."""
    taken: list[tuple[int, int]] = []
    found: list[ChapterSuggestion] = []
    dropped: list[str] = []
    for s in suggestions:
        short = s.original if len(s.original) <= 20 else s.original[:20] + "…"
        if s.original == s.replacement:
            dropped.append(f"“{short}”：没有改动")
            continue
        start = text.find(s.original)
        while start != -1 and any(start < e and start + len(s.original) > b for b, e in taken):
            start = text.find(s.original, start + 1)
        if start == -1:
            why = "原文中找不到这段文字" if s.original not in text else "与前面的建议重叠"
            dropped.append(f"“{short}”：{why}")
            continue
        taken.append((start, start + len(s.original)))
        found.append(ChapterSuggestion(**s.model_dump(), id="", start=start))
    found.sort(key=lambda c: c.start)
    numbered = [c.model_copy(update={"id": f"S{i}"}) for i, c in enumerate(found, 1)]
    return Located(numbered, dropped)


def apply_chosen(text: str, chosen: list[ChapterSuggestion]) -> str:
    """``text`` with the chosen suggestions applied at their positions (later ones first, so earlier
    positions stay valid). A suggestion whose passage is no longer at its place raises ValueError."""
    out = text
    for s in sorted(chosen, key=lambda c: c.start, reverse=True):
        if out[s.start : s.end] != s.original:
            raise ValueError(f"建议 {s.id} 的原文已不在原处（正文改过了）")
        out = out[: s.start] + s.replacement + out[s.end :]
    return out


__all__ = [
    "ChapterSuggestion",
    "Located",
    "Suggestion",
    "SuggestionSet",
    "SuggestionsReply",
    "apply_chosen",
    "judge_issues",
    "locate",
]
