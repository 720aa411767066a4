"""Why each part of an agent's prompt is there: a name and a reason per template slot (the context inspector).

The slot values themselves are assembled in :mod:`novel_desktop.agents.facts` and
:mod:`novel_desktop.agents.context`; this module only explains them, from the same facts, so the inspector
can say "相邻线 jinghai_plan（本卷日程：secondary）" next to the tokens the section cost.
"""

from __future__ import annotations

from novel_desktop.agents.context import NovelFacts, estimate_tokens
from novel_desktop.agents.text_ending import TEXT_ENDING_SECTION, is_text_ending

#: The Chinese name of every slot the chapter agents' templates use.
SLOT_LABELS: dict[str, str] = {
    "template": "模板文字",
    "platform_profile": "平台规范",
    "style_profile": "风格指纹",
    "writing_directives": "写作指令",
    "ai_blacklist": "AI 套话黑名单",
    "world_hard_rules": "世界硬规则",
    "world_soft_rules": "世界软规则",
    "world_rules": "世界规则",
    "storyline_spec": "故事线规范",
    "storyline_schedule": "本卷故事线日程",
    "volume_outline": "卷大纲",
    "chapter_num": "章号",
    "storyline_id": "当前线",
    "storyline_memory": "当前线记忆",
    "storyline_context": "故事线上下文",
    "adjacent_memories": "相邻线记忆",
    "concurrent_state": "其他线并发状态",
    "chapter_outline": "本章大纲",
    "chapter_contract": "本章契约",
    "character_contracts": "角色契约",
    "recent_summaries": "近章摘要",
    "current_state": "裁剪后的状态",
    "foreshadowing_tasks": "伏笔任务",
    "style_drift": "风格漂移提示",
    "revision_round": "修订轮次",
    "chapter_draft": "待改正文",
    "violations": "违规项",
    "required_fixes": "必须修改",
    "entity_roster": "实体名册",
    "storylines_overview": "故事线一览",
    "base_state_version": "状态版本",
    "convergence_note": "交汇说明",
    "active_foreshadowing": "活跃伏笔",
    "writer_hints": "写作提示",
    "chapter_content": "本章正文",
    "refine_focus": "润色重点",
    "analysis_facts": "程序统计",
    "change_budget": "修改预算",
    "prev_summary": "上一章摘要",
    TEXT_ENDING_SECTION: "上一章定稿结尾",
}

#: Why a slot is in any agent's prompt, when the facts add nothing more specific.
_STATIC_WHY: dict[str, str] = {
    "template": "模板本身：角色、规则、输出格式与各段标题",
    "platform_profile": "平台的篇幅、节奏与钩子要求",
    "style_profile": "作者风格指纹，保持文风一致",
    "writing_directives": "风格指纹中的写作指令",
    "ai_blacklist": "禁止使用的 AI 套话",
    "world_hard_rules": "L1 硬规则，不可违反",
    "world_soft_rules": "软规则，可有理由地突破",
    "world_rules": "评审核对 L1 规则",
    "storyline_spec": "故事线规范（LS 规则）",
    "storyline_schedule": "评审核对故事线泄漏与交汇",
    "chapter_num": "本章章号",
    "storyline_id": "本章所属故事线",
    "chapter_outline": "本章大纲，始终保留",
    "chapter_contract": "本章契约（L3），始终保留",
    "character_contracts": "本章出场角色的契约（L2）",
    "foreshadowing_tasks": "本章契约的伏笔目标与回收窗口内的伏笔",
    "style_drift": "上次风格检查发现的漂移",
    "revision_round": "修订轮次（最多 2 轮）",
    "chapter_draft": "要修改的正文",
    "violations": "评审与程序检查发现的违规",
    "required_fixes": "评审给出的定点修改",
    "entity_roster": "状态补丁只能引用这些实体",
    "storylines_overview": "所有故事线，用于判断跨线引用",
    "base_state_version": "状态补丁的基准版本",
    "convergence_note": "本章是否处于交汇事件",
    "active_foreshadowing": "当前活跃的伏笔",
    "writer_hints": "写作者留下的结构化提示",
    "chapter_content": "要处理的正文",
    "refine_focus": "润色先后顺序",
    "analysis_facts": "程序统计：字数、AI 套话命中、重复句式",
    "change_budget": "润色修改总量上限（15%）",
    "prev_summary": "上一章摘要，检查衔接",
    "storyline_context": "本章契约中的故事线上下文与转场提示",
    "current_state": "本章出场实体的状态与活跃伏笔",
    "recent_summaries": "近章摘要",
    "storyline_memory": "当前线记忆",
    "adjacent_memories": "本卷日程中与本线并行的线的记忆",
    "concurrent_state": "其他线各一行的近况",
    "volume_outline": "本卷大纲",
}


