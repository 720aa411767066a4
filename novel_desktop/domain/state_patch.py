"""State patches: what a chapter's patch of ops is, how it is parsed, and which ops are valid.

The Summarizer describes what a chapter changed as a patch of ops (004 §9.2)::

    {"chapter": 48, "base_state_version": 47, "storyline_id": "main_arc",
     "ops": [{"op": "set", "path": "characters.protagonist.location", "value": "幽暗森林"}, ...]}

A patch whose JSON or header is broken is rejected as a whole (:class:`PatchRejected`); a malformed op inside
a good patch is dropped with a reason (:func:`validate_op`). Applying ops is :mod:`.state_ops`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field, StrictInt, ValidationError

from novel_desktop.domain.common import SLUG_RE, SeedModel

__all__ = [
    "MAX_VALUE_DEPTH",
    "PATH_TOP_LEVEL",
    "REBUILD_SKIP_THRESHOLD",
    "DroppedOp",
    "ForeshadowAction",
    "ForeshadowUpdate",
    "OpKind",
    "PatchRejected",
    "PatchResult",
    "StateOp",
    "StatePatch",
    "StateValidationError",
    "parse_patch",
    "validate_op",
]
#: Top-level categories a generic op may touch (001 §10.6 point 3).
PATH_TOP_LEVEL: frozenset[str] = frozenset(
    {"characters", "items", "locations", "factions", "world_state", "active_foreshadowing"}
)
#: Generic op paths have this many dot-separated segments, category included.
PATH_MIN_DEPTH = 2
PATH_MAX_DEPTH = 4
#: Values nested deeper than this are dropped: no real state needs it, and it keeps json/deepcopy off the
#: recursion limit.
MAX_VALUE_DEPTH = 32
#: Integers beyond 64 bits are dropped: other tools reading the JSON (and Python's own int→str limit) choke.
MAX_ABS_INT = 2**63 - 1
#: Skipped chapters (ops JSON unusable twice) before the quality brief recommends a state rebuild (§10.6).
REBUILD_SKIP_THRESHOLD = 3


class StateValidationError(Exception):
    """A state document, patch or changelog cannot be used at all."""


class PatchRejected(StateValidationError):
    """A whole patch is unusable (bad JSON, bad header, version mismatch); ``reason`` says why, in Chinese."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class OpKind(StrEnum):
    """The five op kinds of 004 §9.2."""

    SET = "set"
    INC = "inc"
    ADD = "add"
    REMOVE = "remove"
    FORESHADOW = "foreshadow"


class ForeshadowAction(StrEnum):
    """What a ``foreshadow`` op does to a foreshadowing thread."""

    PLANTED = "planted"
    ADVANCED = "advanced"
    RESOLVED = "resolved"


class StateOp(SeedModel):
    """One op that passed :func:`validate_op`. Unknown keys are kept."""

    op: OpKind
    path: str
    value: Any
    detail: str | None = None


class StatePatch(SeedModel):
    """A chapter's state patch.

    ``ops`` holds the entries as they came (raw JSON values or :class:`StateOp`): a malformed entry is not a
    reason to reject the patch, it is dropped with a reason by :func:`apply_patch`.
    """

    chapter: StrictInt = Field(ge=1)
    base_state_version: StrictInt = Field(ge=0)
    storyline_id: str | None = None
    ops: list[Any]


@dataclass(frozen=True)
class DroppedOp:
    """An op that was not applied: its position in the patch, the entry as given and why (Chinese)."""

    index: int
    op: Any
    reason: str


@dataclass(frozen=True)
class ForeshadowUpdate:
    """A foreshadowing event produced by an applied ``foreshadow`` op, for ``foreshadowing/global.json``."""

    id: str
    action: ForeshadowAction
    detail: str | None
    chapter: int
    storyline_id: str | None = None


