"""Periodic checks and the volume review (seed 004 §6 Layer 2c-2d, Layer 3, §8.2, §8.5; 001 §10.2-§10.3).

- every 5 chapters: the quality brief (mean score, problem chapters) with 继续 / 回看 / 调整方向, and the
  style drift of the last 5 chapters against the profile, written to ``style-drift.json`` (which the writer
  and refiner read) until the style returns to its baseline, when the file is removed;
- every 10 chapters: a consistency audit — the entity index's deterministic findings plus ConsistencyAuditor
  over the window's summaries; a finding of high severity pauses the loop (§10.3 一致性检查失败 → 暂停);
- at a volume's last chapter: the review (full-volume audit, foreshadowing completion, setups for the next
  volume, state cleanup per §8.5, the volume's final state archived) and the question leading to the next
  volume's planning.

A changed world rule's propagation (§6.5.5) is :mod:`novel_desktop.pipeline.rule_change`.

:func:`after_chapter` is what the writing loops call after each committed chapter.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from statistics import mean
from typing import Any

from novel_desktop.agents.planning import AuditFinding, AuditReply, audit_context, character_context
from novel_desktop.agents.ports import PlanningAgents
from novel_desktop.analysis.novel_analysis import analyze_store
from novel_desktop.analysis.style_metrics import StyleMetrics, drift
from novel_desktop.domain.foreshadowing import GlobalForeshadowing, VolumeForeshadowing, overdue
from novel_desktop.domain.proposals import Proposal
from novel_desktop.domain.state_ops import prune_state
from novel_desktop.domain.style import StyleProfile
from novel_desktop.pipeline.approval import character_proposal, current_payload, propose
from novel_desktop.pipeline.interaction import AnswersNeeded, InteractionManager
from novel_desktop.pipeline.steps import StepReport, add_usage, ask, character_files, consult, question, spec
from novel_desktop.pipeline.volume_plan import PlanParams, plan_params, set_plan_params, volume_range
from novel_desktop.storage import layout
from novel_desktop.storage.aio import db
from novel_desktop.storage.maintenance import rewrite_state_snapshot
from novel_desktop.storage.store import NovelStore, dumps

BRIEF_EVERY = 5
DRIFT_EVERY = 5
AUDIT_EVERY = 10
#: §8.5: a character absent this many chapters is retired at the volume's end.
RETIRE_AFTER = 20
LOW_SCORE = 3.5
STYLE_DRIFT = "style-drift.json"
CHECKS_META = "checks_done"


# ---------------------------------------------------------------------------- bookkeeping
def _done(store: NovelStore) -> dict[str, int]:
    raw = store.meta().get(CHECKS_META)
    return {k: int(v) for k, v in json.loads(raw).items()} if raw else {}


def _mark(store: NovelStore, check: str, chapter: int) -> None:
    done = _done(store)
    done[check] = chapter
    store.set_meta(CHECKS_META, json.dumps(done))


def due_checks(store: NovelStore, chapter: int | None = None) -> list[str]:
    """The periodic checks whose last run is before the latest multiple of their period."""
    last = chapter if chapter is not None else int(store.checkpoint().get("last_completed_chapter") or 0)
    done = _done(store)
    due = []
    for name, every in (("brief", BRIEF_EVERY), ("drift", DRIFT_EVERY), ("audit", AUDIT_EVERY)):
        point = last - last % every
        if point >= every and done.get(name, 0) < point:
            due.append(name)
    return due


# ---------------------------------------------------------------------------- quality brief
@dataclass
class QualityBrief:
    """The 5-chapter brief: mean score and the chapters that need a look."""

    start: int
    end: int
    scores: dict[int, float]
    problems: dict[int, str]

    @property
    def mean(self) -> float | None:
        return round(mean(self.scores.values()), 2) if self.scores else None

    def lines(self) -> list[str]:
        shown = f"{self.mean:.2f}" if self.mean is not None else "—"
        out = [f"第 {self.start}-{self.end} 章质量简报：均分 {shown}"]
        out += [f"  第{n}章：{why}" for n, why in sorted(self.problems.items())]
        if not self.problems:
            out.append("  没有问题章节")
        return out


def quality_brief(store: NovelStore, end: int, window: int = BRIEF_EVERY) -> QualityBrief:
    """Scores of chapters ``end-window+1``-``end`` and their problems (low score, forced pass, violations)."""
    start = max(1, end - window + 1)
    scores: dict[int, float] = {}
    problems: dict[int, str] = {}
    for n in range(start, end + 1):
        ev = store.evaluation(n) or {}
        log = store.pipeline_log(n) or {}
        overall = ev.get("overall")
        if isinstance(overall, int | float):
            scores[n] = float(overall)
        why = []
        if isinstance(overall, int | float) and overall < LOW_SCORE:
            why.append(f"评分 {overall:.1f}")
        if log.get("gate_decision") == "force_pass":
            why.append("修订 2 次后强制通过")
        if ev.get("violations"):
            why.append(f"{len(ev['violations'])} 处违规")
        if why:
            problems[n] = "，".join(why)
    return QualityBrief(start, end, scores, problems)


def brief_spec(brief: QualityBrief) -> Any:
    """The §6 用户审核点 "每 5 章": 继续 / 回看 / 调整方向."""
    return spec(
        "quality brief",
        question(
            "brief_action",
            "质量简报",
            "；".join(brief.lines()) + "。接下来？",
            options=[
                ("继续", "推荐：按大纲继续写"),
                ("回看", "暂停，先回看问题章节"),
                ("调整方向", "写下新的方向，重新规划本卷余下的章节"),
            ],
            default="继续",
        ),
        question(
            "direction",
            "新方向",
            "本卷余下章节往哪里走？（选“调整方向”时填写）",
            kind="free_text",
            required=False,
        ),
    )


# ---------------------------------------------------------------------------- style drift
@dataclass
class DriftReport:
    start: int
    end: int
    items: list[dict[str, Any]]
    cleared: bool = False

    def lines(self) -> list[str]:
        if not self.items:
            return [
                f"第 {self.start}-{self.end} 章文风与基线一致"
                + ("（已清除纠偏提示）" if self.cleared else "")
            ]
        return [f"第 {self.start}-{self.end} 章文风漂移 {len(self.items)} 项："] + [
            f"  {i['message']}" for i in self.items
        ]


def style_drift(store: NovelStore, end: int, window: int = DRIFT_EVERY) -> DriftReport:
    """The last ``window`` chapters' metrics against the style profile; writes or clears style-drift.json."""
    start = max(1, end - window + 1)
    raw = store.document_json("style-profile.json")
    report = DriftReport(start, end, [])
    if not isinstance(raw, dict):
        return report
    profile = StyleProfile.model_validate(raw)
    analysis = analyze_store(store)
    chapters = [c.metrics for c in analysis.chapters if start <= c.number <= end]
    if not chapters:
        return report
    items = drift(profile, StyleMetrics.combine(chapters))
    report.items = [i.to_json() for i in items]
    if items:
        doc = {
            "checked_at_chapter": end,
            "window": [start, end],
            "items": report.items,
            "corrections": [i.message for i in items],
        }
        store.put_document(STYLE_DRIFT, dumps(doc))
    elif store.document(STYLE_DRIFT) is not None:
        # Back to the baseline: the corrections stop (seed §6 Layer 3 "持续到回归基线").
        store.delete_document(STYLE_DRIFT)
        report.cleared = True
    return report


