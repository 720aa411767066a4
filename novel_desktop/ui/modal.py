"""Waiting for a dialog inside a coroutine without a nested event loop (STYLE: never ``exec()`` in a task)."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QWidget


async def open_and_wait(dialog: QDialog, parent: QWidget | None) -> None:
    """Show ``dialog`` window-modally (application-modal without a parent) with ``open()`` and wait until it
    finishes; cancelling the awaiting task rejects it. The dialog is deleted afterwards: read its answer
    before the next turn of the event loop."""
    if parent is None:
        dialog.setWindowModality(Qt.WindowModality.ApplicationModal)
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def on_finished(_code: int) -> None:
        if not done.done():
            done.set_result(None)

    dialog.finished.connect(on_finished)
    dialog.open()
    try:
        await done
    except asyncio.CancelledError:
        dialog.reject()
        raise
    finally:
        dialog.deleteLater()
