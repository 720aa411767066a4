"""Warm-up: the slow first-use work of a run (imports, the segmenter's dictionary, the SDK's schemas) done in
worker threads while the author looks around, once per process."""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
from typing import Any

log = logging.getLogger(__name__)


async def _warm_up() -> None:
    """The slow first-use work, each piece in a worker thread: ``import anthropic`` (over a second), the
    agents and the lifecycle (SQLAlchemy, templates, pydantic models), and the segmenter's dictionary, which
    the refiner's and judge's context use inside the agents' coroutines: loaded there it would freeze the
    window on the first chapter."""
    from novel_desktop.analysis import segment

    await asyncio.to_thread(importlib.import_module, "anthropic")
    for module in (
        "novel_desktop.agents.chapter",
        # The periodic checks after each chapter and the lifecycle steps (their pydantic models take
        # tens of milliseconds to build, which on the GUI thread would stall the first chapter's stream).
        "novel_desktop.agents.planning",
        "novel_desktop.pipeline.checks",
        "novel_desktop.pipeline.orchestrator",
    ):
        await asyncio.to_thread(importlib.import_module, module)
    await asyncio.to_thread(segment.ensure_ready)
    await asyncio.to_thread(segment.warm_tagger)
    await asyncio.to_thread(_phrase_plan)
    await asyncio.to_thread(_exercise_sdk)


def _phrase_plan() -> None:
    """Build the shipped AI-phrase list's scan plan (a trie expression over ~470 strings, ~10 ms to compile),
    remembered per process: opening a novel that uses that list then underlines its chapter at once."""
    from novel_desktop.analysis.ai_phrases import find_hits, load_default_phrases

    find_hits("", load_default_phrases())


def _exercise_sdk() -> None:
    """Stream one canned reply through the SDK, offline, on a private loop in this worker thread.

    The SDK builds its pydantic schemas for stream events on first use (about 50 ms); done here, the first
    chapter's stream does not pay for it on the GUI's loop.
    """
    import anthropic
    import httpx2

    events = [
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_warm_up", "type": "message", "role": "assistant", "model": "warm-up", "content": [],
            "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("ping", {"type": "ping"}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": "好"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "usage": {"output_tokens": 1},
                           "delta": {"stop_reason": "end_turn", "stop_sequence": None}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    body = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()

    def reply(_request: Any) -> Any:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    async def exercise() -> None:
        http = httpx2.AsyncClient(transport=httpx2.MockTransport(reply))
        async with (
            anthropic.AsyncAnthropic(
                api_key="warm-up", base_url="http://warm-up.invalid", http_client=http, max_retries=0
            ) as sdk,
            sdk.messages.stream(
                model="warm-up", max_tokens=1, messages=[{"role": "user", "content": "warm up"}]
            ) as stream,
        ):
            async for _event in stream:
                pass
            await stream.get_final_message()

    try:
        asyncio.run(exercise())
    except Exception:  # only a warm-up: a failure here must not stop a run
        log.debug("SDK warm-up failed", exc_info=True)


def before_window() -> None:
    """First-use work that cannot share the GIL, done before the window exists: the word segmenter builds
    its dictionary in one native call (0.1-0.3 s) that holds the GIL, so in the warm-up's worker thread it
    would freeze the window that long. (The warm-up's own ``ensure_ready`` then returns at once.)"""
    from novel_desktop.analysis import segment

    segment.ensure_ready()


#: One warm-up per process, shared by every controller (the libraries are process-wide).
_warm_up_task: asyncio.Task[None] | None = None
_warmed = False


def pending() -> asyncio.Task[None] | None:
    """The warm-up to wait for on this loop: None when done, a new task when none is under way here."""
    global _warm_up_task
    if _warmed:
        return None
    loop = asyncio.get_event_loop()
    if _warm_up_task is not None and _warm_up_task.get_loop() is loop and not _warm_up_task.done():
        return _warm_up_task
    task = loop.create_task(_warm_up())

    def on_done(done: asyncio.Task[None]) -> None:
        global _warmed
        # A failure is not cached: the next run tries again (and reports a real import error itself).
        _warmed = not done.cancelled() and done.exception() is None

    task.add_done_callback(on_done)
    _warm_up_task = task
    return task
