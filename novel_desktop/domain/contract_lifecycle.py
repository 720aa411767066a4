"""The lifecycle of character contracts (seed 004 §6.5.3): which versions hold for a chapter, and how a
breakthrough the outline marked turns one version into the next.

A contract's versions share its id. Version k holds from ``valid_from_chapter`` (1 when unset) to
``valid_until`` (open when unset). ``planned`` versions hold only from an explicit ``valid_from_chapter``;
``deprecated`` versions hold only inside an explicit range (the history of a chapter written before the
change) and never when they have no ``valid_until``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from novel_desktop.domain.characters import Character, CharacterContract
from novel_desktop.domain.contracts import ContractUpdate


def _holds(status: Any, valid_from: Any, valid_until: Any, chapter: int) -> bool:
    start = valid_from if isinstance(valid_from, int) else None
    end = valid_until if isinstance(valid_until, int) else None
    if status == "planned" and start is None:
        return False
    if status == "deprecated" and end is None:
        return False
    return (start or 1) <= chapter and (end is None or chapter <= end)


def contract_in_force(contract: CharacterContract | Mapping[str, Any], chapter: int) -> bool:
    """Whether ``contract`` (a model or a raw JSON object from a character file) holds for ``chapter``."""
    if isinstance(contract, CharacterContract):
        return _holds(contract.status, contract.valid_from_chapter, contract.valid_until, chapter)
    return _holds(
        contract.get("status", "established"),
        contract.get("valid_from_chapter"),
        contract.get("valid_until"),
        chapter,
    )


def contracts_in_force(character: Character | Mapping[str, Any], chapter: int) -> list[Any]:
    """The contracts of ``character`` that hold for ``chapter``, in file order.

    ``character`` is a :class:`Character` (the result is its :class:`CharacterContract` list) or a raw
    character JSON object as the agents read it (the result is the raw contract objects).
    """
    if isinstance(character, Character):
        return [c for c in character.contracts if contract_in_force(c, chapter)]
    raw = character.get("contracts") or []
    return [c for c in raw if isinstance(c, Mapping) and contract_in_force(c, chapter)]


def contract_history(character: Character) -> dict[str, list[CharacterContract]]:
    """Contract id → its versions, oldest first (ids in the order they first appear)."""
    out: dict[str, list[CharacterContract]] = {}
    for contract in character.contracts:
        out.setdefault(contract.id, []).append(contract)
    for versions in out.values():
        versions.sort(key=lambda c: c.version)
    return out


@dataclass(frozen=True)
class AppliedUpdate:
    """What applying one :class:`ContractUpdate` did: the changelog line, or why it was skipped."""

    contract_id: str
    changed: bool
    line: str


def apply_contract_update(
    character: Character, update: ContractUpdate, chapter: int
) -> tuple[Character, AppliedUpdate]:
    """The character after ``update`` took effect at the commit of ``chapter``.

    The version in force at ``chapter`` gets ``valid_until = chapter`` and status deprecated; a new version
    (same id, next version number) holds from ``chapter + 1``, established. Applying the same update for the
    same chapter again changes nothing (a rebuild gives the same result); a changed update for that chapter
    rewrites the version that chapter made.
    """
    versions = [c for c in character.contracts if c.id == update.contract_id]
    if not versions:
        return character, AppliedUpdate(update.contract_id, False, f"{update.contract_id} 不存在，未更新")
    made_here = next((c for c in versions if c.changed_in_chapter == chapter), None)
    if made_here is not None:
        wanted = {"rule": update.rule, "type": update.type or made_here.type, "note": update.note}
        if all(getattr(made_here, k) == v for k, v in wanted.items()):
            return character, AppliedUpdate(update.contract_id, False, "")
        rewritten = [c.model_copy(update=wanted) if c is made_here else c for c in character.contracts]
        line = f"第 {chapter} 章：{character.name} 的契约 {update.contract_id} 改为：{update.rule}"
        return character.model_copy(update={"contracts": rewritten}), AppliedUpdate(
            update.contract_id, True, line
        )
    current = next((c for c in versions if contract_in_force(c, chapter)), None)
    if current is None:
        live = [c for c in versions if c.status != "deprecated"]
        current = live[-1] if live else None
    if current is None:
        return character, AppliedUpdate(update.contract_id, False, f"{update.contract_id} 已废止，未更新")
    newest = max(c.version for c in versions)
    successor = CharacterContract.model_validate(
        {
            **current.to_json_dict(),
            "rule": update.rule,
            "type": update.type or current.type,
            "valid_from_chapter": chapter + 1,
            "valid_until": None,
            "status": "established",
            "version": newest + 1,
            "changed_in_chapter": chapter,
            "note": update.note,
        }
    )
    retired = current.model_copy(update={"valid_until": chapter, "status": "deprecated"})
    contracts: list[CharacterContract] = []
    for c in character.contracts:
        contracts.append(retired if c is current else c)
        if c is current:
            contracts.append(successor)
    line = (
        f"第 {chapter} 章：{character.name} 的契约 {update.contract_id} v{current.version} 废止"
        f"（有效至第 {chapter} 章），v{successor.version} 自第 {chapter + 1} 章起生效：{update.rule}"
        + (f"（{update.note}）" if update.note else "")
    )
    return character.model_copy(update={"contracts": contracts}), AppliedUpdate(
        update.contract_id, True, line
    )


def owner_of(characters: list[Character], contract_id: str) -> Character | None:
    """The character holding contract ``contract_id``."""
    return next((ch for ch in characters if any(c.id == contract_id for c in ch.contracts)), None)
