"""Context assembly for the chapter agents (seed 004 §8.3-§8.5, §6.6.7) within a token budget.

Everything an agent sees is read from the novel file here and turned into the template's slot values. The
ChapterWriter's prompt stays flat however long the novel gets: three recent summaries, the current
storyline's memory, neighbouring lines' memories per the volume schedule, frozen lines as one line each, the
chapter's outline section (not the whole volume when it is long), and a state pruned to the entities this
chapter touches (§8.5).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from novel_desktop.domain.contract_lifecycle import contracts_in_force
from novel_desktop.domain.outline import outline_sections
from novel_desktop.domain.platforms import platform_profile
from novel_desktop.domain.summary import ChapterSummary
from novel_desktop.storage import layout

#: The ChapterWriter prompt's budget (seed §8.4: ~22-25K tokens even at chapter 500).
WRITER_BUDGET_TOKENS = 25_000
_OUTLINE_TOKENS = 3_000
_STATE_TOKENS = 4_000
_CONTRACTS_TOKENS = 4_000


#: Runs of the characters :func:`estimate_tokens` counts one token each (CJK, full-width forms).
_CJK_RUN = re.compile("[\u3000-\u9fff\uff00-\uffef]+")


def estimate_tokens(text: str) -> int:
    """A deliberately pessimistic estimate: one token per CJK character, one per three other characters.

    Counted by runs in the regex engine: a Python loop over each character took ~2 ms per chapter-sized
    text, and the agents estimate dozens of texts per chapter on the event loop."""
    return _estimate(_cjk_count(text), len(text))


def _cjk_count(text: str) -> int:
    return sum(map(len, _CJK_RUN.findall(text)))


def _estimate(cjk: int, length: int) -> int:
    """The estimate of a text of ``length`` characters, ``cjk`` of them CJK."""
    return cjk + (length - cjk + 2) // 3


#: :func:`_cjk_count` remembered for the parts of the last prompts (:func:`estimate_parts`).
_cjk_chars = functools.lru_cache(maxsize=128)(_cjk_count)


def estimate_parts(parts: Iterable[str]) -> int:
    """:func:`estimate_tokens` of the parts joined, exactly (both counts add up over a join), each part's
    count remembered: a chapter's prompts share their long parts (the review calls' prefix, the judge's
    values), so each is counted once, not once per prompt and again for the context inspector."""
    cjk = length = 0
    for part in parts:
        cjk += _cjk_chars(part)
        length += len(part)
    return _estimate(cjk, length)


def trim_to_tokens(text: str, budget: int, *, keep: str = "end") -> str:
    """Cut ``text`` to about ``budget`` tokens, keeping its start or its end, marking the cut."""
    if estimate_tokens(text) <= budget:
        return text
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        piece = text[-mid:] if keep == "end" else text[:mid]
        if estimate_tokens(piece) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return ("……（前略）\n" + text[-lo:]) if keep == "end" else (text[:lo] + "\n……（后略）")


def _compact(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


@dataclass
class NovelFacts:
    """What the agents of one chapter read from the novel, loaded once per chapter."""

    chapter: int
    volume: int
    platform: str
    brief_text: str
    style_profile: dict[str, Any] | None
    blacklist: dict[str, Any] | list[Any] | None
    world_rules: list[dict[str, Any]]
    storyline_spec: list[dict[str, Any]]
    storylines: list[dict[str, Any]]
    schedule: dict[str, Any] | None
    outline: str
    sections: dict[int, str]
    contract: dict[str, Any] | None
    characters: list[dict[str, Any]]
    recent: list[tuple[int, str]]
    state: dict[str, Any]
    state_version: int
    global_foreshadowing: list[dict[str, Any]]
    style_drift: str
    memories: dict[str, str] = field(default_factory=dict)
    #: storylines.json's relationships (their bridges name shared characters and events).
    storyline_relationships: list[dict[str, Any]] = field(default_factory=list)

    # ------------------------------------------------------------------ derived facts
    @property
    def chapter_outline(self) -> str:
        return self.sections.get(self.chapter, "")

    @property
    def storyline_id(self) -> str | None:
        if self.contract and self.contract.get("storyline_id"):
            return str(self.contract["storyline_id"])
        m = re.search(r"(?:Storyline|故事线)\s*[:：]\s*([a-z0-9_-]+)", self.chapter_outline)
        if m:
            return m.group(1)
        main = [s for s in self.storylines if s.get("type") == "main_arc"]
        if main:
            return str(main[0].get("id"))
        return str(self.storylines[0]["id"]) if self.storylines else None

    @property
    def key_chapter(self) -> bool:
        """Volume start or end, or inside a storyline convergence event (judged twice)."""
        if self.sections and self.chapter in (min(self.sections), max(self.sections)):
            return True
        return bool(self.convergences())

    def convergences(self) -> tuple[dict[str, Any], ...]:
        """The schedule's convergence events whose chapter range covers this chapter."""
        return tuple(
            event
            for event in (self.schedule or {}).get("convergence_events") or []
            if isinstance(event, dict) and _covers(event.get("chapter_range"), self.chapter)
        )

    def _mentioned(self, text: str) -> list[dict[str, Any]]:
        """Characters whose name or an alias appears in ``text`` (the chapter's cast)."""
        out = []
        for ch in self.characters:
            names = [ch.get("name") or "", *(ch.get("aliases") or [])]
            if any(n and n in text for n in names) or (ch.get("id") and str(ch["id"]) in text):
                out.append(ch)
        return out

    def cast(self) -> list[dict[str, Any]]:
        basis = self.chapter_outline + _compact(self.contract or {}) + "".join(t for _, t in self.recent[-1:])
        return self._mentioned(basis) or self.characters[:3]

    # ------------------------------------------------------------------ slot values
    def platform_profile(self) -> str:
        return platform_profile(self.platform).describe()

    def style_profile_text(self) -> str:
        if not self.style_profile:
            return ""
        shown = {k: v for k, v in self.style_profile.items() if k != "writing_directives"}
        return _compact(shown)

    def writing_directives(self) -> str:
        items = (self.style_profile or {}).get("writing_directives") or []
        return "\n".join(f"- {d}" for d in items)

    def blacklist_text(self, extra: list[str]) -> str:
        words: list[str] = []
        bl = self.blacklist
        if isinstance(bl, list):
            words = [str(w) for w in bl]
        elif isinstance(bl, dict):
            words = [str(w) for key in ("words", "custom_added", "from_judge") for w in (bl.get(key) or [])]
            removed = set(bl.get("custom_removed") or [])
            words = [w for w in words if w not in removed]
        # Patterns (re:…) are enforced by the analysis; the prompt lists literal phrases only.
        merged = [w for w in dict.fromkeys([*words, *extra]) if not w.startswith("re:")]
        return "、".join(merged[:200])

    def hard_rules(self) -> str:
        return "\n".join(
            f"- {r.get('id')}：{r.get('rule')}"
            for r in self.world_rules
            if r.get("constraint_type") == "hard"
        )

    def soft_rules(self) -> str:
        return "\n".join(
            f"- {r.get('id')}：{r.get('rule')}"
            for r in self.world_rules
            if r.get("constraint_type") != "hard"
        )

    def all_rules(self) -> str:
        return "\n".join(
            f"- {r.get('id')}（{r.get('constraint_type', 'hard')}）：{r.get('rule')}"
            for r in self.world_rules
        )

    def storyline_spec_text(self) -> str:
        return "\n".join(
            f"- {r.get('id')}（{r.get('constraint_type', 'soft')}）：{r.get('rule')}"
            for r in self.storyline_spec
        )

    def volume_outline(self) -> str:
        """The volume outline; for a long one, the sections around this chapter: a window that moves in steps
        of four chapters (at least three before and three after this one), so that consecutive chapters send
        the same block and the writer reads it from the prompt cache (issue 18)."""
        if estimate_tokens(self.outline) <= _OUTLINE_TOKENS:
            return self.outline
        base = (self.chapter - 1) // 4 * 4
        near = [self.sections[c] for c in sorted(self.sections) if base - 2 <= c < base + 8]
        head = self.outline.split("\n## ", 1)[0] if "\n## " in self.outline else ""
        return trim_to_tokens(
            head.strip() + "\n\n（本卷大纲较长，以下为本章前后几章）\n\n" + "\n\n".join(near),
            _OUTLINE_TOKENS,
            keep="start",
        )

    def writer_storyline_context(self) -> str:
        """The writer's 当前线进度与过渡: the contract's storyline_context and transition_hint, less what the
        writer's prompt says elsewhere (the other lines' news: adjacent_memories / concurrent_state; the
        last chapter's summary when it is among the recent summaries)."""
        if not self.contract or not self.contract.get("storyline_context"):
            return ""
        ctx = self.contract["storyline_context"]
        if isinstance(ctx, dict):
            ctx = {k: v for k, v in ctx.items() if k != "concurrent_state"}
            if ctx.get("last_chapter_on_this_line") in {n for n, _ in self.recent}:
                ctx.pop("last_chapter_summary", None)
        out: dict[str, Any] = {"storyline_context": ctx}
        if self.contract.get("transition_hint"):
            out["transition_hint"] = self.contract["transition_hint"]
        return _compact(out)

    def storyline_context(self) -> str:
        if self.contract and self.contract.get("storyline_context"):
            ctx = {"storyline_context": self.contract["storyline_context"]}
            if self.contract.get("transition_hint"):
                ctx["transition_hint"] = self.contract["transition_hint"]
            return _compact(ctx)
        return ""

    def _active_lines(self) -> list[str]:
        return [str(a.get("storyline_id")) for a in (self.schedule or {}).get("active_storylines", []) or []]

    def adjacent_lines(self) -> list[str]:
        """The lines whose memory the writer gets besides its own (seed §6.6.7 Layer 1): the schedule's
        active lines, and in a convergence event's chapters the lines the event brings together. Every other
        line is frozen (one concurrent_state line); a line is never both."""
        lines = self._active_lines()
        for event in self.convergences():
            lines += [str(x) for x in event.get("involved_storylines") or event.get("storylines") or []]
        current = self.storyline_id
        return [line for line in dict.fromkeys(lines) if line != current]

    def _contract_concurrent(self) -> dict[str, Any]:
        ctx = (self.contract or {}).get("storyline_context") or {}
        found = ctx.get("concurrent_state") if isinstance(ctx, dict) else None
        return dict(found) if isinstance(found, dict) else {}

    def adjacent_memories(self) -> str:
        """Each adjacent line's memory, headed by the contract's one-line news of it when it has one."""
        news = self._contract_concurrent()
        parts = []
        for line in self.adjacent_lines():
            memory = self.memories.get(line, "")
            head = f"[{line}]" + (f" 此刻：{news[line]}" if news.get(line) else "")
            if memory:
                parts.append(f"{head}\n{trim_to_tokens(memory, 600)}")
            elif news.get(line):
                parts.append(head)
        return "\n\n".join(parts)

    def concurrent_state(self) -> str:
        """One line per frozen line (not the current one, not an adjacent one: those get their memory)."""
        current, adjacent = self.storyline_id, set(self.adjacent_lines())
        from_contract = self._contract_concurrent()
        lines = [f"- {k}：{v}" for k, v in from_contract.items() if k != current and k not in adjacent]
        known = set(from_contract)
        for s in self.storylines:
            sid = str(s.get("id"))
            if sid == current or sid in known or sid in adjacent:
                continue
            memory = self.memories.get(sid, "")
            first = next(
                (ln.strip("-# ").strip() for ln in memory.splitlines() if ln.strip("-# ").strip()), ""
            )
            lines.append(f"- {sid}（{s.get('status', 'dormant')}）：{first or s.get('description', '')}"[:80])
        return "\n".join(lines)

    def character_contracts(self) -> str:
        changes = {
            str(u.get("contract_id")): str(u.get("rule"))
            for u in (self.contract or {}).get("contract_updates") or []
            if isinstance(u, dict)
        }
        parts = []
        for ch in self.cast():
            # Only the versions in force for this chapter (seed §6.5.3); a change this chapter makes is named.
            contracts = contracts_in_force(ch, self.chapter)
            head = f"{ch.get('name')}（{ch.get('id')}）"
            if ch.get("speech_pattern"):
                head += f"，说话：{ch['speech_pattern']}"
            body = "\n".join(
                f"  - {c.get('id')}：{c.get('rule')}"
                + (f"（本章变更为：{changes[c.get('id')]}）" if c.get("id") in changes else "")
                for c in contracts
            )
            parts.append(head + ("\n" + body if body else ""))
        return trim_to_tokens("\n".join(parts), _CONTRACTS_TOKENS, keep="start")

    def recent_summaries(self) -> str:
        return "\n\n".join(f"第{n}章：{text.strip()}" for n, text in self.recent)

    def pruned_state(self) -> str:
        """§8.5: the characters of this chapter's cast plus world state and active foreshadowing."""
        cast_ids = {str(c.get("id")) for c in self.cast()}
        chars = self.state.get("characters") or {}
        keep = {k: v for k, v in chars.items() if k in cast_ids} or dict(list(chars.items())[:5])
        basis = self.chapter_outline + _compact(self.contract or {})
        pruned: dict[str, Any] = {"state_version": self.state.get("state_version", 0), "characters": keep}
        for category in ("items", "locations", "factions"):
            entries = self.state.get(category) or {}
            near = {k: v for k, v in entries.items() if k in basis or any(str(x) in basis for x in _names(v))}
            if near:
                pruned[category] = near
        pruned["world_state"] = self.state.get("world_state") or {}
        pruned["active_foreshadowing"] = self.state.get("active_foreshadowing") or []
        return trim_to_tokens(_compact(pruned), _STATE_TOKENS, keep="start")

    def foreshadowing_tasks(self) -> str:
        tasks = []
        for obj in (self.contract or {}).get("objectives", []) or []:
            if obj.get("type") == "foreshadowing":
                tasks.append(
                    f"- {obj.get('action', '')} {obj.get('target', '')}：{obj.get('description', '')}"
                )
        for item in self.global_foreshadowing:
            rng = item.get("target_resolve_range") or []
            if (
                item.get("status") in ("planted", "advanced")
                and len(rng) == 2
                and rng[0] <= self.chapter <= rng[1] + 3
            ):
                overdue = "（已超期）" if self.chapter > rng[1] else ""
                tasks.append(f"- 回收窗口内{overdue}：{item.get('id')}：{item.get('description', '')}")
        return "\n".join(tasks)

    def chapter_contract_text(self, *, omit: tuple[str, ...] = ()) -> str:
        """The L3 contract as compact JSON, less the ``omit`` keys (what the prompt shows elsewhere)."""
        if not self.contract:
            return ""
        return _compact({k: v for k, v in self.contract.items() if k not in omit})

    def entity_roster(self) -> str:
        lines = [f"- characters.{c.get('id')} = {c.get('name')}" for c in self.characters]
        for category in ("items", "locations", "factions"):
            for key, value in (self.state.get(category) or {}).items():
                name = value.get("name") if isinstance(value, dict) else None
                lines.append(f"- {category}.{key}" + (f" = {name}" if name else ""))
        return "\n".join(lines)

    def storylines_overview(self) -> str:
        return "\n".join(
            f"- {s.get('id')}：{s.get('name', '')}（{s.get('status', '')}）" for s in self.storylines
        )


