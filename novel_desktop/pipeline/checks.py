"""Periodic checks and the volume review (seed 004 §6 Layer 2c-2d, Layer 3, §8.2, §8.5; 001 §10.2-§10.3).

- every 5 chapters: the quality brief (mean score, problem chapters) with 继续 / 回看 / 调整方向, and the
  style drift of the last 5 chapters against the profile, written to ``style-drift.json`` (which the writer
  and refiner read) until the style returns to its baseline, when the file is removed;
- every 10 chapters: a consistency audit — the entity index's deterministic findings plus ConsistencyAuditor
  over the window's summaries; a finding of high severity pauses the loop (§10.3 一致性检查失败 → 暂停);
- at a volume's last chapter: the review, :mod:`novel_desktop.pipeline.volume_review`.

A changed world rule's propagation (§6.5.5) is :mod:`novel_desktop.pipeline.rule_change`.

:func:`after_chapter` is what the writing loops call after each committed chapter.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from statistics import mean
from typing import Any

from novel_desktop.agents.planning import AuditFinding, AuditReply, audit_context
from novel_desktop.agents.ports import PlanningAgents
from novel_desktop.analysis.novel_analysis import analyze_store
from novel_desktop.analysis.style_metrics import StyleMetrics, drift
from novel_desktop.domain.style import StyleProfile
from novel_desktop.pipeline.interaction import AnswersNeeded, InteractionManager
from novel_desktop.pipeline.steps import StepReport, ask, question, spec
from novel_desktop.pipeline.volume_plan import PlanParams, plan_params, set_plan_params
from novel_desktop.storage import layout
from novel_desktop.storage.aio import db
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
