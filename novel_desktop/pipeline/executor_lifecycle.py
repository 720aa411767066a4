"""The novel's and the volumes' steps for an external executor, as the orchestrator runs them (seed 004 §8.2).

``novel:init`` (world, characters, storylines; the platform) → ``novel:style`` (the style profile; then the
trial outline and contracts of chapters 1-3, :mod:`novel_desktop.pipeline.trial_plan`) → the trial chapters →
``novel:trial`` (继续 / 调整风格 / 重来, :mod:`novel_desktop.pipeline.quick_start`) → ``volume:NN:plan`` → the
volume's chapters → ``volume:NN:review`` (the review of :mod:`novel_desktop.pipeline.volume_review`: the
executor's audit in ``review.md``, the closures the author picks, the state archived) → the next plan.
Each step's packet and what its advance does once the outputs validated.
"""

from __future__ import annotations

import json
import re
from typing import Any

from novel_desktop.domain.novel_ask import AgentRef, InstructionPacket, QuestionSpec
from novel_desktop.domain.novel_ask_answers import evaluate_gate
from novel_desktop.pipeline.approval import apply_payload
from novel_desktop.pipeline.executor import (
    Step,
    StepRefused,
    existing,
    make_packet,
    output,
)
from novel_desktop.pipeline.quick_start import (
    QUICK_START_META,
    ROUND_META,
    STYLE_ANSWER,
    TRIAL_CHAPTERS,
    ensure_storylines,
    reset_trial,
    style_templates,
    trial_answer_path,
    trial_review_spec,
)
from novel_desktop.pipeline.trial_plan import trial_plan_payload
from novel_desktop.pipeline.volume_plan import PlanParams, plan_params, set_plan_params, volume_range
from novel_desktop.pipeline.volume_review import apply_closures, closures_spec, review_closures, review_spec
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore, dumps

#: The seed's 用户审核点 for a volume outline, as asked by the planning step too.
OUTLINE_OPTIONS = (
    ("确认", "按此大纲开始本卷写作"),
    ("修改", "先改大纲，再重新确认"),
    ("调整章数", "重新规划本卷章数"),
)
PLATFORM_OPTIONS = (("qidian", "起点"), ("tomato", "番茄"), ("jjwxc", "晋江"), ("web", "自建站/博客"))


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


def _round(store: NovelStore) -> str:
    n = int(store.meta().get(ROUND_META) or 0)
    return f"-r{n}" if n else ""


def _review_round(store: NovelStore, volume: int) -> tuple[str, int]:
    key = f"review_round_vol_{volume:02d}"
    return key, int(store.meta().get(key) or 0)


def _review_range(store: NovelStore, volume: int) -> tuple[int, int]:
    rng = volume_range(store, volume)
    if rng is None:
        return 1, int(store.checkpoint().get("last_completed_chapter") or 1)
    return rng


def _review_spec(store: NovelStore, volume: int) -> QuestionSpec:
    """The volume-end question (确认 / 修改 / 加角色, the next volume's direction) and, when the review
    proposes retirements or closures, which of them to apply."""
    start, end = _review_range(store, volume)
    base: QuestionSpec = review_spec(volume, f"第 {volume} 卷（第 {start}-{end} 章）已写完，回顾见 review.md")
    proposed = review_closures(store, volume, end)
    if not proposed:
        return base
    closures: QuestionSpec = closures_spec(volume, proposed)
    data = base.model_dump(mode="json", exclude_none=True)
    data["questions"] += closures.model_dump(mode="json", exclude_none=True)["questions"]
    return QuestionSpec.model_validate(data)


# ---------------------------------------------------------------------------- packets
def lifecycle_packet(store: NovelStore, step: Step) -> InstructionPacket:
    """The packet of a ``novel:*`` or ``volume:NN:*`` step."""
    if step.kind == "volume":
        return _review_packet(store, step) if step.action == "review" else _plan_packet(store, step)
    if step.action == "style":
        return _style_packet(store, step)
    if step.action == "trial":
        return _trial_packet(store, step)
    return _init_packet(store, step)


