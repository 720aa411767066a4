"""The ChapterWriter prompt stays under the seed's 25K-token budget however big the novel's records get."""

from __future__ import annotations

import json

from novel_desktop.agents.chapter import writer_prompt
from novel_desktop.agents.context import WRITER_BUDGET_TOKENS, NovelFacts, estimate_tokens
from novel_desktop.domain.outline import outline_sections


def _huge_facts(chapter: int) -> NovelFacts:
    outline = "# 第十卷\n\n" + "\n\n".join(
        f"## 第{n}章 第{n}个转折\n- **Storyline**: main_arc\n- **POV**: 林枫\n- **Conflict**: "
        + "冲突描写" * 60
        for n in range(451, 501)
    )
    characters = [
        {
            "id": f"char-{i:03d}",
            "name": f"角色{i}",
            "aliases": [f"别名{i}"],
            "speech_pattern": "说话短促",
            "contracts": [{"id": f"C-CHAR{i}-00{k}", "rule": "不可越级使用法术" * 5} for k in range(4)],
        }
        for i in range(300)
    ]
    state = {
        "state_version": 499,
        "characters": {
            f"char-{i:03d}": {"location": "洛阳" * 10, "inventory": [f"物品{k}" for k in range(30)]}
            for i in range(300)
        },
        "items": {f"item-{i}": {"name": f"宝物{i}", "owner": "某人"} for i in range(400)},
        "locations": {f"loc-{i}": {"name": f"地点{i}"} for i in range(200)},
        "world_state": {"time_marker": "第十年冬", "ongoing_events": ["战争"] * 20},
        "active_foreshadowing": [f"clue-{i}" for i in range(80)],
    }
    outline_text = outline.replace("第500个转折", "第500个转折 角色1 角色2 角色3")
    return NovelFacts(
        chapter=chapter,
        volume=10,
        platform="qidian",
        brief_text="简介" * 500,
        style_profile={"avg_sentence_length": 18, "writing_directives": ["短句推进"] * 10},
        blacklist={"words": [f"套话{i}" for i in range(500)]},
        world_rules=[
            {"id": f"W-{i:03d}", "rule": "修炼有代价" * 8, "constraint_type": "hard" if i % 2 else "soft"}
            for i in range(40)
        ],
        storyline_spec=[
            {"id": f"LS-00{i}", "rule": "时间线不得矛盾", "constraint_type": "hard"} for i in range(1, 6)
        ],
        storylines=[{"id": f"line-{i}", "name": f"线{i}", "status": "dormant"} for i in range(12)]
        + [{"id": "main_arc", "type": "main_arc"}],
        schedule={"active_storylines": [{"storyline_id": f"line-{i}"} for i in range(4)]},
        outline=outline_text,
        sections=outline_sections(outline_text),
        contract={
            "chapter": chapter,
            "storyline_id": "main_arc",
            "objectives": [{"id": "OBJ-1", "description": "推进" * 40}] * 8,
        },
        characters=characters,
        recent=[(n, "摘要" * 150) for n in (497, 498, 499)],
        state=state,
        state_version=499,
        global_foreshadowing=[
            {
                "id": f"clue-{i}",
                "status": "planted",
                "target_resolve_range": [495, 505],
                "description": "线索" * 20,
            }
            for i in range(80)
        ],
        style_drift=json.dumps({"avg_sentence_length": "偏长"}, ensure_ascii=False),
        memories={f"line-{i}": "记忆" * 250 for i in range(12)} | {"main_arc": "主线记忆" * 120},
    )


def test_writer_prompt_at_chapter_500_of_a_huge_novel_fits_the_budget() -> None:
    prompt = writer_prompt(_huge_facts(500))
    tokens = estimate_tokens(prompt.text)
    assert tokens < WRITER_BUDGET_TOKENS
    # The trimming kept what matters: this chapter's outline section and the active line's memory.
    assert "第500个转折" in prompt.user
    assert "主线记忆" in prompt.user
    # Frozen (dormant, unscheduled) lines are one short line each, not their memories.
    frozen = prompt.user.split("<frozen_lines", 1)[1].split(">", 1)[1].split("</frozen_lines>", 1)[0]
    lines = [ln for ln in frozen.strip().splitlines() if ln.strip()]
    assert len(lines) == 8
    assert all(len(ln) <= 80 for ln in lines)
    print(f"writer prompt at chapter 500 of a huge novel: {tokens} tokens (budget {WRITER_BUDGET_TOKENS})")


def test_the_budget_cuts_in_the_documented_order_and_never_touches_the_protected_slots() -> None:
    from novel_desktop.agents import facts as fact_sheet
    from novel_desktop.agents.writer_budget import PROTECTED_SLOTS, fit_writer_prompt

    facts = _huge_facts(500)
    facts.memories["main_arc"] = "主线记忆很长的一段。" * 4_000  # ~40K tokens: far over the budget
    context = fact_sheet.writer_context(facts)
    prompt, cuts = fit_writer_prompt(context)
    assert estimate_tokens(prompt.text) <= WRITER_BUDGET_TOKENS
    assert [c.slot for c in cuts] == [
        "adjacent_memories",
        "recent_summaries",
        "concurrent_state",
        "volume_outline",
        "storyline_memory",
    ]
    by_slot = {c.slot: c for c in cuts}
    assert by_slot["adjacent_memories"].status == "dropped"
    assert by_slot["recent_summaries"].status == "trimmed"  # the last chapter's summary stays
    assert "第499章" in prompt.values["recent_summaries"]
    assert "第497章" not in prompt.values["recent_summaries"]
    assert by_slot["storyline_memory"].before > 30_000 and by_slot["storyline_memory"].after >= 600
    # Only what the prompt was over by was cut: it ends just under the budget, not far below it.
    assert estimate_tokens(prompt.text) > WRITER_BUDGET_TOKENS - 500
    assert prompt.values["storyline_memory"].startswith("……（前略）")  # the most recent part is kept
    for slot in PROTECTED_SLOTS:
        assert prompt.values[slot] == (context[slot].strip() or "（无）")
    # Section tokens and the template's own words add up to the prompt's estimate.
    shares = prompt.slot_tokens()
    assert sum(s.tokens for s in shares) < prompt.tokens


def test_a_prompt_within_budget_is_sent_as_assembled() -> None:
    from novel_desktop.agents import facts as fact_sheet
    from novel_desktop.agents.writer_budget import fit_writer_prompt

    facts = _huge_facts(500)
    context = fact_sheet.writer_context(facts)
    prompt, cuts = fit_writer_prompt(context)
    assert cuts == []
    assert prompt.values["adjacent_memories"] == context["adjacent_memories"].strip()


def test_cutting_stops_as_soon_as_the_prompt_fits() -> None:
    from novel_desktop.agents import facts as fact_sheet
    from novel_desktop.agents.writer_budget import fit_writer_prompt

    facts = _huge_facts(500)
    context = fact_sheet.writer_context(facts)
    full = fit_writer_prompt(context)[0].tokens
    adjacent = estimate_tokens(context["adjacent_memories"])
    prompt, cuts = fit_writer_prompt(context, budget=full - adjacent // 2)
    assert [c.slot for c in cuts] == ["adjacent_memories"]
    assert prompt.tokens <= full - adjacent // 2
