"""Which storylines a chapter may show, and which storyline an entity belongs to (seed 004 §6.6.7).

The whitelist of a chapter: its own line, the volume schedule's active lines (without a schedule, the lines
whose status is active) and, in a convergence chapter, the lines the event involves. An entity maps to its
storylines through the novel's files: ``storylines.json`` (a line's POV characters and affiliated factions,
its optional ``entities`` list, and the shared characters and events of a relationship, which belong to
both lines), a character file's optional ``storyline_id`` / ``storylines`` (the character's aliases follow
its name), and the Summarizer's own ``storyline_id:entity``. The storyline checks in code
(:mod:`novel_desktop.pipeline.storyline_checks`) and the Summarizer's and judge's prompts read the same map.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from novel_desktop.agents.context import NovelFacts
from novel_desktop.domain.summary import ChapterSummary, CrossReference


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
    events = facts.convergences()
    involved = {str(x) for e in events for x in e.get("involved_storylines") or []}
    whitelist = frozenset(active | involved | ({own} if own else set()))
    frozen = {k: frozenset(v) for k, v in lines_of.items()}
    return StorylineMap(frozen, names, statuses, own, whitelist, events)


def whitelist_text(facts: NovelFacts) -> str:
    """The chapter's active-line whitelist for a prompt: the lines it may show, the lines it may not (with
    their known entities), and whether it is a convergence chapter."""
    smap = storyline_map(facts)
    if not smap.names:
        return ""
    lines = [f"- 本章故事线：{smap.describe(smap.own) if smap.own else '未指定'}"]
    allowed = "、".join(smap.describe(line) for line in sorted(smap.whitelist))
    lines.append(f"- 本章可出场的故事线（白名单）：{allowed or '无'}")
    for line in sorted(set(smap.names) - smap.whitelist):
        entities = sorted(name for name, owners in smap.lines_of.items() if owners == {line})
        known = f"：{'、'.join(entities[:12])}" if entities else ""
        lines.append(f"- 不在白名单（本章不得出场）：{smap.describe(line)}{known}")
    if smap.convergence:
        for event in smap.convergence:
            first, last = event["chapter_range"]
            involved = "、".join(str(x) for x in event.get("involved_storylines") or [])
            lines.append(
                f"- 本章处于交汇事件第 {first}-{last} 章（涉及 {involved}），计划内的跨线出场不算泄漏"
            )
    else:
        lines.append("- 本章不是交汇事件章：白名单外故事线的实体出场即为 LS-005 泄漏")
    return "\n".join(lines)


__all__ = ["StorylineMap", "storyline_map", "whitelist_text"]
