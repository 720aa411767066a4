"""State patches: whole-patch rejection and one reason per op rule (001 §10.6)."""

from __future__ import annotations

from typing import Any

import pytest

from novel_desktop.domain.state_ops import (
    apply_patch,
)
from novel_desktop.domain.state_patch import (
    OpKind,
    PatchRejected,
    StateOp,
    StatePatch,
    StateValidationError,
    parse_patch,
    validate_op,
)
from tests.domain.state_examples import NOW, SEED_PATCH, SEED_STATE, patch_with

# --- whole-patch rejection ----------------------------------------------------------------------------


def test_version_mismatch_is_rejected_with_both_versions() -> None:
    with pytest.raises(PatchRejected) as info:
        apply_patch(SEED_STATE, patch_with(base=46), now=NOW)

    assert info.value.reason == "base_state_version 46 与当前 state_version 47 不一致"
    assert isinstance(info.value, StateValidationError)


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ('{"chapter": 48, "base_state_version": 47, "ops": [', "不是合法的 JSON"),
        (b"\xff\xfe{}", "UTF-8"),
        (
            '{"chapter": 48, "base_state_version": 47, "ops": [{"op": "inc", "value": NaN}]}',
            "不是合法的 JSON",
        ),
        ("[1, 2]", "必须是 JSON 对象"),
        ('"ops"', "必须是 JSON 对象"),
        ('{"base_state_version": 47, "ops": []}', "缺少 chapter"),
        ('{"chapter": 48, "ops": []}', "缺少 base_state_version"),
        ('{"chapter": 48, "base_state_version": 47}', "缺少 ops"),
        ('{"chapter": 48, "base_state_version": 47, "ops": {}}', "ops 必须是数组"),
        ('{"chapter": "48", "base_state_version": 47, "ops": []}', "chapter"),
        ('{"chapter": true, "base_state_version": 47, "ops": []}', "chapter"),
        ('{"chapter": 48.5, "base_state_version": 47, "ops": []}', "chapter"),
        ('{"chapter": 0, "base_state_version": 47, "ops": []}', "chapter"),
        ('{"chapter": 48, "base_state_version": null, "ops": []}', "base_state_version"),
        ('{"chapter": 48, "base_state_version": 47, "storyline_id": 3, "ops": []}', "storyline_id"),
        ("[" * 100_000, "嵌套过深"),
    ],
)
def test_bad_patches_are_rejected(raw: str | bytes, fragment: str) -> None:
    with pytest.raises(PatchRejected) as info:
        parse_patch(raw)

    assert fragment in info.value.reason


def test_state_without_a_version_cannot_be_patched() -> None:
    state = {k: v for k, v in SEED_STATE.items() if k != "state_version"}

    with pytest.raises(StateValidationError, match="state_version"):
        apply_patch(state, SEED_PATCH, now=NOW)


def test_parse_keeps_unknown_keys_and_raw_ops() -> None:
    patch = parse_patch({**SEED_PATCH, "ops": [*SEED_PATCH["ops"], 42], "source": "summarizer"})

    assert isinstance(patch, StatePatch)
    assert patch.ops[-1] == 42
    assert patch.to_json_dict()["source"] == "summarizer"


