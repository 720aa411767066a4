"""The quality gate on a staged chapter: the judges' verdict, the checks in code, the decision.

One reader for the built-in chapter pipeline and the executor protocol (``novel next / advance``), so both
decide alike: the lower of two judges counts on key chapters, every check of
:mod:`novel_desktop.pipeline.chapter_checks` runs on the staged text, and a blocking issue forces a revision
whatever the score (seed 004 §6.5.6). The gate's bookkeeping (revisions, scores, stages) lives in the
chapter's staged notes, also read here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from novel_desktop.agents.context import NovelFacts
from novel_desktop.agents.ports import RevisionOrder
from novel_desktop.domain.common import iso_now
from novel_desktop.domain.evaluation import Evaluation, Violation, violation_rule_id
from novel_desktop.domain.gate import GateDecision, GateIssue, decide
from novel_desktop.domain.novel_ask import QuestionSpec
from novel_desktop.pipeline.chapter_checks import check_input, run_checks_on
from novel_desktop.pipeline.rule_text import rule_texts, soft_rule_ids
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore, content_hash

# Staging keys of our own besides the seed's: the secondary judge's verdict and the gate's bookkeeping.
SECONDARY_EVAL = "evaluations/chapter-{n}-eval-secondary.json"
GATE_NOTES = "state/chapter-{n}-gate.json"


# ---------------------------------------------------------------------------- the staged notes
def staged_notes(store: NovelStore, n: int) -> dict[str, Any]:
    """The gate's bookkeeping of chapter ``n`` in staging, with its defaults filled in."""
    raw = store.staging(GATE_NOTES.format(n=layout.num(n)))
    data: dict[str, Any] = json.loads(raw) if raw else {}
    data.setdefault("revisions", 0)
    data.setdefault("scores", [])
    data.setdefault("stages", [])
    data.setdefault("started_at", iso_now())
    data.setdefault("polished", False)
    data.setdefault("manual_asks", 0)
    return data


def save_staged_notes(store: NovelStore, n: int, notes: dict[str, Any]) -> None:
    store.put_staging(GATE_NOTES.format(n=layout.num(n)), json.dumps(notes, ensure_ascii=False), chapter=n)


def awaiting_unchanged(notes: dict[str, Any], text: str | None) -> bool:
    """Whether the author chose 手动改 on this very text and has not replaced it since: the low-score question
    is then not asked again (no model call either); the run stops with :func:`waiting_message`."""
    mark = notes.get("awaiting_author")
    return bool(mark) and text is not None and mark == content_hash(text)


def waiting_message(n: int) -> str:
    """What a run says when chapter ``n`` waits for the author's edit."""
    return (
        f"第 {n} 章在等你修改（novel draft 查看，--replace 文件 换成你的改稿，--commit 直接提交；"
        "窗口里在章节树打开它）"
    )


# ---------------------------------------------------------------------------- the verdict
def parse_evaluation(raw: str | None) -> Evaluation | None:
    """A staged evaluation file, or None when it is missing or not a valid evaluation."""
    if not raw:
        return None
    try:
        return Evaluation.model_validate_json(raw)
    except ValidationError:
        return None


def _score(evaluation: Evaluation) -> float:
    return float(evaluation.overall if evaluation.overall is not None else evaluation.computed_overall())


def violation_line(violation: Violation | str, rules: Mapping[str, str] | None = None) -> str:
    """One violation as the author and the reviser read it: the rule id, the rule's text in （）, what the
    judge found and the quoted passage, e.g. ``W-001（灵力不可凭空恢复）：一夜之间灵力全满 原文：「…」``."""
    rule = violation_rule_id(violation)
    text = (rules or {}).get(rule, "") if rule else ""
    if isinstance(violation, str):
        if text and text not in violation:
            rest = violation.strip().removeprefix("[").strip()[len(rule) :].lstrip("]：: ")
            return f"{rule}（{text}）：{rest}".rstrip("：")
        return violation.strip()
    head = f"{violation.rule_id}（{text}）" if text else violation.rule_id
    line = f"{head}：{violation.description.strip()}" if violation.description.strip() else head
    if violation.evidence.strip():
        line += f" 原文：「{violation.evidence.strip()}」"
    return line


