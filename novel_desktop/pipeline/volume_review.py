"""The volume review (seed 004 §6 Layer 2d, §8.2, §8.5; 001 §10.2).

At a volume's last chapter: the full-volume audit (every chapter read through its summary, window by window
when the volume is long), foreshadowing completion, setups for the next volume, and the state cleanup. The
review only *proposes* what would end something — characters to retire (absent for ``RETIRE_AFTER``
chapters), the volume's unresolved foreshadowing to close, single-volume storylines to mark done — and asks
the author which to apply (a NOVEL_ASK multi_choice whose default is the whole proposal). Nothing is retired
or closed without the answer; ``review.md`` says what the author chose. Then the question leading to the next
volume's planning (:func:`ask_review`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from novel_desktop.agents.planning import AuditFinding, audit_windows, character_context
from novel_desktop.agents.ports import PlanningAgents
from novel_desktop.analysis.novel_analysis import analyze_store
from novel_desktop.domain.common import iso_now
from novel_desktop.domain.foreshadowing import (
    ForeshadowEvent,
    ForeshadowItem,
    GlobalForeshadowing,
    VolumeForeshadowing,
    overdue,
)
from novel_desktop.domain.ledger import for_purpose
from novel_desktop.domain.proposals import Proposal
from novel_desktop.domain.state_ops import prune_state
from novel_desktop.domain.storylines import StorylinesFile
from novel_desktop.pipeline.approval import character_proposal, current_payload, propose, with_changes
from novel_desktop.pipeline.checks import AuditReport, QualityBrief, consistency_audit, quality_brief
from novel_desktop.pipeline.interaction import InteractionManager
from novel_desktop.pipeline.steps import StepReport, ask, character_files, consult, question, spec
from novel_desktop.pipeline.volume_plan import PlanParams, plan_params, set_plan_params, volume_range
from novel_desktop.storage import layout
from novel_desktop.storage.aio import db
from novel_desktop.storage.maintenance import apply_document_changes
from novel_desktop.storage.store import NovelStore, dumps

#: §8.5: a character absent this many chapters is proposed for retirement at the volume's end.
RETIRE_AFTER = 20
STORYLINES = "storylines/storylines.json"
CHARACTER_CHANGELOG = "characters/changelog.md"
CLOSURES_TOPIC = "volume closures"

ClosureKind = Literal["retire", "foreshadowing", "storyline"]
_KIND_LABEL = {"retire": "退场角色", "foreshadowing": "关闭伏笔", "storyline": "完结故事线"}


# ---------------------------------------------------------------------------- what the review proposes
@dataclass(frozen=True)
class Closure:
    """One thing the review proposes to end: a character to retire, a thread to close, a storyline done."""

    kind: ClosureKind
    id: str
    name: str
    why: str

    @property
    def label(self) -> str:
        """The option label of the question (unique: kind and id)."""
        return f"{_KIND_LABEL[self.kind]}：{self.name}（{self.id}）"


def _retirements(store: NovelStore, chapter: int, absent_for: int) -> list[Closure]:
    analysis = analyze_store(store)
    out = []
    for ch in character_files(store):
        seen = analysis.entities.appearances.get(ch.id)
        if seen is not None and seen.last_chapter is not None:
            last = seen.last_chapter
        else:
            last = min((c.valid_from_chapter or 1 for c in ch.contracts), default=1)
        if ch.role != "protagonist" and chapter - last >= absent_for:
            out.append(
                Closure("retire", ch.id, ch.name, f"已 {chapter - last} 章未出场（最后出现在第 {last} 章）")
            )
    return out


def _volume_threads(store: NovelStore, volume: int) -> list[Closure]:
    """The volume's own threads (scope ``volume``) still open at its end."""
    raw = store.document_json(f"{layout.volume_dir(volume)}/foreshadowing.json")
    if not isinstance(raw, dict):
        return []
    plan = VolumeForeshadowing.model_validate(raw)
    global_doc = _global(store)
    out = []
    for item in plan.foreshadowing:
        found = global_doc.get(item.id)
        status = found.status if found is not None else item.status
        if item.scope == "volume" and status != "resolved":
            name = item.description[:20] or item.id
            out.append(Closure("foreshadowing", item.id, name, f"本卷应回收，当前 {status}"))
    return out


