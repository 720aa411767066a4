"""The ordinary judge as two panels that run at once (issue 18: the critical path).

One judge reply of ~1.7K tokens was about half the writer stage on the chapter's critical path. The pipeline's
judge is therefore asked twice at once over the same shared prefix (agents/review_prefix.py), each call for
half of the evaluation, and the halves are merged here into the one :class:`Evaluation` the gate reads:

- panel A (合规与情节): contract_verification, violations, and plot_logic, character, foreshadowing,
  storyline_coherence;
- panel B (文笔与读感): immersion, pacing, style_naturalness, emotional_impact, and new_ai_phrases.

Both give risk_flags, required_fixes, issues and strengths for their half. The overall and the
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

#: Each panel's dimensions; together exactly the eight.
PANEL_DIMENSIONS: Mapping[str, tuple[str, ...]] = {
    "A": ("plot_logic", "character", "foreshadowing", "storyline_coherence"),
    "B": ("immersion", "pacing", "style_naturalness", "emotional_impact"),
}
PANELS: tuple[str, ...] = tuple(PANEL_DIMENSIONS)

#: The ``judge_panel`` slot for one whole judgement (secondary judge, re-judging).
FULL_PANEL = (
    "完整评审（不分组）：输出完整的评估 JSON——contract_verification 覆盖任务单列出的每一条规则和目标，"
    "scores 覆盖全部 8 个维度，并给出 overall 与 recommendation。"
)

#: The ``judge_panel`` slot of each panel. The fake server and tests recognise a panel by 【评审组 X】.
PANEL_TASKS: Mapping[str, str] = {
    "A": (
        "【评审组 A】合规与情节组。本章由两个评审组同时评审，你只负责本组的一半：\n"
        "- contract_verification：覆盖任务单列出的每一条规则和目标（W-、C-、OBJ-、LS-）；\n"
        "- violations：按「合规检查」的约束逐条写；\n"
        "- scores 只打 plot_logic、character、foreshadowing、storyline_coherence 四个维度；\n"
        "- risk_flags、required_fixes、issues、strengths 只写与合规、情节、人物、伏笔、故事线有关的；\n"
        "- 不写 overall、recommendation、new_ai_phrases，其余四个维度由评审组 B 负责，不要打分。"
    ),
    "B": (
        "【评审组 B】文笔与读感组。本章由两个评审组同时评审，你只负责本组的一半：\n"
        "- scores 只打 immersion、pacing、style_naturalness、emotional_impact 四个维度"
        "（style_naturalness 以程序检测结果中的数字为据）；\n"
        "- new_ai_phrases：按约束列出新套话；\n"
        "- risk_flags、required_fixes、issues、strengths 只写与文笔、节奏、情感、AI 腔有关的；\n"
        "- contract_verification 写空对象 {}，violations 写空列表；不写 overall、recommendation；"
        "其余四个维度由评审组 A 负责，不要打分。"
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
    a: PanelReply, b: PanelReply, chapter: int, weights: Mapping[str, float] = DIMENSION_WEIGHTS
) -> Evaluation:
    """The one Evaluation of both panels: each dimension from its own panel (the other's as a fallback when
    a panel left one out), compliance from panel A, the lists of both; overall and recommendation computed.
    Raises ``ValueError`` (pydantic's) when a dimension is scored by neither panel."""
    own = {"A": a, "B": b}
    scores: dict[str, Any] = {}
    for panel, dims in PANEL_DIMENSIONS.items():
        other = own["B" if panel == "A" else "A"]
        for dim in dims:
            entry = own[panel].scores.get(dim, other.scores.get(dim))
            if entry is not None:
                scores[dim] = entry.to_json_dict()
    scores = {dim: scores[dim] for dim in DIMENSIONS if dim in scores}
    data: dict[str, Any] = {
        "chapter": chapter,
        "contract_verification": a.contract_verification or {},
        "scores": scores,
        "overall": 1,
        "recommendation": "revise",
        "violations": [v.to_json_dict() if isinstance(v, Violation) else v for v in a.violations],
        "risk_flags": _union(a.risk_flags, b.risk_flags),
        "required_fixes": [f.to_json_dict() for f in _union(a.required_fixes, b.required_fixes)],
        "issues": _union(a.issues, b.issues),
        "strengths": _union(a.strengths, b.strengths),
        "new_ai_phrases": _union(b.new_ai_phrases, a.new_ai_phrases),
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
