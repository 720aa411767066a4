"""The prefix the summarizer, the refiner and the judge share (agents/review_prefix.py)."""

from __future__ import annotations

import asyncio

from novel_desktop.agents.review_prefix import REVIEW_TEMPLATES, PrefixGate, review_system, review_turn
from novel_desktop.agents.templates import RenderedPrompt, load_template

SYSTEM_VALUES = {name: f"《{name}的值》" for t in REVIEW_TEMPLATES for name in load_template(t).system_slots}


def test_the_system_blocks_hold_every_review_agents_instructions_then_the_bible() -> None:
    instructions, bible = review_system(SYSTEM_VALUES)
    for name in REVIEW_TEMPLATES:
        first = load_template(name).system_sections[0]
        assert first in instructions
    for value in SYSTEM_VALUES.values():
        assert value in bible and value not in instructions


def test_the_chapter_and_shared_facts_go_once_before_the_task() -> None:
    chapter = "第一段正文。\n\n第二段正文。"
    prompt = RenderedPrompt(
        system_blocks=[],
        user=f"## 白名单\n白名单内容甲\n\n## 大纲\n大纲内容乙\n\n## 正文\n<chapter>\n{chapter}\n</chapter>",
        template="quality_judge",
        values={
            "storyline_whitelist": "白名单内容甲",
            "chapter_outline": "大纲内容乙",
            "chapter_content": chapter,
        },
    )
    shared = {"storyline_whitelist": "白名单内容甲", "chapter_outline": "大纲内容乙"}
    first, task = review_turn(prompt, chapter, shared)["content"]
    assert "cache_control" in first and "cache_control" not in task
    for text in ("白名单内容甲", "大纲内容乙", chapter):
        assert first["text"].count(text) == 1
        assert text not in task["text"]
    assert task["text"].lstrip().startswith("# 本次任务：质量评审")


def test_a_second_call_of_the_same_prefix_waits_for_the_first_to_begin() -> None:
    order: list[str] = []

    async def call(gate: PrefixGate, name: str, model: str, begin: asyncio.Event | None = None) -> None:
        async with gate.turn(model, "同一章") as started:
            order.append(f"{name} starts")
            if begin is not None:
                await begin.wait()
            started.set()

    async def main() -> None:
        gate, begin = PrefixGate(), asyncio.Event()
        first = asyncio.ensure_future(call(gate, "first", "m", begin))
        await asyncio.sleep(0)
        second = asyncio.ensure_future(call(gate, "second", "m"))
        other = asyncio.ensure_future(call(gate, "other-model", "n"))
        await asyncio.sleep(0.01)
        assert order == ["first starts", "other-model starts"]  # another model has its own cache
        begin.set()
        await asyncio.gather(first, second, other)
        assert order[-1] == "second starts"

    asyncio.run(main())
