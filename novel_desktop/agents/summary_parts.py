"""The pipeline's summarizer as two calls at once (issue 18: the critical path).

After the judge went to three panels, the summarizer's one reply (~0.7K tokens, most of it the storyline
memory's new version) was the longest call after the writer. The pipeline's summarizer is therefore asked
twice at once over the same shared prefix (agents/review_prefix.py), each call for a part of its JSON, and the
parts are put together here:

- part S (摘要与状态): summary, patch, foreshadowing, cross_references, leak_risk;
- part M (故事线记忆): storyline_memory, the current line's memory.md rewritten.

Each part's task leaves out the slot values only the other part needs (part M does not read the state, part
S not the old memory). The historical rebuild and anything else that is not on a chapter's critical path
sends one whole call (``WHOLE_PART``).
"""

from __future__ import annotations

from collections.abc import Mapping

from novel_desktop.domain.common import SeedModel

#: The parts, in the order they are sent.
SUMMARY_PARTS: tuple[str, ...] = ("S", "M")

#: The ``summary_part`` slot for one whole reply.
WHOLE_PART = (
    "完整输出（不分组）：summary、patch、foreshadowing、storyline_memory、cross_references、leak_risk "
    "全部字段。"
)

#: The ``summary_part`` slot of each part. The fake server and tests recognise a part by 【摘要组 X】.
PART_TASKS: Mapping[str, str] = {
    "S": (
        "【摘要组 S】摘要与状态组。本章由两个摘要组同时处理，你只负责：summary、patch、foreshadowing、"
        "cross_references、leak_risk（连同 chapter、storyline_id）。"
        "storyline_memory 写 null，由摘要组 M 负责。"
    ),
    "M": (
        "【摘要组 M】故事线记忆组。本章由两个摘要组同时处理，你只负责 storyline_memory（连同 chapter、"
        "storyline_id）：按「故事线记忆」的约束，在旧记忆的基础上写出当前线记忆的完整新版本。"
        "不写 summary、patch、foreshadowing、cross_references、leak_risk，由摘要组 S 负责。"
    ),
}

#: The task's slots each part does not read (their values are replaced by :data:`NOT_YOURS`).
LEFT_OUT: Mapping[str, tuple[str, ...]] = {
    "S": ("storyline_memory",),
    "M": ("current_state", "active_foreshadowing", "writer_hints"),
}
NOT_YOURS = "（本组不需要，略）"


def part_context(context: Mapping[str, str], part: str) -> dict[str, str]:
    """The summarizer's slot values for ``part``: its task, less what only the other part reads."""
    values = {**context, "summary_part": PART_TASKS[part]}
    values.update(dict.fromkeys(LEFT_OUT[part], NOT_YOURS))
    return values


class MemoryReply(SeedModel):
    """Part M's JSON: the storyline memory (the other fields of a whole reply are ignored)."""

    chapter: int | None = None
    storyline_id: str | None = None
    storyline_memory: str | None = None


__all__ = [
    "LEFT_OUT",
    "NOT_YOURS",
    "PART_TASKS",
    "SUMMARY_PARTS",
    "WHOLE_PART",
    "MemoryReply",
    "part_context",
]
