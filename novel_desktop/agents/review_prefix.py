"""The one prompt prefix every call after the writer shares (issue 18): the summarizer, the style refiner and
the judge send the same system blocks (the three agents' instructions, then the novel bible) and the same
leading user block (the chapter text, cache-marked), with each agent's own task after it. On one model, the
first of them writes the prefix to the prompt cache and the others read it; the instructions and the bible
are read from the previous chapter's calls.

The model reads, for each agent, its whole template (``prompts/<agent>.md``): its instructions in the first
system block, its stable context in the second, its task in the last user block, where the chapter and the
per-chapter facts several agents read (:data:`SHARED_SLOTS`) are pointed to above rather than sent again.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from novel_desktop.agents.templates import RenderedPrompt, load_template, render_system

#: The agents that share the prefix, in the order their instructions appear in it.
REVIEW_TEMPLATES: tuple[str, ...] = ("summarizer", "style_refiner", "quality_judge")
TITLES: dict[str, str] = {
    "summarizer": "摘要（Summarizer）",
    "style_refiner": "去AI润色（StyleRefiner）",
    "quality_judge": "质量评审（QualityJudge）",
    "length_editor": "字数调整（LengthEditor）",
}
PREAMBLE = (
    "本章写成之后，摘要、去AI润色、质量评审三个环节共用下面的工作规范、作品设定和本章正文。"
    "每次调用只担任任务单开头指定的一个环节：只按该环节一节的角色、目标、约束和输出格式作答，"
    "其他环节的规范与本次任务无关。"
)
CHAPTER_HEAD = "# 本章正文\n<chapter>\n"
CHAPTER_TAIL = "\n</chapter>"
QUOTED = "（本章正文见上方 <chapter> 标签内，逐字以它为准）"


def review_system(values: Mapping[str, str]) -> list[str]:
    """The shared system blocks: every review agent's instructions, then the novel bible (their stable
    context), rendered from ``values`` (the system slots of the three templates)."""
    instructions = [PREAMBLE]
    bible: list[str] = []
    for name in REVIEW_TEMPLATES:
        blocks = render_system(load_template(name), values)
        instructions.append(f"# ===== 环节：{TITLES[name]} =====\n\n{blocks[0]}")
        bible += [f"# ===== {TITLES[name]}的依据 =====\n\n{b}" for b in blocks[1:]]
    return ["\n\n".join(instructions), "\n\n".join(bible)]


#: Per-chapter facts more than one review agent reads, sent once before the chapter (their headings there).
SHARED_SLOTS: dict[str, str] = {
    "storyline_whitelist": "故事线白名单",
    "entity_roster": "实体名册（slug ↔ 显示名）",
    "chapter_outline": "本章大纲",
    "chapter_contract": "L3 章节契约",
    "character_contracts": "角色档案与 L2 契约（本章出场角色）",
    "analysis_facts": "程序检测结果（确定性统计）",
}


def _quote_once(task: str, value: str, pointer: str) -> str:
    value = value.strip()
    at = task.rfind(value) if value else -1
    return task[:at] + pointer + task[at + len(value) :] if at >= 0 else task


def review_turn(prompt: RenderedPrompt, chapter: str, shared: Mapping[str, str]) -> dict[str, Any]:
    """The user turn: this chapter's shared facts (``shared``: :data:`SHARED_SLOTS` values) and the chapter
    (cache-marked, the end of the shared prefix), then the agent's task with both quoted above instead of
    sent again."""
    body = chapter.strip()
    task = _quote_once(prompt.user, body, QUOTED)
    facts = []
    for slot, heading in SHARED_SLOTS.items():
        value = (shared.get(slot) or "").strip() or "（无）"
        facts.append(f"## {heading}\n{value}")
        if slot in prompt.values:
            task = _quote_once(task, prompt.values[slot], f"（见上方「本章资料」中的{heading}）")
    head_block = "# 本章资料\n" + "\n\n".join(facts) + "\n\n"
    title = TITLES.get(prompt.template, prompt.template)
    head = f"# 本次任务：{title}\n只按上面「{title}」一节的规范和输出格式作答。\n\n"
    return {
        "role": "user",
        "content": [
            {
                "type": "text",
                "text": head_block + CHAPTER_HEAD + body + CHAPTER_TAIL,
                "cache_control": {"type": "ephemeral"},
            },
            {"type": "text", "text": "\n\n" + head + task},
        ],
    }


class PrefixGate:
    """Staggers calls that share a prefix: the first caller for a (model, chapter text) pair goes at once;
    the others wait until its response has begun (its first text, or its end), so they read the prefix
    from the cache instead of each paying to write it."""

    def __init__(self) -> None:
        self._started: dict[tuple[str, str], asyncio.Event] = {}
        #: Claimed pairs whose first caller has not sent its request yet.
        self._claimed: dict[tuple[str, str], asyncio.Event] = {}

    @staticmethod
    def _key(model: str, chapter: str) -> tuple[str, str]:
        return model, hashlib.sha256(chapter.encode()).hexdigest()

    def claim(self, model: str, chapter: str) -> bool:
        """Make the caller's coming ``turn(..., claimed=True)`` the pair's first, before it is ready to send:
        the calls that get ready sooner wait for its response. False when the pair already has a first
        caller. The claimer must :meth:`release` the pair if it never takes its turn."""
        key = self._key(model, chapter)
        if key in self._started:
            return False
        self._started[key] = asyncio.Event()
        self._claimed[key] = asyncio.Event()
        return True

    def release(self, model: str, chapter: str) -> None:
        """Let the pair's waiting callers go (a claimer's turn ended, or never came)."""
        key = self._key(model, chapter)
        for events in (self._claimed, self._started):
            if key in events:
                events[key].set()
        self._claimed.pop(key, None)

    async def claimer_sent(self, model: str, chapter: str) -> None:
        """Wait until the pair's claimer has sent its request (at once when the pair is not claimed): a call
        that will wait for the claimer's response anyway prepares its own prompt after that, so the
        claimer's preparation, the one on the queue's path, does not share the CPU with theirs."""
        sent = self._claimed.get(self._key(model, chapter))
        if sent is not None:
            await sent.wait()

    @asynccontextmanager
    async def turn(self, model: str, chapter: str, *, claimed: bool = False) -> AsyncIterator[asyncio.Event]:
        """Wait for the pair's first caller if there is one; yields the event to set on the first text.
        ``claimed``: this caller claimed the pair (:meth:`claim`), so it goes at once and the others wait."""
        key = self._key(model, chapter)
        started = self._started.get(key)
        if claimed and started is not None:
            sent = self._claimed.pop(key, None)
            if sent is not None:
                sent.set()
            try:
                yield started
            finally:
                started.set()
            return
        if started is not None:
            await started.wait()
            yield asyncio.Event()
            return
        started = self._started[key] = asyncio.Event()
        if len(self._started) > 16:  # only the current chapter's texts matter
            for old in list(self._started)[:-16]:
                self._started[old].set()
                del self._started[old]
        try:
            yield started
        finally:
            started.set()


__all__ = ["REVIEW_TEMPLATES", "SHARED_SLOTS", "PrefixGate", "review_system", "review_turn"]
