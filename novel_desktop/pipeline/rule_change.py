"""Contract change propagation (seed 004 §6.5.5 变更传播链): a changed world rule lists the character
contracts and unwritten chapter contracts it affects, and offers to update them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from novel_desktop.agents.planning import character_context
from novel_desktop.agents.ports import PlanningAgents
from novel_desktop.domain.ledger import for_purpose
from novel_desktop.pipeline.interaction import InteractionManager
from novel_desktop.pipeline.steps import StepReport, ask, character_files, consult, question, spec
from novel_desktop.storage import layout
from novel_desktop.storage.aio import db
from novel_desktop.storage.store import NovelStore, dumps


@dataclass
class RuleImpact:
    """What a changed world rule touches: character contracts by character, and unwritten chapters."""

    rule_ids: list[str]
    contracts: dict[str, list[str]] = field(default_factory=dict)
    chapters: dict[int, str] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.contracts and not self.chapters

    def lines(self) -> list[str]:
        out = [f"规则 {'、'.join(self.rule_ids)} 变更影响："]
        out += [f"  角色 {who}：{'、'.join(ids)}" for who, ids in self.contracts.items()]
        out += [f"  第{n}章契约（{path}）" for n, path in sorted(self.chapters.items())]
        if self.empty:
            out.append("  没有受影响的角色契约或待写章节契约")
        return out


_CJK = re.compile(r"[\u4e00-\u9fff]{2,}")


def _bigrams(text: str) -> set[str]:
    return {w[i : i + 2] for w in _CJK.findall(text) for i in range(len(w) - 1)}


def rule_change_impact(store: NovelStore, rule_ids: list[str]) -> RuleImpact:
    """The character contracts and unwritten chapter contracts a change of ``rule_ids`` affects.

    A character contract is affected when it names the rule, or shares at least three two-character terms
    with the rule's text (a capability bounded by the rule without citing it). A chapter contract is affected
    when it is not written yet and requires the rule or cites it in an acceptance criterion.
    """
    rules = {r.get("id"): r for r in (store.document_json("world/rules.json") or {}).get("rules") or []}
    impact = RuleImpact(list(rule_ids))
    terms = {rid: _bigrams(str(rules.get(rid, {}).get("rule", ""))) for rid in rule_ids}
    for ch in character_files(store):
        hits = []
        for c in ch.contracts:
            text = " ".join([c.rule, *c.exceptions, c.update_requires or ""])
            if any(rid in text or len(terms[rid] & _bigrams(text)) >= 3 for rid in rule_ids):
                hits.append(c.id)
        if hits:
            impact.contracts[ch.id] = hits
    last = int(store.checkpoint().get("last_completed_chapter") or 0)
    for path in store.list_documents("volumes/"):
        if "/chapter-contracts/" not in path:
            continue
        data = store.document_json(path) or {}
        n = int(data.get("chapter") or 0)
        if n <= last:
            continue
        required = (data.get("preconditions") or {}).get("required_world_rules") or []
        criteria = " ".join(data.get("acceptance_criteria") or [])
        if any(rid in required or rid in criteria for rid in rule_ids):
            impact.chapters[n] = path
    return impact


def _annotate_chapters(store: NovelStore, impact: RuleImpact) -> list[str]:
    rules = {r.get("id"): r for r in (store.document_json("world/rules.json") or {}).get("rules") or []}
    written = []
    for path in impact.chapters.values():
        data = store.document_json(path) or {}
        criteria = list(data.get("acceptance_criteria") or [])
        for rid in impact.rule_ids:
            note = f"遵守变更后的 {rid}：{rules.get(rid, {}).get('rule', '')}"
            if note not in criteria:
                criteria.append(note)
            required = data.setdefault("preconditions", {}).setdefault("required_world_rules", [])
            if rid not in required:
                required.append(rid)
        data["acceptance_criteria"] = criteria
        store.put_document(path, dumps(data))
        written.append(path)
    return written


@for_purpose("rule_change")
async def propagate_rule_change(
    store: NovelStore, agents: PlanningAgents, interaction: InteractionManager, rule_ids: list[str]
) -> StepReport:
    """List what a world-rule change affects and offer to update it (§6.5.5 变更传播链).

    On 更新: CharacterWeaver (更新角色) revises the affected contracts — a contract change comes back as
    ``requires_user_decision`` and is asked — and each affected unwritten chapter contract gets the changed
    rule in its required rules and an acceptance criterion.
    """
    impact = await db(rule_change_impact, store, rule_ids)
    report = StepReport("\n".join(impact.lines()))
    if impact.empty:
        return report
    key = "-".join(rule_ids).lower()
    q = spec(
        "rule change propagation",
        question(
            "propagate",
            "契约更新",
            "；".join(impact.lines()) + "。要更新这些契约吗？",
            options=[("更新", "推荐：更新受影响的角色契约和章节契约"), ("暂不更新", "只记录影响，不改契约")],
            default="更新",
        ),
    )
    answer = await ask(store, interaction, q, f"{layout.NOVEL_ASK_DIR}rule-change-{key}.answers.json")
    if answer.answers.get("propagate") != "更新":
        report.message += "\n作者选择暂不更新"
        return report
    if impact.contracts:
        request = f"世界规则 {'、'.join(rule_ids)} 已变更。请按新规则更新受影响的契约：" + "；".join(
            f"{who}：{'、'.join(ids)}" for who, ids in impact.contracts.items()
        )
        context = await db(character_context, store, "更新角色", request)
        path = f"{layout.NOVEL_ASK_DIR}rule-change-{key}-contracts.answers.json"
        done = await consult(
            store,
            interaction,
            agents.characters,
            context,
            request=request,
            topic="contract change",
            answer_path=path,
            declines=lambda choice: "驳回" in choice,
        )
        report.calls += done.calls
        report.warnings += done.warnings
        if done.outcome == "unparsable":
            report.warnings.append("CharacterWeaver 的输出无法解析，角色契约未更新")
        for ch in done.reply.characters if done.reply is not None else []:
            path = f"characters/active/{ch.id}.json"
            await db(store.put_document, path, dumps({**ch.to_json_dict(), "status": "active"}))
            report.written.append(path)
    report.written += await db(_annotate_chapters, store, impact)
    report.message += f"\n已更新 {len(report.written)} 份契约"
    return report
