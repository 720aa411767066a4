"""The qasync loop the Qt tests drive with ``run_until_complete`` (the ``qloop`` fixture in conftest.py).

qasync's ``run_until_complete`` (0.28) dispatches the pending Qt events once more after ``run_forever`` has
returned and cleared the running loop. The window tests drive the app with many short ``run_until_complete``
calls while a run's task lives on between them, so that last dispatch can step the task (a worker thread's
``to_thread`` result, the HTTP stream's socket becoming readable) with no running loop: ``asyncio.sleep``,
``to_thread`` and httpcore's anyio then raise "no running event loop" and the run fails at random (under load,
where such a wake-up is more often pending just as the loop stops). The app never steps a task that way: it
runs one ``run_until_complete`` for the window's whole life (``app.run_window``). Here the last dispatch runs
with this loop as the running loop, as one more turn of it."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable
from typing import Any, TypeVar

import qasync
from PySide6.QtCore import QCoreApplication, QEventLoop

T = TypeVar("T")


class TestEventLoop(qasync.QEventLoop):  # type: ignore[misc]
    """qasync's loop whose ``run_until_complete`` never steps a task outside a running loop."""

    __test__ = False  # not a pytest test class

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # asyncio's async-generator hooks, for the loop's whole life (qasync installs none; the app's loop
        # installs them while it runs, app._loop_class): an HTTP stream's generators left unfinished by a
        # cancelled call are then closed as tasks of this loop, not by the garbage collector between two
        # run_until_complete calls, where httpcore's close fails with "no running event loop".
        self._old_hooks = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(
            firstiter=self._asyncgen_firstiter_hook, finalizer=self._asyncgen_finalizer_hook
        )

    def close(self) -> None:
        if not self.is_closed() and not self.is_running():
            try:
                self.run_until_complete(self.shutdown_asyncgens())
            finally:
                sys.set_asyncgen_hooks(*self._old_hooks)
        super().close()

    def run_until_complete(self, future: Awaitable[T]) -> T:
        if self.is_running():
            raise RuntimeError("Event loop already running")
        task = asyncio.ensure_future(future, loop=self)

        def stop(_done: Any) -> None:
            self.stop()

        task.add_done_callback(stop)
        try:
            self.run_forever()
        finally:
            task.remove_done_callback(stop)
        # What qasync does next (the events posted while stopping), but as the running loop.
        asyncio.events._set_running_loop(self)
        try:
            dispatcher = QCoreApplication.eventDispatcher()
            if dispatcher is not None:
                dispatcher.processEvents(QEventLoop.ProcessEventsFlag.AllEvents)
        finally:
            asyncio.events._set_running_loop(None)
        if not task.done():
            raise RuntimeError("Event loop stopped before Future completed.")
        return task.result()
