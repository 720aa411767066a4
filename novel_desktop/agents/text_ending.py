"""The end of a chapter's final text in place of its summary, for a queued run's early writer (issue 18).

Chapter N+1's writer may start before chapter N's summary exists (pipeline/ahead.py): among the recent
summaries it then reads the end of N's final text, marked as such. The marker is made here, next to the
agents, so the context inspector (agents/context_recorder.py) can name that part of the prompt apart from the
summaries it sits among.
"""

from __future__ import annotations

from novel_desktop.agents.context import trim_to_tokens

#: How much of the chapter before the early draft's writer reads in place of its summary (the end of it).
TAIL_TOKENS = 1_500

#: The slot-like name of that part in the context record, and its Chinese label.
TEXT_ENDING_SECTION = "previous_text_ending"


def _head(chapter: int) -> str:
    return f"（第{chapter}章的摘要尚未生成，以下是该章定稿正文的结尾）"


def text_in_place_of_summary(chapter: int, text: str) -> str:
    """What the early writer reads as chapter ``chapter``'s entry among the recent summaries while that
    chapter's summary is not made yet: the end of its final text, marked as such."""
    tail = trim_to_tokens(text.strip(), TAIL_TOKENS, keep="end")
    return f"{_head(chapter)}\n{tail}"


def is_text_ending(chapter: int, entry: str) -> bool:
    """Whether ``entry`` (chapter ``chapter``'s among the recent summaries) is its text's end, not a
    summary."""
    return entry.lstrip().startswith(_head(chapter))


__all__ = ["TAIL_TOKENS", "TEXT_ENDING_SECTION", "is_text_ending", "text_in_place_of_summary"]
