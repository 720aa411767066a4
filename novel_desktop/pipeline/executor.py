"""Steps for an external executor (Claude Code, Codex) working on an exported project folder (seed 000).

The novel's checkpoint says which step comes next (:func:`next_step`); :func:`instructions` describes that
step as a seed-000 :class:`InstructionPacket`: which agent runs, the project-relative files it reads
(``manifest.paths``, §8.3) and small values inline, a NOVEL_ASK gate (``novel_ask`` + ``answer_path``) where
the author must decide, the files it must write (``expected_outputs``), and the commands that follow.
The executor writes those files into the folder (``novel export-folder --skeleton``); :func:`validate`
checks them against the domain models and the gate's AnswerSpec against its QuestionSpec; :func:`advance`
imports them into staging and moves the checkpoint (both in :mod:`novel_desktop.pipeline.step_results`).

Step ids::

    novel:init               WorldBuilder (light): world rules, first storyline; gate: platform binding
    volume:02:plan           PlotArchitect: the volume outline; gate: the author confirms the outline
    chapter:048:draft        ChapterWriter → staging/chapters/chapter-048.md
    chapter:048:summarize    Summarizer → summary, state delta (and storyline memory)
    chapter:048:refine       StyleRefiner → the polished staging/chapters/chapter-048.md
    chapter:048:judge        QualityJudge → staging/evaluations/chapter-048-eval.json
    chapter:048:revise       reviser → a new staging/chapters/chapter-048.md from the judge's fixes
    chapter:048:commit       no agent: the quality gate, then the commit; gate when the score is 2.0-2.9
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from novel_desktop.domain.evaluation import DIMENSION_WEIGHTS, Evaluation
from novel_desktop.domain.gate import GateAction, GateDecision
from novel_desktop.domain.novel_ask import (
    AgentRef,
    ExpectedOutput,
    InstructionPacket,
    Manifest,
    NextAction,
    QuestionSpec,
    ValidationProblem,
)
from novel_desktop.domain.novel_ask_answers import evaluate_gate
from novel_desktop.pipeline.stale import refuse_stale
from novel_desktop.pipeline.verdict import (
    Verdict,
    awaiting_unchanged,
    low_score_spec,
    staged_notes,
    staged_verdict,
)
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore, dumps

PACKET_VERSION = 1
CHAPTER_ACTIONS = ("draft", "summarize", "refine", "judge", "revise", "commit")

_CHAPTER_STEP = re.compile(r"^chapter:(\d{3,}):(" + "|".join(CHAPTER_ACTIONS) + r")$")
_VOLUME_STEP = re.compile(r"^volume:(\d{2,}):plan$")

#: The seed's 用户审核点 for a low score, as asked by the chapter pipeline too.
OUTLINE_OPTIONS = (
    ("确认", "按此大纲开始本卷写作"),
    ("修改", "先改大纲，再重新确认"),
    ("调整章数", "重新规划本卷章数"),
)
PLATFORM_OPTIONS = (("qidian", "起点"), ("tomato", "番茄"), ("jjwxc", "晋江"), ("web", "自建站/博客"))


class StepError(ValueError):
    """The step id is malformed or names a step that cannot be described now."""


class StepInvalid(Exception):
    """The step's outputs (or its gate's answer) do not validate; ``problems`` says why."""

    def __init__(self, step: str, problems: list[ValidationProblem]) -> None:
        self.step = step
        self.problems = problems
        lines = "\n".join(f"- {p}" for p in problems)
        super().__init__(f"步骤 {step} 未通过校验 (step not valid)：\n{lines}")


class StepRefused(Exception):
    """The step validated but cannot advance now (out of order, or the author's answer says stop)."""


@dataclass(frozen=True)
class Step:
    """A parsed step id."""

    kind: str  # "chapter" | "volume" | "novel"
    action: str
    number: int = 0

    @property
    def id(self) -> str:
        if self.kind == "chapter":
            return f"chapter:{layout.num(self.number)}:{self.action}"
        if self.kind == "volume":
            return f"volume:{self.number:02d}:plan"
        return "novel:init"


def parse_step(step: str) -> Step:
    """Parse ``chapter:048:draft``, ``volume:02:plan`` or ``novel:init``; raise :class:`StepError`."""
    text = step.strip()
    if text == "novel:init":
        return Step("novel", "init")
    m = _CHAPTER_STEP.match(text)
    if m:
        if int(m.group(1)) < 1:
            raise StepError(f"章节号必须从 1 开始：{step} (chapter numbers start at 1)")
        return Step("chapter", m.group(2), int(m.group(1)))
    m = _VOLUME_STEP.match(text)
    if m and int(m.group(1)) >= 1:
        return Step("volume", "plan", int(m.group(1)))
    raise StepError(
        f"无法识别的步骤：{step!r}（应为 chapter:048:draft、volume:02:plan 或 novel:init） (unknown step)"
    )


# ---------------------------------------------------------------------------- reading outputs
class FolderReader:
    """Reads project-relative paths from an exported folder, or from the novel when there is none."""

    def __init__(self, store: NovelStore, folder: Path | None) -> None:
        self.store = store
        self.folder = folder

    def read(self, path: str) -> str | None:
        if self.folder is not None:
            target = self.folder / path
            try:
                return target.read_text(encoding="utf-8") if target.is_file() else None
            except (OSError, UnicodeDecodeError):
                return None
        return store_text(self.store, path)


def store_text(store: NovelStore, path: str) -> str | None:
    """The text the novel holds for a project-relative path of the §9.1 layout, or None."""
    kind, number = layout.classify(path)
    K = layout.Kind
    if kind is K.ANSWER:
        return store.answer(path)
    if kind is K.STAGING:
        return store.staging(path.removeprefix("staging/"))
    if kind is K.DOCUMENT:
        return store.document(path)
    if kind is K.CHAPTER and number is not None:
        return store.chapter_text(number)
    if kind is K.SUMMARY and number is not None:
        return store.summary(number)
    if kind is K.EVALUATION and number is not None:
        ev = store.evaluation(number)
        return dumps(ev) if ev is not None else None
    if kind is K.CURRENT_STATE:
        return dumps(store.current_state())
    if kind is K.CHECKPOINT:
        return dumps(store.checkpoint())
    return None


# ---------------------------------------------------------------------------- where the novel stands
def staged_gate(store: NovelStore, n: int) -> Verdict | None:
    """The quality gate's verdict on the staged chapter (the lower judge counts on key chapters)."""
    return staged_verdict(store, n, revisions=int(staged_notes(store, n)["revisions"]))


def gate_decision(store: NovelStore, n: int) -> tuple[GateDecision, Evaluation] | None:
    """The quality gate's decision on the staged evaluation (the lower judge counts on key chapters)."""
    verdict = staged_gate(store, n)
    return None if verdict is None else (verdict.decision, verdict.evaluation)


def _commit_answer_path(store: NovelStore, n: int) -> str:
    # One question per judging round, so that a re-judged chapter is asked afresh.
    rounds = len(staged_notes(store, n)["scores"])
    return f"{layout.NOVEL_ASK_DIR}chapter-{layout.num(n)}-commit-j{rounds}.answers.json"


def answer_choice(store: NovelStore, answer_path: str, spec: QuestionSpec, question: str) -> str | None:
    raw = store.answer(answer_path)
    if raw is None:
        return None
    try:
        outcome = evaluate_gate(spec, json.loads(raw))
    except json.JSONDecodeError:
        return None
    if outcome.answer is None:
        return None
    value = outcome.answer.answers.get(question)
    return value if isinstance(value, str) else None


def next_step(store: NovelStore) -> str:
    """The step the checkpoint calls for next (``novel continue``'s order); StaleChaptersError while stale."""
    cp = store.checkpoint()
    state = str(cp.get("orchestrator_state") or "INIT")
    if state in ("INIT", "QUICK_START") and store.document("world/rules.json") is None:
        return "novel:init"
    refuse_stale(store)
    volume = int(cp.get("current_volume") or 1)
    inflight = cp.get("inflight_chapter")
    stage = cp.get("pipeline_stage")
    in_flight = inflight is not None and stage not in (None, "committed")
    last = int(cp.get("last_completed_chapter") or 0)
    n = int(inflight) if in_flight and inflight is not None else last + 1
    chapter = layout.num(n)
    if not in_flight:
        outline = store.document(f"{layout.volume_dir(volume)}/outline.md")
        if outline is None:
            return f"volume:{volume:02d}:plan"
        from novel_desktop.domain.outline import outline_sections

        sections = outline_sections(outline)
        if sections and n > max(sections):
            return f"volume:{volume + 1:02d}:plan"
        return f"chapter:{chapter}:draft"
    if stage == "drafting":
        return f"chapter:{chapter}:draft"
    if stage == "drafted":
        if store.staging(layout.summary_path(n)) is None:
            return f"chapter:{chapter}:summarize"
        authors = staged_notes(store, n).get("author_edited")  # the author's text is never restyled
        return f"chapter:{chapter}:{'judge' if authors else 'refine'}"
    if stage == "refined":
        return f"chapter:{chapter}:judge"
    gate = staged_gate(store, n)
    if gate is None:
        return f"chapter:{chapter}:judge"
    decision = gate.decision
    if decision.action in (GateAction.REVISE, GateAction.REWRITE):
        return f"chapter:{chapter}:revise"
    if decision.action is GateAction.ASK_USER:
        choice = answer_choice(
            store, _commit_answer_path(store, n), low_score_spec(n, gate), "low_score_action"
        )
        if choice == "自动修订":
            return f"chapter:{chapter}:revise"
        waiting = awaiting_unchanged(staged_notes(store, n), store.staging(layout.chapter_path(n)))
        if choice == "手动改" or waiting:  # an unchanged draft after 手动改 is not asked about again
            return f"chapter:{chapter}:judge"
    return f"chapter:{chapter}:commit"


# ---------------------------------------------------------------------------- packets
def _question(
    qid: str, header: str, question: str, options: tuple[tuple[str, str], ...], default: str
) -> Any:
    return {
        "id": qid,
        "header": header,
        "question": question,
        "kind": "single_choice",
        "required": True,
        "options": [{"label": label, "description": desc} for label, desc in options],
        "default": default,
    }


def _outline_spec(volume: int) -> QuestionSpec:
    return QuestionSpec.model_validate(
        {
            "version": 1,
            "topic": f"volume {volume} outline",
            "questions": [
                _question(
                    "outline_action",
                    f"第{volume}卷大纲",
                    f"第 {volume} 卷大纲已生成（volumes/vol-{volume:02d}/outline.md）。是否确认？",
                    OUTLINE_OPTIONS,
                    "确认",
                )
            ],
        }
    )


def _init_spec(store: NovelStore) -> QuestionSpec:
    current = store.meta().get("platform") or "qidian"
    return QuestionSpec.model_validate(
        {
            "version": 1,
            "topic": "platform binding",
            "questions": [
                _question(
                    "platform",
                    "Platform",
                    "你准备发布到哪个平台？",
                    PLATFORM_OPTIONS,
                    current if current in dict(PLATFORM_OPTIONS) else "qidian",
                )
            ],
        }
    )


def _existing(store: NovelStore, paths: dict[str, str | list[str]]) -> dict[str, str | list[str]]:
    """Keep only the inputs the novel (and so an exported folder) actually has."""
    out: dict[str, str | list[str]] = {}
    for key, value in paths.items():
        if isinstance(value, list):
            kept = [p for p in value if store_text(store, p) is not None]
            if kept:
                out[key] = kept
        elif store_text(store, value) is not None:
            out[key] = value
    return out


def _base_paths(store: NovelStore) -> dict[str, str | list[str]]:
    return {
        "project_brief": "brief.md",
        "style_profile": "style-profile.json",
        "ai_blacklist": "ai-blacklist.json",
        "style_drift": "style-drift.json",
    }


def chapter_facts(store: NovelStore, n: int) -> tuple[int, str | None, str]:
    """Volume, storyline and outline section of chapter ``n``."""
    from novel_desktop.agents.context import load_facts

    facts = load_facts(store, n)
    return facts.volume, facts.storyline_id, facts.chapter_outline


def _output(path: str, note: str | None = None, *, required: bool = True) -> ExpectedOutput:
    return ExpectedOutput(path=path, required=required, note=note)


_ANSWER_NOTE = "AnswerSpec JSON record for the NOVEL_ASK gate (written before main step execution)."


def instructions(store: NovelStore, step: str) -> InstructionPacket:
    """The InstructionPacket of ``step`` for an external executor (raises :class:`StepError`)."""
    parsed = parse_step(step)
    if parsed.kind == "novel":
        return _init_packet(store, parsed)
    if parsed.kind == "volume":
        return _plan_packet(store, parsed)
    return _chapter_packet(store, parsed)


def _packet(
    step: Step,
    agent: AgentRef,
    paths: dict[str, str | list[str]],
    inline: dict[str, Any],
    outputs: list[ExpectedOutput],
    gate: tuple[QuestionSpec, str] | None = None,
) -> InstructionPacket:
    if gate is not None:
        outputs = [_output(gate[1], _ANSWER_NOTE), *outputs]
    return InstructionPacket(
        version=PACKET_VERSION,
        step=step.id,
        agent=agent,
        manifest=Manifest(mode="paths", inline=inline, paths=paths),
        novel_ask=gate[0] if gate else None,
        answer_path=gate[1] if gate else None,
        expected_outputs=outputs,
        next_actions=[
            NextAction(kind="command", command=f"novel validate {step.id}"),
            NextAction(kind="command", command=f"novel advance {step.id}"),
        ],
    )


def _init_packet(store: NovelStore, step: Step) -> InstructionPacket:
    research = store.list_documents("research/")
    paths = _existing(store, {"project_brief": "brief.md", "research": research})
    inline = {
        "mode": "轻量初始化",
        "title": store.meta().get("title", ""),
        "genre": store.meta().get("genre", ""),
        "task": (
            "按 WorldBuilder 轻量初始化：核心规则 ≤3 条写入 world/rules.json（W-001 起编号），"
            "叙述设定写入 world/*.md，初始故事线（一条 main_arc）写入 storylines/storylines.json；"
            "CharacterWeaver 可同时写主角到 characters/active/<slug>.json。"
        ),
    }
    outputs = [
        _output("world/rules.json", "L1 世界规则（WorldRules）"),
        _output("storylines/storylines.json", "初始故事线（StorylinesFile）"),
        _output("world/rules.md", "规则的叙述版", required=False),
    ]
    gate = (_init_spec(store), f"{layout.NOVEL_ASK_DIR}novel-init.answers.json")
    return _packet(step, AgentRef(kind="subagent", name="world-builder"), paths, inline, outputs, gate)


def _plan_packet(store: NovelStore, step: Step) -> InstructionPacket:
    v = step.number
    vol = layout.volume_dir(v)
    cp = store.checkpoint()
    last = int(cp.get("last_completed_chapter") or 0)
    paths = _existing(
        store,
        {
            **_base_paths(store),
            "world_docs": store.list_documents("world/"),
            "characters": [p for p in store.list_documents("characters/active/") if p.endswith(".json")],
            "prev_volume_review": f"{layout.volume_dir(v - 1)}/review.md",
            "global_foreshadowing": layout.GLOBAL_FORESHADOWING,
            "storylines": "storylines/storylines.json",
            "current_state": layout.CURRENT_STATE,
        },
    )
    inline = {
        "volume": v,
        "chapter_start": last + 1,
        "task": (
            f"规划第 {v} 卷：大纲写入 {vol}/outline.md（每章一节，标题形如“## 第 N 章 标题”），"
            f"故事线调度写入 {vol}/storyline-schedule.json，伏笔计划写入 {vol}/foreshadowing.json，"
            f"章节契约写入 {vol}/chapter-contracts/chapter-NNN.json。然后请作者确认大纲。"
        ),
    }
    outputs = [
        _output(f"{vol}/outline.md", "本卷大纲"),
        _output(f"{vol}/storyline-schedule.json", "故事线调度（StorylineSchedule）", required=False),
        _output(f"{vol}/foreshadowing.json", "本卷伏笔计划", required=False),
    ]
    gate = (_outline_spec(v), f"{layout.NOVEL_ASK_DIR}volume-{v:02d}-plan.answers.json")
    return _packet(step, AgentRef(kind="subagent", name="plot-architect"), paths, inline, outputs, gate)


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
    base = _base_paths(store)
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
            verdict = staged_verdict(store, n, revisions=revisions)
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
        outputs = [_output(staged_text, "章节正文（Markdown）")]
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
            _output(f"staging/{layout.summary_path(n)}", "章节摘要（Markdown）"),
            _output(f"staging/{layout.delta_path(n)}", "状态补丁（StatePatch JSON）"),
        ]
        if storyline:
            outputs.append(_output(f"staging/{memory}", "故事线记忆（≤500 字）", required=False))
    elif step.action == "refine":
        paths = {**base, "chapter_draft": staged_text}
        name = "style-refiner"
        inline["task"] = f"去 AI 化润色 {staged_text}（改动不超过 15%，不改情节），覆盖原文件。"
        outputs = [_output(staged_text, "润色后的章节正文")]
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
        outputs = [_output(staged_eval, "评估结果（Evaluation JSON）")]
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
                gate = (low_score_spec(n, verdict), _commit_answer_path(store, n))
                inline["issues"] = list(verdict.evaluation.issues[:5])
        inline["task"] = "无需调用模型：门控通过后由 novel advance 在一个事务里提交本章。"
        return _packet(
            step, AgentRef(kind="builtin", name=name), _existing(store, paths), inline, outputs, gate
        )
    return _packet(step, AgentRef(kind="subagent", name=name), _existing(store, paths), inline, outputs, gate)


# ---------------------------------------------------------------------------- validate
