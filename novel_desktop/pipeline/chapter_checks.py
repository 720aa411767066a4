"""The checks in code that every judged chapter goes through before the gate decides (issue 16).

The judge's prompt asks for a lot; these do not rely on the model obeying it. Each check reads one
:class:`CheckInput` (the staged text, the evaluation that counts, the staged summary and the novel's facts
for the chapter) and returns :class:`~novel_desktop.domain.gate.GateIssue` values: a blocking issue forces a
revision whatever the score, the others are shown to the author with the verdict.

A check is a plain function registered in :data:`CHECKS`; the built-in pipeline and the executor protocol both
run them through :func:`run_checks` (via :func:`novel_desktop.pipeline.verdict.staged_verdict`). A check must
be pure and cheap (no model call; it runs again each time the gate is asked).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from novel_desktop.agents.context import FactsSource, NovelFacts, load_facts
from novel_desktop.domain.evaluation import Evaluation
from novel_desktop.domain.gate import GateIssue
from novel_desktop.domain.summary import ChapterSummary

# Registered checks (one import each; the modules import CheckInput only for typing).
from novel_desktop.pipeline.platform_checks import length_issues, opening_issues
from novel_desktop.pipeline.storyline_checks import convergence_check, convergence_summaries, leak_check
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore


@dataclass(frozen=True)
class CheckInput:
    """What a check reads about one judged chapter."""

    chapter: int
    text: str
    evaluation: Evaluation
    #: The Summarizer's staged summary of this text (cross_references, leak_risk), None when it failed.
    summary: ChapterSummary | None
    facts: NovelFacts
    #: The committed summaries of the earlier chapters of a convergence event ending at this chapter.
    earlier: Mapping[int, ChapterSummary] = field(default_factory=dict)


Check = Callable[[CheckInput], list[GateIssue]]

#: Every check, in the order its issues are listed.
CHECKS: list[Check] = [
    length_issues,
    opening_issues,
    leak_check,
    convergence_check,
]


def _staged_summary(store: NovelStore, n: int) -> ChapterSummary | None:
    raw = store.staging(layout.summary_path(n))
    if not raw:
        return None
    try:
        return ChapterSummary.from_markdown(raw, n)
    except ValueError:
        return None


def check_input(
    store: NovelStore, n: int, text: str, evaluation: Evaluation, facts: NovelFacts | None = None
) -> CheckInput:
    """The input of the checks for chapter ``n`` (synchronous; run it in a worker thread); ``facts``: the
    chapter's, already read (else read here)."""
    if facts is None or facts.chapter != n:
        source: FactsSource = store
        facts = load_facts(source, n)
    summary = _staged_summary(store, n)
    return CheckInput(n, text, evaluation, summary, facts, convergence_summaries(store, facts))


def run_checks(store: NovelStore, n: int, text: str, evaluation: Evaluation) -> list[GateIssue]:
    """Every registered check on chapter ``n``'s staged ``text``; duplicates dropped, order kept."""
    if not CHECKS:
        return []
    return run_checks_on(check_input(store, n, text, evaluation))


def run_checks_on(given: CheckInput) -> list[GateIssue]:
    """Every registered check on an input already read; duplicates dropped, order kept."""
    issues: list[GateIssue] = []
    for check in CHECKS:
        for issue in check(given):
            if issue not in issues:
                issues.append(issue)
    return issues


__all__ = ["CHECKS", "Check", "CheckInput", "check_input", "run_checks", "run_checks_on"]