def _init_packet(store: NovelStore, step: Step) -> InstructionPacket:
    research = store.list_documents("research/")
    paths = existing(store, {"project_brief": "brief.md", "research": research})
    inline = {
        "mode": "轻量初始化",
        "title": store.meta().get("title", ""),
        "genre": store.meta().get("genre", ""),
        "task": (
            "按 WorldBuilder 轻量初始化：核心规则 ≤3 条写入 world/rules.json（W-001 起编号），"
            "叙述设定写入 world/*.md，初始故事线（一条 main_arc）写入 storylines/storylines.json；"
            "CharacterWeaver 写主角和 1-2 个配角到 characters/active/<slug>.json（含 L2 契约）。"
        ),
    }
    outputs = [
        output("world/rules.json", "L1 世界规则（WorldRules）"),
        output("storylines/storylines.json", "初始故事线（StorylinesFile）"),
        output("world/rules.md", "规则的叙述版", required=False),
    ]
    gate = (_init_spec(store), f"{layout.NOVEL_ASK_DIR}novel-init.answers.json")
    return make_packet(step, AgentRef(kind="subagent", name="world-builder"), paths, inline, outputs, gate)


def _style_packet(store: NovelStore, step: Step) -> InstructionPacket:
    from novel_desktop.pipeline.quick_start import style_spec

    characters = [p for p in store.list_documents("characters/active/") if p.endswith(".json")]
    paths = existing(store, {"project_brief": "brief.md", "characters": characters})
    templates = {
        name: str((profile.model_extra or {}).get("fits", "")) for name, profile in style_templates().items()
    }
    inline = {
        "templates": templates,
        "task": (
            "按作者在 NOVEL_ASK 里的选择确定文风：选了“风格模板”可不写文件（novel advance 会用该内置模板）；"
            "选了“我的样本”或“参考作者”，按 StyleAnalyzer 提取风格写入 style-profile.json（StyleProfile）。"
            f"之后按试写大纲写第 1-{TRIAL_CHAPTERS} 章。"
        ),
    }
    outputs = [output("style-profile.json", "风格指纹（StyleProfile）；选内置模板时可省略", required=False)]
    gate = (style_spec(), STYLE_ANSWER.format(round=_round(store)))
    return make_packet(step, AgentRef(kind="subagent", name="style-analyzer"), paths, inline, outputs, gate)


def _trial_lines(store: NovelStore) -> list[str]:
    lines = []
    for n in range(1, TRIAL_CHAPTERS + 1):
        ev = store.evaluation(n) or {}
        lines.append(f"第{n}章 {ev.get('overall', '—')} 分")
    return lines


def _trial_packet(store: NovelStore, step: Step) -> InstructionPacket:
    profile = store.document_json("style-profile.json") or {}
    style = str(profile.get("name") or profile.get("reference_author") or profile.get("source_type") or "")
    lines = _trial_lines(store)
    chapters: dict[str, str | list[str]] = {
        "trial_chapters": [layout.chapter_path(n) for n in range(1, TRIAL_CHAPTERS + 1)]
    }
    inline = {
        "scores": lines,
        "style": style,
        "task": "无需调用模型：请作者看过三章试写后回答 NOVEL_ASK（继续 / 调整风格 / 重来）。",
    }
    gate = (trial_review_spec(lines, style), trial_answer_path(store))
    return make_packet(
        step, AgentRef(kind="builtin", name="trial-review"), existing(store, chapters), inline, [], gate
    )


def _plan_packet(store: NovelStore, step: Step) -> InstructionPacket:
    v = step.number
    vol = layout.volume_dir(v)
    cp = store.checkpoint()
    last = int(cp.get("last_completed_chapter") or 0)
    paths = existing(
        store,
        {
            "project_brief": "brief.md",
            "style_profile": "style-profile.json",
            "ai_blacklist": "ai-blacklist.json",
            "style_drift": "style-drift.json",
            "world_docs": store.list_documents("world/"),
            "characters": [p for p in store.list_documents("characters/active/") if p.endswith(".json")],
            "prev_volume_review": f"{layout.volume_dir(v - 1)}/review.md",
            "global_foreshadowing": layout.GLOBAL_FORESHADOWING,
            "storylines": "storylines/storylines.json",
            "current_state": layout.CURRENT_STATE,
        },
    )
    params = plan_params(store, v)
    inline = {
        "volume": v,
        "chapter_start": last + 1,
        "chapters": params.chapters,
        "direction": params.direction,
        "task": (
            f"规划第 {v} 卷：大纲写入 {vol}/outline.md（每章一节，标题形如“## 第 N 章 标题”），"
            f"故事线调度写入 {vol}/storyline-schedule.json，伏笔计划写入 {vol}/foreshadowing.json，"
            f"章节契约写入 {vol}/chapter-contracts/chapter-NNN.json。然后请作者确认大纲。"
        ),
    }
    outputs = [
        output(f"{vol}/outline.md", "本卷大纲"),
        output(f"{vol}/storyline-schedule.json", "故事线调度（StorylineSchedule）", required=False),
        output(f"{vol}/foreshadowing.json", "本卷伏笔计划", required=False),
    ]
    gate = (_outline_spec(v), f"{layout.NOVEL_ASK_DIR}volume-{v:02d}-plan.answers.json")
    return make_packet(step, AgentRef(kind="subagent", name="plot-architect"), paths, inline, outputs, gate)


