"""On-demand work outside the chapter loop (seed 004 §4.2 工具式, §6 Layer 3 全局维护).

The author calls these from the window or the command line at any time: add or retire a character, extend
the world, add a storyline, import research notes, re-run the judge on a chapter, and re-evaluate many
chapters at once through the Message Batches API (half price where the provider offers it).

Agents never ask the author (001 §10.5): when WorldBuilder or CharacterWeaver returns
``requires_user_decision``, it becomes a NOVEL_ASK question (``pipeline.steps.consult``), its answer is
stored by ``answer_path`` (so re-running the same request reuses it), and the agent is called once more with
the author's decision. A re-judged chapter keeps its previous verdict in its pipeline log.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from novel_desktop.agents.judge import BatchReport
from novel_desktop.agents.planning import CharacterReply, ReplyRules
from novel_desktop.agents.ports import CallRecord, JudgeAgent, PlanningAgents
from novel_desktop.domain.characters import Character
from novel_desktop.domain.common import iso_now
from novel_desktop.domain.evaluation import Evaluation
from novel_desktop.domain.ledger import attributed, for_purpose
from novel_desktop.domain.proposals import Proposal
from novel_desktop.domain.seed_fields import Slug
from novel_desktop.domain.storylines import Storyline, StorylinesFile
from novel_desktop.domain.world import WorldRule, WorldRules
from novel_desktop.pipeline.approval import (
    apply_payload,
    character_proposal,
    current_payload,
    propose,
    with_changes,
)
from novel_desktop.pipeline.interaction import InteractionManager
from novel_desktop.pipeline.steps import consult
from novel_desktop.storage import layout
from novel_desktop.storage.aio import db
from novel_desktop.storage.maintenance import replace_evaluation
from novel_desktop.storage.store import NovelStore, StoreError, dumps

RULES = "world/rules.json"
WORLD_CHANGELOG = "world/changelog.md"
CHARACTER_CHANGELOG = "characters/changelog.md"
RELATIONSHIPS = "characters/relationships.json"
STORYLINES = "storylines/storylines.json"
#: Seed 004 §6 Layer 1: at most four storylines active at once.
MAX_ACTIVE_STORYLINES = 4


class OnDemandError(StoreError):
    """An on-demand action could not be done; the message says why, for the author."""


@dataclass
class ActionResult:
    """What an action changed: the paths written or moved, and a line for the author."""

    message: str
    written: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    cost_usd: float = 0.0
    #: World rules the action added or changed: what a contract-change propagation (§6.5.5) starts from.
    rule_ids: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------- helpers
def _append_changelog(store: NovelStore, path: str, line: str) -> None:
    old = store.document(path) or ""
    prefix = old if old.endswith("\n") or not old else old + "\n"
    store.put_document(path, f"{prefix}- {iso_now()} {line.strip()}\n")


def _docs(store: NovelStore, prefix: str, *, suffix: str = ".md", limit: int = 12_000) -> str:
    parts = []
    for path in store.list_documents(prefix):
        if path.endswith(suffix) and not path.endswith("changelog.md"):
            parts.append(f"## {path}\n{store.document(path) or ''}")
    return "\n\n".join(parts)[:limit]


def _cost(calls: Sequence[CallRecord]) -> float:
    return float(sum(c.cost_usd for c in calls))


def _request_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


# ---------------------------------------------------------------------------- characters
def _store_character(store: NovelStore, character: Character, effective: int) -> list[str]:
    """A ready profile (the author's own): stored at once, with a changelog line, in one transaction."""
    path = f"characters/active/{character.id}.json"
    if store.document(path) is not None or store.document(f"characters/retired/{character.id}.json"):
        raise OnDemandError(f"角色 {character.id} 已存在 (character exists)")
    current = current_payload(store, "characters")
    payload = {**current, "characters": [*current["characters"], character.to_json_dict()]}
    return apply_payload(store, "characters", payload, effective_from=effective, note="手动新增角色")


@for_purpose("on_demand")
async def add_character(
    store: NovelStore,
    *,
    profile: dict[str, Any] | None = None,
    description: str | None = None,
    agents: PlanningAgents | None = None,
    interaction: InteractionManager | None = None,
) -> ActionResult:
    """Add a character: a ready profile as given, or one CharacterWeaver creates from ``description``.

    A profile is validated as :class:`Character` and written to ``characters/active/<id>.json``. With a
    description, CharacterWeaver (新增角色 mode) writes the profile, its L2 contracts and relationships; a
    contract question it cannot settle becomes a NOVEL_ASK question first.
    """
    effective = int(store.checkpoint().get("last_completed_chapter") or 0) + 1
    if profile is not None:
        try:
            character = Character.model_validate({**profile, "status": "active"})
        except ValidationError as exc:
            raise OnDemandError(f"角色档案无效：{exc.errors()[0]['msg']} (invalid profile)") from None
        paths: list[str] = await db(_store_character, store, character, effective)
        return ActionResult(f"已新增角色 {character.name}", paths)
    if not description or agents is None:
        raise OnDemandError("需要角色档案，或者描述加模型服务 (a profile, or a description and the agents)")
    if interaction is None:
        raise OnDemandError("新角色要经作者确认后才保存，需要一个提问渠道 (an interaction is needed)")
    cost = 0.0

    async def generate(changes: str) -> Proposal:
        nonlocal cost
        wanted = with_changes(description, changes)
        cp = await db(store.checkpoint)
        context = {
            "project_brief": await db(store.document, "brief.md") or "",
            "world_rules": json.dumps(await db(store.document_json, RULES) or {}, ensure_ascii=False),
            "world_docs": await db(_docs, store, "world/"),
            "mode": "新增角色",
            "current_chapter": str(cp.get("last_completed_chapter") or 0),
            "existing_characters": await db(_docs, store, "characters/active/", suffix=".json"),
            "relationships": await db(store.document, RELATIONSHIPS) or "",
            "outline_basis": "",
            "update_request": wanted,
        }
        reply, spent = await _weave(store, agents, context, interaction, description)
        cost += spent
        for character in reply.characters:
            if await db(store.document, f"characters/retired/{character.id}.json") is not None:
                raise OnDemandError(f"角色 {character.id} 已存在（已退场） (character exists)")
        current = await db(current_payload, store, "characters")
        return character_proposal(
            reply,
            f"新增角色：{description[:20]}",
            effective_from=effective,
            note=description,
            existing=current,
        )

    name = f"character-{_request_key(description)}-review"
    before = {c.get("id") for c in (await db(current_payload, store, "characters"))["characters"]}
    approved = await propose(store, interaction, name=name, generate=generate)
    chosen = (approved.decision.payload or {}).get("characters") or []
    names = "、".join(str(c.get("name")) for c in chosen if c.get("id") not in before) or "无"
    return ActionResult(f"已新增角色 {names}", approved.written, cost_usd=cost)


async def _weave(
    store: NovelStore,
    agents: PlanningAgents,
    context: dict[str, str],
    interaction: InteractionManager | None,
    request: str,
) -> tuple[CharacterReply, float]:
    path = f"{layout.NOVEL_ASK_DIR}character-{_request_key(request)}.answers.json"
    done = await consult(
        store,
        interaction,
        agents.characters,
        context,
        request=request,
        topic="character decision",
        answer_path=path,
    )
    if done.reply is not None:
        return done.reply, _cost(done.calls)
    if done.outcome == "unparsable":
        raise OnDemandError("；".join(done.warnings) or "角色档案未能生成")
    rationale = done.decision.rationale if done.decision is not None else ""
    raise OnDemandError(f"CharacterWeaver 需要作者决定：{rationale}")


def retire_character(store: NovelStore, slug: str, reason: str = "") -> ActionResult:
    """Retire a character: ``characters/active/<slug>.*`` move to ``characters/retired/``, status retired.

    The profile and its contracts are kept verbatim apart from ``status`` (seed §5.2 退场角色).
    """
    src = f"characters/active/{slug}.json"
    data = store.document_json(src)
    if data is None:
        raise OnDemandError(f"找不到活跃角色 {slug} (no active character {slug})")
    data["status"] = "retired"
    written: list[str] = []
    for suffix in (".json", ".md"):
        old = f"characters/active/{slug}{suffix}"
        text = store.document(old)
        if text is None:
            continue
        new = f"characters/retired/{slug}{suffix}"
        store.put_document(new, dumps(data) if suffix == ".json" else text)
        store.delete_document(old)
        written.append(new)
    name = data.get("name", slug)
    _append_changelog(
        store, CHARACTER_CHANGELOG, f"角色 {name}（{slug}）退场{'：' + reason if reason else ''}"
    )
    return ActionResult(f"角色 {name} 已退场，档案移至 characters/retired/", written)


# ---------------------------------------------------------------------------- world
def _next_rule_id(taken: set[str]) -> str:
    numbers = [int(r[2:]) for r in taken if re.fullmatch(r"W-\d+", r)]
    return f"W-{(max(numbers) if numbers else 0) + 1:03d}"


def merge_world_rules(
    existing: WorldRules, reply: ReplyRules | WorldRules, changed: Sequence[str]
) -> tuple[WorldRules, list[str]]:
    """Existing rules stay (hard ones are never dropped); changed ones are replaced; new ones get new ids.

    A returned rule whose id is taken and whose text differs is appended under the next free id, unless it
    is listed as changed and the old rule is soft (then it replaces it): a hard rule is never rewritten.
    Returns the merged rules and the ids added.
    """
    rules = {r.id: r for r in existing.rules}
    added: list[str] = []
    for rule in reply.rules:
        old = rules.get(rule.id)
        if old is None:
            # A fresh id below the current maximum would reorder history; renumber after the last one.
            new_id = rule.id if rule.id == _next_rule_id(set(rules)) else _next_rule_id(set(rules))
            rules[new_id] = WorldRule.model_validate({**rule.to_json_dict(), "id": new_id})
            added.append(new_id)
        elif rule.id in changed and old.constraint_type != "hard":
            rules[rule.id] = rule
        elif rule.rule != old.rule:
            # Either a new rule that reused a taken id, or an edit of a hard rule, which is never allowed.
            new_id = _next_rule_id(set(rules))
            rules[new_id] = WorldRule.model_validate({**rule.to_json_dict(), "id": new_id})
            added.append(new_id)
    return WorldRules(rules=list(rules.values())), added


class _Declined(Exception):
    """The author's answer to WorldBuilder's question ended the request (the choice is the message)."""


@for_purpose("on_demand")
async def extend_world(
    store: NovelStore, agents: PlanningAgents, request: str, interaction: InteractionManager
) -> ActionResult:
    """WorldBuilder in 增量更新 mode: the world with the new rules (new ids) and documents, stored once the
    author accepts it (接受 / 编辑 / 重新生成); storylines it changed are reviewed next.

    A request that conflicts with a hard rule comes back as ``requires_user_decision``; the author answers
    a NOVEL_ASK question and WorldBuilder runs once more with the decision.
    """
    key = _request_key(request)
    path = f"{layout.NOVEL_ASK_DIR}world-extend-{key}.answers.json"
    lines_key = f"proposals/world-extend-{key}-storylines.json"
    effective = int((await db(store.checkpoint)).get("last_completed_chapter") or 0) + 1
    before = {str(r["id"]): r for r in (await db(current_payload, store, "world"))["rules"]}
    cost = 0.0

    async def generate(changes: str) -> Proposal:
        nonlocal cost
        wanted = with_changes(request, changes)
        context = {
            "project_brief": await db(store.document, "brief.md") or "",
            "research_notes": await db(_docs, store, "research/"),
            "mode": "增量更新",
            "existing_world_docs": await db(_docs, store, "world/"),
            "existing_rules": await db(store.document, RULES) or "",
            "existing_storylines": await db(store.document, STORYLINES) or "",
            "update_request": wanted,
        }
        done = await consult(
            store,
            interaction,
            agents.world,
            context,
            request=wanted,
            topic="world extension conflict",
            answer_path=path,
            declines=lambda choice: "放弃" in choice,
        )
        cost += _cost(done.calls)
        if done.outcome == "declined":
            raise _Declined(done.choice or "")
        if done.outcome == "unparsable":
            raise OnDemandError("；".join(done.warnings) or "世界观更新未能生成")
        reply = done.reply
        if reply is None:
            rationale = done.decision.rationale if done.decision is not None else ""
            raise OnDemandError(f"WorldBuilder 仍需要作者决定：{rationale}")
        assert reply.rules is not None
        current = await db(current_payload, store, "world")
        existing = WorldRules.model_validate({"rules": current["rules"]})
        merged, added = merge_world_rules(existing, reply.rules, reply.changed_rule_ids)
        docs = {d["file"]: d for d in current["documents"]}
        for doc in reply.documents:
            name = Path(doc.file).name
            if name.endswith(".md") and name != "changelog.md":
                docs[name] = {"file": name, "content": doc.content.rstrip("\n") + "\n"}
        lines = reply.storylines.to_json_dict() if reply.storylines is not None else None
        await db(store.put_staging, lines_key, json.dumps(lines, ensure_ascii=False))
        payload = {"rules": merged.to_json_dict()["rules"], "documents": list(docs.values())}
        note = reply.changelog or f"新增规则 {'、'.join(added) or '无'}"
        title = f"扩展世界观：{request[:24]}"
        return Proposal(kind="world", title=title, payload=payload, effective_from=effective, note=note)

    try:
        approved = await propose(store, interaction, name=f"world-extend-{key}-review", generate=generate)
    except _Declined as exc:
        return ActionResult(f"已按作者的决定放弃这项需求：{exc}", [], cost_usd=cost)
    written = list(approved.written)
    raw = await db(store.staging, lines_key)
    lines = json.loads(raw) if raw else None
    if isinstance(lines, dict):
        proposal = Proposal(
            kind="storylines",
            title="扩展世界观：故事线",
            payload=lines,
            effective_from=effective,
            note=request,
        )

        async def same(_changes: str) -> Proposal:
            return proposal

        done = await propose(
            store, interaction, name=f"world-extend-{key}-storylines-review", generate=same, regenerate=False
        )
        written += done.written
    await db(store.delete_staging, lines_key)
    after = {str(r["id"]): r for r in (approved.decision.payload or {}).get("rules") or []}
    added = [r for r in after if r not in before]
    changed = [r for r in after if r in before and after[r] != before[r]]
    message = f"世界观已更新：新增规则 {'、'.join(added) or '无'}，写入 {len(written)} 个文件"
    if changed:
        message += f"；改动规则 {'、'.join(changed)}"
    return ActionResult(message, written, cost_usd=cost, rule_ids=[*added, *changed])


# ---------------------------------------------------------------------------- storylines, research
def add_storyline(
    store: NovelStore,
    *,
    storyline_id: Slug,
    name: str,
    type: str = "character_arc",
    scope: str = "multi_volume",
    description: str = "",
    pov_characters: Sequence[str] = (),
    status: str = "active",
) -> ActionResult:
    """Add a storyline to ``storylines/storylines.json`` and give it an empty memory file.

    More than four active storylines is allowed but warned about (seed 004 §6 Layer 1, DR-021).
    """
    current = StorylinesFile.model_validate(store.document_json(STORYLINES) or {"storylines": []})
    if current.get(storyline_id) is not None:
        raise OnDemandError(f"故事线 {storyline_id} 已存在 (storyline exists)")
    volume = int(store.checkpoint().get("current_volume") or 1)
    try:
        line = Storyline.model_validate(
            {
                "id": storyline_id,
                "name": name,
                "type": type,
                "scope": scope,
                "status": status,
                "pov_characters": list(pov_characters),
                "introduced_volume": volume,
                "description": description,
            }
        )
        updated = StorylinesFile.model_validate(
            {
                **current.to_json_dict(),
                "storylines": [*[s.to_json_dict() for s in current.storylines], line.to_json_dict()],
            }
        )
    except ValidationError as exc:
        raise OnDemandError(f"故事线无效：{exc.errors()[0]['msg']} (invalid storyline)") from None
    memory = layout.memory_path(storyline_id)
    effective = int(store.checkpoint().get("last_completed_chapter") or 0) + 1
    apply_payload(store, "storylines", updated.to_json_dict(), effective_from=effective, note="新增故事线")
    warnings = []
    if len(updated.active()) > MAX_ACTIVE_STORYLINES:
        warnings.append(
            f"同时活跃的故事线已有 {len(updated.active())} 条，建议不超过 {MAX_ACTIVE_STORYLINES} 条"
        )
    return ActionResult(f"已新增故事线 {name}（{storyline_id}）", [STORYLINES, memory], warnings)


def _research_name(stem: str, taken: set[str]) -> str:
    safe = re.sub(r"[\\/:*?\"<>|\s]+", "-", stem).strip("-.") or "notes"
    name, i = f"research/{safe}.md", 2
    while name in taken:
        name, i = f"research/{safe}-{i}.md", i + 1
    return name


def import_research_notes(
    store: NovelStore, files: Sequence[str | Path], *, limit: int | None = None
) -> ActionResult:
    """Copy text files into ``research/*.md`` (one per file), which WorldBuilder and CharacterWeaver read.

    UTF-8 and GB18030 text are accepted; an existing note is never overwritten (a suffix is added). Each
    file is read with a cap (``limit`` bytes, by default the folder import's): a file over it, unreadable,
    not text or empty is a warning and the others still import. All notes are written in ONE transaction,
    so a kill part-way leaves none of them and the same command can simply be run again.
    """
    from novel_desktop.storage.folder import MAX_IMPORT_FILE_BYTES, read_capped
    from novel_desktop.storage.store import StoreError

    cap = MAX_IMPORT_FILE_BYTES if limit is None else limit
    taken = set(store.list_documents("research/"))
    notes: dict[str, str] = {}
    warnings: list[str] = []
    for file in files:
        path = Path(file)
        try:
            data = read_capped(path, str(path), cap)
        except StoreError as exc:
            warnings.append(f"{exc}，已跳过")
            continue
        for encoding in ("utf-8-sig", "gb18030"):
            try:
                text = data.decode(encoding)
                break
            except UnicodeDecodeError:
                continue
        else:
            warnings.append(f"{path}: 不是文本文件，已跳过")
            continue
        if not text.strip():
            warnings.append(f"{path}: 文件是空的，已跳过")
            continue
        name = _research_name(path.stem, taken)
        body = text if path.suffix.lower() == ".md" else f"# {path.stem}\n\n{text}"
        notes[name] = body if body.endswith("\n") else body + "\n"
        taken.add(name)
    if not notes:
        raise OnDemandError("没有导入任何资料：" + "；".join(warnings))
    store.put_documents(notes)
    written = list(notes)
    return ActionResult(f"已导入 {len(written)} 份资料到 research/", written, warnings)


# ---------------------------------------------------------------------------- judging again
@dataclass
class RejudgeResult:
    """A chapter's new verdict next to the one it replaced."""

    chapter: int
    old_overall: float | None
    new_overall: float | None
    cost_usd: float
    warnings: list[str] = field(default_factory=list)


def store_reevaluation(
    store: NovelStore, chapter: int, evaluation: Evaluation, *, how: str, model: str, cost_usd: float
) -> float | None:
    """Store a new evaluation for a committed chapter; the old one moves into its pipeline log.

    The log gains a ``previous_evaluations`` entry (the old verdict in full, with when and why it was
    replaced) and a stage line for the call. One transaction. Returns the old overall score.
    """
    if not store.writable:
        raise OnDemandError("这部小说以只读方式打开 (the novel is open read-only)")
    old = replace_evaluation(
        store, chapter, evaluation.to_json_dict(), how=how, model=model, cost_usd=cost_usd
    )
    old_overall = old.get("overall") if isinstance(old, dict) else None
    return float(old_overall) if isinstance(old_overall, int | float) else None


def _chapter_text(store: NovelStore, chapter: int) -> str:
    text = store.chapter_text(chapter)
    if text is None:
        raise OnDemandError(f"第 {chapter} 章不存在 (chapter {chapter} does not exist)")
    return text


async def rejudge(store: NovelStore, judge: JudgeAgent, chapter: int) -> RejudgeResult:
    """Run QualityJudge again on a committed chapter; store the new verdict and keep the old in the log."""
    text = await db(_chapter_text, store, chapter)
    with attributed("rejudge", chapter=chapter):
        result = await judge.judge(chapter, text)
    cost = _cost(result.calls)
    if result.value is None:
        raise OnDemandError("；".join(result.warnings) or f"第 {chapter} 章评审失败，原评审未改动")
    model = result.calls[-1].model if result.calls else judge.model
    old = await db(
        store_reevaluation, store, chapter, result.value, how="rejudge", model=model, cost_usd=cost
    )
    return RejudgeResult(chapter, old, result.value.overall, cost, list(result.warnings))


@dataclass
class ReevaluationReport:
    """A re-evaluation of many chapters: each chapter's old and new score, and what it cost."""

    batch: BatchReport
    chapters: dict[int, RejudgeResult] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)

    @property
    def cost_usd(self) -> float:
        return self.batch.cost_usd

    @property
    def full_price_usd(self) -> float:
        return self.batch.full_price_usd