@dataclass(frozen=True)
class PatchResult:
    """What :func:`apply_patch` produced. ``state`` is a new document; the input is untouched.

    ``changelog`` holds one entry per applied op, to append to ``state/changelog.jsonl``. When no op was
    applied it holds a single version entry (``op``/``path``/``value`` null) instead, because the version
    still moved and :func:`replay_changelog` must be able to reproduce that.
    """

    state: dict[str, Any]
    applied: list[StateOp] = field(default_factory=list)
    dropped: list[DroppedOp] = field(default_factory=list)
    changelog: list[dict[str, Any]] = field(default_factory=list)
    foreshadow_updates: list[ForeshadowUpdate] = field(default_factory=list)


# --- parsing -------------------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"非法常量 {name}")


def parse_patch(raw: StatePatch | str | bytes | Mapping[str, Any]) -> StatePatch:
    """Parse a patch from JSON text or an already decoded object.

    Raises :class:`PatchRejected` when the JSON is broken, is not an object, or its ``chapter``,
    ``base_state_version``, ``storyline_id`` or ``ops`` are missing or of the wrong type. The ops themselves
    are not checked here.
    """
    data: Any
    if isinstance(raw, bytes | str):
        try:
            text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
            # NaN/Infinity are accepted by Python's json but are not JSON; they would poison the state file.
            data = json.loads(text, parse_constant=_reject_constant)
        except UnicodeDecodeError as exc:
            raise PatchRejected(f"patch 不是合法的 UTF-8 文本：{exc.reason}") from exc
        except RecursionError as exc:
            raise PatchRejected("patch JSON 嵌套过深") from exc
        except ValueError as exc:
            raise PatchRejected(f"patch 不是合法的 JSON：{exc}") from exc
    else:
        data = raw
    if isinstance(data, StatePatch):
        return data
    if not isinstance(data, Mapping):
        raise PatchRejected(f"patch 必须是 JSON 对象，实际是 {json_type(data)}")
    for key in ("chapter", "base_state_version"):
        if key not in data:
            raise PatchRejected(f"patch 缺少 {key} 字段")
    if "ops" not in data:
        raise PatchRejected("patch 缺少 ops 字段")
    if not isinstance(data["ops"], list):
        raise PatchRejected(f"ops 必须是数组，实际是 {json_type(data['ops'])}")
    try:
        patch = StatePatch.model_validate(dict(data))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise PatchRejected(f"patch 字段 {where} 不合法：{first['msg']}") from exc
    if patch.storyline_id is not None and not _utf8_encodable(patch.storyline_id):
        raise PatchRejected("storyline_id 含无法编码为 UTF-8 的字符")
    return patch


def json_type(value: Any) -> str:
    """The JSON type name of ``value`` (for the reasons an op is dropped)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "布尔值"
    if isinstance(value, int | float):
        return "数字"
    if isinstance(value, str):
        return "字符串"
    if isinstance(value, list):
        return "数组"
    if isinstance(value, Mapping):
        return "对象"
    return type(value).__name__


# --- op validation -------------------------------------------------------------------------------------


def _utf8_encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _json_value_problem(value: Any) -> str | None:
    """Why ``value`` is not a plain JSON value, or None. Iterative so deep nesting cannot blow the stack."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_VALUE_DEPTH:
            return f"嵌套超过 {MAX_VALUE_DEPTH} 层"
        if item is None or isinstance(item, bool):
            continue
        if isinstance(item, int):
            if abs(item) > MAX_ABS_INT:
                return "整数超出 64 位范围"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return "含 NaN 或无穷大"
        elif isinstance(item, str):
            if not _utf8_encodable(item):
                return "字符串含无法编码为 UTF-8 的字符"
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    return "对象的键必须是字符串"
                if not _utf8_encodable(key):
                    return "对象的键含无法编码为 UTF-8 的字符"
                stack.append((child, depth + 1))
        else:
            return f"{type(item).__name__} 不是 JSON 类型"
    return None