def _finished_storylines(store: NovelStore, volume: int) -> list[Closure]:
    """Active single-volume storylines introduced in this volume (or before): their volume is over."""
    raw = store.document_json(STORYLINES)
    if not isinstance(raw, dict):
        return []
    lines = StorylinesFile.model_validate(raw)
    return [
        Closure("storyline", s.id, s.name, "单卷故事线，本卷已结束")
        for s in lines.storylines
        if s.status == "active" and s.scope == "single_volume" and (s.introduced_volume or 1) <= volume
    ]


def review_closures(
    store: NovelStore, volume: int, chapter: int, absent_for: int | None = None
) -> list[Closure]:
    """Everything the review of ``volume`` (last chapter ``chapter``) proposes to end; nothing is changed."""
    absent = RETIRE_AFTER if absent_for is None else absent_for
    return [
        *_retirements(store, chapter, absent),
        *_volume_threads(store, volume),
        *_finished_storylines(store, volume),
    ]


def closures_spec(volume: int, closures: list[Closure]) -> Any:
    """The question: which of the proposed retirements and closures to apply (all, by default)."""
    listing = "\n".join(f"- {c.label}：{c.why}" for c in closures)
    q = question(
        "apply",
        "卷末收束",
        f"第 {volume} 卷回顾建议执行以下退场与收束，勾选的会执行，未勾选的保持原样：\n{listing}",
        kind="multi_choice",
        options=[(c.label, c.why) for c in closures],
        required=False,
    )
    q["default"] = [c.label for c in closures]
    return spec(CLOSURES_TOPIC, q)


# ---------------------------------------------------------------------------- applying the author's choice
def _global(store: NovelStore) -> GlobalForeshadowing:
    return GlobalForeshadowing.model_validate(
        store.document_json(layout.GLOBAL_FORESHADOWING) or {"foreshadowing": []}
    )


def apply_closures(store: NovelStore, volume: int, chapter: int, chosen: list[Closure]) -> list[str]:
    """Retire, close and finish what the author chose, in one transaction; returns the paths written.

    A retired character's profile moves to ``characters/retired/`` with its last state under
    ``final_state`` and the state is pruned to the active cast (same version: pruning is not a chapter's
    change). A closed thread is marked resolved at ``chapter`` with a history line saying the author closed
    it at the review; a finished storyline's status becomes ``resolved``.
    """
    put: dict[str, str] = {}
    remove: list[str] = []
    state = store.current_state()
    retire = {c.id for c in chosen if c.kind == "retire"}
    keep = []
    log: list[str] = []
    for ch in character_files(store):
        if ch.id not in retire:
            keep.append(ch.id)
            continue
        data = {**ch.to_json_dict(), "status": "retired", "retired_since": chapter + 1}
        final = (state.get("characters") or {}).get(ch.id)
        if final is not None:
            data["final_state"] = final
        put[f"characters/retired/{ch.id}.json"] = dumps(data)
        remove.append(f"characters/active/{ch.id}.json")
        log.append(f"- {iso_now()} 角色 {ch.name}（{ch.id}）在第 {volume} 卷回顾时经作者确认退场\n")
    if log:
        old = store.document(CHARACTER_CHANGELOG) or ""
        put[CHARACTER_CHANGELOG] = (old if old.endswith("\n") or not old else old + "\n") + "".join(log)
    close = {c.id for c in chosen if c.kind == "foreshadowing"}
    if close:
        doc = _global(store)
        by_id = {i.id: i for i in doc.foreshadowing}
        raw = store.document_json(f"{layout.volume_dir(volume)}/foreshadowing.json") or {}
        for item in VolumeForeshadowing.model_validate(raw).foreshadowing:
            if item.id in close and item.id not in by_id:
                planned = item.to_json_dict()
                planned.pop("planned_plant_chapter", None)
                planned.pop("planned_resolve_chapter", None)
                by_id[item.id] = ForeshadowItem.model_validate(planned)
        for fid in close:
            old_item = by_id.get(fid)
            if old_item is None:
                continue
            event = ForeshadowEvent(
                chapter=chapter, action="resolved", detail=f"第 {volume} 卷回顾时作者关闭"
            )
            data = old_item.to_json_dict()
            data.update(status="resolved", resolved_chapter=chapter)
            data["history"] = [*data.get("history", []), event.to_json_dict()]
            by_id[fid] = ForeshadowItem.model_validate(data)
        items = [i.to_json_dict() for i in by_id.values()]
        doc = GlobalForeshadowing.model_validate({"foreshadowing": items})
        put[layout.GLOBAL_FORESHADOWING] = dumps(doc.to_json_dict())
    finish = {c.id for c in chosen if c.kind == "storyline"}
    if finish:
        lines = StorylinesFile.model_validate(store.document_json(STORYLINES))
        data = lines.to_json_dict()
        for s in data["storylines"]:
            if s["id"] in finish:
                s["status"] = "resolved"
        put[STORYLINES] = dumps(StorylinesFile.model_validate(data).to_json_dict())
    pruned = prune_state(state, keep)
    apply_document_changes(store, put, remove, state=pruned if pruned != state else None)
    return [*put, *remove]


