"""The seed's own state and patch (004 §9.2), verbatim, and helpers the state tests share."""

from __future__ import annotations

from typing import Any

from novel_desktop.domain.state_ops import apply_patch

NOW = "2026-03-15T14:30:00+08:00"

# 004 §9.2 角色状态, verbatim.
SEED_STATE: dict[str, Any] = {
    "schema_version": 1,
    "state_version": 47,
    "last_updated_chapter": 47,
    "characters": {
        "protagonist": {
            "location": "魔都",
            "emotional_state": "决意",
            "relationships": {"mentor": 50, "rival": -30},
            "inventory": ["破碎魔杖", "密信"],
        }
    },
    "world_state": {"ongoing_events": ["王国内战"], "time_marker": "第三年冬"},
    "active_foreshadowing": ["ancient_prophecy", "betrayal_hint"],
}

# 004 §9.2 状态变更 Patch, verbatim.
SEED_PATCH: dict[str, Any] = {
    "chapter": 48,
    "base_state_version": 47,
    "storyline_id": "main_arc",
    "ops": [
        {"op": "set", "path": "characters.protagonist.location", "value": "幽暗森林"},
        {"op": "set", "path": "characters.protagonist.emotional_state", "value": "警觉"},
        {"op": "inc", "path": "characters.protagonist.relationships.mentor", "value": 10},
        {"op": "add", "path": "characters.protagonist.inventory", "value": "密信"},
        {"op": "remove", "path": "characters.protagonist.inventory", "value": "破碎魔杖"},
        {"op": "set", "path": "world_state.time_marker", "value": "第三年冬末"},
        {"op": "foreshadow", "path": "ancient_prophecy", "value": "advanced", "detail": "主角梦见预言碎片"},
    ],
}


def patch_with(*ops: Any, chapter: int = 48, base: int = 47) -> dict[str, Any]:
    return {"chapter": chapter, "base_state_version": base, "storyline_id": "main_arc", "ops": list(ops)}


def apply_one(op: Any, state: dict[str, Any] | None = None) -> Any:
    return apply_patch(state if state is not None else SEED_STATE, patch_with(op), now=NOW)