def slot_label(slot: str) -> str:
    return SLOT_LABELS.get(slot, slot)


def _schedule_roles(facts: NovelFacts) -> dict[str, str]:
    out = {}
    for item in (facts.schedule or {}).get("active_storylines", []) or []:
        if isinstance(item, dict) and item.get("storyline_id"):
            out[str(item["storyline_id"])] = str(item.get("volume_role") or item.get("role") or "active")
    return out


#: The last facts' reasons: a chapter's agents record eight or more prompts from the same facts.
_last_why: tuple[NovelFacts, dict[str, str]] | None = None


def facts_why(facts: NovelFacts) -> dict[str, str]:
    """Reasons that depend on this chapter's facts, for the slots that change from chapter to chapter (the
    facts of a chapter are read once and not changed after: the last facts' reasons are kept)."""
    global _last_why
    last = _last_why
    if last is not None and last[0] is facts:
        return last[1]
    why = _facts_why(facts)
    _last_why = (facts, why)
    return why


def _facts_why(facts: NovelFacts) -> dict[str, str]:
    line = facts.storyline_id or ""
    roles = _schedule_roles(facts)
    adjacent = [sid for sid in roles if sid != line and facts.memories.get(sid)]
    why = {
        "storyline_memory": f"当前线记忆（{line or '未指定'}）",
        "storyline_id": f"本章属于 {line or '未指定的线'}",
    }
    if adjacent:
        why["adjacent_memories"] = "相邻线 " + "、".join(f"{s}（本卷日程：{roles[s]}）" for s in adjacent)
    else:
        why["adjacent_memories"] = "本卷日程中没有其他有记忆的活跃线"
    # A queued run's early writer reads the end of the chapter before's text in place of its summary: that
    # part is its own section (agents/text_ending.py), the summaries' reason counts only summaries.
    summaries = [n for n, text in facts.recent if not is_text_ending(n, text)]
    endings = [n for n, text in facts.recent if is_text_ending(n, text)]
    if summaries:
        span = f"第 {summaries[0]} 章" if len(summaries) == 1 else f"第 {summaries[0]}-{summaries[-1]} 章"
        why["recent_summaries"] = f"近 {len(summaries)} 章摘要（{span}）"
    else:
        why["recent_summaries"] = "没有更早的章节摘要"
    if facts.recent:
        why["prev_summary"] = f"上一章（第 {facts.recent[-1][0]} 章）摘要，检查衔接"
    if endings:
        why[TEXT_ENDING_SECTION] = (
            f"第 {endings[-1]} 章的摘要尚未生成（本章提前写作）：以该章定稿正文的结尾代替"
        )
    others = [str(s.get("id")) for s in facts.storylines if str(s.get("id")) not in (line, *roles)]
    if others:
        why["concurrent_state"] = "不在本卷日程的线各一行：" + "、".join(others[:6])
    cast = [str(c.get("name") or c.get("id")) for c in facts.cast()]
    if cast:
        why["current_state"] = "本章出场 " + "、".join(cast[:6]) + " 的状态，加世界状态与活跃伏笔"
        why["character_contracts"] = "本章出场角色的契约（L2）：" + "、".join(cast[:6])
    if facts.outline:
        whole = estimate_tokens(facts.outline)
        why["volume_outline"] = (
            "本卷大纲全文" if whole <= 3_000 else f"本卷大纲较长（{whole:,} tokens），只取本章前后几章"
        )
    if facts.key_chapter:
        why["convergence_note"] = "本章是关键章（卷首、卷末或交汇事件）"
    return why


def reasons(facts: NovelFacts | None, slots: list[str]) -> dict[str, str]:
    """Why each of ``slots`` is in the prompt."""
    specific = facts_why(facts) if facts is not None else {}
    return {slot: specific.get(slot) or _STATIC_WHY.get(slot, "") for slot in slots}