# ---------------------------------------------------------------------------- consistency audit
@dataclass
class AuditReport:
    start: int
    end: int
    entity_findings: list[dict[str, Any]] = field(default_factory=list)
    findings: list[AuditFinding] = field(default_factory=list)

    @property
    def severe(self) -> list[AuditFinding]:
        return [f for f in self.findings if f.severity == "high"]

    def lines(self) -> list[str]:
        out = [
            f"第 {self.start}-{self.end} 章一致性检查：{len(self.findings)} 个问题"
            f"（{len(self.severe)} 个严重），实体检查 {len(self.entity_findings)} 条"
        ]
        for f in self.findings:
            where = f"第{f.chapter}章" if f.chapter else "全局"
            out.append(f"  [{f.severity}] {where} {f.type}：{f.description} → {f.suggestion}")
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "window": [self.start, self.end],
            "entity_findings": self.entity_findings,
            "findings": [f.to_json_dict() for f in self.findings],
        }


def _entity_findings(store: NovelStore, start: int, end: int) -> list[dict[str, Any]]:
    analysis = analyze_store(store)
    return [f.to_json() for f in analysis.entities.findings if f.chapter is None or start <= f.chapter <= end]


async def consistency_audit(
    store: NovelStore, agents: PlanningAgents, start: int, end: int
) -> tuple[AuditReport, StepReport]:
    """Entity checks plus ConsistencyAuditor over chapters ``start``-``end``; stored as an audit file."""
    report = AuditReport(start, end, await db(_entity_findings, store, start, end))
    lines = "\n".join(f"- 第{f['chapter']}章 {f['kind']}：{f['message']}" for f in report.entity_findings)
    context = await db(audit_context, store, start, end, lines)
    result = await agents.audit(context)
    step = StepReport("", calls=list(result.calls), warnings=list(result.warnings))
    value = result.value
    if isinstance(value, AuditReply):
        report.findings = list(value.findings)
    path = f"audits/audit-{layout.num(start)}-{layout.num(end)}.json"
    body = (json.dumps(report.to_json(), ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    await db(store.put_extra_file, path, body)
    step.written = [path]
    step.message = report.lines()[0]
    return report, step


# ---------------------------------------------------------------------------- after each chapter
async def after_chapter(
    store: NovelStore,
    chapter: int,
    *,
    agents: PlanningAgents,
    interaction: InteractionManager,
) -> StepReport:
    """The periodic checks due after ``chapter`` was committed; ``pause`` says the loop should stop here.

    Each check runs once per period (remembered in the novel), so re-running after a pause never repeats a
    question or an LLM call.
    """
    due = await db(due_checks, store, chapter)
    out = StepReport("")
    lines: list[str] = []
    if "drift" in due:
        drift_report = await db(style_drift, store, chapter)
        lines += drift_report.lines()
        out.written += [STYLE_DRIFT] if drift_report.items else []
        await db(_mark, store, "drift", chapter - chapter % DRIFT_EVERY)
    if "audit" in due:
        end = chapter - chapter % AUDIT_EVERY
        audit, step = await consistency_audit(store, agents, end - AUDIT_EVERY + 1, end)
        out.calls += step.calls
        out.warnings += step.warnings
        out.written += step.written
        lines += audit.lines()
        await db(add_usage, store, step.calls)
        await db(_mark, store, "audit", end)
        if audit.severe:
            out.pause = True
            lines.append("发现严重的一致性问题，已暂停续写：请按建议修正后再继续（novel continue）")
            pending = {
                "type": "consistency_audit",
                "window": [audit.start, audit.end],
                "severe": len(audit.severe),
            }
            cp = await db(store.checkpoint)
            await db(store.update_checkpoint, pending_actions=[*(cp.get("pending_actions") or []), pending])
    if "brief" in due:
        end = chapter - chapter % BRIEF_EVERY
        brief = await db(quality_brief, store, end)
        lines += brief.lines()
        path = f"{layout.NOVEL_ASK_DIR}quality-brief-{layout.num(end)}.answers.json"
        try:
            answer = await ask(store, interaction, brief_spec(brief), path, "\n".join(lines))
            action = answer.answers.get("brief_action")
        except AnswersNeeded:
            # The brief is a report with a recommended default (seed §2.2: an unanswered menu falls to the
            # Recommended option); an unattended run goes on instead of stopping every five chapters.
            action = "继续"
            lines.append("（非交互模式未回答质量简报，按推荐项“继续”）")
        await db(_mark, store, "brief", end)
        if action == "回看":
            out.pause = True
            lines.append("已暂停：回看问题章节后再继续")
        elif action == "调整方向":
            volume = int((await db(store.checkpoint)).get("current_volume") or 1)
            params = await db(plan_params, store, volume)
            new = str(answer.answers.get("direction") or "").strip()
            direction = f"{params.direction}\n第 {end} 章起的新方向：{new}".strip()
            await db(set_plan_params, store, volume, PlanParams(params.chapters, direction, params.round + 1))
            await db(store.update_checkpoint, orchestrator_state="VOL_PLANNING")
            out.pause = True
            lines.append(f"已按新方向重新规划第 {volume} 卷余下的章节（novel start 或 novel plan）")
    out.message = "\n".join(lines)
    return out


async def checks_now(
    store: NovelStore, *, agents: PlanningAgents, interaction: InteractionManager
) -> tuple[int, StepReport | None]:
    """The periodic checks due after the last committed chapter, run now (``novel check``, the window's
    定期检查): that chapter, and the report, or None when nothing is due."""
    last = int((await db(store.checkpoint)).get("last_completed_chapter") or 0)
    if not await db(due_checks, store, last):
        return last, None
    return last, await after_chapter(store, last, agents=agents, interaction=interaction)


# ---------------------------------------------------------------------------- state cleanup (§8.5)
def cleanup_state(store: NovelStore, chapter: int, absent_for: int | None = None) -> list[str]:
    """Retire characters absent for ``absent_for`` chapters and prune the state to the active cast.

    A retired character's profile moves to ``characters/retired/`` with its last state under
    ``final_state``; the protagonist is never retired. The newest state snapshot is replaced by the pruned
    one (same version: pruning is not a chapter's change). Returns the names retired.
    """
    absent_for = RETIRE_AFTER if absent_for is None else absent_for
    analysis = analyze_store(store)
    retired: list[str] = []
    keep: list[str] = []
    state = store.current_state()
    for ch in character_files(store):
        seen = analysis.entities.appearances.get(ch.id)
        if seen is not None and seen.last_chapter is not None:
            last = seen.last_chapter
        else:
            last = min((c.valid_from_chapter or 1 for c in ch.contracts), default=1)
        if ch.role != "protagonist" and chapter - last >= absent_for:
            data = {**ch.to_json_dict(), "status": "retired", "retired_since": chapter + 1}
            final = (state.get("characters") or {}).get(ch.id)
            if final is not None:
                data["final_state"] = final
            store.put_document(f"characters/retired/{ch.id}.json", dumps(data))
            store.delete_document(f"characters/active/{ch.id}.json")
            retired.append(ch.name)
        else:
            keep.append(ch.id)
    pruned = prune_state(state, keep)
    if pruned != state:
        rewrite_state_snapshot(store, int(state.get("state_version", 0)), pruned)
    return retired


# ---------------------------------------------------------------------------- volume review
def _foreshadowing_lines(store: NovelStore, volume: int, end: int) -> tuple[list[str], list[str]]:
    """Completion of the volume's foreshadowing plan, and the threads left open for the next volume."""
    global_doc = GlobalForeshadowing.model_validate(
        store.document_json(layout.GLOBAL_FORESHADOWING) or {"foreshadowing": []}
    )
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
    retired: list[str],
) -> str:
    start, end = rng
    out = [f"# 第 {volume} 卷回顾（第 {start}-{end} 章）", ""]
    out += ["## 质量", *brief.lines(), ""]
    out += ["## 全卷一致性报告", *audit.lines(), ""]
    out += ["## 伏笔完成度", *fs_lines, ""]
    out += ["## 下卷铺垫建议"]
    out += [f"- 承接：{s}" for s in setups] or ["- 本卷线索均已收束，可开新线"]
    out += ["", "## 状态清理"]
    out.append(f"- 退场角色：{'、'.join(retired)}" if retired else f"- 没有角色超过 {RETIRE_AFTER} 章未出场")
    out.append(f"- 本卷终态已归档：state/history/vol-{volume:02d}-final-state.json")
    return "\n".join(out) + "\n"


async def volume_review(store: NovelStore, agents: PlanningAgents, volume: int) -> StepReport:
    """The volume review: full-volume audit, foreshadowing, next-volume setups, state cleanup and archive.

    Writes ``volumes/vol-NN/review.md`` and ``state/history/vol-NN-final-state.json``; a review already
    written is kept (the step is idempotent).
    """
    review_path = f"{layout.volume_dir(volume)}/review.md"
    if await db(store.document, review_path) is not None:
        return StepReport(f"第 {volume} 卷回顾已完成", [review_path])
    rng = await db(volume_range, store, volume)
    if rng is None:
        cp = await db(store.checkpoint)
        rng = (1, int(cp.get("last_completed_chapter") or 1))
    start, end = rng
    archive = f"state/history/vol-{volume:02d}-final-state.json"
    state = await db(store.current_state)
    await db(store.put_document, archive, dumps(state))
    audit, step = await consistency_audit(store, agents, start, end)
    brief = await db(quality_brief, store, end, end - start + 1)
    fs_lines, setups = await db(_foreshadowing_lines, store, volume, end)
    retired = await db(cleanup_state, store, end)
    text = _review_markdown(volume, rng, brief, audit, fs_lines, setups, retired)
    await db(store.put_document, review_path, text)
    await db(add_usage, store, step.calls)
    step.written += [archive, review_path]
    step.message = (
        f"第 {volume} 卷回顾：均分 {brief.mean if brief.mean is not None else '—'}，" + audit.lines()[0]
    )
    if retired:
        step.message += f"；退场 {'、'.join(retired)}"
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


async def add_character(
    store: NovelStore, agents: PlanningAgents, interaction: InteractionManager, description: str, tag: str
) -> StepReport:
    """CharacterWeaver (新增角色) for one described character; a contract decision becomes a question, and
    the new character is stored only once the author accepts it (接受 / 编辑 / 重新生成)."""
    path = f"{layout.NOVEL_ASK_DIR}{tag}-character.answers.json"
    report = StepReport("")
    effective = int((await db(store.checkpoint)).get("last_completed_chapter") or 0) + 1

    async def generate(changes: str) -> Proposal:
        wanted = f"{description}\n\n作者对上一版的修改意见：{changes}" if changes else description
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
    await db(add_usage, store, report.calls)
    return report


class _NoCharacter(Exception):
    """CharacterWeaver gave no character (the reason is the message)."""
