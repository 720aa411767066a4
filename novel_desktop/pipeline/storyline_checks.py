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

How an entity maps to a storyline, from the novel's files: ``storylines.json`` (a line's POV characters and
affiliated factions, its optional ``entities`` list, and the shared characters and events of a
relationship, which belong to both lines), a character file's optional ``storyline_id`` / ``storylines``
(the character's aliases follow its name), and the Summarizer's own ``storyline_id:entity``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from novel_desktop.agents.context import FactsSource, NovelFacts
from novel_desktop.analysis.sentences import split_sentences
from novel_desktop.domain.gate import GateIssue
from novel_desktop.domain.summary import ChapterSummary, CrossReference
from novel_desktop.pipeline.rule_text import LS_003, LS_005
from novel_desktop.storage import layout

if TYPE_CHECKING:
    from novel_desktop.pipeline.chapter_checks import CheckInput


def _names(values: Any) -> list[str]:
    return [str(v).strip() for v in values or [] if str(v).strip()] if isinstance(values, list) else []


@dataclass(frozen=True)
class StorylineMap:
    """Entity name → the storylines it belongs to, and the chapter's whitelist of lines."""

    lines_of: Mapping[str, frozenset[str]]
    names: Mapping[str, str]
    statuses: Mapping[str, str]
    own: str | None
    whitelist: frozenset[str]
    #: The convergence events whose range covers the chapter.
    convergence: tuple[dict[str, Any], ...]

    def lines(self, ref: CrossReference) -> frozenset[str]:
        """The storylines of a cross-referenced entity: the one the Summarizer named plus every line the
        novel's files give the entity (or a name it contains, e.g. 许象乾 in 许象乾的密信)."""
        found = set(self.lines_of.get(ref.entity, ()))
        for name, lines in self.lines_of.items():
            if len(name) >= 2 and name in ref.entity:
                found |= lines
        if ref.storyline_id and ref.storyline_id in self.names:
            found.add(ref.storyline_id)
        return frozenset(found)

    def aliases(self, entity: str) -> list[str]:
        """Names to look for in the text: the entity and the known names it contains or is contained in."""
        out = [entity]
        for name in self.lines_of:
            if len(name) >= 2 and (name in entity or entity in name) and name not in out:
                out.append(name)
        return out

    def describe(self, line: str) -> str:
        name = self.names.get(line, "")
        status = self.statuses.get(line, "")
        detail = "，".join(x for x in (line, status) if x)
        return f"「{name}」（{detail}）" if name else f"「{line}」"


def storyline_map(facts: NovelFacts, summary: ChapterSummary | None = None) -> StorylineMap:
    """What the storyline checks know about chapter ``facts.chapter``."""
    lines_of: dict[str, set[str]] = {}

    def add(names: Iterable[str], *lines: str) -> None:
        for name in names:
            lines_of.setdefault(name, set()).update(lines)

    names: dict[str, str] = {}
    statuses: dict[str, str] = {}
    for line in facts.storylines:
        sid = str(line.get("id") or "")
        if not sid:
            continue
        names[sid] = str(line.get("name") or "")
        statuses[sid] = str(line.get("status") or "")
        add([*_names(line.get("pov_characters")), *_names(line.get("affiliated_factions"))], sid)
        add(_names(line.get("entities")), sid)
    for rel in (dict(r) for r in (facts.storyline_relationships)):
        ends = [str(rel.get("from") or ""), str(rel.get("to") or "")]
        bridges = rel.get("bridges") or {}
        add([*_names(bridges.get("shared_characters")), *_names(bridges.get("shared_events"))], *ends)
    for character in facts.characters:
        own_lines = {str(character.get("storyline_id") or "")} | set(_names(character.get("storylines")))
        own_lines.discard("")
        every = [str(character.get("name") or ""), str(character.get("id") or "")]
        every += _names(character.get("aliases"))
        every = [n for n in every if n]
        # A character named in a line's POV list (by name or slug) brings its aliases along.
        for name in every:
            own_lines |= lines_of.get(name, set())
        if own_lines:
            add(every, *own_lines)

    schedule = facts.schedule or {}
    scheduled = [a for a in schedule.get("active_storylines") or [] if isinstance(a, dict)]
    active = {str(a.get("storyline_id")) for a in scheduled}
    if not active:
        active = {sid for sid, status in statuses.items() if status == "active"}
    own = facts.storyline_id or (summary.storyline_id if summary else None)
    events = tuple(
        e
        for e in schedule.get("convergence_events") or []
        if isinstance(e, dict) and _covers(e.get("chapter_range"), facts.chapter)
    )
    involved = {str(x) for e in events for x in e.get("involved_storylines") or []}
    whitelist = frozenset(active | involved | ({own} if own else set()))
    frozen = {k: frozenset(v) for k, v in lines_of.items()}
    return StorylineMap(frozen, names, statuses, own, whitelist, events)


def _covers(rng: Any, chapter: int) -> bool:
    return isinstance(rng, list | tuple) and len(rng) == 2 and int(rng[0]) <= chapter <= int(rng[1])


def _sentence(text: str, names: list[str]) -> str:
    """The first sentence of ``text`` naming one of ``names`` (longest name first), or ""."""
    sentences = split_sentences(text)
    for name in sorted(names, key=len, reverse=True):
        for sentence in sentences:
            if name in sentence.text:
                return sentence.text
    return ""


def _rule(facts: NovelFacts, rule_id: str, default: str) -> str:
    found = next((r for r in facts.storyline_spec if r.get("id") == rule_id), None)
    return str(found.get("rule")) if found and found.get("rule") else default


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
    rule = _rule(facts, "LS-005", LS_005)
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
def convergence_summaries(store: FactsSource, facts: NovelFacts) -> dict[int, ChapterSummary]:
    """The committed summaries of the earlier chapters of every convergence event that ends at this chapter,
    each with its storyline (from the summary, else the chapter contract)."""
    out: dict[int, ChapterSummary] = {}
    for event in (facts.schedule or {}).get("convergence_events") or []:
        rng = event.get("chapter_range") if isinstance(event, dict) else None
        if rng is None or not _covers(rng, facts.chapter) or int(rng[1]) != facts.chapter:
            continue
        for c in range(int(rng[0]), facts.chapter):
            raw = store.document(layout.summary_path(c))
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
    rule = _rule(facts, "LS-003", LS_003)
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


__all__ = ["StorylineMap", "convergence_check", "convergence_summaries", "leak_check", "storyline_map"]
