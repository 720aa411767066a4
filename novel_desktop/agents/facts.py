"""Slot values for each chapter agent's template, from :class:`~novel_desktop.agents.context.NovelFacts`.

The deterministic analysis (AI-phrase hits, repeated sentence patterns) is computed here and handed to the
refiner and the judge as facts, so their style scores rest on numbers rather than impressions.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence

from novel_desktop.agents.context import NovelFacts
from novel_desktop.agents.judge_panels import FULL_PANEL
from novel_desktop.agents.ports import RevisionOrder
from novel_desktop.agents.storylines import whitelist_text
from novel_desktop.agents.summary_parts import WHOLE_PART
from novel_desktop.analysis import ai_phrases, style_metrics
from novel_desktop.domain.evaluation import violation_rule_id
from novel_desktop.domain.platforms import (
    HOOK_WINDOW_CHARS,
    OPENING_CHAPTERS,
    opening_excerpt,
    platform_profile,
    protagonists,
)
from novel_desktop.domain.text import count_chars


def _phrases(facts: NovelFacts) -> list[ai_phrases.PhraseEntry]:
    return ai_phrases.phrases_for_novel(facts.blacklist if isinstance(facts.blacklist, dict) else None)


def blacklist_words(facts: NovelFacts, limit: int = 120) -> list[str]:
    """The literal AI phrases to forbid in prompts (regex entries are enforced by the analysis instead)."""
    return [p.pattern for p in _phrases(facts) if not p.regex][:limit]


@functools.lru_cache(maxsize=4)
def _metrics(text: str) -> style_metrics.StyleMetrics:
    """The style metrics of ``text``, computed once per text: the two judges of a key chapter (and a judge
    after a refiner that changed nothing) read the same text; they are only read, never changed."""
    return style_metrics.compute_metrics(text)


def analysis_facts(facts: NovelFacts, text: str) -> str:
    """Numbers about ``text`` for the refiner and the judge: 字数, AI-phrase hits, repeated patterns."""
    hits = ai_phrases.find_hits(text, _phrases(facts))
    per_1k = ai_phrases.hits_per_1k(text, hits)
    metrics = _metrics(text)
    lines = [
        f"字数：{count_chars(text)}",
        f"AI 套话命中：{len(hits)} 处，{per_1k:.1f} 次/千字（门槛 < 3 次/千字）",
    ]
    for hit in hits[:15]:
        lines.append(f"  - 「{hit.matched}」（{hit.category}）→ {hit.suggestion}")
    lines.append(
        f"平均句长 {metrics.avg_sentence_length:.1f} 字；对话占比 {metrics.dialogue_ratio:.0%}；"
        f"相邻 5 句内句式重复的窗口 {len(metrics.repetitions)} 处（要求每 5 句少于 2 个重复句式）"
    )
    for rep in metrics.repetitions[:5]:
        lines.append(f"  - 重复句式：{rep.describe()}")
    profile = facts.style_profile or {}
    if profile.get("avg_sentence_length"):
        ratio = profile.get("dialogue_ratio", "—")
        lines.append(f"风格指纹平均句长 {profile['avg_sentence_length']} 字，对话占比 {ratio}")
    return "\n".join(lines)


#: The contract keys the writer reads in its storyline section, so its L3 contract section leaves them out.
STORYLINE_KEYS = ("storyline_context", "transition_hint")


def writer_context(facts: NovelFacts) -> dict[str, str]:
    line = facts.storyline_id or ""
    return {
        "platform_profile": facts.platform_profile(),
        "style_profile": facts.style_profile_text(),
        "writing_directives": facts.writing_directives(),
        "ai_blacklist": facts.blacklist_text(blacklist_words(facts)),
        "world_hard_rules": facts.hard_rules(),
        "world_soft_rules": facts.soft_rules(),
        "storyline_spec": facts.storyline_spec_text(),
        "volume_outline": facts.volume_outline(),
        "chapter_num": str(facts.chapter),
        "storyline_id": line,
        "storyline_memory": facts.memories.get(line, ""),
        # Each storyline fact once: the contract's storyline part is in the storyline section, not again in
        # the contract; an adjacent line gets its memory, a frozen one its one line (seed §6.6.7 Layer 1).
        "storyline_context": facts.writer_storyline_context(),
        "adjacent_memories": facts.adjacent_memories(),
        "concurrent_state": facts.concurrent_state(),
        "chapter_outline": facts.chapter_outline,
        "chapter_contract": facts.chapter_contract_text(omit=STORYLINE_KEYS),
        "character_contracts": facts.character_contracts(),
        "recent_summaries": facts.recent_summaries(),
        "current_state": facts.pruned_state(),
        "foreshadowing_tasks": facts.foreshadowing_tasks(),
        "style_drift": facts.style_drift,
    }


#: How many targeted revisions the gate allows before a forced pass (seed 004 §6 质量门控, §8.2).
MAX_REVISION_ROUNDS = 2


def revision_round_text(round_: int) -> str:
    """The reviser's round as it is told: which round of how many, and in the last one that it is the last
    and that its violations are what the previous round left unfixed (the judge found them in its text)."""
    head = f"第 {round_} 轮修订（共最多 {MAX_REVISION_ROUNDS} 轮）。"
    if round_ < MAX_REVISION_ROUNDS:
        return head + "本轮之后会重新评审，仍不合格还有一轮修订机会。"
    return head + (
        "这是最后一轮：本轮之后不再自动修订，仍不合格的章节会被强制通过并标记给作者处理。"
        f"下面的契约违规和修订指令是第 {round_ - 1} 轮修订后重新评审仍然发现的问题，"
        f"也就是第 {round_ - 1} 轮没有改好的地方，本轮必须逐条彻底解决，不能换个说法保留。"
    )


def violation_lines(order: RevisionOrder) -> str:
    """One ``- `` line per violation, as the gate shows it; in a later round, a violation of a rule the
    previous round was already told about is marked as left unfixed."""
    told = {rule for v in order.earlier if (rule := violation_rule_id(v))}
    lines = []
    for v in order.violations:
        rule = violation_rule_id(v)
        mark = f"【第 {order.round - 1} 轮已要求修改，仍未解决】" if rule and rule in told else ""
        lines.append(f"- {mark}{v}")
    return "\n".join(lines)


def reviser_context(facts: NovelFacts, draft: str, order: RevisionOrder) -> dict[str, str]:
    line = facts.storyline_id or ""
    return {
        "platform_profile": facts.platform_profile(),
        "style_profile": facts.style_profile_text(),
        "ai_blacklist": facts.blacklist_text(blacklist_words(facts)),
        "world_hard_rules": facts.hard_rules(),
        "world_soft_rules": facts.soft_rules(),
        "storyline_spec": facts.storyline_spec_text(),
        "chapter_num": str(facts.chapter),
        "storyline_id": line,
        "revision_round": revision_round_text(order.round),
        "storyline_memory": facts.memories.get(line, ""),
        "chapter_outline": facts.chapter_outline,
        "chapter_contract": facts.chapter_contract_text(),
        "character_contracts": facts.character_contracts(),
        "chapter_draft": draft,
        "violations": violation_lines(order),
        "required_fixes": "\n".join(f"- {f}" for f in order.fixes),
    }


def summarizer_context(facts: NovelFacts, text: str, hints: str) -> dict[str, str]:
    line = facts.storyline_id or ""
    convergence = (
        "本章处于故事线交汇事件中，跨线实体出现属正常。" if facts.key_chapter else "本章不是交汇事件章。"
    )
    return {
        "entity_roster": facts.entity_roster(),
        "storylines_overview": facts.storylines_overview(),
        "chapter_num": str(facts.chapter),
        "storyline_id": line,
        "base_state_version": str(facts.state_version),
        "convergence_note": convergence,
        "storyline_whitelist": whitelist_text(facts),
        "current_state": facts.pruned_state(),
        "active_foreshadowing": json.dumps(facts.state.get("active_foreshadowing") or [], ensure_ascii=False),
        "storyline_memory": facts.memories.get(line, ""),
        "writer_hints": hints,
        "summary_part": WHOLE_PART,  # the pipeline's summarizer overrides it per part (summary_parts.py)
        "chapter_content": text,
    }


#: The first polish's order of work (the analysis numbers lead it).
FIRST_PASS_FOCUS = "先替换 AI 套话命中，再处理重复句式；不改情节、对话内容和伏笔。"


def refine_focus_text(points: Sequence[str]) -> str:
    """The refiner's 本次重点: the usual order, or the judge's style findings for the second polish."""
    if not points:
        return FIRST_PASS_FOCUS
    lines = "\n".join(f"- {p}" for p in points)
    return (
        "这是评审之后的第二次润色。评审指出了下面这些文风问题，只针对它们修改，"
        f"其余文字保持原样；不改情节、对话内容和伏笔：\n{lines}"
    )


def refiner_context(
    facts: NovelFacts, text: str, budget: int, focus: Sequence[str] = (), *, later: bool = False
) -> dict[str, str]:
    """The StyleRefiner's slots; ``later``: a second pass, whose ``budget`` is what the first one left."""
    size = len(text)
    if later:
        change = (
            f"本章共 {size} 个字符；两次润色合计不超过 15%，第一次润色已用去一部分，"
            f"本次全部修改合计不超过 {budget} 个字符（超出的修改会被程序拒绝）"
        )
    else:
        change = f"本章共 {size} 个字符，全部修改合计不超过 {budget} 个字符"
    return {
        "style_profile": facts.style_profile_text(),
        "writing_directives": facts.writing_directives(),
        "ai_blacklist": facts.blacklist_text(blacklist_words(facts)),
        "chapter_num": str(facts.chapter),
        "style_drift": facts.style_drift,
        "refine_focus": refine_focus_text(focus),
        "analysis_facts": analysis_facts(facts, text),
        "change_budget": change,
        "chapter_draft": text,
    }


