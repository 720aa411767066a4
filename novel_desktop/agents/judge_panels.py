"""The ordinary judge as three panels that run at once (issue 18: the critical path).

One judge reply of ~1.7K tokens was about half the writer stage on the chapter's critical path. The pipeline's
judge is therefore asked three times at once over the same shared prefix (agents/review_prefix.py), each call
for a third of the evaluation, balanced by the size of what it writes, and the parts are merged here into the
one :class:`Evaluation` the gate reads:

- panel A (合规与情节): contract_verification, violations, and plot_logic, foreshadowing;
- panel B (人物与故事线): character, storyline_coherence, emotional_impact;
- panel C (文笔与读感): immersion, pacing, style_naturalness, and new_ai_phrases.

Each gives risk_flags, required_fixes, issues and strengths for its part. The overall and the
recommendation are the program's (``finish_evaluation`` weights; the template's recommendation rule), never
a panel's. The key chapter's secondary judge, the author's 重新评审 and batch re-judging stay one whole call
(``FULL_PANEL``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from novel_desktop.domain.common import SeedModel
from novel_desktop.domain.evaluation import (
    DIMENSION_WEIGHTS,
    DIMENSIONS,
    DimensionScore,
    Evaluation,
    RequiredFix,
    Violation,
    weighted_overall,
)

#: Each panel's dimensions; together exactly the eight. Panel A also verifies the contract (its longest
#: part), so it scores fewer dimensions: the three replies are about the same size.
PANEL_DIMENSIONS: Mapping[str, tuple[str, ...]] = {
    "A": ("plot_logic", "foreshadowing"),
    "B": ("character", "storyline_coherence", "emotional_impact"),
    "C": ("immersion", "pacing", "style_naturalness"),
}
PANELS: tuple[str, ...] = tuple(PANEL_DIMENSIONS)

#: The ``judge_panel`` slot for one whole judgement (secondary judge, re-judging).
FULL_PANEL = (
    "完整评审（不分组）：输出完整的评估 JSON——contract_verification 覆盖任务单列出的每一条规则和目标，"
    "scores 覆盖全部 8 个维度，并给出 overall 与 recommendation。"
)

_SHARED = "本章由三个评审组同时评审，你只负责本组的一部分：\n"
_NOT_YOURS = "不写 overall、recommendation；其余维度由另外两个评审组负责，不要打分。"

#: The ``judge_panel`` slot of each panel. The fake server and tests recognise a panel by 【评审组 X】.
PANEL_TASKS: Mapping[str, str] = {
    "A": (
        "【评审组 A】合规与情节组。" + _SHARED + "- contract_verification：覆盖任务单列出的每一条规则和目标"
        "（W-、C-、OBJ-、LS-）；\n"
        "- violations：按「合规检查」的约束逐条写；\n"
        "- scores 只打 plot_logic、foreshadowing 两个维度；\n"
        "- risk_flags、required_fixes、issues、strengths 只写与合规、情节、伏笔有关的；\n"
        "- 不写 new_ai_phrases；" + _NOT_YOURS
    ),
    "B": (
        "【评审组 B】人物与故事线组。" + _SHARED + "- scores 只打 character、storyline_coherence、"
        "emotional_impact 三个维度；\n"
        "- risk_flags、required_fixes、issues、strengths 只写与人物、故事线、情感有关的；\n"
        "- contract_verification 写空对象 {}，violations 写空列表，不写 new_ai_phrases；" + _NOT_YOURS
    ),
    "C": (
        "【评审组 C】文笔与读感组。" + _SHARED + "- scores 只打 immersion、pacing、style_naturalness 三个维度"
        "（style_naturalness 以程序检测结果中的数字为据）；\n"
        "- new_ai_phrases：按约束列出新套话；\n"
        "- risk_flags、required_fixes、issues、strengths 只写与文笔、节奏、沉浸感、AI 腔有关的；\n"
        "- contract_verification 写空对象 {}，violations 写空列表；" + _NOT_YOURS
    ),
}


class PanelReply(SeedModel):
    """One panel's JSON: a part of an Evaluation (every field optional; only the panel's half is read). The
    parts are typed as in :class:`Evaluation`, so a bad score gets the structured call's repair retry."""

    chapter: int | None = None
    contract_verification: Any = None
    scores: dict[str, DimensionScore] = Field(default_factory=dict)
    violations: list[Violation | str] = Field(default_factory=list)
    risk_flags: list[str] = Field(default_factory=list)
    required_fixes: list[RequiredFix] = Field(default_factory=list)
    issues: list[str] = Field(default_factory=list)
    strengths: list[str] = Field(default_factory=list)
    new_ai_phrases: list[str] = Field(default_factory=list)


def _union(*lists: list[Any]) -> list[Any]:
    out: list[Any] = []
    for items in lists:
        out += [item for item in items if item not in out]
    return out


def recommend(overall: float, high_violation: bool) -> str:
    """The template's rule: a high-confidence violation → revise; else by the overall."""
    if high_violation:
        return "revise"
    if overall >= 4.0:
        return "pass"
    if overall >= 3.5:
        return "polish"
    return "revise" if overall >= 3.0 else "rewrite"


def merge_panels(
    panels: Mapping[str, PanelReply], chapter: int, weights: Mapping[str, float] = DIMENSION_WEIGHTS
) -> Evaluation:
    """The one Evaluation of the panels' replies (by panel name): each dimension from its own panel (another's
    as a fallback when a panel left one out), compliance from panel A, the lists of all; overall and
    recommendation computed. Raises ``ValueError`` (pydantic's) when a dimension is scored by no panel."""
    replies = [panels.get(p) or PanelReply() for p in PANELS]
    own = dict(zip(PANELS, replies, strict=True))
    scores: dict[str, Any] = {}
    for panel, dims in PANEL_DIMENSIONS.items():
        order = [own[panel], *(r for p, r in own.items() if p != panel)]
        for dim in dims:
            entry = next((r.scores[dim] for r in order if dim in r.scores), None)
            if entry is not None:
                scores[dim] = entry.to_json_dict()
    scores = {dim: scores[dim] for dim in DIMENSIONS if dim in scores}
    a, style = own["A"], own[PANELS[-1]]
    data: dict[str, Any] = {
        "chapter": chapter,
        "contract_verification": a.contract_verification or {},
        "scores": scores,
        "overall": 1,
        "recommendation": "revise",
        "violations": [v.to_json_dict() if isinstance(v, Violation) else v for v in a.violations],
        "risk_flags": _union(*(r.risk_flags for r in replies)),
        "required_fixes": [f.to_json_dict() for f in _union(*(r.required_fixes for r in replies))],
        "issues": _union(*(r.issues for r in replies)),
        "strengths": _union(*(r.strengths for r in replies)),
        "new_ai_phrases": _union(style.new_ai_phrases, *(r.new_ai_phrases for r in replies)),
    }
    evaluation = Evaluation.model_validate(data)
    overall = weighted_overall(evaluation.scores, weights)
    high = any(getattr(v, "confidence", "high") == "high" for v in evaluation.violations)
    data["overall"] = overall
    data["recommendation"] = recommend(overall, high or bool(evaluation.blocking_violations()))
    return Evaluation.model_validate(data)


__all__ = [
    "FULL_PANEL",
    "PANELS",
    "PANEL_DIMENSIONS",
    "PANEL_TASKS",
    "PanelReply",
    "merge_panels",
    "recommend",
]
