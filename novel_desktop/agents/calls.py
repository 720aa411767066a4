"""How every agent calls its model: one rendered prompt, one structured call, one record per response.

The retry-and-repair loop itself is :func:`novel_desktop.llm.structured.call_structured`; this module is the
agents' single way into it, so the chapter, planning and judging agents price and record calls alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

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


async def structured_call(
    client: LLMClient, role: AgentRole, prompt: RenderedPrompt, model: type[M], *, what: str
) -> AgentResult[M]:
    """Call ``role`` with ``prompt`` and parse the reply into ``model`` (one repair retry, then a warning)."""
    result = await call_structured(
        client,
        role,
        system_blocks(prompt.system_blocks),
        [{"role": "user", "content": prompt.user}],
        model,
        what=what,
    )
    return AgentResult(
        result.value, [call_record(client, r) for r in result.responses], list(result.warnings)
    )


__all__ = ["call_record", "structured_call", "system_blocks"]