def _review_packet(store: NovelStore, step: Step) -> InstructionPacket:
    v = step.number
    vol = layout.volume_dir(v)
    start, end = _review_range(store, v)
    summaries = [layout.summary_path(n) for n in range(start, end + 1)]
    paths = existing(
        store,
        {
            "volume_outline": f"{vol}/outline.md",
            "summaries": summaries,
            "evaluations": [layout.evaluation_path(n) for n in range(start, end + 1)],
            "volume_foreshadowing": f"{vol}/foreshadowing.json",
            "global_foreshadowing": layout.GLOBAL_FORESHADOWING,
            "storylines": "storylines/storylines.json",
            "characters": [p for p in store.list_documents("characters/active/") if p.endswith(".json")],
            "current_state": layout.CURRENT_STATE,
        },
    )
    proposed = review_closures(store, v, end)
    inline = {
        "volume": v,
        "chapter_start": start,
        "chapter_end": end,
        "proposed_closures": [f"{c.label}：{c.why}" for c in proposed],
        "task": (
            f"第 {v} 卷回顾：按 ConsistencyAuditor 逐章（看摘要）做全卷一致性审计，核对本卷伏笔回收、"
            f"列出留给下一卷的伏笔与铺垫，写成 {vol}/review.md（首行写“均分 X”）。然后请作者回答 NOVEL_ASK："
            "确认 / 修改 / 加角色（加角色时把新角色写入 characters/active/<slug>.json），以及要执行的收束。"
        ),
    }
    outputs = [output(f"{vol}/review.md", "卷末回顾（Markdown）")]
    _key, rnd = _review_round(store, v)
    gate = (_review_spec(store, v), f"{layout.NOVEL_ASK_DIR}volume-{v:02d}-review-r{rnd}.answers.json")
    agent = AgentRef(kind="subagent", name="consistency-auditor")
    return make_packet(step, agent, paths, inline, outputs, gate)


# ---------------------------------------------------------------------------- advance
def import_prefixes(step: Step) -> tuple[str, ...]:
    """What an advance of ``step`` takes from the folder besides its expected outputs (each validated)."""
    if step.kind == "novel":
        return ("world", "characters", "storylines", "brief.md") if step.action == "init" else ()
    if step.action == "review":
        return ("characters",)
    return (layout.volume_dir(step.number),)


def answers_of(raw: str | None, spec: QuestionSpec | None) -> dict[str, Any]:
    """The valid answers an AnswerSpec text gives to ``spec`` ({} when there are none)."""
    if raw is None or spec is None:
        return {}
    try:
        outcome = evaluate_gate(spec, json.loads(raw))
    except json.JSONDecodeError:
        return {}
    return dict(outcome.answer.answers) if outcome.answer is not None else {}


def gate_answers(store: NovelStore, packet: InstructionPacket) -> dict[str, Any]:
    """The author's valid answers to the packet's NOVEL_ASK gate ({} when there are none)."""
    if packet.answer_path is None:
        return {}
    return answers_of(store.answer(packet.answer_path), packet.novel_ask)


def style_missing(profile: str | None, answers: dict[str, Any]) -> bool:
    """Whether ``novel:style`` lacks its profile: none written and no bundled template chosen."""
    return profile is None and answers.get("style_source") not in (None, "风格模板")


