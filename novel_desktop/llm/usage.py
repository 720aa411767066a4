"""Token usage and cost: per call, per chapter (by role), in total."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from novel_desktop.llm.providers import ModelPrice
from novel_desktop.llm.roles import AgentRole

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


@dataclass(frozen=True)
class UsageRecord:
    """One call as the ledger keeps it."""

    role: AgentRole
    model: str
    usage: Usage
    cost_usd: float
    chapter: int | None
    #: False when the price table did not know the model (the cost then counts as 0).
    priced: bool


@dataclass
class ChapterUsage:
    """Usage and cost of one chapter (or of calls outside any chapter), by role."""

    by_role: dict[AgentRole, Usage] = field(default_factory=dict)
    cost_by_role: dict[AgentRole, float] = field(default_factory=dict)
    calls: int = 0

    @property
    def usage(self) -> Usage:
        total = Usage()
        for u in self.by_role.values():
            total = total + u
        return total

    @property
    def cost_usd(self) -> float:
        return sum(self.cost_by_role.values())


class UsageLedger:
    """Accumulates every call's usage and cost; the dashboard and the pipeline log read from it."""

    def __init__(self, prices: Mapping[str, ModelPrice]) -> None:
        self._prices = dict(prices)
        self.records: list[UsageRecord] = []
        self._chapters: dict[int | None, ChapterUsage] = {}

    def record(self, role: AgentRole, model: str, usage: Usage, *, chapter: int | None = None) -> UsageRecord:
        """Add one call; returns its record with the cost."""
        price = self._prices.get(model)
        rec = UsageRecord(role, model, usage, usage.cost(price), chapter, price is not None)
        self.records.append(rec)
        ch = self._chapters.setdefault(chapter, ChapterUsage())
        ch.by_role[role] = ch.by_role.get(role, Usage()) + usage
        ch.cost_by_role[role] = ch.cost_by_role.get(role, 0.0) + rec.cost_usd
        ch.calls += 1
        return rec

    def chapter(self, chapter: int | None) -> ChapterUsage:
        """Usage of one chapter (an empty one if it has no calls)."""
        return self._chapters.get(chapter, ChapterUsage())

    @property
    def chapters(self) -> dict[int | None, ChapterUsage]:
        return dict(self._chapters)

    @property
    def total(self) -> Usage:
        total = Usage()
        for rec in self.records:
            total = total + rec.usage
        return total

    @property
    def total_cost_usd(self) -> float:
        return sum(rec.cost_usd for rec in self.records)

    @property
    def unpriced_models(self) -> set[str]:
        """Models used without a price (the settings dialog asks for one)."""
        return {rec.model for rec in self.records if not rec.priced}