async def batch_reevaluate(
    store: NovelStore,
    judge: JudgeAgent,
    chapters: Sequence[int],
    *,
    prefer_batch: bool = True,
    first_poll_s: float = 5.0,
    on_progress: Callable[[str], None] | None = None,
) -> ReevaluationReport:
    """Judge many committed chapters again in one Message Batch (half price), or one by one without one.

    Each chapter's new verdict replaces the stored one, which is kept in its pipeline log; a chapter whose
    reply does not parse keeps its old verdict and is listed in ``failed``.
    """
    texts = {n: await db(_chapter_text, store, n) for n in chapters}
    with attributed("reevaluate"):
        judged = await judge.judge_batch(
            texts, prefer_batch=prefer_batch, first_poll_s=first_poll_s, on_progress=on_progress
        )
    report = ReevaluationReport(judged.batch, failed=dict(judged.failed))
    how = "reevaluate_batch" if judged.batch.mode == "batch" else "reevaluate"
    for n, evaluation in judged.verdicts.items():
        cost = judged.costs.get(n, 0.0)
        model = judged.models.get(n, judge.model)
        old = await db(store_reevaluation, store, n, evaluation, how=how, model=model, cost_usd=cost)
        report.chapters[n] = RejudgeResult(n, old, evaluation.overall, cost)
    return report


__all__ = [
    "ActionResult",
    "OnDemandError",
    "ReevaluationReport",
    "RejudgeResult",
    "add_character",
    "add_storyline",
    "batch_reevaluate",
    "extend_world",
    "import_research_notes",
    "merge_world_rules",
    "rejudge",
    "retire_character",
    "store_reevaluation",
]
