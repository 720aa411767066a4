"""The job runner: every background operation reports started → progress → one ending → finished."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
import qasync
from PySide6.QtCore import SignalInstance

from novel_desktop.controllers.jobs import Job, JobRunner

# Their jobs run work in threads: Qt objects left in cycles are collected in the GUI thread.
pytestmark = pytest.mark.usefixtures("gui_thread_gc")


class Seen:
    def __init__(self, runner: JobRunner) -> None:
        self.events: list[tuple[str, Any]] = []
        runner.job_started.connect(self._watch)
        runner.busy_changed.connect(lambda busy: self.events.append(("busy", busy)))

    def _watch(self, job: Job) -> None:
        for name in ("started", "progress", "succeeded", "failed", "cancelled", "finished"):
            signal: SignalInstance = getattr(job, name)
            signal.connect(lambda *args, _n=name: self.events.append((_n, args[0] if args else None)))

    def names(self) -> list[str]:
        return [name for name, _ in self.events]


def test_a_job_reports_its_progress_and_result_in_order(qloop: qasync.QEventLoop) -> None:
    runner = JobRunner()
    seen = Seen(runner)

    async def work(job: Job) -> int:
        job.report("一半")
        await asyncio.sleep(0)
        job.report("快好了")
        return 42

    job = runner.run("answer", work, title="计算")
    assert runner.busy and job.running
    qloop.run_until_complete(runner.idle())
    assert seen.events == [
        ("busy", True),
        ("started", None),
        ("progress", "一半"),
        ("progress", "快好了"),
        ("succeeded", 42),
        ("finished", None),
        ("busy", False),
    ]
    assert job.result == 42 and job.done and not runner.busy


def test_blocking_work_runs_in_a_worker_thread(qloop: qasync.QEventLoop) -> None:
    runner = JobRunner()
    threads: list[threading.Thread] = []
    job = runner.run_in_thread("read", lambda: threads.append(threading.current_thread()) or "读完")
    qloop.run_until_complete(runner.idle())
    assert job.result == "读完"
    assert threads and threads[0] is not threading.main_thread()


def test_a_failure_is_reported_once_with_its_message(qloop: qasync.QEventLoop) -> None:
    runner = JobRunner()
    seen = Seen(runner)

    def broken() -> None:
        raise OSError("磁盘满了")

    job = runner.run_in_thread("export", broken)
    qloop.run_until_complete(runner.idle())
    assert [e for e in seen.events if e[0] == "failed"] == [("failed", "磁盘满了")]
    assert "succeeded" not in seen.names() and seen.names()[-2:] == ["finished", "busy"]
    assert job.error == "磁盘满了"


def test_an_unexpected_error_names_its_type(qloop: qasync.QEventLoop) -> None:
    runner = JobRunner()
    failures: list[str] = []

    async def buggy(_job: Job) -> None:
        raise KeyError("x")

    runner.run("bug", buggy).failed.connect(failures.append)
    qloop.run_until_complete(runner.idle())
    assert len(failures) == 1 and "KeyError" in failures[0]


@pytest.mark.parametrize("before_start", [True, False])
def test_cancel_ends_the_job_as_cancelled(qloop: qasync.QEventLoop, before_start: bool) -> None:
    runner = JobRunner()
    seen = Seen(runner)
    entered = asyncio.Event()

    async def slow(_job: Job) -> None:
        entered.set()
        await asyncio.sleep(60)

    job = runner.run("slow", slow)

    async def main() -> None:
        if not before_start:
            await entered.wait()
        job.cancel()
        await runner.idle()

    qloop.run_until_complete(asyncio.wait_for(main(), 5))
    assert job.was_cancelled and not job.running
    assert seen.names()[-3:] == ["cancelled", "finished", "busy"]
    assert "succeeded" not in seen.names() and "failed" not in seen.names()


def test_shutdown_cancels_and_awaits_every_job(qloop: qasync.QEventLoop) -> None:
    runner = JobRunner()
    ended: list[str] = []

    async def forever(_job: Job) -> None:
        try:
            await asyncio.sleep(60)
        finally:
            ended.append("cleaned up")

    jobs = [runner.run(f"job{i}", forever) for i in range(3)]

    async def main() -> None:
        await asyncio.sleep(0.01)  # the jobs have started
        await runner.shutdown()

    qloop.run_until_complete(asyncio.wait_for(main(), 5))
    assert ended == ["cleaned up"] * 3
    assert all(j.was_cancelled for j in jobs)
    assert not runner.busy and runner.jobs == []


def test_the_end_signals_are_emitted_outside_the_task(qloop: qasync.QEventLoop) -> None:
    """A slot of succeeded/failed may open a dialog: it must not run inside the job's task."""
    runner = JobRunner()
    inside: list[object] = []
    job = runner.run_in_thread("read", lambda: 1)
    job.succeeded.connect(lambda _r: inside.append(asyncio.current_task()))
    qloop.run_until_complete(runner.idle())
    assert inside and inside[0] is not job.task
