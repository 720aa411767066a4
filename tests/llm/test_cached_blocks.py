"""The chapter text as a cache-marked user block (agents/calls.user_turn) within the API's four breakpoints."""

from __future__ import annotations

from novel_desktop.agents.calls import user_turn
from novel_desktop.agents.templates import RenderedPrompt
from novel_desktop.llm.client import PromptBlock, build_system, message_breakpoints


def test_system_breakpoints_leave_room_for_the_message_ones() -> None:
    blocks = [PromptBlock(f"块{i}", cache=True) for i in range(4)]
    assert sum("cache_control" in b for b in build_system(blocks)) == 4
    marked = build_system(blocks, reserved=1)
    assert ["cache_control" in b for b in marked] == [False, True, True, True]  # the latest stay marked


def test_the_chapter_is_split_out_as_its_own_cached_block() -> None:
    prompt = RenderedPrompt(["系统"], "# 任务单\n<draft>\n第一章正文\n</draft>\n现在输出")
    turn = user_turn(prompt, "第一章正文\n")
    assert turn["content"] == [
        {"type": "text", "text": "# 任务单\n<draft>\n"},
        {"type": "text", "text": "第一章正文", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "\n</draft>\n现在输出"},
    ]
    assert "".join(b["text"] for b in turn["content"]) == prompt.user  # the model reads the same text
    assert message_breakpoints([turn]) == 1
    # No chapter, or a chapter the prompt does not quote: the plain message.
    assert user_turn(prompt) == {"role": "user", "content": prompt.user}
    assert user_turn(prompt, "别的文字") == {"role": "user", "content": prompt.user}
