"""Applying state ops: the seed's own patch (004 §9.2), each op kind, replay, the foreshadowing ledger."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from novel_desktop.domain.state_ops import (
    apply_foreshadow_updates,
    apply_patch,
    prune_state,
    record_ops_skip,
    replay_changelog,
)
from novel_desktop.domain.state_patch import (
    REBUILD_SKIP_THRESHOLD,
    ForeshadowAction,
    ForeshadowUpdate,
    OpKind,
    StateValidationError,
)
from tests.domain.state_examples import NOW, SEED_PATCH, SEED_STATE, apply_one, patch_with

# --- the seed example ---------------------------------------------------------------------------------


def test_seed_patch_gives_the_expected_state() -> None:
    result = apply_patch(SEED_STATE, SEED_PATCH, now=NOW)

    assert result.state == {
        "schema_version": 1,
        "state_version": 48,
        "last_updated_chapter": 48,
        "characters": {
            "protagonist": {
                "location": "幽暗森林",
                "emotional_state": "警觉",
                "relationships": {"mentor": 60, "rival": -30},
                # add appends (004 §9.2 "追加到数组"), so the letter the seed adds is there twice.
                "inventory": ["密信", "密信"],
            }
        },
        "world_state": {"ongoing_events": ["王国内战"], "time_marker": "第三年冬末"},
        "active_foreshadowing": ["ancient_prophecy", "betrayal_hint"],
    }
    assert result.dropped == []
    assert [op.op for op in result.applied] == [
        OpKind.SET,
        OpKind.SET,
        OpKind.INC,
        OpKind.ADD,
        OpKind.REMOVE,
        OpKind.SET,
        OpKind.FORESHADOW,
    ]


def test_seed_patch_changelog_has_one_entry_per_op() -> None:
    result = apply_patch(SEED_STATE, SEED_PATCH, now=NOW)

    assert len(result.changelog) == 7
    assert result.changelog[2] == {
        "chapter": 48,
        "state_version": 48,
        "base_state_version": 47,
        "op": "inc",
        "path": "characters.protagonist.relationships.mentor",
        "value": 10,
        "storyline_id": "main_arc",
        "ts": NOW,
    }
    assert result.changelog[6] == {
        "chapter": 48,
        "state_version": 48,
        "base_state_version": 47,
        "op": "foreshadow",
        "path": "ancient_prophecy",
        "value": "advanced",
        "detail": "主角梦见预言碎片",
        "storyline_id": "main_arc",
        "ts": NOW,
    }
    assert all("detail" not in entry for entry in result.changelog[:6])
    # changelog.jsonl lines must serialise.
    for entry in result.changelog:
        json.dumps(entry, ensure_ascii=False)


def test_seed_patch_foreshadow_update() -> None:
    result = apply_patch(SEED_STATE, SEED_PATCH, now=NOW)

    assert result.foreshadow_updates == [
        ForeshadowUpdate(
            id="ancient_prophecy",
            action=ForeshadowAction.ADVANCED,
            detail="主角梦见预言碎片",
            chapter=48,
            storyline_id="main_arc",
        )
    ]


def test_apply_does_not_mutate_its_inputs() -> None:
    state = copy.deepcopy(SEED_STATE)
    patch = copy.deepcopy(SEED_PATCH)

    result = apply_patch(state, patch, now=NOW)

    assert state == SEED_STATE
    assert patch == SEED_PATCH
    # Nor does a later change to the result reach back into the input or the changelog.
    result.state["characters"]["protagonist"]["inventory"].append("x")
    assert state == SEED_STATE


def test_set_value_is_copied_not_shared() -> None:
    value = {"hp": 1}
    result = apply_patch(
        SEED_STATE, patch_with({"op": "set", "path": "items.sword", "value": value}), now=NOW
    )

    result.state["items"]["sword"]["hp"] = 99

    assert value == {"hp": 1}
    assert result.changelog[0]["value"] == {"hp": 1}


def test_patch_as_json_text_and_bytes() -> None:
    text = json.dumps(SEED_PATCH, ensure_ascii=False)
    expected = apply_patch(SEED_STATE, SEED_PATCH, now=NOW).state

    assert apply_patch(SEED_STATE, text, now=NOW).state == expected
    assert apply_patch(SEED_STATE, ("\ufeff" + text).encode(), now=NOW).state == expected


def test_changelog_ts_defaults_to_now() -> None:
    result = apply_patch(SEED_STATE, SEED_PATCH)

    assert result.changelog[0]["ts"].startswith("20")


# --- applying: each op kind and each failure ----------------------------------------------------------


def test_set_creates_intermediate_objects() -> None:
    result = apply_one({"op": "set", "path": "characters.lin-feng.relationships.chen-lao", "value": 20})

    assert result.state["characters"]["lin-feng"] == {"relationships": {"chen-lao": 20}}


def test_set_creates_a_missing_category() -> None:
    result = apply_one({"op": "set", "path": "factions.tai-xu.leader", "value": "lin-feng"})

    assert result.state["factions"] == {"tai-xu": {"leader": "lin-feng"}}


def test_set_below_a_non_object_is_dropped() -> None:
    result = apply_one({"op": "set", "path": "characters.protagonist.location.city", "value": "x"})

    assert result.applied == []
    assert result.dropped[0].reason == "「characters.protagonist.location」是字符串，不是对象，无法向下写入"
    assert result.state["characters"] == SEED_STATE["characters"]


def test_set_into_active_foreshadowing_list_is_dropped() -> None:
    result = apply_one({"op": "set", "path": "active_foreshadowing.new_one", "value": 1})

    assert result.dropped[0].reason == "「active_foreshadowing」是数组，不是对象，无法向下写入"


def test_inc_on_an_absent_target_starts_from_zero() -> None:
    result = apply_one({"op": "inc", "path": "characters.protagonist.relationships.stranger", "value": -5})

    assert result.state["characters"]["protagonist"]["relationships"]["stranger"] == -5


def test_inc_adds_floats() -> None:
    result = apply_one({"op": "inc", "path": "characters.protagonist.relationships.mentor", "value": 0.5})

    assert result.state["characters"]["protagonist"]["relationships"]["mentor"] == 50.5


def test_inc_on_a_non_number_is_dropped() -> None:
    result = apply_one({"op": "inc", "path": "characters.protagonist.location", "value": 1})

    assert result.dropped[0].reason == "inc 的目标「characters.protagonist.location」是字符串，不是数字"
    assert result.state["characters"] == SEED_STATE["characters"]


def test_inc_on_a_bool_is_dropped() -> None:
    state = {**SEED_STATE, "items": {"lamp": {"lit": True}}}

    result = apply_one({"op": "inc", "path": "items.lamp.lit", "value": 1}, state)

    assert result.dropped[0].reason == "inc 的目标「items.lamp.lit」是布尔值，不是数字"


def test_inc_overflow_is_dropped() -> None:
    state = {**SEED_STATE, "items": {"coin": {"count": 1e308}}}

    result = apply_one({"op": "inc", "path": "items.coin.count", "value": 1e308}, state)

    assert result.dropped[0].reason == "inc 的结果超出范围：items.coin.count"
    assert result.state["items"] == {"coin": {"count": 1e308}}


def test_add_creates_the_list() -> None:
    result = apply_one({"op": "add", "path": "world_state.omens", "value": "血月"})

    assert result.state["world_state"]["omens"] == ["血月"]


def test_add_appends() -> None:
    result = apply_one({"op": "add", "path": "world_state.ongoing_events", "value": "瘟疫"})

    assert result.state["world_state"]["ongoing_events"] == ["王国内战", "瘟疫"]


def test_add_to_a_non_list_is_dropped() -> None:
    result = apply_one({"op": "add", "path": "world_state.time_marker", "value": "x"})

    assert result.dropped[0].reason == "add 的目标「world_state.time_marker」是字符串，不是数组"


def test_remove_takes_only_the_first_equal_element() -> None:
    state = {**SEED_STATE, "items": {"bag": {"coins": [1, 2, 1]}}}

    result = apply_one({"op": "remove", "path": "items.bag.coins", "value": 1}, state)

    assert result.state["items"]["bag"]["coins"] == [2, 1]


def test_remove_compares_json_values_not_python_equality() -> None:
    state = {**SEED_STATE, "items": {"bag": {"flags": [1, True]}}}

    result = apply_one({"op": "remove", "path": "items.bag.flags", "value": True}, state)

    assert result.state["items"]["bag"]["flags"] == [1]


@pytest.mark.parametrize(
    ("op", "reason"),
    [
        (
            {"op": "remove", "path": "characters.protagonist.inventory", "value": "神剑"},
            """remove 的值 "神剑" 不在「characters.protagonist.inventory」中""",
        ),
        (
            {"op": "remove", "path": "characters.protagonist.location", "value": "魔都"},
            "remove 的目标「characters.protagonist.location」是字符串，不是数组",
        ),
        (
            {"op": "remove", "path": "characters.protagonist.pets", "value": "cat"},
            "remove 的目标「characters.protagonist.pets」不存在",
        ),
        (
            {"op": "remove", "path": "characters.nobody.inventory", "value": "cat"},
            "「characters.nobody」不存在",
        ),
    ],
)
def test_remove_failures_are_dropped(op: dict[str, Any], reason: str) -> None:
    result = apply_one(op)

    assert [d.reason for d in result.dropped] == [reason]
    assert "nobody" not in result.state["characters"]


def test_a_failing_op_leaves_no_partial_change() -> None:
    # The first op creates characters.lin-feng; the second fails at its leaf. Only the first survives.
    ops = [
        {"op": "set", "path": "characters.lin-feng.location", "value": "魔都"},
        {"op": "add", "path": "characters.lin-feng.location", "value": "x"},
        {"op": "set", "path": "characters.lin-feng.location.city.street", "value": "x"},
    ]
    result = apply_patch(SEED_STATE, patch_with(*ops), now=NOW)

    assert result.state["characters"]["lin-feng"] == {"location": "魔都"}
    assert [d.index for d in result.dropped] == [1, 2]


def test_foreshadow_planted_adds_the_id_once() -> None:
    result = apply_patch(
        SEED_STATE,
        patch_with(
            {"op": "foreshadow", "path": "dragon_egg", "value": "planted"},
            {"op": "foreshadow", "path": "dragon_egg", "value": "advanced"},
        ),
        now=NOW,
    )

    assert result.state["active_foreshadowing"] == ["ancient_prophecy", "betrayal_hint", "dragon_egg"]
    assert [u.action for u in result.foreshadow_updates] == [
        ForeshadowAction.PLANTED,
        ForeshadowAction.ADVANCED,
    ]


def test_foreshadow_resolved_removes_the_id() -> None:
    result = apply_one(
        {"op": "foreshadow", "path": "betrayal_hint", "value": "resolved", "detail": "叛徒现身"}
    )

    assert result.state["active_foreshadowing"] == ["ancient_prophecy"]
    assert result.foreshadow_updates[0].detail == "叛徒现身"


def test_foreshadow_creates_the_list_when_absent() -> None:
    state = {k: v for k, v in SEED_STATE.items() if k != "active_foreshadowing"}

    result = apply_one({"op": "foreshadow", "path": "dragon_egg", "value": "planted"}, state)

    assert result.state["active_foreshadowing"] == ["dragon_egg"]


def test_foreshadow_on_a_non_list_is_dropped() -> None:
    state = {**SEED_STATE, "active_foreshadowing": {"x": 1}}

    result = apply_one({"op": "foreshadow", "path": "dragon_egg", "value": "planted"}, state)

    assert result.dropped[0].reason == "active_foreshadowing 是对象，不是数组"
    assert result.foreshadow_updates == []


def test_all_dropped_still_moves_the_version_and_logs_it() -> None:
    state = {**SEED_STATE, "unknown_key": 1}
    result = apply_patch(state, patch_with({"op": "nope"}), now=NOW)

    assert result.applied == []
    assert result.state == {**state, "state_version": 48, "last_updated_chapter": 48}
    assert result.changelog == [
        {
            "chapter": 48,
            "state_version": 48,
            "base_state_version": 47,
            "op": None,
            "path": None,
            "value": None,
            "storyline_id": "main_arc",
            "ts": NOW,
        }
    ]


# --- replay -------------------------------------------------------------------------------------------


def _three_patches() -> list[dict[str, Any]]:
    return [
        SEED_PATCH,
        patch_with(
            {"op": "foreshadow", "path": "ancient_prophecy", "value": "resolved"},
            {"op": "set", "path": "characters.lin-feng.location", "value": "魔都"},
            chapter=49,
            base=48,
        ),
        patch_with({"op": "bogus"}, chapter=50, base=49),
        patch_with(
            {"op": "add", "path": "characters.lin-feng.inventory", "value": {"name": "剑", "n": 1}},
            {"op": "remove", "path": "characters.protagonist.inventory", "value": "密信"},
            chapter=51,
            base=50,
        ),
    ]


def test_replay_reproduces_the_state_after_the_patches() -> None:
    state = SEED_STATE
    changelog: list[dict[str, Any]] = []
    for patch in _three_patches():
        result = apply_patch(state, patch, now=NOW)
        state = result.state
        changelog.extend(result.changelog)

    replayed = replay_changelog(SEED_STATE, changelog)

    assert replayed == state
    assert replayed["state_version"] == 51
    assert replayed["last_updated_chapter"] == 51


def test_replay_survives_a_jsonl_round_trip_and_skips_old_versions() -> None:
    states = [SEED_STATE]
    lines: list[str] = []
    for patch in _three_patches():
        result = apply_patch(states[-1], patch, now=NOW)
        states.append(result.state)
        lines.extend(json.dumps(e, ensure_ascii=False) for e in result.changelog)
    entries = [json.loads(line) for line in lines]

    # From the snapshot at version 49, the whole changelog is passed; versions ≤ 49 are skipped.
    assert replay_changelog(states[2], entries) == states[-1]
    assert replay_changelog(SEED_STATE, entries, until_version=49) == states[2]


def test_replay_does_not_mutate_the_base() -> None:
    base = copy.deepcopy(SEED_STATE)

    replay_changelog(base, apply_patch(base, SEED_PATCH, now=NOW).changelog)

    assert base == SEED_STATE


def test_replay_with_a_gap_is_refused() -> None:
    first = apply_patch(SEED_STATE, SEED_PATCH, now=NOW)
    second = apply_patch(first.state, patch_with({"op": "bogus"}, chapter=49, base=48), now=NOW)
    third = apply_patch(second.state, patch_with({"op": "bogus"}, chapter=50, base=49), now=NOW)

    with pytest.raises(StateValidationError, match="changelog 不连续"):
        replay_changelog(SEED_STATE, [*first.changelog, *third.changelog])


def test_replay_that_would_diverge_is_refused() -> None:
    entries = apply_patch(SEED_STATE, SEED_PATCH, now=NOW).changelog
    edited = copy.deepcopy(SEED_STATE)
    edited["characters"]["protagonist"]["inventory"] = []

    with pytest.raises(StateValidationError, match="changelog 回放失败（state_version 48，第 5 条）"):
        replay_changelog(edited, entries)


@pytest.mark.parametrize("entry", [42, {"state_version": 48, "base_state_version": 47}])
def test_replay_refuses_malformed_entries(entry: Any) -> None:
    with pytest.raises(StateValidationError):
        replay_changelog(SEED_STATE, [entry])


# --- foreshadowing/global.json ------------------------------------------------------------------------

GLOBAL_DOC: dict[str, Any] = {
    "foreshadowing": [
        {
            "id": "ancient_prophecy",
            "description": "上古预言",
            "scope": "novel",
            "status": "planted",
            "planted_chapter": 3,
            "advanced_chapters": [20],
            "resolved_chapter": None,
            "target_resolve_range": [100, 120],
            "storyline_id": "main_arc",
            "history": [{"chapter": 3, "action": "planted", "detail": "老者低语"}],
        }
    ]
}


def test_global_doc_records_an_advance() -> None:
    updates = apply_patch(SEED_STATE, SEED_PATCH, now=NOW).foreshadow_updates

    doc = apply_foreshadow_updates(GLOBAL_DOC, updates, 48)

    entry = doc["foreshadowing"][0]
    assert entry["status"] == "advanced"
    assert entry["advanced_chapters"] == [20, 48]
    assert entry["planted_chapter"] == 3
    assert entry["history"][-1] == {"chapter": 48, "action": "advanced", "detail": "主角梦见预言碎片"}
    assert GLOBAL_DOC["foreshadowing"][0]["advanced_chapters"] == [20]


def test_global_doc_creates_an_unknown_id_and_resolves() -> None:
    updates = [
        ForeshadowUpdate("dragon_egg", ForeshadowAction.PLANTED, "龙蛋现世", 50, "main_arc"),
        ForeshadowUpdate("ancient_prophecy", ForeshadowAction.RESOLVED, None, 50),
    ]

    doc = apply_foreshadow_updates(GLOBAL_DOC, updates)

    assert doc["foreshadowing"][1] == {
        "id": "dragon_egg",
        "description": "龙蛋现世",
        "scope": None,
        "status": "planted",
        "planted_chapter": 50,
        "advanced_chapters": [],
        "resolved_chapter": None,
        "target_resolve_range": None,
        "storyline_id": "main_arc",
        "history": [{"chapter": 50, "action": "planted", "detail": "龙蛋现世"}],
    }
    assert doc["foreshadowing"][0]["status"] == "resolved"
    assert doc["foreshadowing"][0]["resolved_chapter"] == 50


def test_global_doc_update_is_idempotent() -> None:
    updates = [ForeshadowUpdate("ancient_prophecy", ForeshadowAction.ADVANCED, "梦", 48)]

    once = apply_foreshadow_updates(GLOBAL_DOC, updates)

    assert apply_foreshadow_updates(once, updates) == once


def test_global_doc_starts_empty() -> None:
    doc = apply_foreshadow_updates({}, [ForeshadowUpdate("x", ForeshadowAction.ADVANCED, None, 7)])

    assert doc["foreshadowing"][0]["description"] == "x"
    assert doc["foreshadowing"][0]["advanced_chapters"] == [7]


def test_global_doc_with_a_bad_shape_is_refused() -> None:
    with pytest.raises(StateValidationError):
        apply_foreshadow_updates({"foreshadowing": {}}, [])


# --- skip counter -------------------------------------------------------------------------------------


def test_skip_counter_recommends_a_rebuild_from_the_third_skip() -> None:
    assert REBUILD_SKIP_THRESHOLD == 3
    assert record_ops_skip(0) == (1, False)
    assert record_ops_skip(1) == (2, False)
    assert record_ops_skip(2) == (3, True)
    assert record_ops_skip(7) == (8, True)


# --- pruning ------------------------------------------------------------------------------------------


def test_prune_keeps_only_active_characters() -> None:
    state = copy.deepcopy(SEED_STATE)
    state["characters"]["old-monk"] = {"location": "寺"}

    pruned = prune_state(state, ["protagonist", "not-in-state"])

    assert pruned == SEED_STATE
    assert "old-monk" in state["characters"]


def test_prune_leaves_a_state_without_characters_alone() -> None:
    state = {k: v for k, v in SEED_STATE.items() if k != "characters"}

    assert prune_state(state, []) == state