def cleanup_state(store: NovelStore, chapter: int, absent_for: int | None = None) -> list[str]:
    """Retire every character absent for ``absent_for`` chapters (an author's blanket yes); the names."""
    absent = RETIRE_AFTER if absent_for is None else absent_for
    chosen = _retirements(store, chapter, absent)
    volume = int(store.checkpoint().get("current_volume") or 1)
    apply_closures(store, volume, chapter, chosen)
    return [c.name for c in chosen]


# ---------------------------------------------------------------------------- the review
def _foreshadowing_lines(store: NovelStore, volume: int, end: int) -> tuple[list[str], list[str]]:
    """Completion of the volume's foreshadowing plan, and the threads left open for the next volume."""
    global_doc = _global(store)
    raw = store.document_json(f"{layout.volume_dir(volume)}/foreshadowing.json")
    plan = VolumeForeshadowing.model_validate(raw) if isinstance(raw, dict) else None
    lines = []
    if plan is not None and plan.foreshadowing:
        status: dict[str, str] = {}
        for i in plan.foreshadowing:
            found = global_doc.get(i.id)
            status[i.id] = found.status if found is not None else i.status
        due_here = [i for i in plan.foreshadowing if i.scope == "volume"]
        resolved = [i for i in due_here if status[i.id] == "resolved"]
        lines.append(
            f"本卷伏笔 {len(plan.foreshadowing)} 条，卷内应回收 {len(due_here)} 条，已回收 {len(resolved)} 条"
        )
        for item in due_here:
            if status[item.id] != "resolved":
                lines.append(f"  未回收：{item.id}（{item.description}），当前 {status[item.id]}")
    else:
        lines.append("本卷没有伏笔计划")
    for late in overdue(global_doc.foreshadowing, end + 1):
        lines.append(
            f"  已超期：{late.id}（{late.description}），计划在第 {late.resolve_deadline()} 章前回收"
        )
    carry = [f"{i.id}：{i.description}（{i.status}）" for i in global_doc.open_items()]
    return lines, carry


def _review_markdown(
    volume: int,
    rng: tuple[int, int],
    brief: QualityBrief,
    audit: AuditReport,
    fs_lines: list[str],
    setups: list[str],
    proposed: list[Closure],
    chosen: list[Closure],
) -> str:
    start, end = rng
    out = [f"# 第 {volume} 卷回顾（第 {start}-{end} 章）", ""]
    out += ["## 质量", *brief.lines(), ""]
    out += ["## 全卷一致性报告", *audit.lines(), ""]
    out += ["## 伏笔完成度", *fs_lines, ""]
    out += ["## 下卷铺垫建议"]
    out += [f"- 承接：{s}" for s in setups] or ["- 本卷线索均已收束，可开新线"]
    out += ["", "## 状态清理（作者的选择）"]
    if not proposed:
        out.append(f"- 没有角色超过 {RETIRE_AFTER} 章未出场，也没有待收束的伏笔或故事线")
    taken = {c.label for c in chosen}
    for c in proposed:
        verdict = "作者确认执行" if c.label in taken else "作者选择保留"
        out.append(f"- {c.label}（{c.why}）：{verdict}")
    retired = [c.name for c in chosen if c.kind == "retire"]
    if retired:
        out.append(f"- 退场角色：{'、'.join(retired)}")
    out.append(f"- 本卷终态已归档：state/history/vol-{volume:02d}-final-state.json")
    return "\n".join(out) + "\n"


