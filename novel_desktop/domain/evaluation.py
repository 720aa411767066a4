"""The QualityJudge's verdict on a chapter (seed 004 §5.8, §6.5.6, §6.6.5, §9.2; seed 001 §10.4).

Stored as ``evaluations/chapter-NNN-eval.json``. The judge's own output (§5.8) and the stored file (§9.2)
differ in the shape of ``contract_verification``; both are accepted and kept as written.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import Discriminator, Field, Tag, field_validator

from novel_desktop.domain.common import SeedModel
from novel_desktop.domain.seed_fields import ChapterNo, Level, Score

#: The eight scoring dimensions and their weights (§6.6.5, v5 column); they sum to 1.0.
DIMENSION_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {
        "plot_logic": 0.18,
        "character": 0.18,
        "immersion": 0.15,
        "foreshadowing": 0.10,
        "pacing": 0.08,
        "style_naturalness": 0.15,
        "emotional_impact": 0.08,
        "storyline_coherence": 0.08,
    }
)

#: The eight dimensions as the author reads them (seed §6.6.5 order).
DIMENSION_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "plot_logic": "情节逻辑",
        "character": "角色塑造",
        "immersion": "沉浸感",
        "foreshadowing": "伏笔",
        "pacing": "节奏",
        "style_naturalness": "风格自然度",
        "emotional_impact": "情感冲击",
        "storyline_coherence": "故事线连贯",
    }
)

#: The dimension names in the order the seed lists them.
DIMENSIONS: tuple[str, ...] = tuple(DIMENSION_WEIGHTS)

#: The outcome of checking one contract rule. "violation" and "fail" both mean the rule was broken.
CheckStatus = Literal["pass", "fail", "violation"]


class Recommendation(StrEnum):
    """The judge's recommended next step for the chapter."""

    PASS = "pass"
    POLISH = "polish"
    REVISE = "revise"
    REWRITE = "rewrite"


class DimensionScore(SeedModel):
    """One dimension's score with the judge's reason and a quotation from the chapter."""

    score: Score
    weight: float | None = Field(default=None, ge=0, le=1)
    reason: str = ""
    evidence: str = ""


class ContractCheck(SeedModel):
    """One rule checked in the §9.2 shape (an entry of ``l1_checks`` ... ``ls_checks``)."""

    id: str
    status: CheckStatus
    confidence: Level | None = None
    detail: str | None = None


class ContractChecks(SeedModel):
    """``contract_verification`` as stored in §9.2: checks grouped by spec layer plus a summary flag.

    The seed leaves the entries' shape open; an entry is a :class:`ContractCheck` or a plain string.
    """

    l1_checks: list[ContractCheck | str] = Field(default_factory=list)
    l2_checks: list[ContractCheck | str] = Field(default_factory=list)
    l3_checks: list[ContractCheck | str] = Field(default_factory=list)
    ls_checks: list[ContractCheck | str] = Field(default_factory=list)
    has_violations: bool = False

    def results(self) -> dict[str, CheckStatus]:
        """Rule id → status for every structured check, across the four layers."""
        out: dict[str, CheckStatus] = {}
        for group in (self.l1_checks, self.l2_checks, self.l3_checks, self.ls_checks):
            for check in group:
                if isinstance(check, ContractCheck):
                    out[check.id] = check.status
        return out


_CHECKS_KEYS = frozenset({"l1_checks", "l2_checks", "l3_checks", "ls_checks", "has_violations"})


def _verification_shape(value: Any) -> str:
    # The §5.8 form maps rule ids to statuses; the §9.2 form is recognised by its layer keys.
    if isinstance(value, ContractChecks):
        return "layered"
    if isinstance(value, Mapping) and _CHECKS_KEYS & value.keys():
        return "layered"
    return "by_id"


#: ``contract_verification`` in either seed shape.
ContractVerification = Annotated[
    Annotated[ContractChecks, Tag("layered")] | Annotated[dict[str, CheckStatus], Tag("by_id")],
    Discriminator(_verification_shape),
]


class Violation(SeedModel):
    """A broken contract rule. Only ``confidence == "high"`` forces a revision (seed 001 §10.4)."""

    rule_id: str
    confidence: Level = "high"
    description: str = ""
    evidence: str = ""


class RequiredFix(SeedModel):
    """A targeted revision instruction: which passage, and what to change."""

    target: str
    instruction: str


class RiskFlag(NamedTuple):
    """A risk flag split into its kind (``character_speech_missing``) and detail (a name or an id)."""

    kind: str
    detail: str


def split_risk_flag(flag: str) -> RiskFlag:
    """Split ``"kind:detail"`` at the first colon (ASCII or full-width); a flag without one has no detail."""
    for index, ch in enumerate(flag):
        if ch in ":：":
            return RiskFlag(flag[:index].strip(), flag[index + 1 :].strip())
    return RiskFlag(flag.strip(), "")


#: The seed's soft LS rules (§6.6.4): reported, never blocking. A novel's own spec may mark others soft.
DEFAULT_SOFT_RULES: frozenset[str] = frozenset({"LS-002", "LS-003", "LS-004"})

_RULE_ID_RE = re.compile(r"^\s*\[?((?:W|C|OBJ|LS|L[123])-[A-Za-z0-9_-]*\d)")


