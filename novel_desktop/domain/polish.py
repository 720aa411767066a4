"""The second polish of a 3.5-3.9 chapter (seed 004 §6 质量门控): what it works on and what it may spend.

The first StyleRefiner pass works from the analysis numbers; the second one, after the judge, gets the
judge's own style findings, and both passes together change at most :data:`MAX_CHANGE_RATIO` of the
chapter: the second one gets what the first one left.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from novel_desktop.domain.evaluation import Evaluation, split_risk_flag
from novel_desktop.domain.refine import MAX_CHANGE_RATIO, RefineEdit

#: Words that make a judge's issue or risk flag a matter of style (what a polish can fix by edits).
_STYLE_WORDS = (
    "文风", "风格", "句式", "句子", "套话", "AI", "ai", "黑名单", "腔", "用词", "辞藻", "形容", "修辞",
    "描写", "语言", "重复", "啰嗦", "冗长", "生硬", "书面", "说教", "总结", "style", "phrase", "repetit",
    "sentence", "wording", "tone",
)  # fmt: skip


def _is_style(text: str) -> bool:
    return any(word in text for word in _STYLE_WORDS)


def style_points(evaluation: Evaluation) -> tuple[str, ...]:
    """The judge's style findings, one line each: the style_naturalness dimension's reason and evidence, the
    issues and risk flags about style, and AI-sounding phrases it found (empty when it found none)."""
    points: list[str] = []
    style = evaluation.scores.get("style_naturalness")
    if style is not None and (style.reason or style.evidence):
        line = f"文风自然度 {style.score:g} 分：{style.reason}".rstrip("：")
        if style.evidence:
            line += f" 原文：「{style.evidence}」"
        points.append(line)
    points += [f"评审问题：{issue}" for issue in evaluation.issues if _is_style(issue)]
    for flag in evaluation.risk_flags:
        kind, detail = split_risk_flag(flag)
        if _is_style(kind) or _is_style(detail):
            points.append(f"风险标记：{kind}" + (f"（{detail}）" if detail else ""))
    if evaluation.new_ai_phrases:
        points.append("评审发现的 AI 腔表达：" + "、".join(f"「{p}」" for p in evaluation.new_ai_phrases))
    return tuple(dict.fromkeys(points))


def edits_cost(edits: Iterable[RefineEdit | Mapping[str, Any]]) -> int:
    """Characters the edits changed, counted as :func:`~novel_desktop.domain.refine.apply_edits` counts
    them (per edit, the longer of the original and the replacement)."""
    total = 0
    for edit in edits:
        if isinstance(edit, RefineEdit):
            original, refined = edit.original, edit.refined
        else:
            original, refined = str(edit.get("original") or ""), str(edit.get("refined") or "")
        total += max(len(original), len(refined))
    return total


def remaining_budget(text: str, applied: Iterable[RefineEdit | Mapping[str, Any]]) -> int:
    """What a later refiner pass may still change in ``text``: 15% of it less what the passes before spent
    (``applied``: their applied edits, the gate notes' ``refine_log``)."""
    return max(0, int(len(text) * MAX_CHANGE_RATIO) - edits_cost(applied))


__all__ = ["edits_cost", "remaining_budget", "style_points"]