def _audit_path(volume: int) -> str:
    return f"audits/volume-{volume:02d}.json"


@for_purpose("volume_review")
async def volume_audit(
    store: NovelStore, agents: PlanningAgents, volume: int, start: int, end: int
) -> tuple[AuditReport, StepReport]:
    """ConsistencyAuditor over the whole volume, one window of summaries per call so every chapter is read.

    The merged report is kept (``audits/volume-NN.json``): a review resumed after its question does not
    audit again.
    """
    cached = await db(store.extra_file, _audit_path(volume))
    if cached is not None:
        data = json.loads(cached)
        report = AuditReport(start, end, list(data.get("entity_findings") or []))
        report.findings = [AuditFinding.model_validate(f) for f in data.get("findings") or []]
        return report, StepReport("")
    merged = AuditReport(start, end)
    step = StepReport("")
    for first, last in await db(audit_windows, store, start, end):
        part, done = await consistency_audit(store, agents, first, last)
        merged.entity_findings += part.entity_findings
        merged.findings += part.findings
        step.calls += done.calls
        step.warnings += done.warnings
        step.written += done.written
    body = (json.dumps(merged.to_json(), ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    await db(store.put_extra_file, _audit_path(volume), body)
    return merged, step


@for_purpose("volume_review")
async def volume_review(
    store: NovelStore, agents: PlanningAgents, interaction: InteractionManager, volume: int
) -> StepReport:
    """The volume review: full-volume audit, foreshadowing, next-volume setups, the author's cleanup, archive.

    Writes ``volumes/vol-NN/review.md`` and ``state/history/vol-NN-final-state.json``; a review already
    written is kept (the step is idempotent). Raises what the question raises (``AnswersNeeded`` when run
    without a way to ask): then nothing is retired or closed and the next run asks again.
    """
    review_path = f"{layout.volume_dir(volume)}/review.md"
    if await db(store.document, review_path) is not None:
        return StepReport(f"第 {volume} 卷回顾已完成", [review_path])
    rng = await db(volume_range, store, volume)
    if rng is None:
        cp = await db(store.checkpoint)
        rng = (1, int(cp.get("last_completed_chapter") or 1))
    start, end = rng
    audit, step = await volume_audit(store, agents, volume, start, end)
    brief = await db(quality_brief, store, end, end - start + 1)
    fs_lines, setups = await db(_foreshadowing_lines, store, volume, end)
    proposed = await db(review_closures, store, volume, end)
    chosen: list[Closure] = []
    if proposed:
        path = f"{layout.NOVEL_ASK_DIR}volume-{volume:02d}-closures.answers.json"
        answer = await ask(store, interaction, closures_spec(volume, proposed), path, "\n".join(fs_lines))
        picked = answer.answers.get("apply") or []
        chosen = [c for c in proposed if c.label in picked]
    archive = f"state/history/vol-{volume:02d}-final-state.json"
    await db(store.put_document, archive, dumps(await db(store.current_state)))
    step.written += await db(apply_closures, store, volume, end, chosen)
    text = _review_markdown(volume, rng, brief, audit, fs_lines, setups, proposed, chosen)
    await db(store.put_document, review_path, text)
    step.written += [archive, review_path]
    step.message = (
        f"第 {volume} 卷回顾：均分 {brief.mean if brief.mean is not None else '—'}，" + audit.lines()[0]
    )
    retired = [c.name for c in chosen if c.kind == "retire"]
    if retired:
        step.message += f"；退场 {'、'.join(retired)}"
    kept = len(proposed) - len(chosen)
    if kept:
        step.message += f"；{kept} 项按作者选择保留"
    return step


def review_spec(volume: int, summary: str) -> Any:
    """The §6 用户审核点 "卷末": 确认 / 修改 / 加角色, leading to the next volume's planning."""
    return spec(
        "volume review",
        question(
            "review_action",
            f"第{volume}卷回顾",
            f"{summary}。确认后规划第 {volume + 1} 卷。",
            options=[
                ("确认", f"推荐：进入第 {volume + 1} 卷规划"),
                ("修改", "先暂停，修改本卷后再回到这里"),
                ("加角色", "先为下一卷加一个角色，再规划"),
            ],
            default="确认",
        ),
        question(
            "direction", "下卷方向", f"第 {volume + 1} 卷的方向（可选）", kind="free_text", required=False
        ),
        question(
            "new_character", "新角色", "新角色的描述（选“加角色”时填写）", kind="free_text", required=False
        ),
        question(
            "chapter_count", "章数", f"第 {volume + 1} 卷多少章？（可选）", kind="free_text", required=False
        ),
    )


async def ask_review(
    store: NovelStore, agents: PlanningAgents, interaction: InteractionManager, volume: int
) -> StepReport:
    """Ask the volume-end question; on 确认 / 加角色 move to the next volume's planning (VOL_PLANNING)."""
    review = await db(store.document, f"{layout.volume_dir(volume)}/review.md") or ""
    round_key = f"review_round_vol_{volume:02d}"
    rnd = int((await db(store.meta)).get(round_key) or 0)
    path = f"{layout.NOVEL_ASK_DIR}volume-{volume:02d}-review-r{rnd}.answers.json"
    first_line = next((ln for ln in review.splitlines() if "均分" in ln), f"第 {volume} 卷已写完")
    answer = await ask(store, interaction, review_spec(volume, first_line.strip()), path, review)
    a = answer.answers
    report = StepReport("")
    if a.get("review_action") == "修改":
        await db(store.set_meta, round_key, str(rnd + 1))
        report.pause = True
        report.message = f"已暂停：修改第 {volume} 卷后再运行 novel start 回到卷末确认"
        return report
    if a.get("review_action") == "加角色":
        description = str(a.get("new_character") or "").strip()
        if description:
            step = await add_character(store, agents, interaction, description, f"volume-{volume:02d}-review")
            report.calls += step.calls
            report.written += step.written
            report.warnings += step.warnings
    nxt = volume + 1
    params = await db(plan_params, store, nxt)
    count = re.search(r"\d+", str(a.get("chapter_count") or ""))
    direction = str(a.get("direction") or "").strip()
    await db(
        set_plan_params,
        store,
        nxt,
        PlanParams(
            int(count.group()) if count else params.chapters, direction or params.direction, params.round
        ),
    )
    await db(store.update_checkpoint, current_volume=nxt, orchestrator_state="VOL_PLANNING")
    report.message = f"第 {volume} 卷已确认，进入第 {nxt} 卷规划"
    return report


@for_purpose("volume_review")
async def add_character(
    store: NovelStore, agents: PlanningAgents, interaction: InteractionManager, description: str, tag: str
) -> StepReport:
    """CharacterWeaver (新增角色) for one described character; a contract decision becomes a question, and
    the new character is stored only once the author accepts it (接受 / 编辑 / 重新生成)."""
    path = f"{layout.NOVEL_ASK_DIR}{tag}-character.answers.json"
    report = StepReport("")
    effective = int((await db(store.checkpoint)).get("last_completed_chapter") or 0) + 1

    async def generate(changes: str) -> Proposal:
        wanted = with_changes(description, changes)
        context = await db(character_context, store, "新增角色", wanted)
        done = await consult(
            store,
            interaction,
            agents.characters,
            context,
            request=wanted,
            topic="character decision",
            answer_path=path,
        )
        report.calls += done.calls
        report.warnings += done.warnings
        if done.reply is None:
            raise _NoCharacter("无法解析" if done.outcome == "unparsable" else "仍需要作者决定")
        current = await db(current_payload, store, "characters")
        return character_proposal(
            done.reply,
            f"新增角色：{description[:20]}",
            effective_from=effective,
            note=description,
            existing=current,
        )

    try:
        approved = await propose(store, interaction, name=f"{tag}-character-review", generate=generate)
    except _NoCharacter as exc:
        report.warnings.append(f"CharacterWeaver 的输出{exc}，新角色未加入")
        return report
    report.written = approved.written
    report.message = "新增角色：" + "、".join(
        c.get("name", "") for c in (approved.decision.payload or {}).get("characters", [])[-1:]
    )
    return report


class _NoCharacter(Exception):
    """CharacterWeaver gave no character (the reason is the message)."""