def violation_rule_id(violation: Violation | str) -> str:
    """The rule a violation names: its ``rule_id``, or the id a bare string starts with ("" when none)."""
    if isinstance(violation, Violation):
        return violation.rule_id
    match = _RULE_ID_RE.match(violation)
    return match.group(1) if match else ""


def weighted_overall(
    scores: Mapping[str, DimensionScore | float], weights: Mapping[str, float] = DIMENSION_WEIGHTS
) -> float:
    """The weighted mean of the known dimensions present, rounded to 2 places, with ``weights`` (the seed's
    by default; a platform profile's, see ``domain/platforms.py``).

    Dimensions missing from ``scores`` are left out and the remaining weights renormalised, so a v4-style
    evaluation without ``storyline_coherence`` still gets a mean on the same 1-5 scale. Unknown keys are
    ignored.
    """
    total = 0.0
    weight_sum = 0.0
    for name, weight in weights.items():
        if name not in scores:
            continue
        entry = scores[name]
        value = entry.score if isinstance(entry, DimensionScore) else entry
        total += weight * value
        weight_sum += weight
    if weight_sum == 0:
        raise ValueError("no known dimension among the scores")
    return round(total / weight_sum, 2)


class Evaluation(SeedModel):
    """``evaluations/chapter-NNN-eval.json``: contract compliance plus eight weighted quality scores."""

    chapter: ChapterNo
    contract_verification: ContractVerification = Field(default_factory=ContractChecks)
    scores: dict[str, DimensionScore]
    overall: Score
    recommendation: Recommendation
    violations: list[Violation | str] = Field(default_factory=list)
    #: Structured flags such as "character_speech_missing:林枫"; see :func:`split_risk_flag`.
    risk_flags: list[str] = Field(default_factory=list)
    required_fixes: list[RequiredFix] = Field(default_factory=list)
    issues: list[str] = Field(default_factory=list)
    strengths: list[str] = Field(default_factory=list)
    #: Machine-like phrases the judge found that the novel's AI-phrase list lacks (seed §7 黑名单维护); at
    #: commit they become proposals the author accepts or rejects.
    new_ai_phrases: list[str] = Field(default_factory=list)

    @field_validator("scores")
    @classmethod
    def _all_dimensions_scored(cls, value: dict[str, DimensionScore]) -> dict[str, DimensionScore]:
        # A missing dimension would silently lower or raise the mean the gate decides on.
        missing = [name for name in DIMENSIONS if name not in value]
        if missing:
            raise ValueError(f"missing score dimensions: {', '.join(missing)}")
        return value

    def computed_overall(self, weights: Mapping[str, float] = DIMENSION_WEIGHTS) -> float:
        """The weighted mean recomputed with ``weights`` (the judge's own arithmetic can drift)."""
        return weighted_overall(self.scores, weights)

    def contract_results(self) -> dict[str, CheckStatus]:
        """Rule id → status, whichever shape ``contract_verification`` was written in."""
        verification = self.contract_verification
        if isinstance(verification, ContractChecks):
            return verification.results()
        return dict(verification)

    def blocking_violations(self, soft_rules: Collection[str] | None = None) -> list[Violation | str]:
        """The violations that force a revision whatever the score (seed 004 §6.5.6 track 1, 001 §10.4).

        The union, without duplicates, of the listed ``violations`` and the broken rules recorded only in
        ``contract_verification`` (either shape): L1 world rules, L2 character contracts, L3 chapter
        objectives and LS rules alike. Only high confidence blocks; a bare string, a by-id status and a
        layered entry without a confidence carry none and count. A soft rule (``soft_rules``: the novel's
        soft world and LS rules; by default the seed's soft LS rules) is reported, never blocking (§6.6.4).
        A check found only in ``contract_verification`` becomes a :class:`Violation` with its detail.
        """
        soft = DEFAULT_SOFT_RULES if soft_rules is None else frozenset(soft_rules)
        out: list[Violation | str] = []
        seen: set[str] = set()
        for violation in self.violations:
            rule = violation_rule_id(violation)
            if rule in soft or (isinstance(violation, Violation) and violation.confidence != "high"):
                continue
            out.append(violation)
            if rule:
                seen.add(rule)
        for check in self._broken_checks():
            if check.id in soft or check.id in seen or check.confidence not in (None, "high"):
                continue
            seen.add(check.id)
            out.append(Violation(rule_id=check.id, confidence="high", description=check.detail or ""))
        return out

    def _broken_checks(self) -> list[ContractCheck]:
        verification = self.contract_verification
        if isinstance(verification, ContractChecks):
            groups = (verification.l1_checks, verification.l2_checks, verification.l3_checks)
            entries = [c for group in (*groups, verification.ls_checks) for c in group]
            return [c for c in entries if isinstance(c, ContractCheck) and c.status != "pass"]
        broken = [(rule, status) for rule, status in verification.items() if status != "pass"]
        return [ContractCheck(id=rule, status=status) for rule, status in broken]

    @property
    def has_violations(self) -> bool:
        """True when any rule failed: a listed violation, a failed check, or the §9.2 summary flag."""
        if self.violations:
            return True
        verification = self.contract_verification
        if isinstance(verification, ContractChecks) and verification.has_violations:
            return True
        return any(status != "pass" for status in self.contract_results().values())