def _segment_problem(segment: str, path: str) -> str | None:
    if SLUG_RE.match(segment):
        return None
    if not segment:
        return f"path「{path}」含空段"
    if not segment.isascii():
        return f"path 段「{segment}」不是 slug ID：请使用实体的 slug ID（如 lin-feng），不要用中文显示名"
    return f"path 段「{segment}」不是 slug ID（只允许小写字母、数字、- 或 _）"


def as_mapping(op: Any) -> Mapping[str, Any] | None:
    """An op entry as a mapping (a model is dumped), or None when it is not an object."""
    if isinstance(op, BaseModel):
        return op.model_dump(mode="python", exclude_unset=True)
    if isinstance(op, Mapping):
        return op
    return None


def validate_op(op: Any) -> str | None:
    """Why ``op`` must be dropped (a Chinese sentence naming the field), or None when it is valid.

    Rules of 001 §10.6: ``op`` is one of set/inc/add/remove/foreshadow; a generic op's path has 2-4
    dot-separated segments, the first a whitelisted category and the others slug ids; a ``foreshadow`` op's
    path is a single foreshadowing slug and its value planted/advanced/resolved, with an optional string
    ``detail``; ``inc`` takes a number; every op has a JSON ``value``.
    """
    entry = as_mapping(op)
    if entry is None:
        return f"op 条目必须是 JSON 对象，实际是 {json_type(op)}"
    if "op" not in entry:
        return "缺少 op 字段"
    kind_raw = entry["op"]
    if not isinstance(kind_raw, str) or kind_raw not in OpKind.__members__.values():
        allowed = "/".join(kind.value for kind in OpKind)
        return f"op「{kind_raw}」不合法，只允许 {allowed}"
    kind = OpKind(kind_raw)
    if "path" not in entry:
        return "缺少 path 字段"
    path = entry["path"]
    if not isinstance(path, str):
        return f"path 必须是字符串，实际是 {json_type(path)}"
    if "value" not in entry:
        return "缺少 value 字段"
    value = entry["value"]
    problem = _json_value_problem(value)
    if problem is not None:
        return f"value 不是合法的 JSON 值：{problem}"

    if kind is OpKind.FORESHADOW:
        if "." in path:
            return f"foreshadow 的 path 必须是单层伏笔 ID，「{path}」含有层级"
        segment_problem = _segment_problem(path, path)
        if segment_problem is not None:
            return f"foreshadow 的 {segment_problem}"
        if not isinstance(value, str) or value not in ForeshadowAction.__members__.values():
            allowed = "/".join(action.value for action in ForeshadowAction)
            return f"foreshadow 的 value「{value}」不合法，只允许 {allowed}"
        detail = entry.get("detail")
        if detail is not None:
            if not isinstance(detail, str):
                return f"foreshadow 的 detail 必须是字符串，实际是 {json_type(detail)}"
            if not _utf8_encodable(detail):
                return "foreshadow 的 detail 含无法编码为 UTF-8 的字符"
        return None

    segments = path.split(".")
    if not PATH_MIN_DEPTH <= len(segments) <= PATH_MAX_DEPTH:
        return (
            f"path「{path}」有 {len(segments)} 层，通用 op 的 path 应为 {PATH_MIN_DEPTH}-{PATH_MAX_DEPTH} 层"
        )
    if segments[0] not in PATH_TOP_LEVEL:
        allowed = "、".join(sorted(PATH_TOP_LEVEL))
        return f"path 顶层类别「{segments[0]}」不在白名单内（{allowed}）"
    for segment in segments[1:]:
        segment_problem = _segment_problem(segment, path)
        if segment_problem is not None:
            return segment_problem
    if kind is OpKind.INC and (isinstance(value, bool) or not isinstance(value, int | float)):
        return f"inc 的 value 必须是数字，实际是 {json_type(value)}"
    return None
