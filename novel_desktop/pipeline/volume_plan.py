"""Volume planning (seed 004 §6 Layer 2a, §6.5.4-§6.5.5, §6.6.2; §8.2 VOL_PLANNING → WRITING).

PlotArchitect plans the volume: the outline (one ``## 第 N 章`` section per chapter with Storyline / POV /
Location / Conflict / Arc / Foreshadowing / StateChanges), the L3 chapter contracts, the storyline schedule
and the volume's foreshadowing plan. The program then chains the contracts (each chapter's preconditions are
the previous chapter's postconditions), and the author reviews it as a NOVEL_ASK question: 确认 / 修改 /
调整章数. Only a confirmed plan is saved; 修改 and 调整章数 re-plan with the author's words.

The reply is staged (``plans/vol-NN.json``) before the question, so answering later never pays for the call
again. Trial chapters count as volume 1's first chapters (§8.2): their outline sections are kept and the
plan continues after them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from novel_desktop.agents.planning import plot_context
from novel_desktop.agents.ports import PlanningAgents
from novel_desktop.domain.contracts import ChapterContract
from novel_desktop.domain.ledger import for_purpose
from novel_desktop.domain.novel_ask import QuestionSpec
from novel_desktop.domain.outline import outline_sections
from novel_desktop.domain.proposals import Proposal, VolumePlan, review_spec
from novel_desktop.pipeline.approval import (
    current_payload,
    payload_change,
    review,
    volume_changelog,
    write_change,
)
from novel_desktop.pipeline.interaction import InteractionManager
from novel_desktop.pipeline.steps import LifecycleError, StepReport, question
from novel_desktop.storage import layout
from novel_desktop.storage.aio import db
from novel_desktop.storage.store import NovelStore, dumps

#: Seed 004 §6 Layer 2: a volume has 30-50 chapters.
DEFAULT_VOLUME_CHAPTERS = 30
ADJUST = "调整章数"
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*第\s*\d+\s*章", re.M)


@dataclass(frozen=True)
class PlanParams:
    """How the author wants a volume planned: its chapter count, direction and the planning round."""

    chapters: int = DEFAULT_VOLUME_CHAPTERS
    direction: str = ""
    round: int = 0

    def to_json(self) -> str:
        return json.dumps(
            {"chapters": self.chapters, "direction": self.direction, "round": self.round}, ensure_ascii=False
        )


def _params_key(volume: int) -> str:
    return f"plan_vol_{volume:02d}"


def plan_params(store: NovelStore, volume: int) -> PlanParams:
    """The stored parameters of ``volume``'s planning (defaults when it has not started)."""
    raw = store.meta().get(_params_key(volume))
    if not raw:
        return PlanParams()
    data = json.loads(raw)
    return PlanParams(
        int(data.get("chapters") or DEFAULT_VOLUME_CHAPTERS),
        str(data.get("direction") or ""),
        int(data.get("round") or 0),
    )


def set_plan_params(store: NovelStore, volume: int, params: PlanParams) -> None:
    store.set_meta(_params_key(volume), params.to_json())


def staged_plan_key(volume: int) -> str:
    return f"plans/vol-{volume:02d}.json"


def volume_start(store: NovelStore, volume: int) -> int:
    """The first chapter of ``volume``: 1, or the chapter after the previous volume's last."""
    if volume <= 1:
        return 1
    prev = volume_range(store, volume - 1)
    if prev is not None:
        return prev[1] + 1
    return int(store.checkpoint().get("last_completed_chapter") or 0) + 1


def volume_range(store: NovelStore, volume: int) -> tuple[int, int] | None:
    """``(first, last)`` chapter of a planned volume: its volume.json, else its outline's sections."""
    info = store.document_json(layout.volume_info_path(volume))
    if isinstance(info, dict) and info.get("chapter_start") and info.get("chapter_end"):
        return int(info["chapter_start"]), int(info["chapter_end"])
    outline = store.document(f"{layout.volume_dir(volume)}/outline.md")
    sections = outline_sections(outline or "")
    return (min(sections), max(sections)) if sections else None


def volume_to_plan(store: NovelStore) -> int:
    """The volume a planning started now would plan: the current one, or the next when the current one is
    written (and its planning has not begun yet)."""
    cp = store.checkpoint()
    current = int(cp.get("current_volume") or 1)
    rng = volume_range(store, current)
    done = rng is not None and int(cp.get("last_completed_chapter") or 0) >= rng[1]
    return current + 1 if done and cp.get("orchestrator_state") != "VOL_PLANNING" else current


