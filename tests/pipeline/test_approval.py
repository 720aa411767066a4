"""Approval before binding: what the novel holds as a payload, and storing an edited payload (issue 14 item 3)."""

from __future__ import annotations

import copy

import pytest

from novel_desktop.domain.proposals import ProposalInvalid, parse_payload
from novel_desktop.pipeline.approval import apply_payload, current_payload
from novel_desktop.storage.store import NovelStore


@pytest.mark.parametrize("kind", ["world", "characters", "storylines", "volume_plan"])
def test_current_payload_of_the_seed_novel_validates(seed_store: NovelStore, kind: str) -> None:
    payload = current_payload(seed_store, kind, volume=1)
    parse_payload(kind, payload)
    # Storing it unchanged changes nothing and writes no changelog line.
    assert apply_payload(seed_store, kind, payload, effective_from=3, note="无改动", volume=1) == []


def test_world_edit_adds_changes_and_removes_rules_with_a_changelog_line(seed_store: NovelStore) -> None:
    payload = current_payload(seed_store, "world")
    first, *rest = payload["rules"]
    edited = copy.deepcopy(payload)
    edited["rules"] = [{**first, "rule": "作者改过的规则"}, *rest[1:]]
    edited["rules"].append({**first, "id": "W-099", "rule": "新规则"})
    removed = rest[0]["id"] if rest else None
    written = apply_payload(seed_store, "world", edited, effective_from=3, note="作者修改")
    assert "world/rules.json" in written and "world/changelog.md" in written
    stored = {r["id"]: r for r in seed_store.document_json("world/rules.json")["rules"]}
    assert stored[first["id"]]["rule"] == "作者改过的规则"
    assert "W-099" in stored
    log = seed_store.document("world/changelog.md") or ""
    line = log.strip().splitlines()[-1]
    assert "新增 W-099" in line and f"修改 {first['id']}" in line and "自第 3 章起生效" in line
    if removed:
        assert removed not in stored and f"删除 {removed}" in line


def test_a_character_left_out_is_retired_not_destroyed(seed_store: NovelStore) -> None:
    payload = current_payload(seed_store, "characters")
    slugs = [c["id"] for c in payload["characters"]]
    assert "chen-lao" in slugs
    payload["characters"] = [c for c in payload["characters"] if c["id"] != "chen-lao"]
    payload["relationships"] = [
        r for r in payload["relationships"] if "chen-lao" not in (r.get("from"), r.get("to"))
    ]
    apply_payload(seed_store, "characters", payload, effective_from=3, note="")
    assert seed_store.document("characters/active/chen-lao.json") is None
    assert seed_store.document_json("characters/retired/chen-lao.json")["status"] == "retired"
    assert seed_store.document("characters/retired/chen-lao.md") is not None
    assert "退场" in (seed_store.document("characters/changelog.md") or "")


def test_an_invalid_payload_changes_nothing(seed_store: NovelStore) -> None:
    before = seed_store.document("world/rules.json")
    payload = current_payload(seed_store, "world")
    payload["rules"].append(dict(payload["rules"][0]))  # duplicate id
    with pytest.raises(ProposalInvalid):
        apply_payload(seed_store, "world", payload, effective_from=3, note="")
    assert seed_store.document("world/rules.json") == before
