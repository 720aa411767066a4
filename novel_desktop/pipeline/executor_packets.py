"""The InstructionPacket of each step (seed 000): the chapter steps here, the novel's and the volumes' in
:mod:`novel_desktop.pipeline.executor_lifecycle`.

The inline fields are the ones the built-in pipeline's agents get in their context: the chapter, its outline
section and storyline; a revision's round, ``violations`` and ``required_fixes`` (separately); a polish's
focus (the judge's style issues) and the budget left; a key chapter's second judge.
"""

from __future__ import annotations

from typing import Any

from novel_desktop.domain.evaluation import DIMENSION_WEIGHTS
from novel_desktop.domain.gate import GateAction
from novel_desktop.domain.novel_ask import AgentRef, ExpectedOutput, InstructionPacket, QuestionSpec
from novel_desktop.domain.polish import style_points
from novel_desktop.domain.refine import MAX_CHANGE_RATIO
from novel_desktop.pipeline.executor import (
    Step,
    chapter_facts,
    commit_answer_path,
    existing,
    key_chapter,
    make_packet,
    output,
    parse_step,
    secondary_eval_path,
    staged_gate,
)
from novel_desktop.pipeline.executor_lifecycle import lifecycle_packet
from novel_desktop.pipeline.verdict import low_score_spec, staged_notes
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore


def instructions(store: NovelStore, step: str) -> InstructionPacket:
    """The InstructionPacket of ``step`` for an external executor (raises :class:`StepError`)."""
    parsed = parse_step(step)
    if parsed.kind != "chapter":
        return lifecycle_packet(store, parsed)
    return _chapter_packet(store, parsed)


def base_paths(store: NovelStore) -> dict[str, str | list[str]]:
    return {
        "project_brief": "brief.md",
        "style_profile": "style-profile.json",
        "ai_blacklist": "ai-blacklist.json",
        "style_drift": "style-drift.json",
    }