@dataclass(frozen=True)
class Verdict:
    """The gate on a staged chapter: the evaluation that counts, every judge's score, what the checks in code
    found, and the decision."""

    evaluation: Evaluation
    scores: list[float]
    issues: list[GateIssue]
    decision: GateDecision
    #: Rule id → the rule's text (world rules, character contracts, chapter objectives, LS spec).
    rules: Mapping[str, str] = field(default_factory=dict)
    #: The novel's soft rules: reported, never forcing a revision.
    soft_rules: frozenset[str] | None = None

    @property
    def score(self) -> float:
        return min(self.scores)

    def blocking_violations(self) -> list[Violation | str]:
        """The judge's findings that force a revision (listed or only in contract_verification)."""
        return self.evaluation.blocking_violations(self.soft_rules)

    def judge_violation_lines(self) -> list[str]:
        """The judge's blocking violations, each with its rule's text (the pipeline log's
        ``gate_violations``; the checks in code are in ``gate_issues``)."""
        return list(dict.fromkeys(violation_line(v, self.rules) for v in self.blocking_violations()))

    def violation_lines(self) -> list[str]:
        """Every blocking finding (the judge's high-confidence violations, the blocking issues found in
        code), one readable line each with the rule it breaks and the rule's text."""
        lines = self.judge_violation_lines()
        lines += [i.line() for i in self.issues if i.blocking]
        return list(dict.fromkeys(lines))

    def report_lines(self) -> list[str]:
        """What the author is shown at the gate: every blocking violation with its rule, then the other
        issues the checks in code found."""
        lines = self.violation_lines()
        lines += [i.line() for i in self.issues if not i.blocking]
        return list(dict.fromkeys(lines))

    def revision_order(self, round_: int) -> RevisionOrder:
        """What the reviser of revision round ``round_`` is told."""
        fixes = [f"{fix.target}：{fix.instruction}" for fix in self.evaluation.required_fixes]
        return RevisionOrder(round_, tuple(self.violation_lines()), tuple(fixes))


def low_score_spec(n: int, verdict: Verdict) -> QuestionSpec:
    """Seed §6 用户审核点 "低分章节": 自动修订 / 手动改 / 接受, as a NOVEL_ASK question (the window, the CLI
    and the executor protocol ask the same)."""
    # Each violation with the rule it breaks first, then the judge's main issues and the other findings.
    found = list(
        dict.fromkeys([*verdict.violation_lines(), *verdict.evaluation.issues[:3], *verdict.report_lines()])
    )
    issues = "；".join(found) if found else verdict.decision.reason
    return QuestionSpec.model_validate(
        {
            "version": 1,
            "topic": f"chapter {n} low score",
            "questions": [
                {
                    "id": "low_score_action",
                    "header": f"第{n}章低分",
                    "question": (
                        f"第 {n} 章评分偏低（{verdict.decision.reason}）。主要问题：{issues}。怎么处理？"
                    ),
                    "kind": "single_choice",
                    "required": True,
                    "options": [
                        {"label": "自动修订", "description": "推荐：按评审意见由更强的模型修订"},
                        {"label": "手动改", "description": "章节留在暂存区，你改好后再评审"},
                        {"label": "接受", "description": "按现状提交，并标记质量问题"},
                    ],
                    "default": "自动修订",
                }
            ],
        }
    )


def staged_verdict(
    store: NovelStore,
    n: int,
    *,
    revisions: int,
    text: str | None = None,
    secondary: bool = True,
    facts: NovelFacts | None = None,
) -> Verdict | None:
    """The gate's verdict on chapter ``n``'s staged evaluation(s) and text, or None before it was judged.

    ``secondary`` False ignores a staged second verdict (a chapter that is not a key chapter any more);
    ``facts``: the chapter's facts as its agents read them (else read from the novel).
    """
    primary = parse_evaluation(store.staging(layout.evaluation_path(n)))
    if primary is None:
        return None
    evaluation, scores = primary, [_score(primary)]
    second = parse_evaluation(store.staging(SECONDARY_EVAL.format(n=layout.num(n)))) if secondary else None
    if second is not None:
        scores.append(_score(second))
        if scores[1] < scores[0]:
            evaluation = second
    if text is None:
        text = store.staging(layout.chapter_path(n)) or ""
    given = check_input(store, n, text, evaluation, facts)
    issues = run_checks_on(given)
    soft = soft_rule_ids(given.facts)
    decision = decide(
        min(scores),
        blocking_violations=len(evaluation.blocking_violations(soft)),
        revisions=revisions,
        issues=issues,
    )
    return Verdict(evaluation, scores, issues, decision, rule_texts(given.facts), soft)


__all__ = [
    "GATE_NOTES",
    "SECONDARY_EVAL",
    "Verdict",
    "awaiting_unchanged",
    "low_score_spec",
    "parse_evaluation",
    "save_staged_notes",
    "staged_notes",
    "staged_verdict",
    "violation_line",
    "waiting_message",
]