def apply_lifecycle(store: NovelStore, step: Step, packet: InstructionPacket) -> str:
    """Take a validated ``novel:*`` / ``volume:NN:*`` step in; the message for the author."""
    answers = gate_answers(store, packet)
    if step.kind == "volume" and step.action == "plan":
        choice = answers.get("outline_action")
        if choice != "确认":
            raise StepRefused(
                f"作者选择了“{choice}”：改好大纲后删除 {packet.answer_path} 再确认一次 "
                "(outline not confirmed)"
            )
        store.update_checkpoint(current_volume=step.number, orchestrator_state="WRITING")
        return f"第 {step.number} 卷大纲已确认，开始写作"
    if step.kind == "volume":
        return _apply_review(store, step.number, answers)
    if step.action == "init":
        platform = answers.get("platform")
        if isinstance(platform, str) and platform:
            store.set_meta("platform", platform)
        ensure_storylines(store)  # the LS spec and each storyline's memory file, as the quick start
        store.update_checkpoint(orchestrator_state="QUICK_START")
        return f"设定已导入，发布平台：{platform}；下一步确定文风（novel:style）"
    if step.action == "style":
        return _apply_style(store, answers)
    return _apply_trial(store, answers)


def _apply_style(store: NovelStore, answers: dict[str, Any]) -> str:
    from novel_desktop.pipeline.quick_start import find_template

    how = "已导入 style-profile.json"
    if store.document("style-profile.json") is None:
        names = list(style_templates())
        name = str(answers.get("template") or (names[0] if names else ""))
        profile = find_template(name)
        if profile is None:
            raise StepRefused(f"没有名为 {name} 的风格模板，可选：{'、'.join(names)}")
        store.put_document("style-profile.json", dumps(profile.to_json_dict()))
        how = f"内置模板「{name}」"
    payload = trial_plan_payload(store)
    if payload is not None:
        note = "快速起步：试写第 1-3 章的大纲与章节契约"
        apply_payload(store, "volume_plan", payload, effective_from=1, note=note, volume=1)
    store.set_meta(QUICK_START_META, "trial")
    store.update_checkpoint(orchestrator_state="QUICK_START", current_volume=1)
    return f"文风：{how}；试写大纲与章节契约已写入第 1 卷，下一步试写第 1 章"


def _apply_trial(store: NovelStore, answers: dict[str, Any]) -> str:
    choice = answers.get("trial_action")
    if choice == "调整风格":
        reset_trial(store, everything=False)
        return "重新选择文风，试写章节将按新文风重写"
    if choice == "重来":
        reset_trial(store, everything=True)
        return "已清空设定和试写，从头开始（novel:init）"
    store.set_meta(QUICK_START_META, "done")
    store.update_checkpoint(orchestrator_state="VOL_PLANNING", current_volume=1)
    return "试写确认：作为第 1 卷前 3 章，进入卷规划"


def _apply_review(store: NovelStore, volume: int, answers: dict[str, Any]) -> str:
    key, rnd = _review_round(store, volume)
    if answers.get("review_action") == "修改":
        store.set_meta(key, str(rnd + 1))
        return f"已暂停：修改第 {volume} 卷后再执行 volume:{volume:02d}:review 回到卷末确认"
    _start, end = _review_range(store, volume)
    picked = answers.get("apply") or []
    chosen = [c for c in review_closures(store, volume, end) if c.label in picked]
    store.put_document(f"state/history/vol-{volume:02d}-final-state.json", dumps(store.current_state()))
    apply_closures(store, volume, end, chosen)
    nxt = volume + 1
    params = plan_params(store, nxt)
    count = re.search(r"\d+", str(answers.get("chapter_count") or ""))
    direction = str(answers.get("direction") or "").strip()
    chapters = int(count.group()) if count else params.chapters
    set_plan_params(store, nxt, PlanParams(chapters, direction or params.direction, params.round))
    store.update_checkpoint(current_volume=nxt, orchestrator_state="VOL_PLANNING")
    closed = f"；执行收束 {len(chosen)} 项" if chosen else ""
    return f"第 {volume} 卷回顾已确认{closed}，进入第 {nxt} 卷规划"


__all__ = [
    "OUTLINE_OPTIONS",
    "PLATFORM_OPTIONS",
    "answers_of",
    "apply_lifecycle",
    "gate_answers",
    "import_prefixes",
    "lifecycle_packet",
    "style_missing",
]
