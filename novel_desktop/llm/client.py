"""The provider client: one streamed Messages API call per agent step; retries, timeouts, cancellation.

Built on the anthropic SDK's ``AsyncAnthropic`` (imported lazily: the import takes over a second and the
window must open fast). The SDK's own retries are off (``max_retries=0``) so that this module counts the
attempts and also retries what the SDK does not: an ``error`` event in the middle of a stream after HTTP 200,
and a connection dropped mid-stream. A restarted call discards its partial text and tells the caller through
``on_restart`` so a live view can be cleared.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import os
import random
import ssl
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

from novel_desktop.llm.errors import (
    LLMAuthError,
    LLMBadRequest,
    LLMConfigError,
    LLMConnectionError,
    LLMEmptyResponse,
    LLMError,
    LLMOverloaded,
    LLMQuotaError,
    LLMServerError,
    LLMTimeout,
    LLMTruncated,
)
from novel_desktop.llm.providers import LOCAL_PLACEHOLDER_KEY, get_preset
from novel_desktop.llm.roles import AgentRole
from novel_desktop.llm.secrets import get_api_key, resolve_base_url
from novel_desktop.llm.settings import LLMSettings
from novel_desktop.llm.sse import StreamedMessage, sse_events
from novel_desktop.llm.usage import CallEvent, Usage, estimate_output_tokens

if TYPE_CHECKING:
    import httpx2
    from anthropic import APIStatusError, AsyncAnthropic

log = logging.getLogger(__name__)

#: The Messages API accepts at most four cache_control breakpoints per request.
MAX_CACHE_BREAKPOINTS = 4
#: Request header naming the calling agent; the fake server scripts replies by it, real providers ignore it.
AGENT_HEADER = "x-novel-agent"

_T = TypeVar("_T")

#: The client's optional ledger hook: awaited with each :class:`CallEvent` (never allowed to fail a call).
CallHook = Callable[[CallEvent], Awaitable[None]]

# Words in a provider's error that mean "out of money/quota" rather than "slow down": retrying cannot help.
_QUOTA_HINTS = ("balance", "quota", "credit", "insufficient", "billing", "余额", "额度", "欠费")


@dataclass(frozen=True)
class PromptBlock:
    """One part of a system prompt. ``cache=True`` marks a stable part (system prompt, style profile,
    blacklist, world rules, volume outline) that should be read from the prompt cache on repeated calls;
    cached blocks must come before the volatile ones, because a cache entry is a prefix."""

    text: str
    cache: bool = False


@dataclass(frozen=True)
class LLMResponse:
    """A finished call. ``usage`` counts every attempt (what the provider bills), not only the last one."""

    text: str
    stop_reason: str | None
    usage: Usage
    model: str
    role: AgentRole
    duration_ms: int
    attempts: int

    @property
    def truncated(self) -> bool:
        """The reply stopped at max_tokens; the caller may continue it or ask for less."""
        return self.stop_reason == "max_tokens"

    def raise_if_truncated(self) -> LLMResponse:
        """Raise ``LLMTruncated`` when the caller needs the whole output; else return self."""
        if self.truncated:
            raise LLMTruncated(attempts=self.attempts)
        return self


@dataclass
class _CallState:
    """What one ``stream`` call has seen across its attempts."""

    emitted: bool = False
    spent: Usage = field(default_factory=Usage)
    # For the ledger hook: the call, its current attempt and what that attempt reported and streamed so far.
    call_id: int = 0
    model: str = ""
    attempt: int = 0
    partial: Usage = field(default_factory=Usage)
    chars: int = 0
    started: float = field(default_factory=time.monotonic)


class _Retryable(Exception):
    """Internal: an attempt failed in a way another attempt may fix."""

    def __init__(self, error: LLMError, retry_after: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after


@functools.cache
def _ssl_context(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    import httpx2  # lazy, as the SDK

    return httpx2.create_ssl_context()


def shared_ssl_context() -> ssl.SSLContext:
    """The process's TLS context for the provider's HTTPS (the SDK's default: the system's CA certificates, or
    ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``). Loading the certificates takes 20-50 ms; made once, not per client
    (every run and every chapter of a benchmark built a client)."""
    return _ssl_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


def message_breakpoints(messages: Sequence[Mapping[str, Any]]) -> int:
    """How many content blocks of ``messages`` carry a ``cache_control`` breakpoint."""
    return sum(
        1
        for message in messages
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, Mapping) and "cache_control" in block
    )


def build_system(blocks: Sequence[PromptBlock], *, reserved: int = 0) -> list[dict[str, Any]]:
    """System blocks for the API, with ``cache_control`` on the last (up to four) cached blocks.

    Each breakpoint ends a cacheable prefix, so the last cached block covers every stable part; the earlier
    ones let a call still hit the cache when only a later stable part changed. ``reserved`` breakpoints are
    left for the messages (a cache-marked chapter block), within the API's four. Empty blocks are dropped
    (the API rejects empty text). Raises ValueError when a cached block follows an uncached one: such a
    prefix would change on every call and never be read from the cache.
    """
    kept = [b for b in blocks if b.text]
    seen_volatile = False
    for b in kept:
        if not b.cache:
            seen_volatile = True
        elif seen_volatile:
            raise ValueError(
                "cached prompt blocks must precede the uncached ones (a cache entry is a prefix)"
            )
    cached = [i for i, b in enumerate(kept) if b.cache]
    room = max(0, MAX_CACHE_BREAKPOINTS - reserved)
    breakpoints = set(cached[-room:]) if room else set()
    system: list[dict[str, Any]] = []
    for i, b in enumerate(kept):
        block: dict[str, Any] = {"type": "text", "text": b.text}
        if i in breakpoints:
            block["cache_control"] = {"type": "ephemeral"}
        system.append(block)
    return system


class LLMClient:
    """Calls the configured provider for each agent role.

    ``api_key`` and ``base_url`` override the environment/keyring and settings (tests pass the fake
    server's URL here); ``http_client`` is an ``httpx2.AsyncClient`` for proxies or a mock transport.
    ``on_call`` (optional) is awaited with a :class:`CallEvent` when each attempt's stream starts, as text and
    usage arrive, and when the call ends however it ends (the cost ledger). Use ``async with`` or call
    ``aclose()`` to release the connections.
    """

    def __init__(
        self,
        settings: LLMSettings,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
        on_call: CallHook | None = None,
    ) -> None:
        self.settings = settings
        self.on_call = on_call
        self._call_ids = itertools.count(1)
        self._explicit_key = api_key
        self._explicit_base_url = base_url
        self._http_client = http_client
        self._sdk: AsyncAnthropic | None = None
        # Kept only to redact it from provider messages; never logged or shown.
        self._secret: str | None = None

    def __repr__(self) -> str:
        return f"LLMClient(provider={self.settings.provider!r}, base_url={self.base_url!r})"

    @property
    def base_url(self) -> str:
        """Where requests go: the explicit argument, ANTHROPIC_BASE_URL, the settings, the preset."""
        return self._explicit_base_url or resolve_base_url(self.settings)

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the SDK client and its connection pool."""
        if self._sdk is not None:
            sdk, self._sdk = self._sdk, None
            await sdk.close()

    def _ensure_sdk(self) -> AsyncAnthropic:
        if self._sdk is not None:
            return self._sdk
        preset = get_preset(self.settings.provider)
        # A local server checks no key: never read the keyring for it, nor send it the author's real key.
        key = self._explicit_key or (
            get_api_key(self.settings.provider) if preset.requires_key else LOCAL_PLACEHOLDER_KEY
        )
        if not key:
            name = get_preset(self.settings.provider).display_name
            raise LLMConfigError(
                "没有找到 {name} 的 API Key：请在“设置 → 模型服务”中填写，或设置环境变量 ANTHROPIC_API_KEY。",
                values={"name": name},
            )
        import anthropic  # lazy: slow import, see the module docstring

        self._secret = key
        http_client = self._http_client or anthropic.DefaultAsyncHttpxClient(verify=shared_ssl_context())
        self._sdk = anthropic.AsyncAnthropic(
            api_key=key,
            base_url=self.base_url,
            max_retries=0,
            timeout=anthropic.Timeout(self.settings.read_timeout_s, connect=self.settings.connect_timeout_s),
            http_client=http_client,
            # No spans: a desktop app has no tracing backend, and the SDK's span per request (a no-op tracer
            # still computes the request's attributes) cost ~0.3 ms of the event loop per call.
            open_telemetry=False,
        )
        return self._sdk

    def _redact(self, text: str) -> str:
        if self._secret and self._secret in text:
            text = text.replace(self._secret, "***")
        return text

    async def stream(
        self,
        role: AgentRole,
        *,
        system: Sequence[PromptBlock],
        messages: Sequence[Mapping[str, Any]],
        max_tokens: int | None = None,
        on_text: Callable[[str], None] | None = None,
        on_restart: Callable[[], None] | None = None,
        cancel: asyncio.Event | None = None,
        timeout: float | None = None,
    ) -> LLMResponse:
        """Stream one reply for ``role`` and return it when complete.

        ``on_text`` receives each text delta as it arrives. When an attempt fails after text was delivered
        and the call is retried, ``on_restart`` is called first: the partial text is void. Setting
        ``cancel`` (or cancelling the calling task) closes the stream at once and raises
        ``asyncio.CancelledError``. The whole stage, retries included, is bounded by ``timeout`` (default:
        the role's stage timeout in settings) and raises ``LLMTimeout``. Other failures raise the typed
        errors of ``llm.errors``; a reply cut at max_tokens is returned with ``truncated`` set.
        """
        role = AgentRole(role)
        if cancel is not None and cancel.is_set():
            raise asyncio.CancelledError
        system_param = build_system(system, reserved=message_breakpoints(messages))
        limit = self.settings.timeout_for(role) if timeout is None else timeout
        state = _CallState(call_id=next(self._call_ids), model=self.settings.model_for(role))

        async def bounded() -> LLMResponse:
            timer = asyncio.timeout(limit)
            try:
                async with timer:
                    return await self._run_with_retries(
                        role, system_param, messages, max_tokens, on_text, on_restart, state
                    )
            except TimeoutError:
                if timer.expired():
                    log.info("LLM call timed out: role=%s after %.0fs", role.value, limit)
                    raise LLMTimeout() from None
                raise

        try:
            response = await (bounded() if cancel is None else _cancellable(bounded(), cancel))
        except asyncio.CancelledError:
            await self._report(state, role, "end", "cancelled")
            raise
        except BaseException:
            await self._report(state, role, "end", "failed")
            raise
        await self._report(state, role, "end", "ok", response.usage, response.model)
        return response

    async def _report(
        self,
        state: _CallState,
        role: AgentRole,
        phase: str,
        status: str = "running",
        usage: Usage | None = None,
        model: str | None = None,
        discount: float = 1.0,
        note: str = "",
    ) -> None:
        """Tell the ``on_call`` hook where the call stands; the hook's own failure is logged, never raised."""
        if self.on_call is None:
            return
        if usage is None:
            usage = state.spent + state.partial if phase != "end" else state.spent
        model = model or state.model
        price = self.settings.price_for(model)
        chars = state.chars if phase != "end" else 0
        live = Usage(
            usage.input_tokens,
            usage.output_tokens + estimate_output_tokens(chars),
            usage.cache_creation_input_tokens,
            usage.cache_read_input_tokens,
        )
        event = CallEvent(
            call_id=state.call_id,
            phase=phase,
            role=role.value,
            model=model,
            usage=usage,
            cost_usd=usage.cost(price) * discount,
            status=status,
            attempts=max(1, state.attempt),
            duration_ms=int((time.monotonic() - state.started) * 1000),
            streamed_chars=chars,
            live_cost_usd=live.cost(price) * discount,
            note=note,
        )
        try:
            await self.on_call(event)
        except Exception:
            log.warning("the call hook failed: role=%s phase=%s", role.value, phase, exc_info=True)

    async def report_call(
        self, role: AgentRole, model: str, usage: Usage, *, ok: bool = True, discount: float = 1.0
    ) -> None:
        """Tell the ``on_call`` hook about a call made outside :meth:`stream` (a Message Batches result,
        priced at ``discount`` of the model's price)."""
        state = _CallState(call_id=next(self._call_ids), model=model, attempt=1, spent=usage)
        status = "ok" if ok else "failed"
        await self._report(state, AgentRole(role), "end", status, usage, model, discount)

    async def _run_with_retries(
        self,
        role: AgentRole,
        system_param: list[dict[str, Any]],
        messages: Sequence[Mapping[str, Any]],
        max_tokens: int | None,
        on_text: Callable[[str], None] | None,
        on_restart: Callable[[], None] | None,
        state: _CallState,
    ) -> LLMResponse:
        sdk = self._ensure_sdk()
        model = state.model
        limit = max_tokens or self.settings.max_tokens_for(role)
        policy = self.settings.retry
        started = state.started
        for attempt in range(1, policy.max_attempts + 1):
            state.attempt = attempt
            if attempt > 1 and state.emitted:
                state.emitted = False
                if on_restart is not None:
                    on_restart()
            try:
                text, stop_reason, usage = await self._attempt(
                    sdk, role, model, system_param, messages, limit, on_text, state
                )
            except _Retryable as failure:
                failure.error.attempts = attempt
                if attempt >= policy.max_attempts:
                    log.info(
                        "LLM call failed: role=%s model=%s attempts=%d error=%s status=%s",
                        role.value,
                        model,
                        attempt,
                        type(failure.error).__name__,
                        failure.error.status_code,
                    )
                    raise failure.error from None
                delay = self._backoff(attempt, failure.retry_after)
                # The author reads the retry once, in words, through the call hook (a chapter run shows it
                # as a pipeline warning); the log keeps the details for a bug report, below warning level.
                wait = f"{delay:.0f} 秒后重试" if delay >= 1 else "马上重试"
                note = (
                    f"{role.label}的请求{failure.error.brief}，{wait}"
                    f"（第 {attempt + 1} 次，最多 {policy.max_attempts} 次）"
                )
                await self._report(state, role, "progress", note=note)
                log.info(
                    "LLM call retry: role=%s model=%s attempt=%d error=%s status=%s wait=%.2fs",
                    role.value,
                    model,
                    attempt,
                    type(failure.error).__name__,
                    failure.error.status_code,
                    delay,
                )
                await asyncio.sleep(delay)
                continue
            except LLMError as error:
                error.attempts = attempt
                log.info(
                    "LLM call failed: role=%s model=%s error=%s status=%s",
                    role.value,
                    model,
                    type(error).__name__,
                    error.status_code,
                )
                raise
            total = state.spent + usage
            duration_ms = int((time.monotonic() - started) * 1000)
            log.info(
                "LLM call done: role=%s model=%s attempts=%d stop=%s usage=%s ms=%d",
                role.value,
                model,
                attempt,
                stop_reason,
                total.to_dict(),
                duration_ms,
            )
            return LLMResponse(text, stop_reason, total, model, role, duration_ms, attempt)
        raise AssertionError("unreachable: max_attempts >= 1")  # pragma: no cover

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        policy = self.settings.retry
        # Full jitter on the upper half spreads retries of parallel calls without making them too short.
        ceiling = min(policy.max_backoff_s, policy.base_backoff_s * 2.0 ** (attempt - 1))
        delay = ceiling * random.uniform(0.5, 1.0)
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, policy.max_backoff_s)

    async def _attempt(
        self,
        sdk: AsyncAnthropic,
        role: AgentRole,
        model: str,
        system_param: list[dict[str, Any]],
        messages: Sequence[Mapping[str, Any]],
        max_tokens: int,
        on_text: Callable[[str], None] | None,
        state: _CallState,
    ) -> tuple[str, str | None, Usage]:
        import anthropic
        import httpx2

        partial = state.partial = Usage()
        state.chars = 0
        reply = StreamedMessage()
        try:
            async with (
                sdk.messages.with_streaming_response.create(
                    model=model,
                    max_tokens=max_tokens,
                    system=cast(Any, system_param),
                    messages=cast(Any, list(messages)),
                    stream=True,
                    extra_headers={AGENT_HEADER: role.value},
                ) as response,
                aclosing(sse_events(response.http_response)) as events,
            ):
                async for kind, event in events:
                    if kind == "content_block_delta":
                        delta = event.get("delta") or {}
                        piece = delta.get("text") if delta.get("type") == "text_delta" else None
                        if piece:
                            reply.parts.append(piece)
                            state.emitted = True
                            if on_text is not None:
                                on_text(piece)
                            state.chars += len(piece)
                            await self._report(state, role, "progress")
                    elif kind == "message_start":
                        reply.usage = dict((event.get("message") or {}).get("usage") or {})
                        partial = state.partial = Usage.from_api(reply.usage)
                        await self._report(state, role, "start")
                    elif kind == "message_delta":
                        reply.stop_reason = (event.get("delta") or {}).get("stop_reason") or reply.stop_reason
                        if event.get("usage") is not None:
                            # Output so far (the API sends it at least once, before message_stop).
                            reply.usage.update((k, v) for k, v in event["usage"].items() if v is not None)
                            partial = state.partial = Usage.from_api(reply.usage)
                            state.chars = 0
                            await self._report(state, role, "progress")
                    elif kind == "message_stop":
                        reply.stopped = True
        except asyncio.CancelledError:
            # Cancelled (or timed out) mid-stream: what the provider reported so far is billed all the same.
            state.spent, state.partial = state.spent + partial, Usage()
            raise
        except anthropic.APIStatusError as exc:
            state.spent = state.spent + partial
            raise self._classify(exc) from None
        except (anthropic.APIConnectionError, httpx2.TransportError) as exc:
            state.spent = state.spent + partial
            # The cause is not the provider's words, so it goes to the log, not into the message.
            log.info("LLM connection problem: role=%s %s", role.value, type(exc).__name__)
            raise _Retryable(LLMConnectionError()) from None

        usage = Usage.from_api(reply.usage)
        text = reply.text
        if not reply.stopped and reply.stop_reason is None:
            # The body ended cleanly but without message_stop: a proxy cut the stream.
            state.spent = state.spent + usage
            log.info("LLM stream ended without message_stop: role=%s", role.value)
            raise _Retryable(LLMConnectionError())
        if not text.strip() and reply.stop_reason != "max_tokens":
            state.spent = state.spent + usage
            raise _Retryable(LLMEmptyResponse(status_code=200))
        return text, reply.stop_reason, usage

    def _classify(self, exc: APIStatusError) -> _Retryable | LLMError:
        """Map an SDK status error to a typed error, wrapped in ``_Retryable`` when a retry may help."""
        status = exc.status_code
        etype = exc.type or ""
        message = self._redact(str(exc.api_message or exc.message))[:500]
        quota = any(h in message.lower() for h in _QUOTA_HINTS) or "quota" in etype
        retry_after = _retry_after(exc)
        kw: dict[str, Any] = {"provider_message": message, "status_code": status}
        if status == 529 or etype == "overloaded_error":
            return _Retryable(LLMOverloaded(**kw), retry_after)
        if status in (401, 403) or etype in ("authentication_error", "permission_error"):
            return LLMAuthError(**kw)
        if status == 402 or etype == "billing_error":
            return LLMQuotaError("账户余额或额度不足：请到服务商控制台充值或提高额度后重试。", **kw)
        if status == 429 or etype == "rate_limit_error":
            if quota:
                return LLMQuotaError("账户额度已用尽：请到服务商控制台充值或提高额度后重试。", **kw)
            return _Retryable(LLMQuotaError(**kw), retry_after)
        if status == 200 or status in (408, 409) or status >= 500:
            # 200: an error event inside the stream (api_error, ...); the SDK does not retry it.
            return _Retryable(LLMServerError(**kw), retry_after)
        if quota:
            return LLMQuotaError("账户余额或额度不足：请到服务商控制台充值或提高额度后重试。", **kw)
        if status == 404:
            return LLMBadRequest(
                "模型或服务地址不存在（404）：请检查该角色的模型名称和 Base URL 是否与服务商一致。", **kw
            )
        if status == 413:
            return LLMBadRequest("请求内容过长（413）：请减少上下文或换用上下文更长的模型。", **kw)
        return LLMBadRequest(**kw)


def _retry_after(exc: APIStatusError) -> float | None:
    headers = exc.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                continue
    return None


async def _cancellable(work: Coroutine[Any, Any, _T], cancel: asyncio.Event) -> _T:
    """Run ``work`` until it finishes or ``cancel`` is set; then cancel it (closing its stream) and raise."""
    task = asyncio.ensure_future(work)
    waiter = asyncio.ensure_future(cancel.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        waiter.cancel()
        await asyncio.gather(task, waiter, return_exceptions=True)
        raise
    if task.done():
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)
        return task.result()
    task.cancel()
    # Wait for the stream to close; whatever the task raised while closing is moot now.
    await asyncio.gather(task, return_exceptions=True)
    raise asyncio.CancelledError
