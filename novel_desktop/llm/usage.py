"""Token usage and cost: per call, per chapter (by role), in total."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from novel_desktop.llm.providers import ModelPrice

_PER = 1_000_000


@dataclass(frozen=True)
class Usage:
    """Tokens of one call (or a sum). ``input_tokens`` excludes the cached ones, as the API reports it."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    @property
    def total_input_tokens(self) -> int:
        """Every prompt token, cached or not."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def cost(self, price: ModelPrice | None) -> float:
        """USD for these tokens at a price; 0 when the model has no price."""
        if price is None:
            return 0.0
        return (
            self.input_tokens * price.input
            + self.output_tokens * price.output
            + self.cache_creation_input_tokens * price.cache_write
            + self.cache_read_input_tokens * price.cache_read
        ) / _PER

    @classmethod
    def from_api(cls, usage: Any) -> Usage:
        """From the SDK's usage object (or a dict); the cache fields may be missing or None."""

        def get(name: str) -> int:
            value = usage.get(name) if isinstance(usage, Mapping) else getattr(usage, name, None)
            return int(value or 0)

        return cls(
            get("input_tokens"),
            get("output_tokens"),
            get("cache_creation_input_tokens"),
            get("cache_read_input_tokens"),
        )

    def to_dict(self) -> dict[str, int]:
        """The API's field names, for logs and the pipeline log."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }


def estimate_output_tokens(chars: int) -> int:
    """Output tokens of ``chars`` streamed characters before the provider reports them (about 1.5 Chinese
    characters a token); only for a live view, never billed."""
    return -(-chars * 2 // 3) if chars > 0 else 0


@dataclass(frozen=True)
class CallEvent:
    """What the client tells its ``on_call`` hook about one call (``LLMClient.stream``).

    ``phase`` is ``start`` (an attempt's stream began: message_start's usage is known; again on a retry),
    ``progress`` (text or a usage figure arrived) or ``end`` (``status`` ok, failed or cancelled). ``usage``
    is what the provider reported so far over every attempt; ``streamed_chars`` the text streamed since its
    last output figure, from which a live view estimates the output tokens not yet reported.
    """

    call_id: int
    phase: str
    role: str
    model: str
    usage: Usage
    cost_usd: float
    status: str = "running"
    attempts: int = 1
    duration_ms: int = 0
    streamed_chars: int = 0
    #: ``cost_usd`` plus the estimated output tokens' price (a live view's figure).
    live_cost_usd: float = 0.0
    #: A line for the author (Chinese), set on the ``progress`` event reported when an attempt failed and
    #: the call is about to be retried, e.g. "章节写作的请求服务繁忙（529），2 秒后重试（第 2 次，最多 3 次）"
    note: str = ""

    @property
    def live_output_tokens(self) -> int:
        """Output tokens reported, plus an estimate of those streamed since (a live view's figure)."""
        return self.usage.output_tokens + estimate_output_tokens(self.streamed_chars)
