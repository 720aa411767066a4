"""Approval before binding (issue 14 item 3; seed 004 §6.5.5).

What the world builder, the character weaver and the plot architect invent binds later chapters only after
the author accepted it. The pipeline turns an agent's output into a :class:`~novel_desktop.domain.proposals.
Proposal` whose payload is the *whole* of that kind after the change (the current world with the new rules,
all active characters with the new one …), asks :func:`review` (接受 / 编辑 / 重新生成, one NOVEL_ASK
question), and stores only the accepted payload with :func:`apply_payload`.

:func:`current_payload` is what the novel holds now in the same shape: the window's forms and ``novel edit``
start from it, and an edit later in the life of the novel goes through :func:`apply_payload` too, which
writes everything in one transaction and appends a changelog line naming what was added, removed or changed
and the chapter it takes effect from.

Removing a character from the characters payload *retires* it (its files move to ``characters/retired/`` with
status retired, as :func:`~novel_desktop.pipeline.on_demand.retire_character` does): the chapters already
written still mention the character, and its profile and contracts stay readable. A retired character that
comes back in a payload is active again.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from novel_desktop.agents.planning import CharacterReply
from novel_desktop.domain.characters import Character, Relationships
from novel_desktop.domain.common import iso_now
from novel_desktop.domain.foreshadowing import ForeshadowItem
from novel_desktop.domain.novel_ask import QuestionSpec
from novel_desktop.domain.proposals import (
    KIND_NAMES,
    CharactersPayload,
    Proposal,
    ProposalInvalid,
    ReviewDecision,
    VolumePlan,
    WorldPayload,
    parse_payload,
    read_review,
    review_spec,
)
from novel_desktop.domain.storylines import StorylinesFile
from novel_desktop.pipeline.interaction import InteractionManager, resolve_gate
from novel_desktop.storage import layout
from novel_desktop.storage.aio import db
from novel_desktop.storage.store import NovelStore, StoreError, dumps

RULES = "world/rules.json"
RELATIONSHIPS = "characters/relationships.json"
STORYLINES = "storylines/storylines.json"
CHANGELOGS = {
    "world": "world/changelog.md",
    "characters": "characters/changelog.md",
    "storylines": "storylines/changelog.md",
}
_ACTIVE = "characters/active/"
_RETIRED = "characters/retired/"


class ApprovalError(StoreError):
    """A proposal could not be reviewed or stored; the message says why, for the author."""


def volume_changelog(volume: int) -> str:
    return f"{layout.volume_dir(volume)}/changelog.md"


def changelog_path(kind: str, volume: int | None = None) -> str:
    """Where the changes of ``kind`` are recorded."""
    if kind == "volume_plan":
        return volume_changelog(volume or 1)
    return CHANGELOGS[kind]


def _volume(store: NovelStore, volume: int | None) -> int:
    if volume is not None:
        return volume
    return int(store.checkpoint().get("current_volume") or 1)


# ---------------------------------------------------------------------------- reading what the novel holds
def _world_docs(store: NovelStore) -> list[dict[str, str]]:
    docs = []
    for path in store.list_documents("world/"):
        name = path[len("world/") :]
        if "/" in name or not name.endswith(".md") or name == "changelog.md":
            continue
        docs.append({"file": name, "content": store.document(path) or ""})
    return docs


def _json_docs(store: NovelStore, prefix: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for path in store.list_documents(prefix):
        if path.endswith(".json") and "/" not in path[len(prefix) :]:
            data = store.document_json(path)
            if isinstance(data, dict):
                out[path] = data
    return out


def _contracts(store: NovelStore, volume: int) -> dict[str, dict[str, Any]]:
    return _json_docs(store, f"{layout.volume_dir(volume)}/chapter-contracts/")


def current_payload(store: NovelStore, kind: str, *, volume: int | None = None) -> dict[str, Any]:
    """What the novel holds now, as a ``kind`` payload (the starting point of every later edit).

    ``world``: ``world/rules.json`` and the narrative ``world/*.md`` documents (``file`` is the bare name);
    ``characters``: ``characters/active/*.json`` and the relationships; ``storylines``:
    ``storylines/storylines.json``; ``volume_plan``: the volume's (default: the current one) outline, chapter
    contracts, storyline schedule and foreshadowing plan.
    """
    if kind == "world":
        rules = store.document_json(RULES) or {}
        return {"rules": list(rules.get("rules") or []), "documents": _world_docs(store)}
    if kind == "characters":
        characters = [data for _, data in sorted(_json_docs(store, _ACTIVE).items())]
        rel = store.document_json(RELATIONSHIPS) or {}
        return {"characters": characters, "relationships": list(rel.get("relationships") or [])}
    if kind == "storylines":
        data = store.document_json(STORYLINES)
        return data if isinstance(data, dict) else {"storylines": []}
    if kind == "volume_plan":
        vol = _volume(store, volume)
        vdir = layout.volume_dir(vol)
        contracts = sorted(_contracts(store, vol).values(), key=lambda c: int(c.get("chapter") or 0))
        payload: dict[str, Any] = {
            "outline": store.document(f"{vdir}/outline.md") or "",
            "chapter_contracts": contracts,
        }
        for key, name in (
            ("storyline_schedule", "storyline-schedule.json"),
            ("foreshadowing", "foreshadowing.json"),
        ):
            data = store.document_json(f"{vdir}/{name}")
            if isinstance(data, dict):
                payload[key] = data
        return payload
    raise ProposalInvalid([f"未知的提案类型：{kind}"])


# ---------------------------------------------------------------------------- what a payload changes
@dataclass
class Change:
    """The documents a payload writes and deletes, and what it changed (for the changelog)."""

    puts: dict[str, str] = field(default_factory=dict)
    deletes: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    #: How removals are named in the changelog (退场 for characters).
    removed_word: str = "删除"

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def describe(self) -> str:
        parts = []
        if self.added:
            parts.append("新增 " + "、".join(self.added))
        if self.removed:
            parts.append(f"{self.removed_word} " + "、".join(self.removed))
        if self.changed:
            parts.append("修改 " + "、".join(self.changed))
        return "；".join(parts) or "无改动"


def _diff(change: Change, before: dict[str, Any], after: dict[str, Any]) -> None:
    for key, value in after.items():
        if key not in before:
            change.added.append(key)
        elif before[key] != value:
            change.changed.append(key)
    change.removed += [k for k in before if k not in after]


def _doc_text(text: str) -> str:
    return text if text.endswith("\n") or not text else text + "\n"


def _world_change(store: NovelStore, model: WorldPayload) -> Change:
    change = Change()
    old_rules = {str(r.get("id")): r for r in (store.document_json(RULES) or {}).get("rules") or []}
    new_rules = {r.id: r.to_json_dict() for r in model.rules}
    _diff(change, old_rules, new_rules)
    old_file = store.document_json(RULES) or {}
    if change.added or change.changed or change.removed:
        change.puts[RULES] = dumps({**old_file, "rules": list(new_rules.values())})
    old_docs = {f"world/{d['file']}": d["content"] for d in _world_docs(store)}
    new_docs: dict[str, str] = {}
    problems = []
    for doc in model.documents:
        name = PurePosixPath(doc.file).name
        if not name.endswith(".md") or name == "changelog.md" or not layout.is_safe_relpath(name):
            problems.append(f"documents：{doc.file} 不能作为世界文档名（需要 xxx.md，且不是 changelog.md）")
            continue
        new_docs[f"world/{name}"] = _doc_text(doc.content)
    if problems:
        raise ProposalInvalid(problems)
    doc_change = Change()
    _diff(doc_change, {k: _doc_text(v) for k, v in old_docs.items()}, new_docs)
    change.added += doc_change.added
    change.changed += doc_change.changed
    change.removed += doc_change.removed
    change.puts.update({k: v for k, v in new_docs.items() if k in doc_change.added + doc_change.changed})
    change.deletes += doc_change.removed
    return change


def _characters_change(store: NovelStore, model: CharactersPayload) -> Change:
    change = Change(removed_word="退场")
    active = {p[len(_ACTIVE) : -len(".json")]: d for p, d in _json_docs(store, _ACTIVE).items()}
    retired = {p[len(_RETIRED) : -len(".json")]: d for p, d in _json_docs(store, _RETIRED).items()}
    wanted: dict[str, Character] = {c.id: c for c in model.characters}
    for slug, ch in wanted.items():
        data = ch.to_json_dict()
        label = f"{ch.name}（{slug}）"
        if ch.status == "retired":
            # Retired in the payload itself: keep it with the retired ones.
            if slug in active:
                _retire(store, change, slug, {**active[slug], **data, "status": "retired"})
            else:
                change.puts[f"{_RETIRED}{slug}.json"] = dumps(data)
            continue
        data = {**data, "status": "active"}
        if slug in active:
            if active[slug] == data:
                continue
            change.changed.append(label)
        elif slug in retired:
            change.added.append(label + "（重新登场）")
            change.deletes.append(f"{_RETIRED}{slug}.json")
            md = store.document(f"{_RETIRED}{slug}.md")
            if md is not None:
                change.puts[f"{_ACTIVE}{slug}.md"] = md
                change.deletes.append(f"{_RETIRED}{slug}.md")
        else:
            change.added.append(label)
        change.puts[f"{_ACTIVE}{slug}.json"] = dumps(data)
    for slug, data in active.items():
        if slug not in wanted:
            _retire(store, change, slug, {**data, "status": "retired"})
    old_rel = store.document_json(RELATIONSHIPS) or {}
    new_rel = Relationships(relationships=model.relationships).to_json_dict()
    if list(old_rel.get("relationships") or []) != new_rel.get("relationships", []):
        if old_rel or model.relationships:
            change.changed.append("人物关系")
        change.puts[RELATIONSHIPS] = dumps({**old_rel, **new_rel})
    return change


def _retire(store: NovelStore, change: Change, slug: str, data: dict[str, Any]) -> None:
    change.removed.append(f"{data.get('name', slug)}（{slug}）")
    change.puts[f"{_RETIRED}{slug}.json"] = dumps(data)
    change.deletes.append(f"{_ACTIVE}{slug}.json")
    md = store.document(f"{_ACTIVE}{slug}.md")
    if md is not None:
        change.puts[f"{_RETIRED}{slug}.md"] = md
        change.deletes.append(f"{_ACTIVE}{slug}.md")


def _storylines_change(store: NovelStore, model: StorylinesFile) -> Change:
    change = Change()
    current = store.document_json(STORYLINES) or {}
    old = {str(s.get("id")): s for s in current.get("storylines") or []}
    new = {s.id: s.to_json_dict() for s in model.storylines}
    _diff(change, old, new)
    data = model.to_json_dict()
    rest_old = {k: v for k, v in current.items() if k != "storylines"}
    rest_new = {k: v for k, v in data.items() if k != "storylines"}
    if rest_old != rest_new and (rest_old or rest_new.get("relationships")):
        change.changed.append("故事线关系")
    change.puts[STORYLINES] = dumps(data)
    for line in model.storylines:
        memory = layout.memory_path(line.id)
        if store.document(memory) is None:
            change.puts[memory] = f"# {line.name}\n"
    return change


def _plan_change(store: NovelStore, model: VolumePlan, volume: int) -> Change:
    change = Change()
    vdir = layout.volume_dir(volume)
    outline_path = f"{vdir}/outline.md"
    outline = model.outline.strip() + "\n"
    if (store.document(outline_path) or "") != outline:
        change.changed.append("大纲")
        change.puts[outline_path] = outline
    old = _contracts(store, volume)
    new = {layout.contract_path(volume, c.chapter): c.to_json_dict() for c in model.chapter_contracts}
    if len(new) != len(model.chapter_contracts):
        raise ProposalInvalid(["chapter_contracts：同一章有两份章节契约"])
    for path, data in new.items():
        label = f"第{data['chapter']}章契约"
        if path not in old:
            change.added.append(label)
        elif old[path] != data:
            change.changed.append(label)
        else:
            continue
        change.puts[path] = dumps(data)
    for path, data in old.items():
        if path not in new:
            change.removed.append(f"第{data.get('chapter', '?')}章契约")
            change.deletes.append(path)
    if model.storyline_schedule is not None:
        schedule = {**model.storyline_schedule.to_json_dict(), "volume": volume}
        _put_compare(store, change, f"{vdir}/storyline-schedule.json", schedule, "故事线排期")
    if model.foreshadowing is not None:
        fs = {**model.foreshadowing.to_json_dict(), "volume": volume}
        if _put_compare(store, change, f"{vdir}/foreshadowing.json", fs, "伏笔计划"):
            doc = store.document_json(layout.GLOBAL_FORESHADOWING) or {"foreshadowing": []}
            known = {str(i.get("id")) for i in doc.get("foreshadowing") or []}
            for item in model.foreshadowing.foreshadowing:
                if item.id not in known:
                    base = ForeshadowItem.model_validate(
                        {k: v for k, v in item.to_json_dict().items() if k in ForeshadowItem.model_fields}
                    )
                    doc.setdefault("foreshadowing", []).append(base.to_json_dict())
            change.puts[layout.GLOBAL_FORESHADOWING] = dumps(doc)
    return change


def _put_compare(store: NovelStore, change: Change, path: str, data: dict[str, Any], label: str) -> bool:
    if store.document_json(path) == data:
        return False
    change.changed.append(label)
    change.puts[path] = dumps(data)
    return True


def payload_change(store: NovelStore, kind: str, payload: Any, *, volume: int | None = None) -> Change:
    """Validate ``payload`` and work out what storing it writes; raises :class:`ProposalInvalid`."""
    model = parse_payload(kind, payload)
    if isinstance(model, WorldPayload):
        return _world_change(store, model)
    if isinstance(model, CharactersPayload):
        return _characters_change(store, model)
    if isinstance(model, StorylinesFile):
        return _storylines_change(store, model)
    if isinstance(model, VolumePlan):
        return _plan_change(store, model, _volume(store, volume))
    raise ProposalInvalid([f"未知的提案类型：{kind}"])


def write_change(
    store: NovelStore,
    change: Change,
    log_path: str,
    *,
    effective_from: int,
    note: str,
    extra: dict[str, str] | None = None,
) -> list[str]:
    """Write a change and its changelog line in one transaction; the paths written or deleted."""
    puts = {} if change.empty else dict(change.puts)
    deletes = [] if change.empty else change.deletes
    if extra:
        puts.update(extra)
    if not change.empty:
        old = store.document(log_path) or ""
        prefix = old if old.endswith("\n") or not old else old + "\n"
        head = f"{note.strip()}：" if note.strip() else ""
        line = f"- {iso_now()} {head}{change.describe()}（自第 {effective_from} 章起生效）\n"
        puts[log_path] = prefix + line
    if not puts and not deletes:
        return []
    store.put_documents(puts, delete=deletes)
    return sorted({*puts, *deletes})


def apply_payload(
    store: NovelStore,
    kind: str,
    payload: Any,
    *,
    effective_from: int,
    note: str,
    volume: int | None = None,
) -> list[str]:
    """Store an accepted or edited ``kind`` payload: validated, ONE transaction, with a changelog line.

    The payload replaces what the novel holds of that kind (see :func:`current_payload`); a character left
    out is retired, a rule, document, storyline or chapter contract left out is deleted. The changelog
    (``world/changelog.md``, ``characters/changelog.md``, ``storylines/changelog.md`` or
    ``volumes/vol-NN/changelog.md``) gets one line naming what was added, removed and changed and
    「自第 N 章起生效」; a payload equal to what is stored writes nothing. Raises :class:`ProposalInvalid`
    (nothing written). Returns the paths written or deleted.
    """
    vol = _volume(store, volume) if kind == "volume_plan" else volume
    change = payload_change(store, kind, payload, volume=vol)
    return write_change(store, change, changelog_path(kind, vol), effective_from=effective_from, note=note)


# ---------------------------------------------------------------------------- the review question
def _store_answer(store: NovelStore) -> tuple[Callable[[str], str | None], Callable[[str, str], None]]:
    return store.answer, store.put_answer


async def review(
    store: NovelStore,
    interaction: InteractionManager,
    proposal: Proposal,
    answer_path: str,
    *,
    regenerate: bool = True,
    spec: QuestionSpec | None = None,
    context: str | None = None,
) -> ReviewDecision:
    """Ask the author about ``proposal`` (接受 / 编辑 / 重新生成); a stored answer is reused.

    An 编辑 whose JSON does not validate raises :class:`ApprovalError` naming the answer file and what is
    wrong; an answer given just now that does not validate is not kept (the question comes back next time).
    """
    stored_before = await db(store.answer, answer_path) is not None
    load, save = _store_answer(store)
    answer = await resolve_gate(
        spec or review_spec(proposal, regenerate=regenerate),
        answer_path,
        interaction,
        load=load,
        save=save,
        context=proposal.note if context is None else context,
        proposal=proposal,
    )
    try:
        return read_review(proposal, answer)
    except ProposalInvalid as exc:
        if stored_before:
            raise ApprovalError(
                f"{answer_path} 中编辑后的{KIND_NAMES.get(proposal.kind, proposal.kind)}无效：{exc}。"
                "修正或删除这份回答后重试即可重新提问。"
            ) from None
        await db(store.delete_answer, answer_path)
        name = KIND_NAMES.get(proposal.kind, proposal.kind)
        raise ApprovalError(f"编辑后的{name}无效（{answer_path}）：{exc}；未保存任何内容。") from None


# ---------------------------------------------------------------------------- proposals of agents' replies
def with_changes(request: str, changes: str) -> str:
    """The agent's request again, with the author's notes on the version they sent back (重新生成)."""
    return f"{request}\n\n作者对上一版的修改意见：{changes}" if changes.strip() else request


def character_proposal(
    reply: CharacterReply,
    title: str,
    *,
    effective_from: int,
    note: str,
    existing: dict[str, Any] | None = None,
) -> Proposal:
    """The characters payload after adding ``reply``'s characters and relationships to ``existing``."""
    base = existing or {"characters": [], "relationships": []}
    new = [{**c.to_json_dict(), "status": "active"} for c in reply.characters]
    new_ids = {c["id"] for c in new}
    characters = [c for c in base.get("characters") or [] if c.get("id") not in new_ids] + new
    added = [r.to_json_dict() for r in reply.relationships]
    pairs = {(r.get("from"), r.get("to")) for r in added}
    rels = [r for r in base.get("relationships") or [] if (r.get("from"), r.get("to")) not in pairs] + added
    payload = {"characters": characters, "relationships": rels}
    return Proposal(kind="characters", title=title, payload=payload, effective_from=effective_from, note=note)


# ---------------------------------------------------------------------------- propose, review, store
@dataclass
class Approved:
    """What the author accepted: the payload stored (None when not stored by :func:`propose`)."""

    decision: ReviewDecision
    proposal: Proposal
    written: list[str] = field(default_factory=list)
    rounds: int = 0


def _log_note(proposal: Proposal) -> str:
    note = " ".join(proposal.note.split()).strip("：；")
    return f"{proposal.title}（{note[:60]}）" if note else proposal.title


def proposal_key(name: str) -> str:
    """The staging key of a proposal under review (survives a kill: resuming asks again, no model call)."""
    return f"proposals/{name}.json"


async def propose(
    store: NovelStore,
    interaction: InteractionManager,
    *,
    name: str,
    generate: Callable[[str], Awaitable[Proposal]],
    store_it: bool = True,
    regenerate: bool = True,
    volume: int | None = None,
    max_rounds: int = 20,
) -> Approved:
    """Generate a proposal, stage it, ask the author, regenerate on 重新生成, and store what is accepted.

    ``generate(changes)`` calls the agent (``changes`` is empty the first time, the author's notes after a
    重新生成) and returns the proposal. The staged proposal and its round are kept in the staging table under
    :func:`proposal_key`, and each round's answer under ``staging/novel-ask/<name>-rN.answers.json``, so a
    killed run resumes at the same question without paying for the call again. With ``store_it`` the
    accepted payload goes through :func:`apply_payload` (else the caller stores ``decision.payload``); the
    staged proposal is dropped once it is stored.
    """
    key = proposal_key(name)
    raw = await db(store.staging, key)
    staged: dict[str, Any] | None = json.loads(raw) if raw else None
    while True:
        if staged is None or staged.get("proposal") is None:
            rnd = int(staged.get("round") or 0) if staged else 0
            changes = str(staged.get("changes") or "") if staged else ""
            proposal = await generate(changes)
            staged = {"round": rnd, "changes": changes, "proposal": proposal.model_dump(mode="json")}
            await db(store.put_staging, key, json.dumps(staged, ensure_ascii=False))
        proposal = Proposal.model_validate(staged["proposal"])
        rnd = int(staged.get("round") or 0)
        answer_path = f"{layout.NOVEL_ASK_DIR}{name}-r{rnd}.answers.json"
        decision = await review(store, interaction, proposal, answer_path, regenerate=regenerate)
        if decision.action == "regenerate":
            if rnd + 1 >= max_rounds:
                raise ApprovalError(f"{proposal.title}已重新生成 {max_rounds} 次，请改用“编辑”")
            notes = "\n".join(x for x in (str(staged.get("changes") or ""), decision.changes) if x.strip())
            staged = {"round": rnd + 1, "changes": notes, "proposal": None}
            await db(store.put_staging, key, json.dumps(staged, ensure_ascii=False))
            continue
        written: list[str] = []
        if store_it:
            assert decision.payload is not None
            written = await db(
                apply_payload,
                store,
                proposal.kind,
                decision.payload,
                effective_from=proposal.effective_from,
                note=_log_note(proposal),
                volume=volume,
            )
            await db(store.delete_staging, key)
        return Approved(decision, proposal, written, rnd)


__all__ = [
    "ApprovalError",
    "Approved",
    "Change",
    "apply_payload",
    "changelog_path",
    "character_proposal",
    "current_payload",
    "payload_change",
    "proposal_key",
    "propose",
    "review",
    "write_change",
]