# --- op validation: one reason per rule ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "reason"),
    [
        ("set", "op 条目必须是 JSON 对象，实际是 字符串"),
        ({"path": "items.sword", "value": 1}, "缺少 op 字段"),
        (
            {"op": "delete", "path": "items.sword", "value": 1},
            "op「delete」不合法，只允许 set/inc/add/remove/foreshadow",
        ),
        (
            {"op": "SET", "path": "items.sword", "value": 1},
            "op「SET」不合法，只允许 set/inc/add/remove/foreshadow",
        ),
        ({"op": "set", "value": 1}, "缺少 path 字段"),
        ({"op": "set", "path": 3, "value": 1}, "path 必须是字符串，实际是 数字"),
        ({"op": "set", "path": "items.sword"}, "缺少 value 字段"),
        ({"op": "set", "path": "items", "value": 1}, "path「items」有 1 层，通用 op 的 path 应为 2-4 层"),
        (
            {"op": "set", "path": "characters.a.b.c.d", "value": 1},
            "path「characters.a.b.c.d」有 5 层，通用 op 的 path 应为 2-4 层",
        ),
        (
            {"op": "set", "path": "spells.fireball", "value": 1},
            "path 顶层类别「spells」不在白名单内"
            "（active_foreshadowing、characters、factions、items、locations、world_state）",
        ),
        (
            {"op": "set", "path": "characters.林枫.location", "value": "魔都"},
            "path 段「林枫」不是 slug ID：请使用实体的 slug ID（如 lin-feng），不要用中文显示名",
        ),
        (
            {"op": "set", "path": "characters.Lin_Feng.location", "value": "魔都"},
            "path 段「Lin_Feng」不是 slug ID（只允许小写字母、数字、- 或 _）",
        ),
        ({"op": "set", "path": "characters..location", "value": 1}, "path「characters..location」含空段"),
        ({"op": "inc", "path": "characters.a.hp", "value": "10"}, "inc 的 value 必须是数字，实际是 字符串"),
        ({"op": "inc", "path": "characters.a.hp", "value": True}, "inc 的 value 必须是数字，实际是 布尔值"),
        (
            {"op": "set", "path": "items.a", "value": float("nan")},
            "value 不是合法的 JSON 值：含 NaN 或无穷大",
        ),
        (
            {"op": "set", "path": "items.a", "value": {1: "x"}},
            "value 不是合法的 JSON 值：对象的键必须是字符串",
        ),
        ({"op": "set", "path": "items.a", "value": (1, 2)}, "value 不是合法的 JSON 值：tuple 不是 JSON 类型"),
        ({"op": "set", "path": "items.a", "value": 2**70}, "value 不是合法的 JSON 值：整数超出 64 位范围"),
        (
            {"op": "set", "path": "items.a", "value": "\ud800"},
            "value 不是合法的 JSON 值：字符串含无法编码为 UTF-8 的字符",
        ),
        (
            {"op": "foreshadow", "path": "plots.ancient_prophecy", "value": "planted"},
            "foreshadow 的 path 必须是单层伏笔 ID，「plots.ancient_prophecy」含有层级",
        ),
        (
            {"op": "foreshadow", "path": "上古预言", "value": "planted"},
            "foreshadow 的 path 段「上古预言」不是 slug ID："
            "请使用实体的 slug ID（如 lin-feng），不要用中文显示名",
        ),
        (
            {"op": "foreshadow", "path": "ancient_prophecy", "value": "forgotten"},
            "foreshadow 的 value「forgotten」不合法，只允许 planted/advanced/resolved",
        ),
        (
            {"op": "foreshadow", "path": "ancient_prophecy", "value": "planted", "detail": 5},
            "foreshadow 的 detail 必须是字符串，实际是 数字",
        ),
    ],
)
def test_invalid_op_reason(op: Any, reason: str) -> None:
    assert validate_op(op) == reason


def test_deeply_nested_value_is_rejected() -> None:
    value: Any = "leaf"
    for _ in range(40):
        value = [value]

    assert (
        validate_op({"op": "set", "path": "items.a", "value": value})
        == "value 不是合法的 JSON 值：嵌套超过 32 层"
    )


@pytest.mark.parametrize(
    "op",
    [
        {"op": "set", "path": "characters.lin-feng.location", "value": "魔都"},
        {"op": "set", "path": "characters.lin-feng.relationships.chen-lao", "value": 20},
        {"op": "set", "path": "world_state.time_marker", "value": None},
        {"op": "inc", "path": "factions.qi_guo.power", "value": -2.5},
        {"op": "add", "path": "items.sword.owners", "value": {"id": "lin-feng"}},
        {"op": "remove", "path": "locations.mo-du", "value": [1, 2]},
        {"op": "foreshadow", "path": "ancient_prophecy", "value": "planted"},
        {"op": "foreshadow", "path": "ancient_prophecy", "value": "resolved", "detail": None},
        StateOp(op=OpKind.SET, path="items.sword", value=1),
    ],
)
def test_valid_ops(op: Any) -> None:
    assert validate_op(op) is None


def test_invalid_ops_are_dropped_and_the_rest_applied() -> None:
    ops = [
        {"op": "set", "path": "characters.林枫.location", "value": "魔都"},
        {"op": "set", "path": "characters.protagonist.location", "value": "幽暗森林"},
        "garbage",
    ]
    result = apply_patch(SEED_STATE, patch_with(*ops), now=NOW)

    assert [(d.index, d.op) for d in result.dropped] == [(0, ops[0]), (2, "garbage")]
    assert "中文显示名" in result.dropped[0].reason
    assert result.state["characters"]["protagonist"]["location"] == "幽暗森林"
    assert "林枫" not in result.state["characters"]
    assert len(result.changelog) == 1
