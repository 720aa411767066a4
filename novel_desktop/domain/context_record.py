"""What each agent's prompt held for one chapter: the context inspector's record (issue 16 point 7).

One :class:`ContextEntry` per model prompt of a chapter (agent + round): its sections (each filled template
slot, plus the template's own text), their token estimates and why each was included, the total, the budget
and what the budget dropped or trimmed. The entries of the chapter in flight are staged as
``logs/chapter-NNN-context.json``; the commit keeps them in the chapter's pipeline log under ``context``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: The agents an entry can name, in pipeline order, with their Chinese names (the CLI accepts both).
AGENT_NAMES: dict[str, str] = {
    "writer": "写作",
    "reviser": "修订",
    "summarizer": "摘要",
    "refiner": "润色",
    "judge": "评审",
    "judge2": "复审",
    "polish": "二次润色",
    "length": "字数调整",
}

#: What an agent's parts sent at once are called (the judge's panels, the summarizer's parts).
PANEL_GROUPS: dict[str, str] = {"judge": "评审组", "summarizer": "摘要组"}

#: The pseudo-section for the template's own words (role, rules, headings): what no slot filled.
TEMPLATE_SECTION = "template"


def agent_key(name: str) -> str | None:
    """The agent key for ``name`` (``writer`` or ``写作``), else None."""
    name = name.strip()
    if name in AGENT_NAMES:
        return name
    for key, chinese in AGENT_NAMES.items():
        if name == chinese:
            return key
    return None


@dataclass(frozen=True)
class ContextSection:
    """One part of a prompt: a filled slot (or the template text), its tokens and why it is there.

    ``status`` is ``""`` for a section sent as assembled, ``trimmed`` when the budget cut it and ``dropped``
    when the budget left it out (its tokens are then 0 and ``note`` says how many it had)."""

    slot: str
    label: str
    tokens: int
    why: str = ""
    status: str = ""
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"slot": self.slot, "label": self.label, "tokens": self.tokens, "why": self.why}
        if self.status:
            out["status"] = self.status
        if self.note:
            out["note"] = self.note
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ContextSection:
        return cls(
            str(data.get("slot", "")),
            str(data.get("label", "")),
            int(data.get("tokens") or 0),
            str(data.get("why", "")),
            str(data.get("status", "")),
            str(data.get("note", "")),
        )


@dataclass(frozen=True)
class ContextEntry:
    """One prompt of the chapter: which agent and round, the template, role and model, and its sections."""

    agent: str
    round: int
    template: str
    role: str
    model: str
    sections: tuple[ContextSection, ...]
    total_tokens: int
    budget: int | None = None
    recorded_at: str = ""
    #: The part of a call sent as several at once, each its own prompt: the judge's panel (``A`` / ``B`` /
    #: ``C``, agents/judge_panels.py) or the summarizer's part (``S`` / ``M``, agents/summary_parts.py);
    #: ``""`` for every other prompt (and every record written before the parts).
    panel: str = ""

    @property
    def dropped(self) -> tuple[ContextSection, ...]:
        """The sections the budget dropped or trimmed."""
        return tuple(s for s in self.sections if s.status)

    @property
    def heading(self) -> str:
        """``写作 writer`` or ``修订 reviser · 第 2 轮`` (without the judge's panel)."""
        name = f"{AGENT_NAMES.get(self.agent, self.agent)} {self.agent}"
        return name + (f" · 第 {self.round} 轮" if self.round else "")

    @property
    def panel_label(self) -> str:
        """``评审组 A`` (the judge's panel), ``摘要组 S`` (the summarizer's part), or ``""``."""
        if not self.panel:
            return ""
        return f"{PANEL_GROUPS.get(self.agent, '分组')} {self.panel}"

    @property
    def title(self) -> str:
        """``写作 writer``, ``修订 reviser · 第 2 轮``, ``评审 judge · 评审组 A`` or
        ``摘要 summarizer · 摘要组 S``."""
        return self.heading + (f" · {self.panel_label}" if self.panel else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "round": self.round,
            "template": self.template,
            "role": self.role,
            "model": self.model,
            "total_tokens": self.total_tokens,
            "budget": self.budget,
            "recorded_at": self.recorded_at,
            **({"panel": self.panel} if self.panel else {}),
            "sections": [s.to_json() for s in self.sections],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ContextEntry:
        budget = data.get("budget")
        return cls(
            str(data.get("agent", "")),
            int(data.get("round") or 0),
            str(data.get("template", "")),
            str(data.get("role", "")),
            str(data.get("model", "")),
            tuple(ContextSection.from_json(s) for s in data.get("sections") or () if isinstance(s, Mapping)),
            int(data.get("total_tokens") or 0),
            int(budget) if isinstance(budget, int) else None,
            str(data.get("recorded_at", "")),
            str(data.get("panel") or ""),
        )


def merge_entry(entries: Sequence[ContextEntry], entry: ContextEntry) -> list[ContextEntry]:
    """``entries`` with ``entry`` added, in pipeline order (round, then agent, then the agent's part); an
    earlier prompt of the same agent, round and part (a retried stage after a crash) is replaced, so the
    record shows what the model was last sent."""
    key = (entry.agent, entry.round, entry.panel)
    kept = [e for e in entries if (e.agent, e.round, e.panel) != key]
    return sorted([*kept, entry], key=_pipeline_order)


#: The order of a round's prompts in the pipeline (the judge's panels and judge2 run at once: judge, then
#: judge2; an agent's parts by their name).
_ORDER = ("writer", "reviser", "length", "summarizer", "refiner", "judge", "judge2", "polish")


#: The parts in the order they are sent: the judge's panels, the summarizer's parts (S before M).
_PANEL_ORDER = ("", "A", "B", "C", "S", "M")


def _pipeline_order(entry: ContextEntry) -> tuple[int, int, int, str]:
    agent = _ORDER.index(entry.agent) if entry.agent in _ORDER else len(_ORDER)
    panel = _PANEL_ORDER.index(entry.panel) if entry.panel in _PANEL_ORDER else len(_PANEL_ORDER)
    return entry.round, agent, panel, entry.panel


def entries_from_json(data: Any) -> list[ContextEntry]:
    """The entries of a stored record (a list of entry objects); anything else reads as none."""
    if not isinstance(data, list):
        return []
    return [ContextEntry.from_json(e) for e in data if isinstance(e, Mapping)]


@dataclass
class ChapterContext:
    """What the inspector shows for one chapter: its entries, whether it is in flight, and a note when there
    is nothing to show (a chapter written before the records existed)."""

    chapter: int
    entries: list[ContextEntry] = field(default_factory=list)
    in_flight: bool = False
    note: str = ""

    def for_agent(self, agent: str) -> list[ContextEntry]:
        return [e for e in self.entries if e.agent == agent]

    def to_json(self) -> dict[str, Any]:
        return {
            "chapter": self.chapter,
            "in_flight": self.in_flight,
            "note": self.note,
            "entries": [e.to_json() for e in self.entries],
        }
