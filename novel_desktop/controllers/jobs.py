"""The one way background work reaches the window: a :class:`Job` on the :class:`JobRunner`.

Every slow operation the window starts (continue, rebuild, import, export, style analysis, planning and the
other lifecycle steps, the connection test) is a job: a coroutine run as an asyncio task on the GUI's qasync
loop, blocking work inside it going through ``asyncio.to_thread``. A job reports through Qt signals, always in
this order: ``started``, any number of ``progress``, then exactly one of ``succeeded`` (its result),
``failed`` (a message, once) or ``cancelled``, and last ``finished``. The runner keeps every task referenced
(a task only the loop knows about may be garbage-collected mid-run), tells the window when it is busy, and on
quit cancels and awaits whatever still runs. Widgets never create tasks themselves: they ask the runner.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Signal

from novel_desktop.i18n import tr

log = logging.getLogger(__name__)

T = TypeVar("T")

#: How an exception becomes the message ``failed`` carries (the default: its text, or its type for a bug).
Describe = Callable[[BaseException], str]


def describe_error(exc: BaseException) -> str:
    """The message of an expected failure (an OSError, one of the app's own errors): its text; of anything
    else (a bug), its type too."""
    text = str(getattr(exc, "message", None) or exc)
    if _expected(exc):
        return text or type(exc).__name__
    return tr("意外错误：{error}").format(error=f"{type(exc).__name__}: {text}")


class Job(QObject):
    """One background operation; see the module docstring for the order of its signals."""

    started = Signal()
    #: A line of progress for the status bar ("第 3 章 …", "正在分析 …").
    progress = Signal(str)
    succeeded = Signal(object)
    failed = Signal(str)
    cancelled = Signal()
    #: Always last, however the job ended.
    finished = Signal()

    def __init__(self, name: str, title: str = "", parent: QObject | None = None) -> None:
        super().__init__(parent)
        #: What the job is, for code ("import", "continue", …).
        self.name = name
        #: What the author reads in the status bar and in the title of an error.
        self.title = title or name
        self.task: asyncio.Task[Any] | None = None
        self.result: Any = None
        self.error: str | None = None
        self.was_cancelled = False

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    @property
    def done(self) -> bool:
        return self.task is not None and self.task.done()

    def report(self, text: str) -> None:
        """Emit one progress line (callable from the job's coroutine)."""
        self.progress.emit(text)

    def cancel(self) -> None:
        """Stop the job; it ends with ``cancelled`` then ``finished``."""
        if self.task is not None and not self.task.done():
            self.task.cancel()

    async def wait(self) -> None:
        """Until the job has ended (however it ended); never raises."""
        if self.task is not None and not self.task.done():
            await asyncio.wait([self.task])


class JobRunner(QObject):
    """Starts jobs on the running (or current) asyncio loop and keeps them until they end."""

    #: A job started (the Job).
    job_started = Signal(object)
    #: A job ended, after its own ``finished`` (the Job).
    job_finished = Signal(object)
    #: True while at least one job runs.
    busy_changed = Signal(bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._jobs: list[Job] = []

    @property
    def jobs(self) -> list[Job]:
        """The jobs still running, oldest first."""
        return list(self._jobs)

    @property
    def busy(self) -> bool:
        return bool(self._jobs)

    def running(self, name: str) -> Job | None:
        """The running job called ``name``, if any."""
        return next((job for job in self._jobs if job.name == name), None)

    def run(
        self,
        name: str,
        work: Callable[[Job], Awaitable[T]],
        *,
        title: str = "",
        describe: Describe = describe_error,
    ) -> Job:
        """Start ``work(job)`` as a job; its result goes to ``succeeded``, an exception to ``failed``."""
        job = Job(name, title, self)
        loop = _loop()
        job.task = loop.create_task(self._drive(job, work, describe), name=f"job:{name}")
        job.task.add_done_callback(lambda _task: self._on_task_done(job))
        self._jobs.append(job)
        if len(self._jobs) == 1:
            self.busy_changed.emit(True)
        self.job_started.emit(job)
        return job

    def run_in_thread(
        self,
        name: str,
        work: Callable[[], T],
        *,
        title: str = "",
        describe: Describe = describe_error,
    ) -> Job:
        """Start blocking ``work()`` in a worker thread as a job."""

        async def threaded(_job: Job) -> T:
            return await asyncio.to_thread(work)

        return self.run(name, threaded, title=title, describe=describe)

    def cancel_all(self) -> None:
        for job in list(self._jobs):
            job.cancel()

    async def idle(self) -> None:
        """Until no job runs (jobs started meanwhile included)."""
        while self._jobs:
            await asyncio.wait([job.task for job in list(self._jobs) if job.task is not None])

    async def shutdown(self) -> None:
        """Cancel every job and wait for all of them to end (on quit)."""
        self.cancel_all()
        await self.idle()

    async def _drive(self, job: Job, work: Callable[[Job], Awaitable[Any]], describe: Describe) -> None:
        """Run the work and keep its outcome; the outcome's signals go out from the task's done callback,
        outside the task, so a slot may open a dialog without running a nested loop inside a coroutine."""
        job.started.emit()
        try:
            job.result = await work(job)
        except asyncio.CancelledError:
            job.was_cancelled = True
        except Exception as exc:  # every failure is reported once, through the job; the loop never sees it
            if not _expected(exc):
                log.exception("job %s failed", job.name)
            job.error = describe(exc)

    def _on_task_done(self, job: Job) -> None:
        if job not in self._jobs:
            return
        self._jobs.remove(job)
        assert job.task is not None
        if job.was_cancelled or job.task.cancelled():  # also cancelled before its first step
            job.was_cancelled = True
            job.cancelled.emit()
        elif job.error is not None:
            job.failed.emit(job.error)
        else:
            job.succeeded.emit(job.result)
        job.finished.emit()
        self.job_finished.emit(job)
        if not self._jobs:
            self.busy_changed.emit(False)


def _expected(exc: BaseException) -> bool:
    """An error the app reports in words (files, the store, the model, a manuscript), not a bug."""
    return isinstance(exc, OSError) or type(exc).__module__.startswith("novel_desktop.")


def _loop() -> asyncio.AbstractEventLoop:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        # The app's qasync loop between events, or a test's qloop: the current loop of this thread.
        return asyncio.get_event_loop_policy().get_event_loop()
