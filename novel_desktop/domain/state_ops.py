"""State ops: validating and applying a chapter's state patch, as pure functions.

The Summarizer describes what a chapter changed as a patch of ops (004 §9.2)::

    {"chapter": 48, "base_state_version": 47, "storyline_id": "main_arc",
     "ops": [{"op": "set", "path": "characters.protagonist.location", "value": "幽暗森林"}, ...]}

The merge follows 001 §10.6: a patch whose JSON or header is broken is rejected as a whole
(:class:`PatchRejected`); a malformed op inside a good patch is dropped with a reason and the rest are
applied. State documents are handled as plain JSON dicts and are never mutated: every function returns a
new document.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field, StrictInt, ValidationError

from novel_desktop.domain.common import SLUG_RE, SeedModel, iso_now

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
    "apply_foreshadow_updates",
    "apply_patch",
    "parse_patch",
    "prune_state",
    "record_ops_skip",
    "replay_changelog",
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
        raise PatchRejected(f"patch 必须是 JSON 对象，实际是 {_json_type(data)}")
    for key in ("chapter", "base_state_version"):
        if key not in data:
            raise PatchRejected(f"patch 缺少 {key} 字段")
    if "ops" not in data:
        raise PatchRejected("patch 缺少 ops 字段")
    if not isinstance(data["ops"], list):
        raise PatchRejected(f"ops 必须是数组，实际是 {_json_type(data['ops'])}")
    try:
        patch = StatePatch.model_validate(dict(data))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise PatchRejected(f"patch 字段 {where} 不合法：{first['msg']}") from exc
    if patch.storyline_id is not None and not _utf8_encodable(patch.storyline_id):
        raise PatchRejected("storyline_id 含无法编码为 UTF-8 的字符")
    return patch


def _json_type(value: Any) -> str:
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


def _as_mapping(op: Any) -> Mapping[str, Any] | None:
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
    entry = _as_mapping(op)
    if entry is None:
        return f"op 条目必须是 JSON 对象，实际是 {_json_type(op)}"
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
        return f"path 必须是字符串，实际是 {_json_type(path)}"
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
                return f"foreshadow 的 detail 必须是字符串，实际是 {_json_type(detail)}"
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
        return f"inc 的 value 必须是数字，实际是 {_json_type(value)}"
    return None


# --- applying ------------------------------------------------------------------------------------------


class _OpFailed(Exception):
    """An op is valid but cannot be applied to this state; nothing was changed when it is raised."""


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _parent_for(state: dict[str, Any], segments: list[str], *, create: bool) -> dict[str, Any]:
    """The dict holding the last segment, creating missing intermediate dicts when ``create``.

    The walk checks every existing node before creating anything, so a failure leaves the state untouched.
    """
    node = state
    walked: list[str] = []
    missing_from: int | None = None
    for index, segment in enumerate(segments[:-1]):
        if segment not in node:
            missing_from = index
            break
        child = node[segment]
        walked.append(segment)
        if not isinstance(child, dict):
            raise _OpFailed(f"「{'.'.join(walked)}」是{_json_type(child)}，不是对象，无法向下写入")
        node = child
    if missing_from is not None:
        if not create:
            raise _OpFailed(f"「{'.'.join([*walked, segments[missing_from]])}」不存在")
        for segment in segments[missing_from:-1]:
            new_node: dict[str, Any] = {}
            node[segment] = new_node
            node = new_node
    return node


def _apply_generic(state: dict[str, Any], kind: OpKind, path: str, value: Any) -> None:
    segments = path.split(".")
    leaf = segments[-1]
    if kind is OpKind.SET:
        _parent_for(state, segments, create=True)[leaf] = copy.deepcopy(value)
    elif kind is OpKind.INC:
        parent = _parent_for(state, segments, create=True)
        current = parent.get(leaf, 0)
        if not _is_number(current):
            raise _OpFailed(f"inc 的目标「{path}」是{_json_type(current)}，不是数字")
        try:
            result = current + value
        except OverflowError as exc:
            raise _OpFailed(f"inc 的结果溢出：{path}") from exc
        if (isinstance(result, float) and not math.isfinite(result)) or (
            isinstance(result, int) and abs(result) > MAX_ABS_INT
        ):
            raise _OpFailed(f"inc 的结果超出范围：{path}")
        parent[leaf] = result
    elif kind is OpKind.ADD:
        parent = _parent_for(state, segments, create=True)
        target = parent.get(leaf)
        if leaf not in parent:
            parent[leaf] = [copy.deepcopy(value)]
        elif isinstance(target, list):
            target.append(copy.deepcopy(value))
        else:
            raise _OpFailed(f"add 的目标「{path}」是{_json_type(target)}，不是数组")
    else:  # REMOVE
        parent = _parent_for(state, segments, create=False)
        if leaf not in parent:
            raise _OpFailed(f"remove 的目标「{path}」不存在")
        target = parent[leaf]
        if not isinstance(target, list):
            raise _OpFailed(f"remove 的目标「{path}」是{_json_type(target)}，不是数组")
        for index, element in enumerate(target):
            if _json_equal(element, value):
                del target[index]
                break
        else:
            raise _OpFailed(f"remove 的值 {_short(value)} 不在「{path}」中")


def _json_equal(left: Any, right: Any) -> bool:
    # Python's == says True == 1 and 1 == 1.0; in JSON those are different values.
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(_json_equal(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_json_equal(left[k], right[k]) for k in left)
    if type(left) is not type(right) and not (_is_number(left) and _is_number(right)):
        return False
    return bool(left == right)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…"


def _apply_foreshadow(state: dict[str, Any], foreshadow_id: str, action: ForeshadowAction) -> None:
    active = state.get("active_foreshadowing")
    if active is None and "active_foreshadowing" not in state:
        active = []
        if action is not ForeshadowAction.RESOLVED:
            state["active_foreshadowing"] = active
    if not isinstance(active, list):
        raise _OpFailed(f"active_foreshadowing 是{_json_type(active)}，不是数组")
    if action is ForeshadowAction.RESOLVED:
        active[:] = [item for item in active if item != foreshadow_id]
    elif foreshadow_id not in active:
        active.append(foreshadow_id)


def _apply_one(state: dict[str, Any], op: StateOp) -> None:
    if op.op is OpKind.FORESHADOW:
        _apply_foreshadow(state, op.path, ForeshadowAction(op.value))
    else:
        _apply_generic(state, op.op, op.path, op.value)


def _to_state_op(op: Any) -> StateOp:
    if isinstance(op, StateOp):
        return op
    entry = _as_mapping(op)
    assert entry is not None  # validate_op has accepted it
    # Only the fields that were validated: a stray key (a non-string detail on a set op, say) must not make
    # model validation fail after validate_op accepted the op.
    kind = OpKind(entry["op"])
    detail = entry.get("detail") if kind is OpKind.FORESHADOW else None
    return StateOp(op=kind, path=entry["path"], value=entry["value"], detail=detail)


def _state_version(state: Mapping[str, Any]) -> int:
    version = state.get("state_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise StateValidationError(f"state 的 state_version 缺失或不是整数：{version!r}")
    return version


def _apply_ops(state: dict[str, Any], ops: Iterable[Any]) -> tuple[list[StateOp], list[DroppedOp]]:
    """Apply ``ops`` to ``state`` in place (the caller owns the copy); each op is all-or-nothing."""
    applied: list[StateOp] = []
    dropped: list[DroppedOp] = []
    for index, raw in enumerate(ops):
        reason = validate_op(raw)
        if reason is not None:
            dropped.append(DroppedOp(index, raw, reason))
            continue
        op = _to_state_op(raw)
        try:
            _apply_one(state, op)
        except _OpFailed as exc:
            dropped.append(DroppedOp(index, raw, str(exc)))
            continue
        applied.append(op)
    return applied, dropped


def apply_patch(
    state: Mapping[str, Any], patch: StatePatch | Mapping[str, Any] | str | bytes, *, now: str | None = None
) -> PatchResult:
    """Merge a chapter's patch into ``state`` and return the new state with what happened.

    ``base_state_version`` must equal the state's ``state_version`` (else :class:`PatchRejected`). Each op
    is validated (:func:`validate_op`) and applied in order; an invalid op, or one that does not fit the
    state (``set`` below a non-object, ``inc`` on a non-number, ``add``/``remove`` on a non-array, removing
    an absent value), is dropped with a reason and changes nothing. The new state has ``state_version``
    one higher and ``last_updated_chapter`` set to the patch's chapter even when every op was dropped,
    since versions track chapters. ``now`` stamps the changelog (default: the current time).
    """
    parsed = parse_patch(patch)
    version = _state_version(state)
    if parsed.base_state_version != version:
        raise PatchRejected(
            f"base_state_version {parsed.base_state_version} 与当前 state_version {version} 不一致"
        )
    new_state = copy.deepcopy(dict(state))
    applied, dropped = _apply_ops(new_state, parsed.ops)
    new_version = version + 1
    new_state["state_version"] = new_version
    new_state["last_updated_chapter"] = parsed.chapter

    ts = now if now is not None else iso_now()
    header = {"chapter": parsed.chapter, "state_version": new_version, "base_state_version": version}
    changelog: list[dict[str, Any]] = []
    updates: list[ForeshadowUpdate] = []
    for op in applied:
        entry: dict[str, Any] = {
            **header,
            "op": op.op.value,
            "path": op.path,
            "value": copy.deepcopy(op.value),
        }
        if op.op is OpKind.FORESHADOW:
            if op.detail is not None:
                entry["detail"] = op.detail
            updates.append(
                ForeshadowUpdate(
                    id=op.path,
                    action=ForeshadowAction(op.value),
                    detail=op.detail,
                    chapter=parsed.chapter,
                    storyline_id=parsed.storyline_id,
                )
            )
        changelog.append({**entry, "storyline_id": parsed.storyline_id, "ts": ts})
    if not applied:
        changelog.append(
            {**header, "op": None, "path": None, "value": None, "storyline_id": parsed.storyline_id, "ts": ts}
        )
    return PatchResult(
        state=new_state, applied=applied, dropped=dropped, changelog=changelog, foreshadow_updates=updates
    )


# --- replay --------------------------------------------------------------------------------------------


def _changelog_groups(entries: Iterable[Mapping[str, Any]]) -> Iterator[list[Mapping[str, Any]]]:
    group: list[Mapping[str, Any]] = []
    for entry in entries:
        if not isinstance(entry, Mapping):
            raise StateValidationError(f"changelog 条目必须是 JSON 对象，实际是 {_json_type(entry)}")
        for key in ("chapter", "state_version", "base_state_version"):
            value = entry.get(key)
            if isinstance(value, bool) or not isinstance(value, int):
                raise StateValidationError(f"changelog 条目的 {key} 缺失或不是整数：{value!r}")
        if group and entry["state_version"] != group[0]["state_version"]:
            yield group
            group = []
        group.append(entry)
    if group:
        yield group


def replay_changelog(
    base_state: Mapping[str, Any],
    entries: Iterable[Mapping[str, Any]],
    *,
    until_version: int | None = None,
) -> dict[str, Any]:
    """Rebuild a later state by re-applying changelog entries to ``base_state`` (001 §10.8).

    Entries are grouped by ``state_version`` in file order; groups at or below the base's version are
    skipped, so the whole ``changelog.jsonl`` can be passed. Replay stops after ``until_version`` when
    given. The chain must be unbroken (each group's ``base_state_version`` equals the version reached so
    far) and every op must apply cleanly; otherwise :class:`StateValidationError`, because a replay that
    silently diverges is worse than none.
    """
    state = copy.deepcopy(dict(base_state))
    version = _state_version(state)
    for group in _changelog_groups(entries):
        head = group[0]
        target = head["state_version"]
        if target <= version:
            continue
        if until_version is not None and target > until_version:
            break
        if head["base_state_version"] != version or target != version + 1:
            raise StateValidationError(
                f"changelog 不连续：state_version {target} 的基准是 {head['base_state_version']}，"
                f"而回放到的是 {version}"
            )
        ops = [
            {key: entry[key] for key in ("op", "path", "value", "detail") if key in entry}
            for entry in group
            if entry.get("op") is not None
        ]
        _applied, dropped = _apply_ops(state, ops)
        if dropped:
            first = dropped[0]
            raise StateValidationError(
                f"changelog 回放失败（state_version {target}，第 {first.index + 1} 条）：{first.reason}"
            )
        version = target
        state["state_version"] = version
        state["last_updated_chapter"] = head["chapter"]
    return state


# --- foreshadowing/global.json -------------------------------------------------------------------------


def apply_foreshadow_updates(
    global_doc: Mapping[str, Any], updates: Iterable[ForeshadowUpdate], chapter: int | None = None
) -> dict[str, Any]:
    """Record foreshadowing updates in a ``foreshadowing/global.json`` document and return the new one.

    An unknown id gets a new entry (status from the action, description from the detail). ``planted`` sets
    ``planted_chapter``, ``advanced`` adds to ``advanced_chapters``, ``resolved`` sets ``resolved_chapter``;
    ``status`` follows the latest action and each update appends to ``history``. ``chapter`` overrides the
    updates' own chapter when given. An update already in the history (same chapter, action, detail) is
    skipped, so re-running a chapter commit after a crash does not record it twice.
    """
    doc = copy.deepcopy(dict(global_doc))
    threads = doc.setdefault("foreshadowing", [])
    if not isinstance(threads, list):
        raise StateValidationError(f"global.json 的 foreshadowing 是{_json_type(threads)}，不是数组")
    for update in updates:
        at = update.chapter if chapter is None else chapter
        action = ForeshadowAction(update.action)
        thread = next((t for t in threads if isinstance(t, dict) and t.get("id") == update.id), None)
        if thread is None:
            thread = {
                "id": update.id,
                "description": update.detail or update.id,
                "scope": None,
                "status": action.value,
                "planted_chapter": None,
                "advanced_chapters": [],
                "resolved_chapter": None,
                "target_resolve_range": None,
                "storyline_id": update.storyline_id,
                "history": [],
            }
            threads.append(thread)
        history = thread.get("history")
        if not isinstance(history, list):
            history = thread["history"] = []
        event = {"chapter": at, "action": action.value, "detail": update.detail}
        if event in history:
            continue
        history.append(event)
        thread["status"] = action.value
        if action is ForeshadowAction.PLANTED:
            thread["planted_chapter"] = at
        elif action is ForeshadowAction.ADVANCED:
            advanced = thread.get("advanced_chapters")
            if not isinstance(advanced, list):
                advanced = thread["advanced_chapters"] = []
            if at not in advanced:
                advanced.append(at)
        else:
            thread["resolved_chapter"] = at
    return doc


# --- skip counter --------------------------------------------------------------------------------------


def record_ops_skip(count: int) -> tuple[int, bool]:
    """Count one more chapter whose ops were skipped; return the new count and whether to recommend a rebuild.

    001 §10.6 point 1: when a chapter's ops JSON is still broken after one retry its ops are skipped, and
    from :data:`REBUILD_SKIP_THRESHOLD` skips on the next quality brief recommends rebuilding the state. This
    function keeps no state: the caller stores the count with the checkpoint (``.checkpoint.json``) and
    resets it to 0 after a rebuild.
    """
    new_count = max(count, 0) + 1
    return new_count, new_count >= REBUILD_SKIP_THRESHOLD


# --- pruning -------------------------------------------------------------------------------------------


def prune_state(state: Mapping[str, Any], keep_character_ids: Iterable[str]) -> dict[str, Any]:
    """A copy of ``state`` whose ``characters`` holds only ``keep_character_ids`` (004 §8.5).

    The prompt carries the state of active characters only; the caller archives the others (their
    entries are ``state["characters"]`` minus the result's) under ``characters/retired/``. Nothing else
    changes, ``state_version`` included: pruning is not a chapter's change and is not in the changelog, so
    a state replayed from an older snapshot must be pruned again.
    """
    pruned = copy.deepcopy(dict(state))
    characters = pruned.get("characters")
    if isinstance(characters, dict):
        keep = set(keep_character_ids)
        pruned["characters"] = {cid: entry for cid, entry in characters.items() if cid in keep}
    return pruned