def length_editor_context(facts: NovelFacts, text: str, task: str) -> dict[str, str]:
    return {
        "platform_profile": facts.platform_profile(),
        "style_profile": facts.style_profile_text(),
        "writing_directives": facts.writing_directives(),
        "ai_blacklist": facts.blacklist_text(blacklist_words(facts)),
        "chapter_num": str(facts.chapter),
        "length_task": task,
        "chapter_outline": facts.chapter_outline,
        "chapter_draft": text,
    }


def opening_checklist(facts: NovelFacts, text: str) -> str:
    """The judge's opening checks for chapters 1-3 (the profile's rules) with the first 300 字 quoted."""
    n = facts.chapter
    if n > OPENING_CHAPTERS:
        return ""
    profile = platform_profile(facts.platform)
    names = "、".join(name for name, _ in protagonists(facts.characters)) or "主角"
    conflict = (
        "到本章结束时核心冲突必须已经交代清楚"
        if n == OPENING_CHAPTERS
        else f"核心冲突最迟第 {OPENING_CHAPTERS} 章交代，本章应有铺垫"
    )
    where = f"，且在前 {profile.protagonist_within} 字内" if n == 1 else ""
    return (
        f"本章是开篇第 {n} 章（{profile.name}），逐条核对，未达标的按约束写入 risk_flags：\n"
        f"1. 钩子：下面引用的前 {HOOK_WINDOW_CHARS} 字内是否已经出现冲突、悬念或反常？\n"
        f"2. 主角登场：主角（{names}）是否在场并有行动{where}？\n"
        f"3. 核心冲突：{conflict}。\n"
        f"本章前 {HOOK_WINDOW_CHARS} 字：\n「{opening_excerpt(text)}」"
    )


