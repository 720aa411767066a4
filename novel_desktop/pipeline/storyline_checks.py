"""Storyline checks in code (seed 004 §6.6.4 LS rules, §6.6.7 anti-contamination Layer 3; issue 16 point 3).

- **LS-005 leak**: the Summarizer lists the entities of other storylines the chapter mentions
  (``cross_references``) and rates the leak risk. Each entity is mapped to its storylines and checked against
  the chapter's whitelist: the chapter's own line, the volume schedule's active lines (without a schedule, the
  lines whose status is active) and, in a convergence chapter, the lines the event involves. An entity of a
  line outside the whitelist is a leak; with ``leak_risk`` high outside a convergence chapter every
  cross-line entity is one, and it blocks (LS-005 is hard: 强制修正). The issue quotes the sentence of the
  text that names the entity.
- **LS-003 convergence**: when the chapter is the last of a convergence event's range, each involved line
  must have appeared in the range (a chapter on that line, a cross-reference to it, or its name in a
  summary); one missing is reported, never blocking (LS-003 is soft).

How an entity maps to a storyline and what the whitelist holds: :mod:`novel_desktop.agents.storylines`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from novel_desktop.agents.context import NovelFacts
from novel_desktop.agents.storylines import StorylineMap, storyline_map
from novel_desktop.analysis.sentences import split_sentences
from novel_desktop.domain.gate import GateIssue
from novel_desktop.domain.summary import ChapterSummary
from novel_desktop.pipeline.rule_text import rule_texts
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore

if TYPE_CHECKING:
    from novel_desktop.pipeline.chapter_checks import CheckInput


def _sentence(text: str, names: list[str]) -> str:
    """The first sentence of ``text`` naming one of ``names`` (longest name first), or ""."""
    sentences = split_sentences(text)
    for name in sorted(names, key=len, reverse=True):
        for sentence in sentences:
            if name in sentence.text:
                return sentence.text
    return ""


# ---------------------------------------------------------------------------- LS-005
def leak_check(given: CheckInput) -> list[GateIssue]:
    """LS-005: cross-line entities outside the chapter's whitelist."""
    summary = given.summary
    if summary is None:
        return []
    facts = given.facts
    smap = storyline_map(facts, summary)
    high = summary.leak_risk == "high"
    forced = high and not smap.convergence
    rule = rule_texts(facts)["LS-005"]
    issues: list[GateIssue] = []
    refs = summary.references()
    for ref in refs:
        lines = smap.lines(ref)
        if smap.own and smap.own in lines:
            continue  # an entity of the chapter's own line (a shared character) is no leak
        outside = sorted(lines - smap.whitelist)
        if lines and not outside and not forced:
            continue
        if not lines and not forced:
            continue  # a line the novel's files do not know: only the Summarizer's high rating says leak
        where = "、".join(smap.describe(line) for line in (outside or sorted(lines)))
        if outside:
            said = f"「{ref.entity}」属于本章不活跃的故事线 {where}"
        else:
            said = f"「{ref.entity}」来自其他故事线{(' ' + where) if where else ''}，摘要判定泄漏风险高"
        place = "交汇事件章" if smap.convergence else "非交汇事件章"
        issues.append(
            GateIssue(
                "leak",
                "LS-005",
                f"跨线泄漏（{rule}）：{said}，本章是{place}",
                _sentence(given.text, smap.aliases(ref.entity)),
                blocking=forced,
            )
        )
    if forced and not refs:
        issues.append(
            GateIssue("leak", "LS-005", f"跨线泄漏（{rule}）：摘要判定泄漏风险高，但没有列出跨线实体，请核对")
        )
    return issues


# ---------------------------------------------------------------------------- LS-003
def convergence_summaries(store: NovelStore, facts: NovelFacts) -> dict[int, ChapterSummary]:
    """The committed summaries of the earlier chapters of every convergence event that ends at this chapter,
    each with its storyline (from the summary, else the chapter contract)."""
    out: dict[int, ChapterSummary] = {}
    for event in facts.convergences():
        rng = event["chapter_range"]
        if int(rng[1]) != facts.chapter:
            continue
        for c in range(int(rng[0]), facts.chapter):
            raw = store.summary(c)
            try:
                summary = ChapterSummary.from_markdown(raw or "", c)
            except ValueError:
                summary = ChapterSummary(chapter=c, text="")
            if not summary.storyline_id:
                contract = store.document(layout.contract_path(facts.volume, c)) or ""
                line = _contract_line(contract)
                if line:
                    summary = summary.model_copy(update={"storyline_id": line})
            out[c] = summary
    return out


def _contract_line(raw: str) -> str | None:
    try:
        data = json.loads(raw) if raw else {}
    except json.JSONDecodeError:
        return None
    line = data.get("storyline_id") if isinstance(data, dict) else None
    return str(line) if line else None


def _appeared(line: str, smap: StorylineMap, summaries: Iterable[ChapterSummary]) -> bool:
    name = smap.names.get(line, "")
    for summary in summaries:
        if summary.storyline_id == line:
            return True
        if any(line in smap.lines(ref) for ref in summary.references()):
            return True
        if line in summary.text or (len(name) >= 2 and name in summary.text):
            return True
    return False


def convergence_check(given: CheckInput) -> list[GateIssue]:
    """LS-003: at the last chapter of a convergence event, each involved line appeared in its range."""
    facts = given.facts
    smap = storyline_map(facts, given.summary)
    current = given.summary or ChapterSummary(chapter=facts.chapter, text="")
    if smap.own and not current.storyline_id:
        current = current.model_copy(update={"storyline_id": smap.own})
    summaries = [*given.earlier.values(), current]
    rule = rule_texts(facts)["LS-003"]
    issues = []
    for event in smap.convergence:
        first, last = (int(x) for x in event["chapter_range"])
        if last != facts.chapter:
            continue
        for line in [str(x) for x in event.get("involved_storylines") or []]:
            if _appeared(line, smap, summaries):
                continue
            trigger = f"（{event['trigger']}）" if event.get("trigger") else ""
            issues.append(
                GateIssue(
                    "convergence",
                    "LS-003",
                    f"交汇事件第 {first}-{last} 章{trigger}涉及的故事线 {smap.describe(line)} "
                    f"在这几章里没有出场（{rule}）",
                )
            )
    return issues


__all__ = ["convergence_check", "convergence_summaries", "leak_check"]
