"""A chapter text is complete or it is not used (issue 16 point 1).

A writer or reviser reply that stops at the output limit (``stop_reason`` max_tokens) is continued: the text
so far goes back as the assistant turn and a user turn asks the model to carry on after its last sentence
(a user turn, not an assistant prefill: newer Claude models reject prefill, and the request stays valid for
the Anthropic-compatible providers). At most :data:`MAX_CONTINUATIONS` continuations; a reply still cut off
after them raises :class:`~novel_desktop.agents.ports.DraftTruncated` and nothing of it is used.

The parts are joined so that a continuation that repeats the end of the text so far, or starts with the
chapter heading again, adds only what is new; the window sees one seamless stream (:class:`LiveJoin`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from novel_desktop.agents.ports import CallRecord, DraftTruncated
from novel_desktop.llm.client import LLMClient, LLMResponse, PromptBlock
from novel_desktop.llm.roles import AgentRole

#: How many times a cut-off chapter text is continued before the chapter stops (3 requests in all).
MAX_CONTINUATIONS = 2
#: The shortest repeated opening taken for an echo of the text so far (shorter matches may be chance).
_MIN_OVERLAP = 6
#: How far back in the text so far an echoed opening is looked for.
_WINDOW = 600
_SENTENCE_END = "。！？!?…"
_CLOSERS = '”」』’"）)'
_HEADING = re.compile(r"#\s*第[^\n]*\n?")
#: A complete trailing hints block: the reply ended exactly there, so it is whole.
_TRAILING_HINTS = re.compile(r"```(?:json)?\s*\n\{.*\}\s*\n```\s*\Z", re.S)


def last_sentence(text: str, limit: int = 80) -> str:
    """The end of ``text`` to quote in the continuation request: its last sentence (with the unfinished
    tail after it, if any), at most ``limit`` characters."""
    body = text.rstrip()
    ends = [i for i, ch in enumerate(body) if ch in _SENTENCE_END]
    # The start of the quoted piece: after the second-to-last sentence end (so a complete last sentence
    # is quoted whole), or after the last one when an unfinished tail follows it.
    cut = 0
    if ends and ends[-1] < len(body) - 1 and len(body) - ends[-1] > 8:
        cut = ends[-1] + 1
    elif len(ends) >= 2:
        cut = ends[-2] + 1
    while cut < len(body) and body[cut] in _CLOSERS:
        cut += 1
    piece = body[cut:].strip()
    return piece[-limit:]


def continue_message(so_far: str) -> str:
    """The user turn that asks for the rest of a cut-off chapter."""
    return (
        f"你上一次的输出因长度上限在这里中断：「{last_sentence(so_far)}」\n"
        f"请从「{last_sentence(so_far, 30)}」之后接着写，不要重复已经写出的任何内容，不要再写章节标题，"
        "直接续写正文直到本章结束；正文写完后照常附上结尾的 JSON 提示块。"
    )


def _strip_heading(more: str) -> str:
    stripped = more.lstrip()
    m = _HEADING.match(stripped)
    return stripped[m.end() :].lstrip("\n") if m else more


def _overlap(so_far: str, more: str) -> int:
    """The length of the shortest opening of ``more`` (at least the minimum) that is also the end of
    ``so_far``; 0 when there is none. An echo ends where the text so far ends, so in prose the shortest
    match is the echo itself; a longer one would only come from a passage the chapter repeats."""
    tail = so_far[-_WINDOW:]
    for k in range(_MIN_OVERLAP, min(len(tail), len(more)) + 1):
        if tail.endswith(more[:k]):
            return k
    return 0


def join_continuation(so_far: str, more: str) -> str:
    """``so_far`` followed by what ``more`` adds: a repeated heading and a repeated end are dropped."""
    more = _strip_heading(more)
    base, lead = so_far.rstrip(), more.lstrip()
    k = _overlap(base, lead)
    if k:
        return base + lead[k:]
    return so_far + more


def _may_still_echo(so_far: str, head: str) -> bool:
    """Whether a continuation's opening seen so far could still turn out to repeat the text so far (or be
    a heading), so it must not be shown yet."""
    lead = head.lstrip()
    if not lead:
        return True
    if lead.startswith("#") and "\n" not in lead:
        return True
    lead = _strip_heading(head).lstrip()
    return bool(lead) and lead in so_far.rstrip()[-_WINDOW:]


class LiveJoin:
    """The parts of a continued reply streamed to ``on_text`` as one text.

    A continuation's opening is held back while it may still repeat the text so far; then only what
    :func:`join_continuation` keeps is passed on. A restarted attempt (``restart``) clears the view and shows
    the finished parts again, so the window never keeps void text.
    """

    def __init__(self, on_text: Callable[[str], None], on_reset: Callable[[], None]) -> None:
        self._on_text = on_text
        self._on_reset = on_reset
        self.text = ""  # the finished parts, joined
        self._shown = ""
        self._head = ""  # the current continuation's text so far
        self._holding = False

    def _emit(self, target: str) -> None:
        if target.startswith(self._shown):
            piece = target[len(self._shown) :]
            if piece:
                self._on_text(piece)
        else:
            self._on_reset()
            if target:
                self._on_text(target)
        self._shown = target

    def delta(self, piece: str) -> None:
        self._head += piece
        if self._holding and _may_still_echo(self.text, self._head):
            return
        self._holding = False
        self._emit(join_continuation(self.text, self._head) if self.text else self._head)

    def restart(self) -> None:
        self._head = ""
        self._holding = bool(self.text)
        if self._shown != self.text:
            self._on_reset()
            self._shown = ""
            self._emit(self.text)

    def finish_part(self, text: str) -> str:
        """The part ended with ``text``: join it and show whatever of it was held back."""
        self.text = join_continuation(self.text, text) if self.text else text
        self._emit(self.text)
        self._head = ""
        self._holding = True
        return self.text


def _complete(text: str) -> bool:
    """A reply cut at the limit right after its complete hints block lacks nothing."""
    return bool(_TRAILING_HINTS.search(text.rstrip() + "\n"))


async def stream_whole(
    client: LLMClient,
    role: AgentRole,
    *,
    system: Sequence[PromptBlock],
    user: str,
    max_tokens: int | None,
    on_text: Callable[[str], None],
    on_reset: Callable[[], None],
    record: Callable[[LLMResponse], CallRecord],
    truncated_message: str,
) -> tuple[str, list[CallRecord]]:
    """Stream ``role``'s reply to ``user``, continuing it while it stops at max_tokens (at most
    :data:`MAX_CONTINUATIONS` times); the whole text and each call's record. Raises ``DraftTruncated``
    with ``truncated_message`` when the last continuation is cut off too."""
    live = LiveJoin(on_text, on_reset)
    calls: list[CallRecord] = []
    messages: list[Mapping[str, Any]] = [{"role": "user", "content": user}]
    for _ in range(1 + MAX_CONTINUATIONS):
        response = await client.stream(
            role,
            system=system,
            messages=messages,
            max_tokens=max_tokens,
            on_text=live.delta,
            on_restart=live.restart,
        )
        calls.append(record(response))
        text = live.finish_part(response.text)
        if not response.truncated or _complete(text):
            return text, calls
        messages = [
            {"role": "user", "content": user},
            {"role": "assistant", "content": text.rstrip()},
            {"role": "user", "content": continue_message(text)},
        ]
    raise DraftTruncated(truncated_message, calls)


__all__ = ["MAX_CONTINUATIONS", "LiveJoin", "continue_message", "join_continuation", "stream_whole"]
