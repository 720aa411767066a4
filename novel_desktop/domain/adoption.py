"""接续已有书稿 (issue 19 point 1): what the agents read out of an imported manuscript.

Phase 1 reads the book chapter by chapter into a :class:`ChapterNote` (prompts/book_reader.md); phase 2
synthesises the notes (not the text) into a :class:`BookSynthesis` (prompts/book_synthesis.md): the world,
the characters with their L2 contracts, the storylines, the open foreshadowing and the story state at the
last chapter, each in the payload shape of :mod:`novel_desktop.domain.proposals` so that the author approves
it through the ordinary review. Pure models and helpers; nothing here reads the novel.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import Field

from novel_desktop.domain.common import SLUG_RE, SeedModel
from novel_desktop.domain.foreshadowing import ForeshadowItem

ThreadAction = Literal["planted", "advanced", "resolved"]


class NoteCharacter(SeedModel):
    """A character as one chapter shows them."""

    name: str = Field(min_length=1)
    aliases: list[str] = Field(default_factory=list)
    role: str = ""
    traits: list[str] = Field(default_factory=list)
    status_change: str = ""


class NoteThread(SeedModel):
    """A thread (伏笔) a chapter opens, advances or resolves; ``id`` is a stable slug across chapters."""

    id: str = Field(min_length=1)
    action: ThreadAction
    description: str = ""


class ChapterNote(SeedModel):
    """One chapter read by the book reader."""

    chapter: int = Field(ge=1)
    summary: str = Field(min_length=1)
    characters: list[NoteCharacter] = Field(default_factory=list)
    world_facts: list[str] = Field(default_factory=list)
    threads: list[NoteThread] = Field(default_factory=list)
    storylines: list[str] = Field(default_factory=list)
    end_state: str = ""


class SynthesisThread(SeedModel):
    """An open thread at the last chapter, as the synthesis lists it."""

    id: str = Field(min_length=1)
    description: str = ""
    status: Literal["planted", "advanced"] = "planted"
    planted_chapter: int | None = Field(default=None, ge=1)
    storyline_id: str | None = None


class BookSynthesis(SeedModel):
    """The book as the notes show it, in the proposal payload shapes (validated again on approval)."""

    world: dict[str, Any] = Field(default_factory=dict)
    characters: dict[str, Any] = Field(default_factory=dict)
    storylines: dict[str, Any] = Field(default_factory=dict)
    foreshadowing: list[SynthesisThread] = Field(default_factory=list)
    #: ``{"characters": {slug: {field: value}}, "world_state": {field: value}, ...}`` at the last chapter.
    state: dict[str, Any] = Field(default_factory=dict)


# ---------------------------------------------------------------------------- rolling synopsis
def known_names(notes: Iterable[ChapterNote], limit: int = 40) -> list[str]:
    """The characters met so far (name and aliases), most recently seen first, at most ``limit``."""
    seen: dict[str, list[str]] = {}
    for note in notes:
        for c in note.characters:
            aliases = seen.pop(c.name, [])
            seen[c.name] = list(dict.fromkeys([*aliases, *c.aliases]))
    out = []
    for name, aliases in reversed(list(seen.items())):
        out.append(f"{name}（{'、'.join(aliases)}）" if aliases else name)
    return out[:limit]


def open_threads(notes: Iterable[ChapterNote]) -> dict[str, tuple[str, int, str]]:
    """Threads not resolved yet: id → (description, first chapter, latest action)."""
    threads: dict[str, tuple[str, int, str]] = {}
    for note in notes:
        for t in note.threads:
            if t.action == "resolved":
                threads.pop(t.id, None)
                continue
            desc, first, _ = threads.get(t.id, (t.description, note.chapter, t.action))
            threads[t.id] = (desc or t.description, first, t.action)
    return threads


def synopsis(notes: Sequence[ChapterNote], *, recent: int = 3, thread_limit: int = 20) -> str:
    """What the reader is told of the chapters before: the characters met (names stay consistent), the open
    threads (ids stay stable) and the last ``recent`` summaries. Bounded whatever the book's length."""
    if not notes:
        return "（这是第一章，之前没有内容）"
    lines = ["## 已出场人物（沿用这些名字）", "、".join(known_names(notes)) or "（无）", "", "## 未解的伏笔"]
    threads = list(open_threads(notes).items())[-thread_limit:]
    lines += [f"- {tid}：{desc}（第 {first} 章起）" for tid, (desc, first, _) in threads] or ["（无）"]
    lines += ["", "## 最近几章摘要"]
    lines += [f"- 第 {n.chapter} 章：{n.summary}" for n in notes[-recent:]]
    last = notes[-1].end_state.strip()
    if last:
        lines += ["", f"## 第 {notes[-1].chapter} 章结束时的状态", last]
    return "\n".join(lines)


