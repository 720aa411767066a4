"""The historical rebuild's pure parts: replaying a chapter chain, re-deriving the foreshadowing ledger,
describing what changed in readable Chinese, and the cascade check (issue 15 points 1 and 4).

Everything here works on plain JSON dicts and returns new ones; the storage transaction and the pipeline's
dry run (which builds each re-summarized chapter's historical view) use the same functions, so both see the
same chain.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from novel_desktop.domain.state_ops import apply_foreshadow_updates, apply_patch
from novel_desktop.domain.state_patch import PatchResult

CATEGORY_LABELS = {"characters": "人物", "items": "物品", "locations": "地点", "factions": "势力"}
FIELD_LABELS = {
    "holder": "持有者",
    "owner": "持有者",
    "location": "位置",
    "status": "状态",
    "inventory": "随身物品",
    "realm": "境界",
    "level": "等级",
    "name": "名称",
    "relationship": "关系",
}
GONE = "已不存在"
NONE = "无"
LEDGER_TRACKED = ("status", "planted_chapter", "advanced_chapters", "resolved_chapter", "history")


@dataclass
class ChainStep:
    """One chapter of the chain: the state and ledger before and after it, and what its ops did."""

    chapter: int
    state_before: dict[str, Any]
    result: PatchResult
    ledger_after: dict[str, Any]

    @property
    def state_after(self) -> dict[str, Any]:
        return self.result.state


def replay_step(
    state: Mapping[str, Any],
    ledger: Mapping[str, Any],
    chapter: int,
    ops: list[Any],
    storyline_id: str | None = None,
    *,
    now: str | None = None,
) -> ChainStep:
    """Apply chapter ``chapter``'s ops to ``state`` (ops that no longer fit are dropped with a reason) and its
    foreshadowing updates to ``ledger``."""
    patch: dict[str, Any] = {
        "chapter": chapter,
        "base_state_version": int(state.get("state_version", 0)),
        "ops": list(ops),
    }
    if storyline_id:
        patch["storyline_id"] = storyline_id
    result = apply_patch(state, patch, now=now)
    new_ledger = (
        apply_foreshadow_updates(ledger, result.foreshadow_updates, chapter)
        if result.foreshadow_updates
        else copy.deepcopy(dict(ledger))
    )
    return ChainStep(chapter, dict(state), result, new_ledger)


def ledger_before(
    current: Mapping[str, Any], historical: Mapping[str, Any] | None, start: int
) -> dict[str, Any]:
    """The foreshadowing ledger as it was before chapter ``start``, keeping what planning added since.

    ``historical`` is the ledger as it was when ``start`` was written (None when unknown). A thread's tracking
    fields (status, chapters, history) come from it; its other fields (description, resolve range, scope)
    from the current ledger, since the author or the planner may have edited them. A thread only the current
    ledger has is kept when no chapter from ``start`` on touched it (planning added it); one the chain's
    chapters created is dropped (the replay adds it again if its op still applies). Without ``historical``
    the current ledger's history events from ``start`` on are removed and the tracking fields recomputed.
    """
    old = {str(t.get("id")): t for t in _threads(historical or {})}
    out: list[dict[str, Any]] = []
    for thread in _threads(current):
        tid = str(thread.get("id"))
        events = [e for e in thread.get("history") or [] if isinstance(e, dict)]
        touched = any(_chapter_of(e) >= start for e in events)
        if historical is not None and tid in old:
            merged = {
                **thread,
                **{k: copy.deepcopy(old[tid].get(k)) for k in LEDGER_TRACKED if k in old[tid]},
            }
            out.append(merged)
        elif historical is not None:
            if not touched:
                out.append(copy.deepcopy(thread))
        else:
            kept = [e for e in events if _chapter_of(e) < start]
            if touched and not kept:
                continue
            out.append(_retrack(thread, kept) if touched else copy.deepcopy(thread))
    doc = copy.deepcopy(dict(current))
    doc["foreshadowing"] = out
    return doc


def _threads(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    threads = doc.get("foreshadowing") if isinstance(doc, Mapping) else None
    return [t for t in threads or [] if isinstance(t, dict)] if isinstance(threads, list) else []


def _chapter_of(event: Mapping[str, Any]) -> int:
    at = event.get("chapter")
    return int(at) if isinstance(at, int) and not isinstance(at, bool) else 0


def _retrack(thread: Mapping[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    out = copy.deepcopy(dict(thread))
    out["history"] = copy.deepcopy(events)
    out["status"] = str(events[-1].get("action")) if events else out.get("status")
    planted = [_chapter_of(e) for e in events if e.get("action") == "planted"]
    out["planted_chapter"] = planted[-1] if planted else None
    out["advanced_chapters"] = [_chapter_of(e) for e in events if e.get("action") == "advanced"]
    resolved = [_chapter_of(e) for e in events if e.get("action") == "resolved"]
    out["resolved_chapter"] = resolved[-1] if resolved else None
    return out


# ---------------------------------------------------------------------- what changed, in words
def entity_names(state: Mapping[str, Any], characters: Iterable[Mapping[str, Any]] = ()) -> dict[str, str]:
    """Display names by id: the character files' names, then each state entity's ``name`` field."""
    names: dict[str, str] = {}
    for ch in characters:
        if ch.get("id") and ch.get("name"):
            names[str(ch["id"])] = str(ch["name"])
    for category in CATEGORY_LABELS:
        for key, value in (state.get(category) or {}).items():
            if isinstance(value, dict) and value.get("name") and key not in names:
                names[str(key)] = str(value["name"])
    return names


def _show(value: Any, names: Mapping[str, str]) -> str:
    if value is None:
        return NONE
    if isinstance(value, str):
        return names.get(value, value) or NONE
    if isinstance(value, list):
        return "、".join(_show(v, names) for v in value) or NONE
    if isinstance(value, bool):
        return "是" if value else "否"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _fields(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {"值": value}


def describe_changes(
    before: Mapping[str, Any], after: Mapping[str, Any], names: Mapping[str, str]
) -> list[str]:
    """Entity by entity, what differs between two states, e.g. ``物品 青铜钥匙：持有者 林风 → 已不存在``."""
    lines: list[str] = []
    for category, label in CATEGORY_LABELS.items():
        old, new = before.get(category) or {}, after.get(category) or {}
        for key in sorted(set(old) | set(new)):
            if old.get(key) == new.get(key):
                continue
            name = names.get(key) or _entity_name(old.get(key)) or _entity_name(new.get(key)) or key
            if key not in new:
                parts = [
                    f"{_label(f)} {_show(v, names)}" for f, v in _fields(old[key]).items() if f != "name"
                ]
                lines.append(f"{label} {name}：{'，'.join(parts) or '存在'} → {GONE}")
                continue
            if key not in old:
                parts = [
                    f"{_label(f)} {_show(v, names)}" for f, v in _fields(new[key]).items() if f != "name"
                ]
                lines.append(f"{label} {name}：新出现（{'，'.join(parts) or '无属性'}）")
                continue
            a, b = _fields(old[key]), _fields(new[key])
            diffs = [
                f"{_label(f)} {_show(a.get(f), names)} → {_show(b.get(f), names)}"
                for f in [*a, *(f for f in b if f not in a)]
                if a.get(f) != b.get(f)
            ]
            lines.append(f"{label} {name}：{'；'.join(diffs)}")
    old_ws, new_ws = before.get("world_state") or {}, after.get("world_state") or {}
    for key in sorted(set(old_ws) | set(new_ws)):
        if old_ws.get(key) != new_ws.get(key):
            lines.append(f"世界状态 {key}：{_show(old_ws.get(key), names)} → {_show(new_ws.get(key), names)}")
    old_fs, new_fs = (
        set(before.get("active_foreshadowing") or []),
        set(after.get("active_foreshadowing") or []),
    )
    lines += [f"伏笔 {f}：未埋下或已回收 → 进行中" for f in sorted(new_fs - old_fs)]
    lines += [f"伏笔 {f}：进行中 → 未埋下或已回收" for f in sorted(old_fs - new_fs)]
    return lines


def _label(field_name: str) -> str:
    return FIELD_LABELS.get(field_name, field_name)


def _entity_name(value: Any) -> str:
    return str(value.get("name") or "") if isinstance(value, dict) else ""


def changed_entities(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """Entities (``category.id``) whose recorded state differs between two states."""
    changed: list[str] = []
    for category in (*CATEGORY_LABELS, "world_state"):
        old, new = before.get(category) or {}, after.get(category) or {}
        changed += [f"{category}.{k}" for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
    old_fs, new_fs = (
        set(before.get("active_foreshadowing") or []),
        set(after.get("active_foreshadowing") or []),
    )
    changed += sorted(old_fs ^ new_fs)
    return changed


# ---------------------------------------------------------------------- the cascade check
def cascade_reasons(
    chapter: int,
    *,
    summary: str,
    ops: list[Any],
    dropped: list[str],
    old_before: Mapping[str, Any],
    new_before: Mapping[str, Any],
    ledger: Mapping[str, Any],
    names: Mapping[str, str],
) -> list[str]:
    """Why chapter ``chapter``'s recorded summary and ops contradict the new state (empty: they agree).

    ``old_before``/``new_before`` are the states before the chapter without and with the rebuild, ``ledger``
    the re-derived foreshadowing ledger before it, ``dropped`` its recorded ops that no longer apply. Names
    come from the state's entities; no model is asked.
    """
    reasons = [f"状态 op 不再适用：{d}" for d in dropped]
    n = f"第{chapter}章"
    old_chars, new_chars = old_before.get("characters") or {}, new_before.get("characters") or {}
    for cid in sorted(set(old_chars) | set(new_chars)):
        name = names.get(cid) or _entity_name(old_chars.get(cid)) or cid
        if name not in summary:
            continue
        a, b = _fields(old_chars.get(cid) or {}), _fields(new_chars.get(cid) or {})
        old_loc, new_loc = a.get("location"), b.get("location")
        if old_loc != new_loc and isinstance(old_loc, str):
            shown_old, shown_new = _show(old_loc, names), _show(new_loc, names)
            if shown_old in summary and shown_new not in summary:
                reasons.append(f"人物 {name} 现在在 {shown_new}，{n}摘要写他在 {shown_old}")
        if a.get("status") != b.get("status") and b.get("status") is not None:
            reasons.append(
                f"人物 {name} 的状态已变为 {_show(b.get('status'), names)}"
                f"（原为 {_show(a.get('status'), names)}），"
                f"{n}摘要仍写到他"
            )
        lost = [x for x in _list(a.get("inventory")) if x not in _list(b.get("inventory"))]
        for item in lost:
            shown = _show(item, names)
            if shown in summary:
                reasons.append(f"物品 {shown} 已不在 {name} 身上，{n}摘要仍写到它")
    old_items, new_items = old_before.get("items") or {}, new_before.get("items") or {}
    touched_items = {str(_path(op)).split(".")[1] for op in ops if str(_path(op)).startswith("items.")}
    for iid in sorted(set(old_items) | touched_items):
        old_v, new_v = old_items.get(iid), new_items.get(iid)
        name = names.get(iid) or _entity_name(old_v) or _entity_name(new_v) or iid
        mentioned = name in summary
        if new_v is None and (mentioned or iid in touched_items):
            why = "摘要仍写到它" if mentioned else "记录的 op 仍在改动它"
            reasons.append(f"物品 {name} 在新状态中{GONE}，{n}{why}")
            continue
        if old_v is None or new_v is None or not mentioned:
            continue
        old_holder, new_holder = _holder(old_v), _holder(new_v)
        if old_holder != new_holder:
            reasons.append(
                f"物品 {name} 现由 {_show(new_holder, names)} 持有（原为 {_show(old_holder, names)}），"
                f"{n}摘要写到它"
            )
    active = set(new_before.get("active_foreshadowing") or [])
    threads = {str(t.get("id")): t for t in _threads(ledger)}
    for op in ops:
        if not isinstance(op, Mapping) or op.get("op") != "foreshadow":
            continue
        fid, action = str(op.get("path")), op.get("value")
        if action not in ("advanced", "resolved") or fid in active:
            continue
        thread = threads.get(fid) or {}
        done = thread.get("resolved_chapter")
        verb = "回收" if action == "resolved" else "推进"
        if isinstance(done, int) and done < chapter:
            reasons.append(f"伏笔 {fid} 在新状态中已于第{done}章回收，{n}仍在{verb}它")
        else:
            reasons.append(f"伏笔 {fid} 在新状态中从未埋下，{n}却在{verb}它")
    return list(dict.fromkeys(reasons))


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _path(op: Any) -> str:
    return str(op.get("path") or "") if isinstance(op, Mapping) else ""


def _holder(value: Any) -> Any:
    if not isinstance(value, dict):
        return None
    return value.get("holder", value.get("owner"))