def _chapter_packet(store: NovelStore, step: Step) -> InstructionPacket:
    n = step.number
    volume, storyline, outline_section = chapter_facts(store, n)
    vol = layout.volume_dir(volume)
    staged_text = f"staging/{layout.chapter_path(n)}"
    staged_eval = f"staging/{layout.evaluation_path(n)}"
    characters = [p for p in store.list_documents("characters/active/") if p.endswith(".json")]
    recent = [layout.summary_path(c) for c, _ in store.recent_summaries(n, 3)]
    memory = layout.memory_path(storyline) if storyline else ""
    contract = layout.contract_path(volume, n)
    inline: dict[str, Any] = {
        "chapter": n,
        "volume": volume,
        "storyline_id": storyline,
        "chapter_outline": outline_section,
    }
    outputs: list[ExpectedOutput]
    gate: tuple[QuestionSpec, str] | None = None
    base = base_paths(store)
    if step.action in ("draft", "revise"):
        paths = {
            **base,
            "volume_outline": f"{vol}/outline.md",
            "chapter_contract": contract,
            "storyline_memory": memory,
            "storyline_schedule": f"{vol}/storyline-schedule.json",
            "recent_summaries": recent,
            "current_state": layout.CURRENT_STATE,
            "world_rules": "world/rules.json",
            "character_profiles": characters,
            "foreshadowing": layout.GLOBAL_FORESHADOWING,
        }
        if step.action == "revise":
            paths = {**paths, "chapter_draft": staged_text, "evaluation": staged_eval}
            revisions = int(staged_notes(store, n)["revisions"])
            verdict = staged_gate(store, n)
            if verdict is not None:
                order = verdict.revision_order(revisions + 1)
                inline["mode"] = "rewrite" if verdict.decision.action is GateAction.REWRITE else "revise"
                inline["violations"] = list(order.violations)
                inline["required_fixes"] = list(order.fixes)
            inline["revision_round"] = revisions + 1
        name = "chapter-writer"
        inline["task"] = (
            f"写第 {n} 章正文（Markdown，以“# 第{n}章 标题”开头），写入 {staged_text}。"
            if step.action == "draft"
            else f"按 required_fixes 修订第 {n} 章，覆盖 {staged_text}。"
        )
        outputs = [output(staged_text, "章节正文（Markdown）")]
    elif step.action == "summarize":
        paths = {
            "chapter_draft": staged_text,
            "current_state": layout.CURRENT_STATE,
            "storyline_memory": memory,
            "storylines": "storylines/storylines.json",
            "character_profiles": characters,
            "foreshadowing": layout.GLOBAL_FORESHADOWING,
        }
        name = "summarizer"
        inline["base_state_version"] = store.state_version()
        inline["task"] = (
            "写本章摘要（≤300 字 Markdown）和状态补丁（ops：set/inc/add/remove/foreshadow，"
            f"base_state_version 用 {store.state_version()}），需要时更新故事线记忆。"
        )
        outputs = [
            output(f"staging/{layout.summary_path(n)}", "章节摘要（Markdown）"),
            output(f"staging/{layout.delta_path(n)}", "状态补丁（StatePatch JSON）"),
        ]
        if storyline:
            outputs.append(output(f"staging/{memory}", "故事线记忆（≤500 字）", required=False))
    elif step.action == "refine":
        paths = {**base, "chapter_draft": staged_text}
        name = "style-refiner"
        _refine_inline(store, n, inline, staged_text)
        outputs = [output(staged_text, "润色后的章节正文")]
    elif step.action == "judge":
        paths = {
            **base,
            "chapter_content": staged_text,
            "chapter_contract": contract,
            "character_profiles": characters,
            "prev_summary": recent[-1:],
            "world_rules": "world/rules.json",
            "storyline_spec": "storylines/storyline-spec.json",
            "storyline_schedule": f"{vol}/storyline-schedule.json",
        }
        name = "quality-judge"
        inline["dimension_weights"] = dict(DIMENSION_WEIGHTS)
        inline["task"] = f"按 8 个维度评审第 {n} 章并核对契约，结果（Evaluation JSON）写入 {staged_eval}。"
        outputs = [output(staged_eval, "评估结果（Evaluation JSON）")]
        if key_chapter(store, n):
            # Seed 004 §6: a key chapter (volume start or end, a convergence event) is judged twice by
            # independent judges; the lower score counts.
            second = secondary_eval_path(n)
            inline["key_chapter"] = True
            inline["task"] += (
                f"本章是关键章：另起一个独立的评审（不看第一份结果）再评一次，写入 {second}；"
                "两份中较低的分数计入门控。"
            )
            outputs.append(output(second, "第二评审的评估结果（Evaluation JSON）"))
    else:  # commit
        paths = {"chapter_content": staged_text, "evaluation": staged_eval}
        name = "commit"
        outputs = []
        verdict = staged_gate(store, n)
        if verdict is not None:
            inline["gate_decision"] = verdict.decision.action.value
            inline["gate_reason"] = verdict.decision.reason
            inline["gate_issues"] = [i.line() for i in verdict.issues]
            if verdict.decision.action is GateAction.ASK_USER:
                gate = (low_score_spec(n, verdict), commit_answer_path(store, n))
                inline["issues"] = list(verdict.evaluation.issues[:5])
        inline["task"] = "无需调用模型：门控通过后由 novel advance 在一个事务里提交本章。"
        return make_packet(
            step, AgentRef(kind="builtin", name=name), existing(store, paths), inline, outputs, gate
        )
    return make_packet(
        step, AgentRef(kind="subagent", name=name), existing(store, paths), inline, outputs, gate
    )


def polishing(store: NovelStore, n: int) -> bool:
    """Whether chapter ``n``'s refine step is the gate's second polish (3.5-3.9), not the first pass."""
    cp = store.checkpoint()
    return cp.get("pipeline_stage") == "judged" and cp.get("inflight_chapter") == n


def refine_budget(store: NovelStore, n: int, text: str) -> int:
    """Characters the refiner may still change in chapter ``n``: 15% of the chapter across both passes,
    measured as ``validate`` measures it (characters of the staged text, not 字数)."""
    used = int(staged_notes(store, n).get("refine_changed") or 0)
    return max(0, int(len(text) * MAX_CHANGE_RATIO) - used)


def _refine_inline(store: NovelStore, n: int, inline: dict[str, Any], staged_text: str) -> None:
    text = store.staging(layout.chapter_path(n)) or ""
    budget = refine_budget(store, n, text)
    inline["max_changed_chars"] = budget
    if not polishing(store, n):
        inline["mode"] = "refine"
        inline["task"] = f"去 AI 化润色 {staged_text}（改动不超过 15%，不改情节），覆盖原文件。"
        return
    verdict = staged_gate(store, n)
    # The same style points the built-in pipeline's second polish gets (issue 16 point 6).
    focus = list(style_points(verdict.evaluation)) if verdict is not None else []
    inline["mode"] = "polish"
    inline["focus"] = focus
    inline["task"] = (
        f"评分在 3.5-3.9：按 focus 里评审指出的文风问题再润色一次 {staged_text}（不改情节），覆盖原文件；"
        f"两次润色合计改动不超过全文 15%，本次最多改 {budget} 字。之后直接提交，不再评审。"
    )


__all__ = ["base_paths", "instructions", "polishing", "refine_budget"]
