"""Message Batches: many independent calls at half price, for work that can wait (re-evaluating chapters).

The Anthropic Message Batches API takes up to 100,000 requests at once and answers within about an hour at
50% of the usual token prices. :func:`run_batch` creates one batch (each request's ``custom_id`` names what
it is for, e.g. ``chapter-048``), polls it with a growing interval until it has ended, reads the JSONL
results and prices each at half the price table. A provider whose preset has ``supports_batches`` False
(the Anthropic-compatible endpoints of DeepSeek, Kimi, GLM, Qwen, a custom URL) gets the same requests as
ordinary calls one after another, at full price, and the report says so.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from novel_desktop.llm.client import AGENT_HEADER, LLMClient, PromptBlock, build_system
from novel_desktop.llm.errors import LLMError
from novel_desktop.llm.providers import get_preset
from novel_desktop.llm.roles import AgentRole
from novel_desktop.llm.usage import Usage

log = logging.getLogger(__name__)

#: What the Batches API charges relative to the ordinary price table.
BATCH_DISCOUNT = 0.5
#: The API's limit of requests per batch.
MAX_BATCH_REQUESTS = 100_000


class BatchError(Exception):
    """A batch could not be created, polled or read; the message is for the author."""


@dataclass(frozen=True)
class BatchRequest:
    """One call of a batch. ``custom_id`` must be unique in the batch (1-64 characters, ``[a-zA-Z0-9_-]``)."""

    custom_id: str
    role: AgentRole
    system: Sequence[PromptBlock]
    messages: Sequence[dict[str, Any]]
    max_tokens: int | None = None


#: Why a reply cut at max_tokens has no text: a truncated reply is never half-used (issue 16).
TRUNCATED = "输出达到长度上限被截断，结果不完整，未采用"


@dataclass(frozen=True)
class BatchItemResult:
    """The outcome of one request: its text, or the error that replaced it."""

    custom_id: str
    text: str | None
    model: str
    usage: Usage
    cost_usd: float
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.text is not None


@dataclass
class BatchReport:
    """What a batch run did and cost. ``full_price_usd`` is what ordinary calls would have cost."""

    mode: Literal["batch", "sequential"]
    results: dict[str, BatchItemResult] = field(default_factory=dict)
    batch_id: str | None = None
    #: Why the run went the way it did (Chinese, for the author): the discount, or why there was none.
    note: str = ""
    polls: int = 0

    @property
    def cost_usd(self) -> float:
        return sum(r.cost_usd for r in self.results.values())

    @property
    def full_price_usd(self) -> float:
        if self.mode == "sequential":
            return self.cost_usd
        return self.cost_usd / BATCH_DISCOUNT

    @property
    def saved_usd(self) -> float:
        return self.full_price_usd - self.cost_usd


def supports_batches(client: LLMClient) -> bool:
    """Whether the client's provider preset offers the Message Batches API."""
    return get_preset(client.settings.provider).supports_batches


def _params(client: LLMClient, request: BatchRequest) -> dict[str, Any]:
    settings = client.settings
    return {
        "model": settings.model_for(request.role),
        "max_tokens": request.max_tokens or settings.max_tokens_for(request.role),
        "system": build_system(request.system),
        "messages": list(request.messages),
    }


async def run_batch(
    client: LLMClient,
    requests: Sequence[BatchRequest],
    *,
    prefer_batch: bool = True,
    first_poll_s: float = 5.0,
    max_poll_s: float = 120.0,
    timeout_s: float = 26 * 3600.0,
    on_progress: Callable[[str], None] | None = None,
) -> BatchReport:
    """Run ``requests`` as one Message Batch, or one by one when the provider has no batches.

    ``prefer_batch=False`` forces ordinary calls (faster answers, full price). Polling starts after
    ``first_poll_s`` and doubles up to ``max_poll_s``; a batch not ended within ``timeout_s`` (the API
    expires batches after 24 hours) raises :class:`BatchError`. ``on_progress`` receives one Chinese line
    per poll or call. Errors of single requests are reported per item, never raised.
    """
    if not requests:
        return BatchReport("batch" if prefer_batch else "sequential", note="没有需要处理的请求")
    ids = [r.custom_id for r in requests]
    if len(set(ids)) != len(ids):
        raise BatchError("批处理请求的 custom_id 重复 (duplicate custom_id in a batch)")
    say = on_progress or (lambda _line: None)
    if not prefer_batch:
        return await _sequential(client, requests, say, "按要求逐个调用（原价）")
    if not supports_batches(client):
        name = get_preset(client.settings.provider).display_name
        return await _sequential(
            client, requests, say, f"{name} 不提供批处理接口（Message Batches），已改为逐个调用，按原价计费"
        )
    if len(requests) > MAX_BATCH_REQUESTS:
        raise BatchError(f"一个批次最多 {MAX_BATCH_REQUESTS} 个请求 (too many requests for one batch)")
    return await _batch(client, requests, say, first_poll_s, max_poll_s, timeout_s)


