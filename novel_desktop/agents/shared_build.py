"""One build of a value derived from a chapter's facts and draft, shared by the calls that start on it.

The review calls after the writer (refiner, the summarizer's parts, the judge's panels) and both judges of a
key chapter need the same values of the same facts and text; each build measures or formats the novel in a
worker thread. :class:`SharedBuild` starts it once and hands every caller the same result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from novel_desktop.agents.context import NovelFacts

T = TypeVar("T")


class SharedBuild(Generic[T]):
    """The last build, keyed by the facts object and the text; built again for other facts or text, or when
    the last build failed (a failure is not kept)."""

    def __init__(self) -> None:
        self._memo: tuple[NovelFacts, str, asyncio.Future[T]] | None = None

    async def get(self, facts: NovelFacts, text: str, build: Callable[[], Awaitable[T]]) -> T:
        memo = self._memo
        if memo is None or memo[0] is not facts or memo[1] != text or _failed(memo[2]):
            memo = self._memo = (facts, text, asyncio.ensure_future(build()))
        # Shielded: one caller cancelled (a retry, a discarded draft) does not cancel the others' build.
        return await asyncio.shield(memo[2])


def _failed(build: asyncio.Future[T]) -> bool:
    return build.done() and (build.cancelled() or build.exception() is not None)