def notes_digest(notes: Sequence[ChapterNote], *, world_limit: int = 60, recent: int = 5) -> str:
    """The notes folded for the synthesis: every character with what the chapters showed, the world facts,
    the threads with their status, the storylines, the summaries and the end state of the last chapters."""
    chars: dict[str, dict[str, Any]] = {}
    for note in notes:
        for c in note.characters:
            entry = chars.setdefault(c.name, {"aliases": [], "role": "", "traits": [], "changes": [], "n": 0})
            entry["aliases"] = list(dict.fromkeys([*entry["aliases"], *c.aliases]))
            entry["role"] = c.role or entry["role"]
            entry["traits"] = list(dict.fromkeys([*entry["traits"], *c.traits]))[:8]
            entry["n"] += 1
            if c.status_change:
                entry["changes"].append(f"第{note.chapter}章 {c.status_change}")
            entry.setdefault("first", note.chapter)
    lines = ["## 人物（出场章数从多到少）"]
    for name, e in sorted(chars.items(), key=lambda kv: -int(kv[1]["n"])):
        alias = f"（又名 {'、'.join(e['aliases'])}）" if e["aliases"] else ""
        lines.append(
            f"- {name}{alias}：{e['role'] or '未定'}；出场 {e['n']} 章，首次第 {e['first']} 章；"
            f"特点 {'、'.join(e['traits']) or '（无）'}；变化 {'；'.join(e['changes'][-4:]) or '（无）'}"
        )
    facts = list(dict.fromkeys(f for n in notes for f in n.world_facts))[:world_limit]
    lines += ["", "## 世界设定（正文中写到的）", *[f"- {f}" for f in facts]]
    lines += ["", "## 伏笔"]
    status: dict[str, tuple[str, int, str]] = {}
    for note in notes:
        for t in note.threads:
            desc, first, _ = status.get(t.id, (t.description, note.chapter, t.action))
            status[t.id] = (desc or t.description, first, t.action)
    lines += [f"- {tid}：{d}（第 {f} 章起，最新：{a}）" for tid, (d, f, a) in status.items()]
    lines += ["", "## 故事线", "、".join(dict.fromkeys(s for n in notes for s in n.storylines)) or "（无）"]
    lines += ["", "## 各章摘要"]
    lines += [f"- 第 {n.chapter} 章：{n.summary}" for n in notes]
    lines += ["", "## 最后几章结束时的状态"]
    lines += [f"- 第 {n.chapter} 章：{n.end_state}" for n in notes[-recent:] if n.end_state]
    return "\n".join(lines)


# ---------------------------------------------------------------------------- foreshadowing and state
def foreshadowing_items(threads: Sequence[SynthesisThread], last_chapter: int) -> list[dict[str, Any]]:
    """The open threads as ``foreshadowing/global.json`` entries (ids that are not slugs are dropped)."""
    out = []
    for t in threads:
        if not SLUG_RE.fullmatch(t.id):
            continue
        planted = min(t.planted_chapter or last_chapter, last_chapter)
        item = ForeshadowItem(
            id=t.id,
            description=t.description,
            status=t.status,
            planted_chapter=planted,
            storyline_id=t.storyline_id,
            history=[{"chapter": planted, "action": "planted", "detail": t.description or None}],
        )
        out.append(item.to_json_dict())
    return out


_CATEGORIES = ("characters", "items", "locations", "factions")


def state_ops(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The synthesised state as ``set`` ops (paths of 2-3 slug segments); what is no path is left out."""
    ops: list[dict[str, Any]] = []
    for category in _CATEGORIES:
        entities = state.get(category)
        if not isinstance(entities, Mapping):
            continue
        for slug, fields in entities.items():
            if not SLUG_RE.fullmatch(str(slug)) or not isinstance(fields, Mapping):
                continue
            for key, value in fields.items():
                if SLUG_RE.fullmatch(str(key)):
                    ops.append({"op": "set", "path": f"{category}.{slug}.{key}", "value": value})
    world = state.get("world_state")
    if isinstance(world, Mapping):
        for key, value in world.items():
            if SLUG_RE.fullmatch(str(key)):
                ops.append({"op": "set", "path": f"world_state.{key}", "value": value})
    return ops


__all__ = [
    "BookSynthesis",
    "ChapterNote",
    "NoteCharacter",
    "NoteThread",
    "SynthesisThread",
    "foreshadowing_items",
    "known_names",
    "notes_digest",
    "open_threads",
    "state_ops",
    "synopsis",
]