async def _sequential(
    client: LLMClient, requests: Sequence[BatchRequest], say: Callable[[str], None], note: str
) -> BatchReport:
    report = BatchReport("sequential", note=note)
    say(note)
    for i, request in enumerate(requests, start=1):
        say(f"[{i}/{len(requests)}] {request.custom_id}")
        model = client.settings.model_for(request.role)
        try:
            response = await client.stream(
                request.role, system=request.system, messages=request.messages, max_tokens=request.max_tokens
            )
        except LLMError as exc:
            report.results[request.custom_id] = BatchItemResult(
                request.custom_id, None, model, Usage(), 0.0, error=exc.message
            )
            continue
        cost = response.usage.cost(client.settings.price_for(response.model))
        report.results[request.custom_id] = BatchItemResult(
            request.custom_id,
            None if response.truncated else response.text,
            response.model,
            response.usage,
            cost,
            error=TRUNCATED if response.truncated else None,
        )
    return report


async def _batch(
    client: LLMClient,
    requests: Sequence[BatchRequest],
    say: Callable[[str], None],
    first_poll_s: float,
    max_poll_s: float,
    timeout_s: float,
) -> BatchReport:
    import anthropic  # lazy: slow import

    # The client owns the SDK instance (key, base URL, timeouts); batches reuse it rather than build another.
    sdk = client._ensure_sdk()
    roles = {r.custom_id: r.role for r in requests}
    try:
        batch = await sdk.messages.batches.create(
            requests=cast(Any, [{"custom_id": r.custom_id, "params": _params(client, r)} for r in requests]),
            extra_headers={AGENT_HEADER: "batch"},
        )
    except anthropic.APIError as exc:
        raise BatchError(f"无法创建批处理任务：{_message(exc)} (could not create the batch)") from None
    report = BatchReport(
        "batch",
        batch_id=batch.id,
        note=f"通过批处理接口（Message Batches）提交，按原价的 {BATCH_DISCOUNT:.0%} 计费",
    )
    say(f"已提交批处理 {batch.id}，共 {len(requests)} 个请求；通常一小时内完成")
    started = time.monotonic()
    delay = first_poll_s
    failures = 0
    while batch.processing_status != "ended":
        if time.monotonic() - started > timeout_s:
            raise BatchError(f"批处理 {batch.id} 超时未完成，可稍后重试 (the batch did not end in time)")
        await asyncio.sleep(delay)
        delay = min(max_poll_s, delay * 2)
        try:
            batch = await sdk.messages.batches.retrieve(batch.id)
        except (anthropic.APIConnectionError, anthropic.InternalServerError, anthropic.RateLimitError) as exc:
            # A dropped poll loses nothing: the batch keeps running on the provider's side.
            failures += 1
            if failures > 5:
                raise BatchError(f"无法查询批处理 {batch.id}：{_message(exc)}") from None
            continue
        except anthropic.APIError as exc:
            raise BatchError(f"无法查询批处理 {batch.id}：{_message(exc)}") from None
        report.polls += 1
        counts = batch.request_counts
        done = counts.succeeded + counts.errored + counts.canceled + counts.expired
        say(f"批处理 {batch.id}：{batch.processing_status}，已完成 {done}/{len(requests)}")

    try:
        decoder = await sdk.messages.batches.results(batch.id)
        async for item in decoder:
            result = report.results[item.custom_id] = _item(client, item, roles)
            role = roles.get(item.custom_id, AgentRole.quality_judge)
            await client.report_call(
                role, result.model, result.usage, ok=result.error is None, discount=BATCH_DISCOUNT
            )
    except anthropic.APIError as exc:
        raise BatchError(f"无法读取批处理 {batch.id} 的结果：{_message(exc)}") from None
    for request in requests:
        if request.custom_id not in report.results:
            report.results[request.custom_id] = BatchItemResult(
                request.custom_id,
                None,
                client.settings.model_for(request.role),
                Usage(),
                0.0,
                error="批处理结果中没有这个请求",
            )
    return report


def _item(client: LLMClient, item: Any, roles: dict[str, AgentRole]) -> BatchItemResult:
    result = item.result
    role = roles.get(item.custom_id, AgentRole.quality_judge)
    model = client.settings.model_for(role)
    if result.type != "succeeded":
        detail = result.type
        error = getattr(result, "error", None)
        inner = getattr(error, "error", None)
        if inner is not None and getattr(inner, "message", None):
            detail = f"{result.type}: {inner.message}"
        return BatchItemResult(item.custom_id, None, model, Usage(), 0.0, error=detail)
    message = result.message
    usage = Usage.from_api(message.usage)
    text = "".join(block.text for block in message.content if block.type == "text")
    cost = usage.cost(client.settings.price_for(message.model)) * BATCH_DISCOUNT
    if message.stop_reason == "max_tokens":
        return BatchItemResult(item.custom_id, None, message.model, usage, cost, error=TRUNCATED)
    return BatchItemResult(item.custom_id, text, message.model, usage, cost)


def _message(exc: Exception) -> str:
    text = str(getattr(exc, "message", "") or exc)
    return text[:300]


__all__ = [
    "BATCH_DISCOUNT",
    "BatchError",
    "BatchItemResult",
    "BatchReport",
    "BatchRequest",
    "run_batch",
    "supports_batches",
]
