"""A fake Messages API that shows whether a run is queued: the next chapter's writer must start while the
chapter before is still judged (tests/pipeline/test_queued.py, tests/cli/test_continue_queued_cli.py)."""

from __future__ import annotations

import threading

from tests.fakes.anthropic_server import FakeAnthropicServer, Reply


class JudgeWaitsForNextWriter(FakeAnthropicServer):
    """The first judge reply is held until the second writer request has arrived (at most 10 s): a queued
    run gets its reply at once; a chapter-by-chapter run would only after the wait ran out, and says so in
    ``judge_saw_writer``."""

    def __init__(self) -> None:
        super().__init__()
        self.second_writer = threading.Event()
        self.judge_saw_writer: list[bool] = []

    def _next_reply(self, role: str | None, *more: str, panel: str | None = None) -> Reply:
        if role == "chapter_writer" and len(self.requests_for("chapter_writer")) >= 2:
            self.second_writer.set()
        if role == "quality_judge" and not self.judge_saw_writer:
            self.judge_saw_writer.append(self.second_writer.wait(timeout=10))
        return super()._next_reply(role, *more, panel=panel)
