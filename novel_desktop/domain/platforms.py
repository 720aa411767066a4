"""Target platforms and what their readers expect of a chapter (the writer and the judge follow it).

Each profile has the chapter's target range in 字 (counted by :func:`novel_desktop.domain.text.count_chars`:
Han characters and full-width punctuation one each, a run of Latin letters or digits one), the hook and
pacing rules, the stricter rules of the first three chapters, and the judge's dimension weights (the seed's
:data:`~novel_desktop.domain.evaluation.DIMENSION_WEIGHTS` unless the platform's readers weigh otherwise).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from novel_desktop.domain.evaluation import DIMENSION_NAMES, DIMENSION_WEIGHTS
from novel_desktop.domain.text import count_chars

#: The chapters the opening rules apply to (seed 004: 黄金三章).
OPENING_CHAPTERS = 3
#: How much of an opening chapter's start must already hook the reader.
HOOK_WINDOW_CHARS = 300


def _weights(**values: float) -> Mapping[str, float]:
    return MappingProxyType(dict(values))


@dataclass(frozen=True)
class PlatformProfile:
    id: str
    name: str
    min_chars: int
    max_chars: int
    hook: str
    pacing: str
    #: How many 字 into chapter 1 the protagonist must be on stage.
    protagonist_within: int = 1000
    #: The judge's dimension weights for this platform (they sum to 1.0).
    weights: Mapping[str, float] = field(default_factory=lambda: DIMENSION_WEIGHTS)

    def target(self) -> str:
        return f"{self.min_chars:,}-{self.max_chars:,} 字"

    def describe(self) -> str:
        """The profile as the ChapterWriter and QualityJudge read it: length, hook, pacing, opening rules."""
        return (
            f"平台：{self.name}。\n"
            f"- 字数：每章 {self.target()}（按中文字数计，标点计入；超出或不足都会被要求调整）。\n"
            f"- 章末钩子：{self.hook}。\n"
            f"- 节奏：{self.pacing}。\n"
            f"- 开篇（第 1-{OPENING_CHAPTERS} 章）：前 {HOOK_WINDOW_CHARS} 字内必须出现钩子"
            "（冲突、悬念或反常）；"
            f"主角必须登场（第 1 章在前 {self.protagonist_within} 字内）；"
            f"最迟第 {OPENING_CHAPTERS} 章交代核心冲突。"
        )

    def weights_text(self) -> str:
        """The weights as the judge reads them, one dimension a line."""
        return "\n".join(
            f"- {name}（{DIMENSION_NAMES.get(name, name)}）：{weight:.2f}"
            for name, weight in self.weights.items()
        )


PLATFORMS: dict[str, PlatformProfile] = {
    "qidian": PlatformProfile(
        "qidian",
        "起点中文网",
        2500,
        4000,
        "每章结尾留悬念或爽点预告，让读者想点下一章",
        "主线推进稳，升级与打脸节点清楚，设定可以铺但不能连篇",
        protagonist_within=1000,
        weights=_weights(
            plot_logic=0.18,
            character=0.16,
            immersion=0.14,
            foreshadowing=0.12,
            pacing=0.10,
            style_naturalness=0.12,
            emotional_impact=0.08,
            storyline_coherence=0.10,
        ),
    ),
    "tomato": PlatformProfile(
        "tomato",
        "番茄小说",
        2000,
        3000,
        "强钩子收尾，最后三行必须抛出新冲突或反转",
        "开篇即冲突，短段落、快节奏，一章至少一个情绪高点",
        protagonist_within=500,
        weights=_weights(
            plot_logic=0.16,
            character=0.16,
            immersion=0.14,
            foreshadowing=0.08,
            pacing=0.14,
            style_naturalness=0.12,
            emotional_impact=0.14,
            storyline_coherence=0.06,
        ),
    ),
    "jjwxc": PlatformProfile(
        "jjwxc",
        "晋江文学城",
        3000,
        5000,
        "情绪钩子收尾：关系的变化或未说出口的话",
        "人物关系和情感线是主轴，细节与对话要细腻",
        protagonist_within=1000,
        weights=_weights(
            plot_logic=0.14,
            character=0.22,
            immersion=0.14,
            foreshadowing=0.08,
            pacing=0.06,
            style_naturalness=0.14,
            emotional_impact=0.16,
            storyline_coherence=0.06,
        ),
    ),
    # The seed's own default: 2,500-3,500 字 and the seed's weights.
    "web": PlatformProfile(
        "web",
        "自建站/博客",
        2500,
        3500,
        "自然收束并留一个让人想读下去的问题",
        "按作品自身节奏，不为平台数据牺牲文气",
    ),
}


def platform_profile(platform: str) -> PlatformProfile:
    """The profile of a platform id (``web``, the seed's default, for an unknown one)."""
    return PLATFORMS.get(platform, PLATFORMS["web"])


# ---------------------------------------------------------------------------- length
#: Output tokens per 字 of Chinese prose: about 1.0-1.3 on Claude's tokenizer, fewer on DeepSeek's or Kimi's;
#: the high end, so a chapter at the top of its range is never cut off by the limit itself.
TOKENS_PER_CHAR = 1.5
#: Headroom over ``max_chars``: a draft a little over the range is tightened afterwards, not cut off.
LENGTH_HEADROOM = 1.2
#: Room for the JSON hints block the writer appends after the chapter.
HINTS_TOKENS = 1000


def writer_max_tokens(profile: PlatformProfile) -> int:
    """The writer's (and reviser's) output limit for a chapter of this platform:
    ``ceil(max_chars × LENGTH_HEADROOM × TOKENS_PER_CHAR) + HINTS_TOKENS`` (7,300 for 3,500 字)."""
    return math.ceil(profile.max_chars * LENGTH_HEADROOM * TOKENS_PER_CHAR) + HINTS_TOKENS


_HEADING_LINE = re.compile(r"\A\s*#[^\n]*\n")


def body_chars(text: str) -> int:
    """The chapter's 字数 without its ``# 第N章`` heading line."""
    return count_chars(_HEADING_LINE.sub("", text, count=1))


def length_gap(profile: PlatformProfile, chars: int) -> int:
    """How far ``chars`` is outside the target range: negative below it, positive above, 0 inside."""
    if chars < profile.min_chars:
        return chars - profile.min_chars
    if chars > profile.max_chars:
        return chars - profile.max_chars
    return 0


def length_task(profile: PlatformProfile, chars: int) -> str:
    """What the length editor is asked to do for a draft of ``chars`` 字 (empty inside the range)."""
    gap = length_gap(profile, chars)
    if not gap:
        return ""
    middle = (profile.min_chars + profile.max_chars) // 2
    if gap < 0:
        return (
            f"扩写。本章现有 {chars:,} 字，低于平台要求 {profile.target()}。"
            f"请补写约 {-gap:,}-{middle - chars:,} 字，使全章达到约 {middle:,} 字，"
            f"不要超过 {profile.max_chars:,} 字。"
        )
    return (
        f"精简。本章现有 {chars:,} 字，高于平台要求 {profile.target()}。"
        f"请删减约 {gap:,}-{chars - middle:,} 字，使全章回到约 {middle:,} 字，"
        f"不要少于 {profile.min_chars:,} 字。"
    )


def length_edit_ratio(profile: PlatformProfile, chars: int) -> float:
    """The share of the draft the length edits may touch (see ``domain.refine.apply_edits``): an
    insertion counts its original sentence too, so the budget is the gap to the middle of the range, twice
    over, plus the refiner's usual 15%; never more than the whole text."""
    middle = (profile.min_chars + profile.max_chars) // 2
    if chars <= 0:
        return 1.0
    return min(1.0, (2 * abs(middle - chars) + 0.15 * chars) / chars)


# ---------------------------------------------------------------------------- the opening chapters
#: The roles that mark a novel's protagonist in ``characters/active/*.json``.
PROTAGONIST_ROLES = frozenset({"protagonist", "主角", "main", "lead"})


def protagonists(characters: list[dict[str, object]]) -> list[tuple[str, list[str]]]:
    """Each protagonist's name and every name it goes by (name first, then aliases)."""
    out = []
    for ch in characters:
        if str(ch.get("role") or "").strip().lower() in PROTAGONIST_ROLES:
            aliases = ch.get("aliases")
            more = [str(a) for a in aliases] if isinstance(aliases, list) else []
            names = [str(x) for x in [ch.get("name"), *more] if x]
            if names:
                out.append((names[0], names))
    return out


def opening_excerpt(text: str, chars: int = HOOK_WINDOW_CHARS) -> str:
    """The chapter's first ``chars`` 字 (after its heading line), cut where the count is reached."""
    body = _HEADING_LINE.sub("", text, count=1).lstrip()
    lo, hi = 0, len(body)
    while lo < hi:  # the shortest prefix that holds ``chars`` 字
        mid = (lo + hi) // 2
        if count_chars(body[:mid]) >= chars:
            hi = mid
        else:
            lo = mid + 1
    return body[:lo]
