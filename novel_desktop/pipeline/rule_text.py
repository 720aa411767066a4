"""What each rule a violation names says, so the author reads the rule with the finding (issue 16 point 4).

A judge writes ``{"rule_id": "W-001", "description": "…", "evidence": "…"}``; the author should read
``W-001（修炼者突破金丹期需要天地灵气浓度 ≥ 3级）：… 原文：「…」``. The texts come from the novel's own specs:
L1 ``world/rules.json``, L2 the characters' contracts (the version in force for the chapter), L3 the chapter
contract's objectives and LS ``storylines/storyline-spec.json``.
"""

from __future__ import annotations

from novel_desktop.agents.context import NovelFacts
from novel_desktop.domain.contract_lifecycle import contracts_in_force
from novel_desktop.domain.evaluation import DEFAULT_SOFT_RULES

#: The seed's LS-005 (§6.6.7 Layer 3), for a novel whose storyline-spec.json does not list it.
LS_005 = "非交汇事件章中，leak_risk 为 high 的跨线实体泄漏须修正"
#: The seed's LS-003 (§6.6.4).
LS_003 = "交汇事件前建议在涉及的线各铺垫至少一次"


def rule_texts(facts: NovelFacts) -> dict[str, str]:
    """Rule id → the rule's text, for every rule the chapter's judge may name."""
    out: dict[str, str] = {"LS-003": LS_003, "LS-005": LS_005}
    for rule in [*facts.world_rules, *facts.storyline_spec]:
        if rule.get("id") and rule.get("rule"):
            out[str(rule["id"])] = str(rule["rule"])
    for character in facts.characters:
        every = [c for c in character.get("contracts") or [] if isinstance(c, dict)]
        # The version in force wins over older ones of the same id.
        for contract in [*every, *contracts_in_force(character, facts.chapter)]:
            if isinstance(contract, dict) and contract.get("id") and contract.get("rule"):
                out[str(contract["id"])] = str(contract["rule"])
    for objective in (facts.contract or {}).get("objectives") or []:
        if isinstance(objective, dict) and objective.get("id") and objective.get("description"):
            out[str(objective["id"])] = str(objective["description"])
    return out


def soft_rule_ids(facts: NovelFacts) -> frozenset[str]:
    """The novel's soft rules (world and LS): reported with the verdict, never forcing a revision."""
    soft = set(DEFAULT_SOFT_RULES) - {
        str(r.get("id")) for r in facts.storyline_spec if r.get("constraint_type") == "hard"
    }
    for rule in [*facts.world_rules, *facts.storyline_spec]:
        if rule.get("constraint_type") == "soft" and rule.get("id"):
            soft.add(str(rule["id"]))
    return frozenset(soft)


__all__ = ["LS_003", "LS_005", "rule_texts", "soft_rule_ids"]
