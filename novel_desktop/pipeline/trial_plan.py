"""The trial chapters' plan (quick start, seed 004 §8.2): an outline for chapters 1-3 and their chapter
contracts, like every other chapter's, reviewed by the author as a volume plan (接受 / 编辑) before the
first trial chapter is written.

No model call: the outline comes from the brief and the protagonist, and each contract is derived from its
outline section (the conflict is the required plot objective, the arc a character objective, the hard world
rules are its preconditions). Volume planning later continues after the trial chapters and keeps them.
"""

from __future__ import annotations

from typing import Any

from novel_desktop.domain.contracts import ChapterContract
from novel_desktop.domain.outline import outline_field, outline_sections, section_title
from novel_desktop.domain.proposals import Proposal
from novel_desktop.pipeline.approval import current_payload, propose
from novel_desktop.pipeline.interaction import InteractionManager
from novel_desktop.pipeline.quick_start import ROUND_META, TRIAL_CHAPTERS
from novel_desktop.pipeline.steps import StepReport
from novel_desktop.storage.aio import db
from novel_desktop.storage.store import NovelStore


def _protagonist(store: NovelStore) -> dict[str, Any]:
    chars = [
        store.document_json(p) for p in store.list_documents("characters/active/") if p.endswith(".json")
    ]
    hero = next((c for c in chars if isinstance(c, dict) and c.get("role") == "protagonist"), None)
    return hero or next((c for c in chars if isinstance(c, dict)), {})


def trial_outline_text(store: NovelStore) -> str:
    """Volume 1's outline for the three trial chapters, from the brief and the protagonist."""
    brief = store.document("brief.md") or ""
    name = str(_protagonist(store).get("name") or "主角")
    plan = [
        (
            "开篇",
            f"{name}在自己的日常里登场，一件反常的小事打破平静",
            "展示主角的处境和性格",
            "埋设 核心冲突的第一个迹象",
        ),
        ("波澜", "反常的事牵出核心冲突，主角第一次被迫做选择", "主角从旁观到卷入", "推进 核心冲突"),
        ("入局", "主角做出选择并付出代价，新的目标出现", "主角立下目标", "留下下一章的钩子"),
    ]
    sections = [
        f"## 第 {i} 章 {title}\n- **Storyline**: main_arc\n- **POV**: {name}\n- **Location**: 按设定\n"
        f"- **Conflict**: {conflict}\n- **Arc**: {arc}\n- **Foreshadowing**: {fs}\n- **StateChanges**: 按正文"
        for i, (title, conflict, arc, fs) in enumerate(plan, start=1)
    ]
    return (
        "# 第一卷（试写）\n\n> 快速起步的试写大纲，卷规划时会在此基础上续写。\n\n"
        + brief
        + "\n\n"
        + "\n\n".join(sections)
        + "\n"
    )


def derive_contract(chapter: int, section: str, hard_rules: list[str]) -> ChapterContract:
    """A chapter contract from its outline section (what the chapter must achieve and respect)."""
    conflict = outline_field(section, "Conflict") or section_title(section) or f"第 {chapter} 章的情节推进"
    arc = outline_field(section, "Arc")
    hook = outline_field(section, "Foreshadowing")
    objectives: list[dict[str, Any]] = [
        {"id": f"OBJ-{chapter:03d}-1", "type": "plot", "required": True, "description": conflict}
    ]
    if arc:
        objectives.append({"id": f"OBJ-{chapter:03d}-2", "type": "character", "description": arc})
    if hook:
        objectives.append({"id": f"OBJ-{chapter:03d}-3", "type": "plot", "description": hook})
    criteria = [f"正文写出：{conflict}"] + ([f"人物变化：{arc}"] if arc else [])
    return ChapterContract.model_validate(
        {
            "chapter": chapter,
            "storyline_id": outline_field(section, "Storyline") or "main_arc",
            "preconditions": {"character_states": {}, "required_world_rules": hard_rules},
            "objectives": objectives,
            "acceptance_criteria": criteria,
        }
    )


def trial_plan_payload(store: NovelStore) -> dict[str, Any] | None:
    """Volume 1's plan with the trial chapters' outline and contracts; None when both are there already."""
    current = current_payload(store, "volume_plan", volume=1)
    have = {int(c.get("chapter") or 0) for c in current["chapter_contracts"]}
    if current["outline"].strip() and all(n in have for n in range(1, TRIAL_CHAPTERS + 1)):
        return None
    outline = current["outline"] if current["outline"].strip() else trial_outline_text(store)
    rules = (store.document_json("world/rules.json") or {}).get("rules") or []
    hard = [str(r.get("id")) for r in rules if isinstance(r, dict) and r.get("constraint_type") == "hard"]
    sections = outline_sections(outline)
    contracts = list(current["chapter_contracts"])
    for n in range(1, TRIAL_CHAPTERS + 1):
        if n not in have:
            contracts.append(derive_contract(n, sections.get(n, ""), hard).to_json_dict())
    contracts.sort(key=lambda c: int(c.get("chapter") or 0))
    return {**current, "outline": outline, "chapter_contracts": contracts}


async def prepare_trial(store: NovelStore, interaction: InteractionManager) -> StepReport:
    """The trial outline and contracts of chapters 1-3, stored once the author accepts them (or edits)."""
    payload = await db(trial_plan_payload, store)
    if payload is None:
        return StepReport("")
    proposal = Proposal(
        kind="volume_plan",
        title="快速起步：试写第 1-3 章的大纲与章节契约",
        payload=payload,
        effective_from=1,
        note="试写章节和其他章节一样按章节契约写作与评审",
    )

    async def same(_changes: str) -> Proposal:
        return proposal

    rnd = int((await db(store.meta)).get(ROUND_META) or 0)
    approved = await propose(
        store,
        interaction,
        name=f"trial-plan{f'-r{rnd}' if rnd else ''}",
        generate=same,
        regenerate=False,
        volume=1,
    )
    return StepReport("试写大纲与章节契约已确认", approved.written)
