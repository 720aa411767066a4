"""The planning agents over the LLM client: WorldBuilder, CharacterWeaver, PlotArchitect, StyleAnalyzer and
ConsistencyAuditor (seed 004 §5.1-§5.3, §5.6, §6 Layer 1-2).

Each agent renders its template (``prompts/``), calls its role's model through :func:`call_structured` and
parses the reply into domain models. Agents never ask the author (001 §10.5): a reply of type
``requires_user_decision`` is parsed as such (:meth:`PlanReply.decision`) and the pipeline turns it into a
NOVEL_ASK question. Context builders (``*_context``) read the novel synchronously; call them in a thread.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal, TypeVar

from pydantic import Field, model_validator

from novel_desktop.agents.calls import structured_call
from novel_desktop.agents.context import estimate_tokens, trim_to_tokens
from novel_desktop.agents.ports import AgentResult
from novel_desktop.agents.templates import render_template
from novel_desktop.domain.agent_returns import RequiresUserDecision
from novel_desktop.domain.characters import Character, Relationship
from novel_desktop.domain.common import SeedModel
from novel_desktop.domain.contract_lifecycle import contracts_in_force
from novel_desktop.domain.proposals import VolumePlan
from novel_desktop.domain.storylines import StorylinesFile
from novel_desktop.domain.style import StyleProfile
from novel_desktop.domain.world import WorldRule
from novel_desktop.llm.client import LLMClient
from novel_desktop.llm.roles import AgentRole
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore

M = TypeVar("M", bound=SeedModel)

RULES = "world/rules.json"
STORYLINES = "storylines/storylines.json"
RELATIONSHIPS = "characters/relationships.json"
_DOCS_TOKENS = 6_000
#: The summaries one ConsistencyAuditor call reads; a longer volume is audited in windows.
AUDIT_SUMMARY_TOKENS = 12_000


# ---------------------------------------------------------------------------- replies
class _DecisionFields(SeedModel):
    """The ``requires_user_decision`` fields any planning reply may carry instead of a result."""

    type: str | None = None
    recommendation: str = ""
    options: list[str] = Field(default_factory=list)
    rationale: str = ""
    data: dict[str, Any] = Field(default_factory=dict)

    @property
    def is_decision(self) -> bool:
        return self.type == "requires_user_decision"

    def decision(self) -> RequiresUserDecision | None:
        """The reply as a :class:`RequiresUserDecision`, or None when it is a plain result."""
        if not self.is_decision:
            return None
        return RequiresUserDecision(
            recommendation=self.recommendation or (self.options[0] if self.options else ""),
            options=self.options or ["确认"],
            rationale=self.rationale,
            data=self.data,
        )


class WorldDocument(SeedModel):
    file: str
    content: str


class ReplyRules(SeedModel):
    """The rules a WorldBuilder reply lists. An incremental update may reuse taken ids (the merge renumbers
    them), so unlike :class:`WorldRules` there is no uniqueness check here."""

    rules: list[WorldRule] = Field(default_factory=list)


class WorldReply(_DecisionFields):
    """prompts/world_builder.md: rules, narrative documents and (at initialisation) storylines."""

    rules: ReplyRules | None = None
    documents: list[WorldDocument] = Field(default_factory=list)
    storylines: StorylinesFile | None = None
    changed_rule_ids: list[str] = Field(default_factory=list)
    changelog: str = ""

    @model_validator(mode="after")
    def _result_or_decision(self) -> WorldReply:
        if not self.is_decision and self.rules is None:
            raise ValueError("缺少 rules（或 type=requires_user_decision）")
        return self


class CharacterReply(_DecisionFields):
    """prompts/character_weaver.md: new or changed characters and relationships."""

    characters: list[Character] = Field(default_factory=list)
    relationships: list[Relationship] = Field(default_factory=list)
    changelog: str = ""

    @model_validator(mode="after")
    def _result_or_decision(self) -> CharacterReply:
        if not self.is_decision and not self.characters:
            raise ValueError("缺少 characters（或 type=requires_user_decision）")
        return self


class PlanReply(_DecisionFields):
    """prompts/plot_architect.md: always a decision whose ``data`` is the :class:`VolumePlan`."""

    @model_validator(mode="after")
    def _has_plan(self) -> PlanReply:
        source = self.data if self.is_decision else (self.model_extra or {})
        VolumePlan.model_validate(source)
        return self

    def plan(self) -> VolumePlan:
        """The plan, whether the model wrapped it in a decision or (against the template) not."""
        return VolumePlan.model_validate(self.data if self.is_decision else (self.model_extra or {}))


class AuditFinding(SeedModel):
    """One continuity problem the auditor found (prompts/consistency_auditor.md)."""

    chapter: int | None = None
    severity: Literal["high", "medium", "low"] = "low"
    type: str = ""
    description: str = ""
    evidence: str = ""
    suggestion: str = ""


class AuditReply(SeedModel):
    findings: list[AuditFinding] = Field(default_factory=list)


# ---------------------------------------------------------------------------- context builders (sync)
def _compact(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")) if data else ""


def docs_text(store: NovelStore, prefix: str, *, suffix: str = ".md", budget: int = _DOCS_TOKENS) -> str:
    """The documents under ``prefix`` (changelogs left out) as one text within a token budget."""
    parts = []
    for path in store.list_documents(prefix):
        if path.endswith(suffix) and not path.endswith("changelog.md"):
            parts.append(f"## {path}\n{(store.document(path) or '').strip()}")
    return trim_to_tokens("\n\n".join(parts), budget, keep="start")


def active_characters(store: NovelStore) -> list[dict[str, Any]]:
    """Every ``characters/active/*.json`` profile (its id filled in from the file name)."""
    out = []
    for path in store.list_documents("characters/active/"):
        if path.endswith(".json"):
            data = store.document_json(path)
            if isinstance(data, dict):
                data.setdefault("id", path.rsplit("/", 1)[-1].removesuffix(".json"))
                out.append(data)
    return out


def characters_text(characters: Sequence[dict[str, Any]], chapter: int | None = None) -> str:
    """Profiles with their L2 contracts, one block per character: the versions in force for ``chapter``
    (seed §6.5.3), or every version not deprecated when no chapter is given."""
    parts = []
    for ch in characters:
        head = f"{ch.get('name')}（{ch.get('id')}，{ch.get('role') or '角色'}）：{ch.get('description', '')}"
        if chapter is not None:
            shown = contracts_in_force(ch, chapter)
        else:
            shown = [c for c in ch.get("contracts") or [] if c.get("status") != "deprecated"]
        lines = [f"  - {c.get('id')}（{c.get('type')}）：{c.get('rule')}" for c in shown]
        parts.append("\n".join([head, *lines]))
    return "\n".join(parts)


def rules_text(store: NovelStore) -> str:
    """The L1 rules, one line each with id and strength."""
    doc = store.document_json(RULES) or {}
    return "\n".join(
        f"- {r.get('id')}（{r.get('constraint_type', 'hard')}）：{r.get('rule')}"
        for r in doc.get("rules") or []
    )


def world_context(store: NovelStore, mode: str, request: str) -> dict[str, str]:
    """Slots of prompts/world_builder.md (``轻量初始化`` or ``增量更新``)."""
    return {
        "project_brief": store.document("brief.md") or "",
        "research_notes": docs_text(store, "research/"),
        "mode": mode,
        "existing_world_docs": docs_text(store, "world/"),
        "existing_rules": store.document(RULES) or "",
        "existing_storylines": store.document(STORYLINES) or "",
        "update_request": request,
    }


def character_context(
    store: NovelStore, mode: str, request: str, *, outline_basis: str = ""
) -> dict[str, str]:
    """Slots of prompts/character_weaver.md."""
    cp = store.checkpoint()
    return {
        "project_brief": store.document("brief.md") or "",
        "world_rules": rules_text(store),
        "world_docs": docs_text(store, "world/"),
        "mode": mode,
        "current_chapter": str(cp.get("last_completed_chapter") or 0),
        "existing_characters": characters_text(
            active_characters(store), int(cp.get("last_completed_chapter") or 0) + 1
        ),
        "relationships": store.document(RELATIONSHIPS) or "",
        "outline_basis": outline_basis,
        "update_request": request,
    }


def plot_context(
    store: NovelStore, volume: int, start: int, end: int, direction: str, prev_review: str
) -> dict[str, str]:
    """Slots of prompts/plot_architect.md for chapters ``start``-``end`` of ``volume``."""
    state = store.current_state()
    fs = store.document_json(layout.GLOBAL_FORESHADOWING) or {}
    return {
        "project_brief": store.document("brief.md") or "",
        "world_rules": rules_text(store),
        "world_docs": docs_text(store, "world/"),
        "storylines": store.document(STORYLINES) or "",
        "volume_num": str(volume),
        "chapter_start": str(start),
        "chapter_end": str(end),
        "author_direction": direction,
        "prev_volume_review": prev_review,
        "active_characters": characters_text(active_characters(store), start),
        "current_state": trim_to_tokens(_compact(state), 4_000, keep="start"),
        "global_foreshadowing": trim_to_tokens(_compact(fs.get("foreshadowing") or []), 2_000, keep="start"),
    }


def style_context(
    samples: Sequence[str],
    *,
    source_type: str,
    reference_author: str | None,
    known_characters: str,
    metrics: str,
    budget: int = 12_000,
) -> dict[str, str]:
    """Slots of prompts/style_analyzer.md; the samples are cut to ``budget`` tokens in all."""
    each = max(1_000, budget // max(1, len(samples)))
    text = "\n\n---\n\n".join(trim_to_tokens(s.strip(), each, keep="start") for s in samples if s.strip())
    return {
        "source_type": source_type,
        "reference_author": reference_author or "",
        "known_characters": known_characters,
        "style_metrics": metrics,
        "style_samples": text,
    }


def _summaries(store: NovelStore, start: int, end: int) -> list[tuple[int, str]]:
    out = []
    for n in range(start, end + 1):
        text = store.summary(n)
        if text and text.strip():
            out.append((n, text.strip()))
    return out


def audit_windows(
    store: NovelStore, start: int, end: int, budget: int = AUDIT_SUMMARY_TOKENS
) -> list[tuple[int, int]]:
    """Consecutive windows covering chapters ``start``-``end`` whose summaries each fit ``budget`` tokens.

    The volume review audits a long volume window by window, so every chapter is read (a single chapter
    whose summary alone exceeds the budget is a window of its own, compressed by :func:`audit_context`).
    """
    windows: list[tuple[int, int]] = []
    first, used = start, 0
    for n in range(start, end + 1):
        text = store.summary(n) or ""
        cost = estimate_tokens(f"第{n}章：{text.strip()}\n\n")
        if used and used + cost > budget:
            windows.append((first, n - 1))
            first, used = n, 0
        used += cost
    if first <= end:
        windows.append((first, end))
    return windows


def audit_context(
    store: NovelStore, start: int, end: int, entity_findings: str, *, budget: int = AUDIT_SUMMARY_TOKENS
) -> dict[str, str]:
    """Slots of prompts/consistency_auditor.md over the summaries of chapters ``start``-``end``.

    Summaries over ``budget`` tokens are each cut to an equal share (their start kept), so the auditor
    still sees every chapter of the window rather than only the last ones.
    """
    summaries = _summaries(store, start, end)
    body = "\n\n".join(f"第{n}章：{text}" for n, text in summaries)
    if estimate_tokens(body) > budget:
        share = max(40, budget // max(1, len(summaries)) - 8)
        body = "\n\n".join(f"第{n}章：{trim_to_tokens(text, share, keep='start')}" for n, text in summaries)
    fs = store.document_json(layout.GLOBAL_FORESHADOWING) or {}
    return {
        "world_rules": rules_text(store),
        "storylines": store.document(STORYLINES) or "",
        "window_start": str(start),
        "window_end": str(end),
        "character_contracts": characters_text(active_characters(store), end),
        "current_state": trim_to_tokens(_compact(store.current_state()), 4_000, keep="start"),
        "foreshadowing_status": trim_to_tokens(_compact(fs.get("foreshadowing") or []), 2_000, keep="start"),
        "entity_findings": entity_findings,
        "summaries": body,
    }


# ---------------------------------------------------------------------------- the agents
class LLMPlanningAgents:
    """The planning agents of one novel over one client."""

    def __init__(self, client: LLMClient) -> None:
        self.client = client

    async def _call(
        self, role: AgentRole, template: str, context: dict[str, str], model: type[M], what: str
    ) -> AgentResult[M]:
        return await structured_call(self.client, role, render_template(template, context), model, what=what)

    async def world(self, context: dict[str, str]) -> AgentResult[WorldReply]:
        """WorldBuilder: rules, documents and storylines, or a decision on a conflict with a hard rule."""
        return await self._call(AgentRole.world_builder, "world_builder", context, WorldReply, "世界观设定")

    async def characters(self, context: dict[str, str]) -> AgentResult[CharacterReply]:
        """CharacterWeaver: profiles with L2 contracts and relationships, or a contract-change decision."""
        return await self._call(
            AgentRole.character_weaver, "character_weaver", context, CharacterReply, "角色档案"
        )

    async def plot(self, context: dict[str, str]) -> AgentResult[PlanReply]:
        """PlotArchitect: a volume plan, always as a decision for the author to confirm."""
        return await self._call(AgentRole.plot_architect, "plot_architect", context, PlanReply, "卷规划")

    async def style(self, context: dict[str, str]) -> AgentResult[StyleProfile]:
        """StyleAnalyzer: the style fingerprint of the samples."""
        return await self._call(AgentRole.style_analyzer, "style_analyzer", context, StyleProfile, "风格指纹")

    async def audit(self, context: dict[str, str]) -> AgentResult[AuditReply]:
        """ConsistencyAuditor: continuity findings over a window of summaries."""
        return await self._call(
            AgentRole.consistency_auditor, "consistency_auditor", context, AuditReply, "一致性检查"
        )


__all__ = [
    "AUDIT_SUMMARY_TOKENS",
    "AuditFinding",
    "AuditReply",
    "CharacterReply",
    "LLMPlanningAgents",
    "PlanReply",
    "ReplyRules",
    "WorldDocument",
    "WorldReply",
    "active_characters",
    "audit_context",
    "audit_windows",
    "character_context",
    "characters_text",
    "docs_text",
    "plot_context",
    "rules_text",
    "style_context",
    "world_context",
]
