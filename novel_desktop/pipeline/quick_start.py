"""Quick start (seed 004 §6 Layer 1, §8.2 INIT → QUICK_START → VOL_PLANNING).

1. the setup questions: genre, protagonist, core conflict, target platform (NOVEL_ASK) → ``brief.md``, meta;
2. WorldBuilder (light mode): ≤3 core L1 rules, world documents, the initial storylines (one main arc);
3. CharacterWeaver: the protagonist and 1-2 supporting characters with L2 contracts;
4. the style profile: the author's samples (StyleAnalyzer on top of the deterministic metrics), a reference
   author, or one of the bundled templates (``resources/style_templates``);
5. three trial chapters through the full chapter pipeline (the orchestrator runs them), then the review
   question 继续 / 调整风格 / 重来.

Every function is idempotent on what it finds stored, so a run interrupted anywhere resumes from there.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from novel_desktop.agents.planning import (
    WorldReply,
    character_context,
    style_context,
    world_context,
)
from novel_desktop.agents.ports import PlanningAgents
from novel_desktop.analysis.style_metrics import StyleMetrics, compute_metrics, profile_from_samples
from novel_desktop.domain.ledger import for_purpose
from novel_desktop.domain.novel_ask import AnswerSpec, QuestionSpec
from novel_desktop.domain.platforms import PLATFORMS
from novel_desktop.domain.proposals import CharactersPayload, Proposal
from novel_desktop.domain.storylines import StorylinesFile, StorylineSpec
from novel_desktop.domain.style import StyleProfile
from novel_desktop.domain.world import WorldRules
from novel_desktop.paths import resource
from novel_desktop.pipeline.approval import character_proposal, propose, with_changes
from novel_desktop.pipeline.interaction import InteractionManager
from novel_desktop.pipeline.steps import LifecycleError, StepReport, ask, consult, question, spec
from novel_desktop.storage import layout
from novel_desktop.storage.aio import db
from novel_desktop.storage.maintenance import drop_chapters
from novel_desktop.storage.store import NovelStore, dumps

T = TypeVar("T")

TRIAL_CHAPTERS = 3
#: Seed 004 §6 Layer 1a: the light mode keeps at most three core rules.
MAX_LIGHT_RULES = 3
SETUP_ANSWER = f"{layout.NOVEL_ASK_DIR}novel-init.answers.json"
STYLE_ANSWER = f"{layout.NOVEL_ASK_DIR}novel-style{{round}}.answers.json"
TRIAL_ANSWER = f"{layout.NOVEL_ASK_DIR}quick-start-review{{round}}.answers.json"
#: Meta key: "trial" while the trial chapters are written, "done" once the author confirmed them.
QUICK_START_META = "quick_start"
ROUND_META = "quick_start_round"
#: Staging key of the storylines WorldBuilder proposed, reviewed after the world (build_storylines).
STORYLINE_DRAFT = "proposals/quick-start-storylines.draft.json"
STYLE_TEMPLATE_DIR = ("style_templates",)


def _round(store: NovelStore) -> str:
    n = int(store.meta().get(ROUND_META) or 0)
    return f"-r{n}" if n else ""


# ---------------------------------------------------------------------------- 1. setup questions
def setup_spec() -> QuestionSpec:
    """Genre, protagonist, core conflict and platform (with each platform's length and hook)."""
    # The author picks a platform by its name; the answer is mapped back to its id (platform_id).
    platforms = [(p.name, f"每章 {p.min_chars}-{p.max_chars} 字；{p.hook}") for p in PLATFORMS.values()]
    return spec(
        "novel setup",
        question("genre", "题材", "写什么题材？（如 玄幻、都市、仙侠、悬疑、言情）", kind="free_text"),
        question("protagonist", "主角", "主角是谁？一两句话：身份、处境、性格", kind="free_text"),
        question(
            "conflict", "核心冲突", "故事的核心冲突是什么？主角想要什么，什么挡在前面？", kind="free_text"
        ),
        question(
            "platform", "平台", "准备发布到哪个平台？", options=platforms, default=PLATFORMS["qidian"].name
        ),
    )


def platform_id(answer: object) -> str:
    """The platform id of a setup answer: a platform's name (起点中文网) or its id (qidian); ``web`` else."""
    text = str(answer or "")
    if text in PLATFORMS:
        return text
    return next((p.id for p in PLATFORMS.values() if p.name == text), "web")


def brief_markdown(title: str, answers: AnswerSpec) -> str:
    """``brief.md``: the creative brief every agent reads first."""
    a = answers.answers
    platform = PLATFORMS[platform_id(a.get("platform"))]
    return (
        f"# {title}\n\n"
        f"- **题材**：{a.get('genre', '')}\n"
        f"- **主角**：{a.get('protagonist', '')}\n"
        f"- **核心冲突**：{a.get('conflict', '')}\n"
        f"- **平台**：{platform.name}（每章 {platform.min_chars}-{platform.max_chars} 字；{platform.hook}）\n"
    )


async def run_setup(store: NovelStore, interaction: InteractionManager) -> StepReport:
    """Ask the setup questions; write ``brief.md`` and the platform and genre to meta."""
    answer = await ask(store, interaction, setup_spec(), SETUP_ANSWER)
    meta = await db(store.meta)
    await db(store.put_document, "brief.md", brief_markdown(meta.get("title", ""), answer))
    platform = platform_id(answer.answers.get("platform"))
    await db(store.set_meta, "platform", platform)
    await db(store.set_meta, "genre", str(answer.answers.get("genre") or ""))
    return StepReport(f"创作纲领已写入 brief.md（平台：{PLATFORMS[platform].name}）", ["brief.md"])


# ---------------------------------------------------------------------------- 2. world
def _light_rules(rules: WorldRules) -> tuple[WorldRules, list[str]]:
    """At most three rules in light mode, hard ones first; what was dropped, for a warning."""
    if len(rules.rules) <= MAX_LIGHT_RULES:
        return rules, []
    ordered = sorted(rules.rules, key=lambda r: r.constraint_type != "hard")
    kept, dropped = ordered[:MAX_LIGHT_RULES], ordered[MAX_LIGHT_RULES:]
    return WorldRules(rules=kept), [f"轻量模式只保留 3 条核心规则，未采用：{r.id} {r.rule}" for r in dropped]


def _world_proposal(reply: WorldReply, rules: WorldRules, note: str) -> Proposal:
    docs = []
    for doc in reply.documents:
        name = Path(doc.file).name
        if name.endswith(".md") and name != "changelog.md":
            docs.append({"file": name, "content": doc.content.rstrip("\n") + "\n"})
    payload = {"rules": rules.to_json_dict()["rules"], "documents": docs}
    return Proposal(kind="world", title="快速起步：世界规则", payload=payload, effective_from=1, note=note)


@for_purpose("quick_start")
async def build_world(
    store: NovelStore, agents: PlanningAgents, interaction: InteractionManager
) -> StepReport:
    """WorldBuilder in light mode (≤3 rules, hard/soft) and its documents, stored once the author accepts
    (接受 / 编辑 / 重新生成); the storylines it proposes wait for :func:`build_storylines`."""
    request = "根据创作纲领做轻量初始化：核心规则不超过 3 条，派生一条 main_arc 主线。"
    path = f"{layout.NOVEL_ASK_DIR}quick-start-world{_round(store)}.answers.json"
    report = StepReport("")

    async def generate(changes: str) -> Proposal:
        wanted = with_changes(request, changes)
        context = await db(world_context, store, "轻量初始化", wanted)
        done = await consult(
            store,
            interaction,
            agents.world,
            context,
            request=wanted,
            topic="world decision",
            answer_path=path,
        )
        report.calls += done.calls
        report.warnings += done.warnings
        reply = done.reply
        if reply is None:
            if done.outcome == "unparsable":
                raise LifecycleError("WorldBuilder 的输出无法解析，设定未写入；重新运行即可重试")
            raise LifecycleError("WorldBuilder 仍需要作者决定，设定未写入")
        assert reply.rules is not None
        try:
            rules, dropped = _light_rules(WorldRules.model_validate(reply.rules.to_json_dict()))
        except ValidationError:
            raise LifecycleError("WorldBuilder 给出的规则编号重复，设定未写入；重新运行即可重试") from None
        report.warnings += dropped
        lines = reply.storylines.to_json_dict() if reply.storylines and reply.storylines.storylines else None
        await db(store.put_staging, STORYLINE_DRAFT, json.dumps(lines, ensure_ascii=False))
        return _world_proposal(reply, rules, "WorldBuilder 轻量初始化：" + "；".join(dropped))

    approved = await propose(
        store, interaction, name=f"quick-start-world-review{_round(store)}", generate=generate
    )
    report.written = approved.written
    rules = WorldRules.model_validate({"rules": (approved.decision.payload or {}).get("rules") or []})
    docs = len((approved.decision.payload or {}).get("documents") or [])
    how = "已按你的编辑保存" if approved.decision.action == "edit" else "已确认"
    report.message = (
        f"世界观{how}：{len(rules.rules)} 条核心规则（{len(rules.hard_rules())} 条 hard），{docs} 篇设定"
    )
    return report


# ---------------------------------------------------------------------------- 3. characters
@for_purpose("quick_start")
async def build_characters(
    store: NovelStore, agents: PlanningAgents, interaction: InteractionManager
) -> StepReport:
    """CharacterWeaver: the protagonist and 1-2 supporting characters with L2 contracts, stored once the
    author accepts (接受 / 编辑 / 重新生成)."""
    request = (
        "根据创作纲领创建主角和 1-2 个配角：完整档案、L2 契约（至少 1 条 capability、"
        "1 条 personality）和关系。"
    )
    path = f"{layout.NOVEL_ASK_DIR}quick-start-characters{_round(store)}.answers.json"
    report = StepReport("")

    async def generate(changes: str) -> Proposal:
        wanted = with_changes(request, changes)
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
        reply = done.reply
        if reply is None:
            if done.outcome == "unparsable":
                raise LifecycleError("CharacterWeaver 的输出无法解析，角色未写入；重新运行即可重试")
            raise LifecycleError("CharacterWeaver 仍需要作者决定，角色未写入")
        return character_proposal(reply, "快速起步：主角与配角", effective_from=1, note=request)

    approved = await propose(
        store, interaction, name=f"quick-start-characters-review{_round(store)}", generate=generate
    )
    report.written = approved.written
    chars = CharactersPayload.model_validate(approved.decision.payload or {}).characters
    names = "、".join(c.name for c in chars)
    contracts = sum(len(c.contracts) for c in chars)
    how = "（按你的编辑）" if approved.decision.action == "edit" else ""
    report.message = f"角色{how}：{names}（{contracts} 条 L2 契约）"
    return report


async def build_storylines(store: NovelStore, interaction: InteractionManager) -> StepReport:
    """The storylines WorldBuilder proposed (reviewed: 接受 / 编辑), then :func:`ensure_storylines`."""
    report = StepReport("")
    raw = await db(store.staging, STORYLINE_DRAFT)
    lines = json.loads(raw) if raw else None
    if isinstance(lines, dict) and await db(store.document, "storylines/storylines.json") is None:
        proposal = Proposal(
            kind="storylines",
            title="快速起步：故事线",
            payload=lines,
            effective_from=1,
            note="WorldBuilder 派生",
        )

        async def same(_changes: str) -> Proposal:
            return proposal

        approved = await propose(
            store,
            interaction,
            name=f"quick-start-storylines-review{_round(store)}",
            generate=same,
            regenerate=False,
        )
        report.written += approved.written
    await db(store.delete_staging, STORYLINE_DRAFT)
    report.written += await db(ensure_storylines, store)
    report.message = f"故事线：{len(report.written)} 个文件"
    return report


# ---------------------------------------------------------------------------- storylines
DEFAULT_STORYLINE_SPEC = StorylineSpec.model_validate(
    {
        "spec_version": 1,
        "rules": [
            {
                "id": "LS-001",
                "category": "timeline",
                "rule": "各故事线的时间先后必须一致",
                "constraint_type": "hard",
            },
            {
                "id": "LS-002",
                "category": "information",
                "rule": "角色不得知道其所在故事线之外、又无传递途径的信息",
                "constraint_type": "soft",
            },
        ],
    }
)


def ensure_storylines(store: NovelStore) -> list[str]:
    """One ``main_arc`` when WorldBuilder gave no storylines, the LS spec, and each line's memory file."""
    written = []
    raw = store.document_json("storylines/storylines.json")
    if raw is None:
        protagonist = next(
            (
                c.get("name")
                for c in (store.document_json(p) for p in store.list_documents("characters/active/"))
                if isinstance(c, dict) and c.get("role") == "protagonist"
            ),
            None,
        )
        lines = StorylinesFile.model_validate(
            {
                "storylines": [
                    {
                        "id": "main_arc",
                        "name": "主线",
                        "type": "main_arc",
                        "scope": "novel",
                        "pov_characters": [protagonist] if protagonist else [],
                        "status": "active",
                        "introduced_volume": 1,
                        "description": "主角的成长与核心冲突",
                    }
                ]
            }
        )
        store.put_document("storylines/storylines.json", dumps(lines.to_json_dict()))
        written.append("storylines/storylines.json")
        raw = lines.to_json_dict()
    if store.document("storylines/storyline-spec.json") is None:
        store.put_document("storylines/storyline-spec.json", dumps(DEFAULT_STORYLINE_SPEC.to_json_dict()))
        written.append("storylines/storyline-spec.json")
    for line in StorylinesFile.model_validate(raw).storylines:
        path = layout.memory_path(line.id)
        if store.document(path) is None:
            store.put_document(path, f"# {line.name}\n")
            written.append(path)
    return written


# ---------------------------------------------------------------------------- 4. style
@dataclass
class StyleChoice:
    """Where the style comes from: sample texts, a reference author, or a bundled template."""

    samples: list[str] = field(default_factory=list)
    reference_author: str | None = None
    template: str | None = None


def style_templates() -> dict[str, StyleProfile]:
    """The bundled style templates by their Chinese name (``轻松幽默`` …)."""
    out: dict[str, StyleProfile] = {}
    folder = resource(*STYLE_TEMPLATE_DIR)
    for path in sorted(folder.glob("*.json")):
        profile = StyleProfile.model_validate_json(path.read_text(encoding="utf-8"))
        name = str((profile.model_extra or {}).get("name") or path.stem)
        out[name] = profile
    return out


def find_template(name: str) -> StyleProfile | None:
    """A template by its Chinese name or file name."""
    templates = style_templates()
    if name in templates:
        return templates[name]
    path = resource(*STYLE_TEMPLATE_DIR, f"{name}.json")
    return StyleProfile.model_validate_json(path.read_text(encoding="utf-8")) if path.is_file() else None


def style_spec() -> QuestionSpec:
    """Where the style comes from, when the command line did not say."""
    names = list(style_templates())
    return spec(
        "style source",
        question(
            "style_source",
            "文风",
            "文风从哪里来？",
            options=[
                ("风格模板", "推荐：从内置模板里选一个，马上可写"),
                ("我的样本", "提供 1-3 章自己写的文字，提取风格指纹"),
                ("参考作者", "指定一位网文作者，仿其文风"),
            ],
            default="风格模板",
        ),
        question(
            "template",
            "模板",
            "选哪个风格模板？（选了模板时生效）",
            options=[(n, str((style_templates()[n].model_extra or {}).get("fits", ""))) for n in names],
            default=names[0] if names else None,
            required=False,
        ),
        question(
            "sample_files",
            "样本",
            "样本文件路径（多个用逗号分隔；选了样本时生效）",
            kind="free_text",
            required=False,
        ),
        question(
            "reference_author",
            "参考作者",
            "参考作者名（选了参考作者时生效）",
            kind="free_text",
            required=False,
        ),
    )


def _read_samples(paths: str) -> list[str]:
    out = []
    for raw in paths.replace("，", ",").split(","):
        p = Path(raw.strip()).expanduser()
        if raw.strip():
            try:
                data = p.read_bytes()
            except OSError as exc:
                raise LifecycleError(f"无法读取样本 {p}：{exc.strerror or exc}") from None
            for enc in ("utf-8-sig", "gb18030"):
                try:
                    out.append(data.decode(enc))
                    break
                except UnicodeDecodeError:
                    continue
    return out


def metrics_text(metrics: StyleMetrics) -> str:
    """The deterministic metrics as the StyleAnalyzer reads them."""
    return "\n".join(
        f"- {k}：{v:.3f}" if isinstance(v, float) else f"- {k}：{v}" for k, v in metrics.summary().items()
    )


def known_characters(store: NovelStore) -> str:
    lines = []
    for path in store.list_documents("characters/active/"):
        data = store.document_json(path) if path.endswith(".json") else None
        if isinstance(data, dict):
            lines.append(f"- {path.rsplit('/', 1)[-1].removesuffix('.json')}：{data.get('name', '')}")
    return "\n".join(lines)


@for_purpose("quick_start")
async def build_style(
    store: NovelStore,
    agents: PlanningAgents,
    interaction: InteractionManager,
    choice: StyleChoice | None = None,
) -> StepReport:
    """``style-profile.json`` from samples (metrics + StyleAnalyzer), a reference author, or a template."""
    if choice is None or not (choice.samples or choice.reference_author or choice.template):
        answer = await ask(store, interaction, style_spec(), STYLE_ANSWER.format(round=_round(store)))
        a = answer.answers
        source = a.get("style_source")
        if source == "我的样本":
            choice = StyleChoice(samples=await db(_read_samples, str(a.get("sample_files") or "")))
            if not choice.samples:
                raise LifecycleError("选了“我的样本”但没有给出样本文件路径")
        elif source == "参考作者":
            choice = StyleChoice(reference_author=str(a.get("reference_author") or "").strip() or None)
            if not choice.reference_author:
                raise LifecycleError("选了“参考作者”但没有给出作者名")
        else:
            choice = StyleChoice(template=str(a.get("template") or "") or next(iter(style_templates()), ""))
    report = StepReport("")
    if choice.template:
        profile = find_template(choice.template)
        if profile is None:
            known = "、".join(style_templates())
            raise LifecycleError(f"没有名为 {choice.template} 的风格模板，可选：{known}")
        report.message = f"文风：内置模板「{choice.template}」"
    else:
        source_type = "original" if choice.samples else "reference"
        measured: StyleProfile | None = None
        metrics = "（没有样本，无法统计；请按你对该作者公开作品的了解归纳）"
        if choice.samples:
            measured = await db(profile_from_samples, choice.samples)
            combined = await db(lambda: StyleMetrics.combine(compute_metrics(t) for t in choice.samples))
            metrics = metrics_text(combined)
        context = style_context(
            choice.samples or ["（无样本）"],
            source_type=source_type,
            reference_author=choice.reference_author,
            known_characters=await db(known_characters, store),
            metrics=metrics,
        )
        result = await agents.style(context)
        report.calls += result.calls
        report.warnings += result.warnings
        profile = merge_profile(result.value, measured, source_type, choice.reference_author)
        if profile is None:
            raise LifecycleError("StyleAnalyzer 的输出无法解析，风格未写入；重新运行即可重试")
        who = (
            f"参考作者 {choice.reference_author}"
            if choice.reference_author
            else f"{len(choice.samples)} 份样本"
        )
        report.message = (
            f"文风：从{who}提取（平均句长 {profile.avg_sentence_length}，对话占比 {profile.dialogue_ratio}）"
        )
    await db(store.put_document, "style-profile.json", dumps(profile.to_json_dict()))
    report.written = ["style-profile.json"]
    return report


def merge_profile(
    llm: StyleProfile | None, measured: StyleProfile | None, source_type: str, author: str | None
) -> StyleProfile | None:
    """The model's reading of the style with the program's numbers (the numbers are arithmetic, ours)."""
    if llm is None:
        return measured
    data = llm.to_json_dict()
    data["source_type"] = source_type
    data["reference_author"] = author
    if measured is not None:
        m = measured.to_json_dict()
        data["avg_sentence_length"] = m["avg_sentence_length"]
        data["dialogue_ratio"] = m["dialogue_ratio"]
        data["metrics"] = m.get("metrics", {})
        data["forbidden_words"] = list(
            dict.fromkeys([*data.get("forbidden_words", []), *m["forbidden_words"]])
        )[:20]
        if not data.get("writing_directives"):
            data["writing_directives"] = m["writing_directives"]
    return StyleProfile.model_validate(data)


# ---------------------------------------------------------------------------- 5. trial chapters
def trial_review_spec(lines: Sequence[str], profile: str) -> QuestionSpec:
    """The §6 用户审核点 "快速起步完成": 继续 / 调整风格 / 重来."""
    shown = "；".join(lines)
    return spec(
        "quick start review",
        question(
            "trial_action",
            "试写完成",
            f"三章试写完成：{shown}。文风：{profile}。接下来？",
            options=[
                ("继续", "推荐：试写作为第一卷前 3 章，进入卷规划"),
                ("调整风格", "重新选择文风，并用新文风重写试写章节"),
                ("重来", "清空设定和试写，从题材问题重新开始"),
            ],
            default="继续",
        ),
    )


def trial_answer_path(store: NovelStore) -> str:
    return TRIAL_ANSWER.format(round=_round(store))


def reset_trial(store: NovelStore, *, everything: bool) -> None:
    """Undo the trial (调整风格) or the whole quick start (重来), in one transaction.

    The trial chapters, their summaries, evaluations and logs go; the state starts over as a new version
    (old snapshots stay for the record). 重来 also drops the brief, world, characters, storylines and style.
    """
    chapters = [c.number for c in store.list_chapters() if c.number <= TRIAL_CHAPTERS]
    drop_chapters(store, chapters)
    store.clear_staging()
    doomed = ["style-profile.json", layout.GLOBAL_FORESHADOWING]
    if everything:
        doomed += ["brief.md", *store.list_documents("world/"), *store.list_documents("characters/")]
        doomed += [*store.list_documents("storylines/"), *store.list_documents("volumes/")]
        store.delete_answer(SETUP_ANSWER)
    for path in doomed:
        if store.document(path) is not None:
            store.delete_document(path)
    n = int(store.meta().get(ROUND_META) or 0) + 1
    store.set_meta(ROUND_META, str(n))
    store.set_meta(QUICK_START_META, "" if everything else "trial")
    store.update_checkpoint(
        last_completed_chapter=0,
        inflight_chapter=None,
        pipeline_stage=None,
        orchestrator_state="INIT" if everything else "QUICK_START",
    )
