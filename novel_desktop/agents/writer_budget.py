"""The ChapterWriter's context budget, enforced on every prompt (seed 004 §8.4; issue 16 point 7).

:func:`fit_writer_prompt` renders the writer's template; while the prompt's token estimate
(:func:`~novel_desktop.agents.context.estimate_tokens`) is over
:data:`~novel_desktop.agents.context.WRITER_BUDGET_TOKENS`, it takes the next step of this order, re-rendering
after each:

1. ``adjacent_memories`` — the neighbouring lines' memories are dropped.
2. ``recent_summaries`` — the oldest recent summary is dropped, one at a time; the last chapter's stays.
3. ``concurrent_state`` — the other lines' one-line states are dropped.
4. ``current_state`` — the pruned state is trimmed, keeping its start (not below 1,000 tokens).
5. ``volume_outline`` — the volume outline is trimmed, keeping its start (not below 600 tokens).
6. ``storyline_memory`` — the current line's memory is trimmed, keeping its end, the most recent part (not
   below 600 tokens).
7. ``foreshadowing_tasks`` — the foreshadowing tasks are trimmed, keeping their start (not below 800).
8. ``world_soft_rules`` — the soft rules are trimmed, keeping their start (not below 400).

A trim cuts only what the prompt is over by (plus a small margin), down to the step's floor.

Never cut: the chapter outline, the chapter contract, the character contracts, the world's hard rules, the
platform profile and the AI-phrase list. Each step taken is returned as a :class:`Cut` and shows in the
context inspector (``novel context``); a prompt still over budget after every step is sent as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from novel_desktop.agents.context import WRITER_BUDGET_TOKENS, estimate_tokens, trim_to_tokens
from novel_desktop.agents.templates import RenderedPrompt, load_template, render

#: The slots the budget never touches.
PROTECTED_SLOTS = frozenset(
    {
        "chapter_outline",
        "chapter_contract",
        "character_contracts",
        "world_hard_rules",
        "platform_profile",
        "ai_blacklist",
    }
)


@dataclass(frozen=True)
class Cut:
    """One budget step: a slot ``dropped`` or ``trimmed``, its tokens before and after, and a note."""

    slot: str
    status: str
    before: int
    after: int
    note: str


#: Tokens a trim takes beyond the overflow, since the estimate of the parts is not exactly additive.
_MARGIN = 50

Step = Callable[[dict[str, str], str, int], str | None]


def _drop(context: dict[str, str], slot: str, _over: int) -> str | None:
    if not context.get(slot, "").strip():
        return None
    context[slot] = ""
    return "被预算丢弃"


def _drop_oldest_summary(context: dict[str, str], slot: str, _over: int) -> str | None:
    parts = [p for p in context.get(slot, "").split("\n\n") if p.strip()]
    if len(parts) <= 1:
        return None
    context[slot] = "\n\n".join(parts[1:])
    first = parts[0].split("：", 1)[0]
    return f"被预算裁剪：去掉最早的 {first} 摘要"


def _trimmer(floor: int, keep: str) -> Step:
    def trim(context: dict[str, str], slot: str, over: int) -> str | None:
        value = context.get(slot, "")
        now = estimate_tokens(value)
        target = max(floor, now - over - _MARGIN)
        if target >= now - _MARGIN:
            return None
        context[slot] = trim_to_tokens(value, target, keep=keep)
        return "被预算裁剪（" + ("保留开头，后略" if keep == "start" else "保留最近的部分，前略") + "）"

    return trim


#: The documented order (module docstring); each step may apply several times (summaries one by one).
_STEPS: list[tuple[str, Step]] = [
    ("adjacent_memories", _drop),
    ("recent_summaries", _drop_oldest_summary),
    ("concurrent_state", _drop),
    ("current_state", _trimmer(1_000, "start")),
    ("volume_outline", _trimmer(600, "start")),
    ("storyline_memory", _trimmer(600, "end")),
    ("foreshadowing_tasks", _trimmer(800, "start")),
    ("world_soft_rules", _trimmer(400, "start")),
]


def fit_writer_prompt(
    context: dict[str, str], *, budget: int = WRITER_BUDGET_TOKENS
) -> tuple[RenderedPrompt, list[Cut]]:
    """The writer prompt for ``context`` within ``budget`` tokens, and the cuts that took (see above)."""
    template = load_template("chapter_writer")
    values = dict(context)
    prompt = render(template, values)
    first_tokens = {slot: estimate_tokens(v) for slot, v in values.items()}
    cuts: dict[str, Cut] = {}
    for slot, step in _STEPS:
        while prompt.tokens > budget:
            note = step(values, slot, prompt.tokens - budget)
            if note is None:
                break
            after = estimate_tokens(values[slot]) if values[slot].strip() else 0
            status = "dropped" if after == 0 else "trimmed"
            previous = cuts.get(slot)
            cuts[slot] = Cut(slot, status, first_tokens.get(slot, 0), after, note)
            if previous is not None and status == "trimmed" and previous.note.startswith("被预算裁剪：去掉"):
                cuts[slot] = Cut(slot, status, first_tokens.get(slot, 0), after, _count_note(previous, note))
            prompt = render(template, values)
            if step is not _drop_oldest_summary:
                break  # a drop or a trim is taken once; summaries go one at a time
        if prompt.tokens <= budget:
            break
    return prompt, list(cuts.values())


def _count_note(previous: Cut, note: str) -> str:
    """Summaries dropped one at a time read as one note: ``去掉最早的 第4章、第5章 摘要``."""
    old = previous.note.removeprefix("被预算裁剪：去掉最早的 ").removesuffix(" 摘要")
    new = note.removeprefix("被预算裁剪：去掉最早的 ").removesuffix(" 摘要")
    return f"被预算裁剪：去掉最早的 {old}、{new} 摘要"
