"""How every agent calls its model: one rendered prompt, one structured call, one record per response.

The retry-and-repair loop itself is :func:`novel_desktop.llm.structured.call_structured`; this module is the
agents' single way into it, so the chapter, planning and judging agents price and record calls alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from novel_desktop.agents.ports import AgentResult, CallRecord
from novel_desktop.agents.templates import RenderedPrompt
from novel_desktop.llm.client import LLMClient, LLMResponse, PromptBlock
from novel_desktop.llm.roles import AgentRole
from novel_desktop.llm.structured import call_structured

M = TypeVar("M", bound=BaseModel)


def system_blocks(blocks: Sequence[str]) -> list[PromptBlock]:
    """A template's system blocks as cacheable prompt blocks (empty ones dropped)."""
    return [PromptBlock(text, cache=True) for text in blocks if text.strip()]


def call_record(client: LLMClient, response: LLMResponse) -> CallRecord:
    """One response as a pipeline log stage line: tokens, cache use, time and cost at the model's price."""
    usage = response.usage
    return CallRecord(
        role=response.role.value,
        model=response.model,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens,
        cache_read_input_tokens=usage.cache_read_input_tokens,
        duration_ms=response.duration_ms,
        cost_usd=usage.cost(client.settings.price_for(response.model)),
        attempts=response.attempts,
    )


def user_turn(prompt: RenderedPrompt, chapter: str | None = None) -> dict[str, Any]:
    """The prompt's user message. With ``chapter`` (the chapter text the prompt quotes), the message is split
    into text blocks around it and the chapter's block carries a cache breakpoint: every later call of the
    same chapter text whose prefix up to it is the same (the same model, the same system blocks and text
    before it: the secondary judge on a one-model setup, every repair retry) reads it from the prompt cache
    instead of paying for it again. The model reads exactly the same text either way."""
    body = (chapter or "").strip()
    at = prompt.user.rfind(body) if body else -1
    if at < 0:
        return {"role": "user", "content": prompt.user}
    head, tail = prompt.user[:at], prompt.user[at + len(body) :]
    blocks: list[dict[str, Any]] = []
    if head:
        blocks.append({"type": "text", "text": head})
    blocks.append({"type": "text", "text": body, "cache_control": {"type": "ephemeral"}})
    if tail:
        blocks.append({"type": "text", "text": tail})
    return {"role": "user", "content": blocks}


async def structured_call(
    client: LLMClient,
    role: AgentRole,
    prompt: RenderedPrompt,
    model: type[M],
    *,
    what: str,
    chapter: str | None = None,
) -> AgentResult[M]:
    """Call ``role`` with ``prompt`` and parse the reply into ``model`` (one repair retry, then a warning);
    ``chapter``: the chapter text the prompt quotes, sent as a cached block (:func:`user_turn`)."""
    result = await call_structured(
        client,
        role,
        system_blocks(prompt.system_blocks),
        [user_turn(prompt, chapter)],
        model,
        what=what,
    )
    return AgentResult(
        result.value, [call_record(client, r) for r in result.responses], list(result.warnings)
    )


__all__ = ["call_record", "structured_call", "system_blocks", "user_turn"]