def begin_planning(store: NovelStore, volume: int | None = None, chapters: int | None = None) -> int:
    """Put the novel in VOL_PLANNING for ``volume`` (default: the current volume, or the next one when the
    current is written) and return it. A new chapter count, or re-planning a volume that already has an
    outline, starts a new planning round so the author gets a fresh plan to confirm."""
    current = int(store.checkpoint().get("current_volume") or 1)
    if volume is None:
        volume = volume_to_plan(store)
    params = plan_params(store, volume)
    if chapters is not None:
        params = PlanParams(chapters, params.direction, params.round + 1)
    elif store.document(f"{layout.volume_dir(volume)}/outline.md") and volume == current:
        params = PlanParams(params.chapters, params.direction, params.round + 1)
    set_plan_params(store, volume, params)
    store.update_checkpoint(current_volume=volume, orchestrator_state="VOL_PLANNING")
    return volume


def _merge_states(
    base: dict[str, dict[str, Any]], changes: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    merged = {k: dict(v) for k, v in base.items()}
    for who, attrs in changes.items():
        merged.setdefault(who, {}).update(attrs)
    return merged


def chain_contracts(contracts: list[ChapterContract]) -> tuple[list[ChapterContract], list[int]]:
    """Each chapter's preconditions made equal to the state after the previous chapter (§6.5.4).

    The state after a chapter is its preconditions with its postconditions' changes applied. Returns the
    contracts in chapter order and the chapters whose preconditions the program corrected.
    """
    ordered = sorted(contracts, key=lambda c: c.chapter)
    fixed: list[int] = []
    out: list[ChapterContract] = []
    for contract in ordered:
        if out:
            prev = out[-1]
            after = _merge_states(prev.preconditions.character_states, prev.postconditions.state_changes)
            if contract.preconditions.character_states != after:
                data = contract.to_json_dict()
                data.setdefault("preconditions", {})["character_states"] = after
                contract = ChapterContract.model_validate(data)
                fixed.append(contract.chapter)
        out.append(contract)
    return out, fixed


def plan_review_spec(proposal: Proposal, volume: int, start: int, end: int, summary: str) -> QuestionSpec:
    """The §6 用户审核点 "卷规划完成" as the plan's proposal review: 接受 / 编辑 / 重新生成 (with the author's
    changes) / 调整章数."""
    base = review_spec(
        proposal,
        extra_options=[(ADJUST, "给出新的章数，重新规划")],
        extra_questions=[
            question(
                "chapter_count",
                "章数",
                "本卷改为多少章？（选“调整章数”时填写）",
                kind="free_text",
                required=False,
            )
        ],
    )
    data = base.model_dump(mode="json")
    data["topic"] = "volume plan"
    data["questions"][0]["header"] = f"第{volume}卷大纲"
    data["questions"][0]["question"] = (
        f"第 {volume} 卷（第 {start}-{end} 章）的大纲已规划：{summary}。接受后开始写作。"
    )
    return QuestionSpec.model_validate(data)


def _prev_review(store: NovelStore, volume: int, start: int) -> str:
    if volume > 1:
        return store.document(f"{layout.volume_dir(volume - 1)}/review.md") or ""
    # Volume 1 continues from the trial chapters: their summaries stand in for a previous volume's review.
    parts = [f"第{n}章：{(store.summary(n) or '').strip()}" for n in range(1, start) if store.summary(n)]
    return ("以下章节已写完（试写），本卷从其后续写：\n" + "\n".join(parts)) if parts else ""


@for_purpose("plan")
async def plan_volume(
    store: NovelStore, agents: PlanningAgents, interaction: InteractionManager, volume: int
) -> StepReport:
    """Plan ``volume`` (or reuse its staged plan), ask the author, and save it when confirmed.

    Returns with ``pause`` False either way; the orchestrator reads the checkpoint to see whether the plan
    was confirmed (state WRITING) or must be planned again (still VOL_PLANNING, a new round).
    """
    params = await db(plan_params, store, volume)
    first = await db(volume_start, store, volume)
    last_done = int((await db(store.checkpoint)).get("last_completed_chapter") or 0)
    start = max(first, last_done + 1)
    end = first + max(1, params.chapters) - 1
    if end < start:
        raise LifecycleError(f"第 {volume} 卷的章数 {params.chapters} 少于已写的章数，请调大章数")
    report = StepReport("")
    key = staged_plan_key(volume)
    raw = await db(store.staging, key)
    staged = json.loads(raw) if raw else None
    if staged is None or staged.get("round") != params.round or staged.get("end") != end:
        prev = await db(_prev_review, store, volume, start)
        context = await db(plot_context, store, volume, start, end, params.direction, prev)
        result = await agents.plot(context)
        report.calls += result.calls
        report.warnings += result.warnings
        if result.value is None:
            raise LifecycleError(f"PlotArchitect 的第 {volume} 卷规划无法解析；重新运行即可重试")
        reply = result.value
        staged = {
            "round": params.round,
            "start": start,
            "end": end,
            "recommendation": reply.recommendation,
            "rationale": reply.rationale,
            "plan": reply.plan().to_json_dict(),
        }
        await db(store.put_staging, key, json.dumps(staged, ensure_ascii=False))
    plan = VolumePlan.model_validate(staged["plan"])
    contracts, fixed = chain_contracts([c for c in plan.chapter_contracts if start <= c.chapter <= end])
    missing = [n for n in range(start, end + 1) if n not in {c.chapter for c in contracts}]
    if fixed:
        report.warnings.append(f"已按前章后置条件修正第 {'、'.join(map(str, fixed))} 章的前置条件")
    if missing:
        report.warnings.append(f"规划缺少第 {'、'.join(map(str, missing))} 章的章节契约")
    summary = staged.get("recommendation") or f"{len(contracts)} 章契约"
    answer_path = f"{layout.NOVEL_ASK_DIR}volume-{volume:02d}-plan-r{params.round}.answers.json"
    proposal = Proposal(
        kind="volume_plan",
        title=f"第 {volume} 卷大纲与章节契约",
        payload=await db(plan_payload, store, volume, plan, contracts, first, start),
        effective_from=start,
        note="；".join([summary, *report.warnings]),
    )
    spec_ = plan_review_spec(proposal, volume, start, end, summary)
    decision = await review(
        store, interaction, proposal, answer_path, spec=spec_, context=proposal.payload["outline"]
    )
    if decision.action == "regenerate":
        direction = f"{params.direction}\n作者的修改意见：{decision.changes}".strip()
        await db(set_plan_params, store, volume, PlanParams(params.chapters, direction, params.round + 1))
        report.message = f"第 {volume} 卷大纲按作者意见重新规划"
        return report
    if decision.action == "other":
        stored_text = await db(store.answer, answer_path)
        stored = json.loads(stored_text or "{}")
        count = _count((stored.get("answers") or {}).get("chapter_count"))
        if count is None:
            raise LifecycleError(f"“调整章数”需要一个章数，{answer_path} 里没有；删除这份回答后重试")
        await db(set_plan_params, store, volume, PlanParams(count, params.direction, params.round + 1))
        report.message = f"第 {volume} 卷改为 {count} 章，重新规划"
        return report
    assert decision.payload is not None
    report.written = await db(save_plan, store, volume, decision.payload, first, end)
    await db(store.delete_staging, key)
    await db(store.update_checkpoint, current_volume=volume, orchestrator_state="WRITING")
    how = "（按作者的编辑）" if decision.action == "edit" else ""
    saved = VolumePlan.model_validate(decision.payload)
    count = len([c for c in saved.chapter_contracts if c.chapter >= start])
    report.message = f"第 {volume} 卷大纲已确认{how}：第 {start}-{end} 章，{count} 份章节契约"
    return report


def _count(value: Any) -> int | None:
    m = re.search(r"\d+", str(value or ""))
    return int(m.group()) if m and int(m.group()) > 0 else None


def plan_payload(
    store: NovelStore, volume: int, plan: VolumePlan, contracts: list[ChapterContract], first: int, start: int
) -> dict[str, Any]:
    """The volume plan as the author reviews it: the outline with the kept sections of the chapters already
    written first (the trial chapters), their contracts, then the new chapters' chained contracts."""
    current = current_payload(store, "volume_plan", volume=volume)
    kept = {n: s for n, s in outline_sections(current["outline"]).items() if first <= n < start}
    text = plan.outline.strip()
    if kept:
        m = _HEADING.search(text)
        head, body = (text[: m.start()], text[m.start() :]) if m else (text + "\n\n", "")
        text = head.rstrip() + "\n\n" + "\n\n".join(kept[n] for n in sorted(kept)) + "\n\n" + body
    written = [c for c in current["chapter_contracts"] if first <= int(c.get("chapter") or 0) < start]
    data = {**plan.to_json_dict(), "outline": text.strip() + "\n"}
    data["chapter_contracts"] = [*written, *(c.to_json_dict() for c in contracts)]
    return data


def save_plan(store: NovelStore, volume: int, payload: dict[str, Any], first: int, end: int) -> list[str]:
    """Write an accepted plan in one transaction: outline, contracts, schedule, the volume's foreshadowing
    plan (new threads also enter ``foreshadowing/global.json``), volume.json and the volume's changelog."""
    change = payload_change(store, "volume_plan", payload, volume=volume)
    plan = VolumePlan.model_validate(payload)
    last = max([end, *(c.chapter for c in plan.chapter_contracts)])
    title = plan.storyline_schedule.volume_theme if plan.storyline_schedule is not None else ""
    info = {"volume": volume, "title": title, "chapter_start": first, "chapter_end": last}
    start = min((c.chapter for c in plan.chapter_contracts), default=first)
    extra = {layout.volume_info_path(volume): dumps(info)}
    return write_change(
        store, change, volume_changelog(volume), effective_from=start, note=f"第 {volume} 卷规划", extra=extra
    )
