"""The platform profile's checks in code at the gate (issue 16 points 2 and 5): the chapter's length, and the
stricter opening rules of chapters 1-3 (protagonist on stage; the judge's opening findings made visible).

Registered in :data:`novel_desktop.pipeline.chapter_checks.CHECKS`. What code can tell reliably is checked
here; what needs reading (a hook in the first 300 字, the core conflict set by chapter 3) is the judge's
opening checklist (``prompts/quality_judge.md``), whose findings come back as risk flags and are shown here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from novel_desktop.domain.evaluation import split_risk_flag
from novel_desktop.domain.gate import GateIssue
from novel_desktop.domain.platforms import (
    OPENING_CHAPTERS,
    body_chars,
    length_gap,
    platform_profile,
    protagonists,
)
from novel_desktop.domain.text import count_chars

if TYPE_CHECKING:
    from novel_desktop.pipeline.chapter_checks import CheckInput

#: The judge's opening risk flags (prompts/quality_judge.md) and how the author reads them.
OPENING_FLAGS: dict[str, tuple[str, str]] = {
    "opening_hook_missing": ("OPENING-HOOK", "评审认为开篇前 300 字没有钩子（冲突、悬念或反常）"),
    "protagonist_absent": ("OPENING-PROTAGONIST", "评审认为主角没有真正登场"),
    "core_conflict_missing": ("OPENING-CONFLICT", "评审认为到本章为止核心冲突还没有交代"),
}


def length_issues(given: CheckInput) -> list[GateIssue]:
    """A ``LENGTH`` issue when the staged text is outside the platform's range (after the one length pass).
    Not blocking: a chapter a little long or short is still a chapter; the author sees the count."""
    profile = platform_profile(given.facts.platform)
    chars = body_chars(given.text)
    gap = length_gap(profile, chars)
    if not gap:
        return []
    where = "低于" if gap < 0 else "高于"
    return [
        GateIssue(
            "length",
            "LENGTH",
            f"字数 {chars:,}，{where}平台要求 {profile.min_chars:,}-{profile.max_chars:,} 字",
        )
    ]


def _first_mention(text: str, names: list[str]) -> int | None:
    found = [i for i in (text.find(name) for name in names) if i >= 0]
    return min(found) if found else None


def opening_issues(given: CheckInput) -> list[GateIssue]:
    """Chapters 1-3: the protagonist must be on stage (chapter 1 within the profile's first N 字), and the
    judge's opening findings are shown.

    Blocking only when chapter 1 never names its protagonist at all: an opening without the protagonist
    breaks every platform's first rule, and a name that never appears is an unambiguous fact (not a reading).
    A late first appearance, an absence in chapter 2 or 3 (a chapter may follow another character), and the
    judge's own opening findings (already in its score) are shown without forcing a revision.
    """
    n = given.chapter
    if n > OPENING_CHAPTERS:
        return []
    profile = platform_profile(given.facts.platform)
    issues: list[GateIssue] = []
    for name, names in protagonists(given.facts.characters):
        at = _first_mention(given.text, names)
        if at is None:
            issues.append(
                GateIssue(
                    "opening",
                    "OPENING-PROTAGONIST",
                    f"开篇第 {n} 章主角{name}没有登场（平台要求前 {OPENING_CHAPTERS} 章主角在场）",
                    blocking=n == 1,
                )
            )
        elif n == 1 and (chars := count_chars(given.text[:at])) > profile.protagonist_within:
            issues.append(
                GateIssue(
                    "opening",
                    "OPENING-PROTAGONIST",
                    f"主角{name}到第 {chars:,} 字才登场，"
                    f"{profile.name}要求第 1 章前 {profile.protagonist_within} 字内登场",
                )
            )
    for flag in given.evaluation.risk_flags:
        kind, detail = split_risk_flag(flag)
        if kind in OPENING_FLAGS:
            rule, message = OPENING_FLAGS[kind]
            issues.append(GateIssue("opening", rule, message, evidence=detail))
    return issues


__all__ = ["OPENING_FLAGS", "length_issues", "opening_issues"]