def _covers(rng: Any, chapter: int) -> bool:
    return isinstance(rng, list | tuple) and len(rng) == 2 and int(rng[0]) <= chapter <= int(rng[1])


def _names(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [str(value.get("name") or "")]
    return []


def _summary_text(chapter: int, markdown: str) -> str:
    """A stored summary without its metadata line."""
    try:
        return ChapterSummary.from_markdown(markdown, chapter).text.strip()
    except ValueError:
        return markdown.strip()


class FactsSource(Protocol):
    """What :func:`load_facts` reads: the open novel (``NovelStore``), or a view of the novel as it was when a
    chapter was written (the historical rebuild's)."""

    def document(self, path: str) -> str | None: ...

    def list_documents(self, prefix: str = "") -> list[str]: ...

    def documents_under(self, prefix: str) -> dict[str, str]: ...

    def checkpoint(self) -> dict[str, Any]: ...

    def meta(self) -> dict[str, str]: ...

    def current_state(self) -> dict[str, Any]: ...

    def recent_summaries(self, before: int, n: int = 3) -> list[tuple[int, str]]: ...


def _json_doc(store: FactsSource, path: str) -> Any:
    return _json_text(store.document(path))


def _json_text(text: str | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def load_facts(store: FactsSource, chapter: int, volume: int | None = None) -> NovelFacts:
    """Read everything the chapter's agents need (synchronous; call it in a worker thread)."""
    cp = store.checkpoint()
    vol = volume or int(cp.get("current_volume") or 1)
    meta = store.meta()
    outline = store.document(f"{layout.volume_dir(vol)}/outline.md") or ""
    rules_doc = _json_doc(store, "world/rules.json") or {}
    spec_doc = _json_doc(store, "storylines/storyline-spec.json") or {}
    storylines_doc = _json_doc(store, "storylines/storylines.json") or {}
    characters = []
    # One query per folder, not one per file: a long novel has dozens of characters and storylines.
    for path, text in store.documents_under("characters/active/").items():
        if path.endswith(".json"):
            doc = _json_text(text)
            if isinstance(doc, dict):
                doc.setdefault("id", path.rsplit("/", 1)[-1].removesuffix(".json"))
                characters.append(doc)
    memories = {}
    for path, text in store.documents_under("storylines/").items():
        if path.endswith("/memory.md"):
            memories[path.split("/")[1]] = text or ""
    fs_doc = _json_doc(store, layout.GLOBAL_FORESHADOWING) or {}
    state = store.current_state()
    return NovelFacts(
        chapter=chapter,
        volume=vol,
        platform=meta.get("platform", "web"),
        brief_text=store.document("brief.md") or "",
        style_profile=_json_doc(store, "style-profile.json"),
        blacklist=_json_doc(store, "ai-blacklist.json"),
        world_rules=list(rules_doc.get("rules") or []),
        storyline_spec=list(spec_doc.get("rules") or []),
        storylines=list(storylines_doc.get("storylines") or []),
        schedule=_json_doc(store, f"{layout.volume_dir(vol)}/storyline-schedule.json"),
        outline=outline,
        sections=outline_sections(outline),
        contract=_json_doc(store, layout.contract_path(vol, chapter)),
        characters=characters,
        recent=[(n, _summary_text(n, t)) for n, t in store.recent_summaries(chapter, 3)],
        state=state,
        state_version=int(state.get("state_version", 0)),
        global_foreshadowing=list(fs_doc.get("foreshadowing") or []),
        style_drift=store.document("style-drift.json") or "",
        memories=memories,
        storyline_relationships=[r for r in storylines_doc.get("relationships") or [] if isinstance(r, dict)],
    )
