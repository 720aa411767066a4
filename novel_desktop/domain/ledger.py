"""The cost ledger's records, and what a model call is for (its attribution).

Every model call is recorded where it is made (the LLM client's hook, wired by the session), so no caller can
forget one. What the call worked on comes from :func:`attributed`: the pipeline (or the command that starts a
job) names the chapter and the purpose around its steps, and every call made inside, in the same task or a
task started from it, carries them. Nothing set: the session falls back to the checkpoint's chapter in
flight and the agent role's usual purpose (:func:`default_purpose`).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

#: Ledger rows seeded by the schema 2 migration from what older files kept (pipeline logs, planning_usage).
BEFORE_LEDGER = "before-ledger"

#: A queued run's early draft of the next chapter (pipeline/ahead.py) while it is neither adopted (its calls
#: become the chapter's "write") nor thrown away (they become ``DISCARDED_DRAFT``): what a row keeps when the
#: process died in between.
WRITE_AHEAD = "write_ahead"
#: An early draft thrown away (the chapter before was sent back or changed, the run stopped): billed all the
#: same, and shown apart so that the author sees what the pipelining cost.
DISCARDED_DRAFT = "discarded_draft"

#: Call statuses: finished, failed after its attempts, cancelled by the author, or left behind by a process
#: that died mid-call (the row a call writes when its stream starts, never completed).
STATUSES = ("ok", "failed", "cancelled", "interrupted")

_ROLE_PURPOSES = {
    "chapter_writer": "write",
    "reviser": "revise",
    "summarizer": "summarize",
    "style_refiner": "refine",
    "quality_judge": "judge",
    "judge_secondary": "judge",
    "consistency_auditor": "audit",
    "world_builder": "plan",
    "character_weaver": "plan",
    "plot_architect": "plan",
    "style_analyzer": "plan",
}


def default_purpose(role: str) -> str:
    """The purpose of a call nobody named: what the role usually does."""
    return _ROLE_PURPOSES.get(role, role or "other")


class Label:
    """A purpose decided while its calls run: an early draft's calls are ``WRITE_AHEAD`` until the draft is
    adopted or thrown away. A call's ledger row takes the value it has when the row is written."""

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Label({self.value!r})"


@dataclass(frozen=True)
class Attribution:
    """What the calls made now work on. ``watch`` (optional) sees every call event live, for a progress view;
    it must be cheap and must not raise."""

    chapter: int | None = None
    purpose: str | Label | None = None
    watch: Callable[[Any], None] | None = None

    @property
    def purpose_now(self) -> str | None:
        """The purpose a call's row is written with now."""
        return self.purpose.value if isinstance(self.purpose, Label) else self.purpose


_current: ContextVar[Attribution | None] = ContextVar("novel_call_attribution", default=None)


def current_attribution() -> Attribution:
    """The attribution of a call made now (empty when nothing was set)."""
    return _current.get() or Attribution()


@contextmanager
def attributed(
    purpose: str | Label | None = None,
    *,
    chapter: int | None = None,
    watch: Callable[[Any], None] | None = None,
) -> Iterator[None]:
    """Attribute the model calls of the block to ``purpose`` and ``chapter``; what is None is inherited from
    an enclosing block (so a rebuild's summarizer step keeps "rebuild" and gets its chapter)."""
    outer = current_attribution()
    token = _current.set(
        Attribution(
            chapter if chapter is not None else outer.chapter,
            purpose if purpose is not None else outer.purpose,
            watch if watch is not None else outer.watch,
        )
    )
    try:
        yield
    finally:
        _current.reset(token)


def for_purpose(purpose: str) -> Callable[[Callable[P, Awaitable[R]]], Callable[P, Awaitable[R]]]:
    """Decorate a coroutine function: its model calls are attributed to ``purpose`` (unless a caller chose one
    already: a rebuild that re-judges stays a rebuild)."""

    def wrap(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
        @functools.wraps(fn)
        async def inner(*args: P.args, **kwargs: P.kwargs) -> R:
            outer = current_attribution()
            with attributed(outer.purpose or purpose):
                return await fn(*args, **kwargs)

        return inner

    return wrap


@dataclass(frozen=True)
class ModelCall:
    """One ledger row: a model call, the tokens it was billed (every attempt), its cost, how it ended."""

    role: str
    model: str
    purpose: str
    status: str = "ok"
    chapter: int | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float = 0.0
    duration_ms: int = 0
    attempts: int = 1
    created_at: str = ""

    def with_status(self, status: str) -> ModelCall:
        return replace(self, status=status)


@dataclass(frozen=True)
class CostTotals:
    """Tokens and cost of some ledger rows (the novel, a chapter, a purpose)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float = 0.0

    @property
    def total_input_tokens(self) -> int:
        """Every prompt token, cached or not."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def to_json(self) -> dict[str, Any]:
        """``novel status --json``'s ``cost`` object."""
        return {
            "total_usd": round(self.cost_usd, 6),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "calls": self.calls,
        }


@dataclass(frozen=True)
class CostReport:
    """The novel's cost: in total, per chapter (None: calls outside any chapter), per purpose."""

    total: CostTotals = field(default_factory=CostTotals)
    by_chapter: dict[int | None, CostTotals] = field(default_factory=dict)
    by_purpose: dict[str, CostTotals] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total.to_json(),
            "chapters": [
                {"chapter": n, **t.to_json()}
                for n, t in sorted(self.by_chapter.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))
            ],
            "purposes": [{"purpose": p, **t.to_json()} for p, t in sorted(self.by_purpose.items())],
        }


__all__ = [
    "BEFORE_LEDGER",
    "DISCARDED_DRAFT",
    "STATUSES",
    "WRITE_AHEAD",
    "Attribution",
    "CostReport",
    "CostTotals",
    "Label",
    "ModelCall",
    "attributed",
    "current_attribution",
    "default_purpose",
    "for_purpose",
]