def review_system_values(facts: NovelFacts) -> dict[str, str]:
    """The system slots of the summarizer, refiner and judge templates: the stable prefix they share
    (agents/review_prefix.py), the same values their own contexts give those slots."""
    profile = platform_profile(facts.platform)
    return {
        "storylines_overview": facts.storylines_overview(),
        "platform_profile": profile.describe(),
        "dimension_weights": profile.weights_text(),
        "style_profile": facts.style_profile_text(),
        "writing_directives": facts.writing_directives(),
        "ai_blacklist": facts.blacklist_text(blacklist_words(facts)),
        "world_rules": facts.all_rules(),
        "storyline_spec": facts.storyline_spec_text(),
        "storyline_schedule": json.dumps(facts.schedule, ensure_ascii=False) if facts.schedule else "",
    }


def review_shared_values(facts: NovelFacts, text: str) -> dict[str, str]:
    """The per-chapter facts the review agents share, sent once before the chapter (review_prefix): the
    same values their own contexts give these slots."""
    return {
        "storyline_whitelist": whitelist_text(facts),
        "entity_roster": facts.entity_roster(),
        "chapter_outline": facts.chapter_outline,
        "chapter_contract": facts.chapter_contract_text(),
        "character_contracts": facts.character_contracts(),
        "analysis_facts": analysis_facts(facts, text),
    }


def judge_context(facts: NovelFacts, text: str) -> dict[str, str]:
    prev = facts.recent[-1:] if facts.recent else []
    profile = platform_profile(facts.platform)
    return {
        "platform_profile": profile.describe(),
        "dimension_weights": profile.weights_text(),
        "opening_checklist": opening_checklist(facts, text),
        "style_profile": facts.style_profile_text(),
        "ai_blacklist": facts.blacklist_text(blacklist_words(facts)),
        "world_rules": facts.all_rules(),
        "storyline_spec": facts.storyline_spec_text(),
        "storyline_schedule": json.dumps(facts.schedule, ensure_ascii=False) if facts.schedule else "",
        "chapter_num": str(facts.chapter),
        "storyline_context": facts.storyline_context(),
        "storyline_whitelist": whitelist_text(facts),
        "chapter_outline": facts.chapter_outline,
        "chapter_contract": facts.chapter_contract_text(),
        "character_contracts": facts.character_contracts(),
        "prev_summary": "\n".join(f"第{n}章：{t}" for n, t in prev),
        "analysis_facts": analysis_facts(facts, text),
        "judge_panel": FULL_PANEL,  # the pipeline's judge overrides it per panel (agents/judge_panels.py)
        "chapter_content": text,
    }
