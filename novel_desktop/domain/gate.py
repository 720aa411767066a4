"""The quality gate (seed 004 §6 质量门控 table, §6.5.6 double track, §8.2 CHAPTER_REWRITE).

Track 1 — contract compliance: a high-confidence violation forces a revision whatever the score.
Track 2 — the weighted score decides by the seed's table:

| overall   | action                                                     |
|-----------|------------------------------------------------------------|
| 4.0-5.0   | pass                                                       |
| 3.5-3.9   | StyleRefiner polishes once more, then pass                 |
| 3.0-3.4   | automatic revision (the stronger model)                    |
| 2.0-2.9   | the author decides (自动修订 / 手动改 / 接受)               |
| < 2.0     | forced full rewrite                                        |

At most two revisions per chapter: after the second, a chapter that would be revised again is committed with a
flag (§8.2 "最多 2 次修订后强制通过并标记").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

MAX_REVISIONS = 2
PASS_AT = 4.0
POLISH_AT = 3.5
REVISE_AT = 3.0
ASK_AT = 2.0


class GateAction(StrEnum):
    PASS = "pass"
    POLISH = "polish"
    REVISE = "revise"
    ASK_USER = "ask_user"
    REWRITE = "rewrite"
    FORCE_PASS = "force_pass"


@dataclass(frozen=True)
class GateIssue:
    """A finding of the checks in code (or of the judge, made readable) that the author sees at the gate.

    ``rule`` names what is broken (``L1-003``, ``LS-005``, ``LENGTH``, ``OPENING-HOOK``); ``message`` is the
    line the author reads (Chinese, with the rule's text); ``evidence`` the offending sentence when there is
    one. A ``blocking`` issue forces a revision whatever the score (seed 004 §6.5.6 track 1).
    """

    kind: str
    rule: str
    message: str
    evidence: str = ""
    blocking: bool = False

    def line(self) -> str:
        """The issue as one line of a report: ``[LS-005] … 原文：「…」``."""
        quote = f" 原文：「{self.evidence}」" if self.evidence else ""
        return f"[{self.rule}] {self.message}{quote}"

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "rule": self.rule,
            "message": self.message,
            "evidence": self.evidence,
            "blocking": self.blocking,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> GateIssue:
        return cls(
            str(data.get("kind", "")),
            str(data.get("rule", "")),
            str(data.get("message", "")),
            str(data.get("evidence", "")),
            bool(data.get("blocking", False)),
        )


@dataclass(frozen=True)
class GateDecision:
    """What the gate decided, why, whether the commit carries a quality flag, and the issues it saw."""

    action: GateAction
    reason: str
    flagged: bool = False
    issues: tuple[GateIssue, ...] = field(default=())

    @property
    def commits(self) -> bool:
        """Whether the chapter is committed after this decision (possibly after one more polish)."""
        return self.action in (GateAction.PASS, GateAction.POLISH, GateAction.FORCE_PASS)


def decide(
    overall: float,
    *,
    blocking_violations: int = 0,
    revisions: int = 0,
    issues: Sequence[GateIssue] = (),
) -> GateDecision:
    """The gate's decision for a judged chapter.

    ``overall`` is the weighted score that counts (the lower of two judges on key chapters),
    ``blocking_violations`` the number of high-confidence contract violations the judge listed, ``issues``
    what the checks in code found (a blocking one counts as a violation), ``revisions`` how many revisions
    this chapter has already had.
    """
    decision = _decide(
        overall,
        blocking_violations=blocking_violations + sum(1 for i in issues if i.blocking),
        revisions=revisions,
    )
    return GateDecision(decision.action, decision.reason, decision.flagged, tuple(issues))


def _decide(overall: float, *, blocking_violations: int, revisions: int) -> GateDecision:
    exhausted = revisions >= MAX_REVISIONS
    if blocking_violations:
        if exhausted:
            return GateDecision(
                GateAction.FORCE_PASS,
                f"仍有 {blocking_violations} 处硬性违规，但已修订 {revisions} 次，按规定强制提交并标记",
                flagged=True,
            )
        return GateDecision(GateAction.REVISE, f"有 {blocking_violations} 处高置信度契约违规，强制修订")
    if overall >= PASS_AT:
        return GateDecision(GateAction.PASS, f"评分 {overall:.2f} ≥ {PASS_AT}，直接通过")
    if overall >= POLISH_AT:
        return GateDecision(GateAction.POLISH, f"评分 {overall:.2f} 在 3.5-3.9，二次润色后通过")
    if overall >= REVISE_AT:
        if exhausted:
            return GateDecision(
                GateAction.FORCE_PASS,
                f"评分 {overall:.2f}，已修订 {revisions} 次，强制提交并标记",
                flagged=True,
            )
        return GateDecision(GateAction.REVISE, f"评分 {overall:.2f} 在 3.0-3.4，自动修订")
    if overall >= ASK_AT:
        return GateDecision(GateAction.ASK_USER, f"评分 {overall:.2f} 在 2.0-2.9，请作者决定处理方式")
    if exhausted:
        return GateDecision(
            GateAction.ASK_USER, f"评分 {overall:.2f} < 2.0，且已重写 {revisions} 次，请作者决定"
        )
    return GateDecision(GateAction.REWRITE, f"评分 {overall:.2f} < 2.0，强制全章重写")
