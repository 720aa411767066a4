"""The one way the asyncio code reaches the synchronous store: a call in a worker thread.

SQLite through sqlmodel is synchronous; run under ``asyncio.to_thread`` it never blocks the event loop (the
GUI stays responsive) and was about twice as fast here as an async engine.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def db(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a synchronous store call in a worker thread and return its result."""
    return await asyncio.to_thread(fn, *args, **kwargs)


__all__ = ["db"]
