"""The figures of the analytics view (统计): pass rate, the most frequent judge issues, tokens and cost per
chapter, and words written per day — read from what the novel already holds, as plain data.

- Pass rate: of the chapters the pipeline committed (those with a pipeline log; imported chapters have none),
  the share whose log's ``gate_decision`` is not ``force_pass`` (接受 / 直接提交 at the gate, or a pass the
  pipeline flagged with a quality problem).
- Judge issues: every pipeline log's ``gate_issues`` (checks in code, by ``rule``, else ``kind``) and
  ``gate_violations`` (the judge's blocking violations, by the rule id the line starts with), counted once
  per chapter per rule; the ten most frequent.
- Tokens and cost per chapter: the cost ledger (every model call attributed to the chapter).
- Words per day: the 字数 of the chapter versions committed on each local calendar day. A pipeline commit
  counts its final text's 字数; a hand edit (``manual`` revision) counts what it added to the chapter
  (字数 after minus before, never below zero). Imported texts are not counted.

Every read is a short SQLite query through the :class:`ProjectController` (GUI thread).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from novel_desktop.controllers.costs import chapter_costs
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.evaluation import violation_rule_id
from novel_desktop.domain.ledger import CostTotals

__all__ = ["Analytics", "DayWords", "IssueCount", "analytics"]

#: How many of the most frequent issues the view lists.
TOP_ISSUES = 10
#: Revision kinds that are not written on this desk (not counted in words per day).
_NOT_WRITTEN = frozenset({"imported"})
#: The revision kind of the author's hand edit.
_MANUAL = "manual"


@dataclass(frozen=True)
class IssueCount:
    """A rule (or issue kind) and in how many committed chapters the gate found it."""

    rule: str
    chapters: int
    #: One of the lines found, for the author to recognise the rule.
    example: str


@dataclass(frozen=True)
class DayWords:
    """字数 committed on one calendar day: by the pipeline and by hand edits."""

    day: date
    pipeline: int = 0
    manual: int = 0

    @property
    def total(self) -> int:
        return self.pipeline + self.manual


@dataclass
class Analytics:
    """What the analytics view shows of the open novel."""

    #: Chapters the pipeline committed (with a pipeline log), and of them those forced through the gate.
    committed: list[int] = field(default_factory=list)
    forced: list[int] = field(default_factory=list)
    issues: list[IssueCount] = field(default_factory=list)
    costs: dict[int, CostTotals] = field(default_factory=dict)
    days: list[DayWords] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return len(self.committed) - len(self.forced)

    @property
    def pass_rate(self) -> float | None:
        """Chapters committed without a forced pass over all committed by the pipeline (None: none yet)."""
        return self.passed / len(self.committed) if self.committed else None

    @property
    def empty(self) -> bool:
        return not (self.committed or self.issues or self.costs or self.days)


def _issue_keys(log: dict[str, Any]) -> dict[str, str]:
    """The rules a chapter's gate found (rule → one line that shows it)."""
    found: dict[str, str] = {}
    for issue in log.get("gate_issues") or []:
        if isinstance(issue, dict):
            key = str(issue.get("rule") or issue.get("kind") or "?")
            found.setdefault(key, str(issue.get("message") or key))
    for line in log.get("gate_violations") or []:
        if isinstance(line, str) and line.strip():
            found.setdefault(violation_rule_id(line.strip()) or "其他", line.strip())
    return found


def _local_day(stamp: str) -> date | None:
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return (moment.astimezone() if moment.tzinfo else moment).date()


def analytics(project: ProjectController) -> Analytics:
    """The open novel's figures (nothing open: an empty :class:`Analytics`)."""
    result = Analytics()
    if not project.is_open:
        return result
    issues: Counter[str] = Counter()
    examples: dict[str, str] = {}
    pipeline: Counter[date] = Counter()
    manual: Counter[date] = Counter()
    with project.reading():
        chapters = project.chapters()
        for info in chapters:
            log = project.pipeline_log(info.number)
            if isinstance(log, dict):
                result.committed.append(info.number)
                if log.get("gate_decision") == "force_pass":
                    result.forced.append(info.number)
                for key, line in _issue_keys(log).items():
                    issues[key] += 1
                    examples.setdefault(key, line)
            _count_words(project, info.number, pipeline, manual)
        result.costs = {n: c for n, c in sorted(chapter_costs(project).items()) if c.calls}
    ranked = sorted(issues.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_ISSUES]
    result.issues = [IssueCount(rule, count, examples[rule]) for rule, count in ranked]
    result.days = [
        DayWords(day, pipeline.get(day, 0), manual.get(day, 0)) for day in sorted(set(pipeline) | set(manual))
    ]
    return result


def _count_words(
    project: ProjectController, number: int, pipeline: Counter[date], manual: Counter[date]
) -> None:
    """Add chapter ``number``'s committed versions to the day counters (see the module docstring)."""
    revisions = project.revisions(number)
    previous = 0
    for index, rev in enumerate(revisions):
        day = _local_day(rev.created_at)
        if rev.kind == _MANUAL:
            if day is not None:
                manual[day] += max(0, rev.chars - previous)
        elif rev.kind not in _NOT_WRITTEN:
            # A commit keeps its draft, revisions and final text with one timestamp: the last one is final.
            following = revisions[index + 1] if index + 1 < len(revisions) else None
            final = following is None or following.created_at != rev.created_at or following.kind == _MANUAL
            if final and day is not None:
                pipeline[day] += rev.chars
        previous = rev.chars
