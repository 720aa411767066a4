"""Work moved to a later turn of the Qt event loop.

``QTimer.singleShot(0, …)`` does not give the window a turn: Qt 6 posts it as an event, and one pass of the
loop delivers every event posted before it, so steps deferred that way during a burst (a commit: the tree, the
status bar, the new chapter's tab, its quality report) still ran back to back, one stall of 36-40 ms in
three runs of seven of the GUI benchmark. A timer of 1 ms is activated in a later pass, behind the timers
already due and the input and paint queued meanwhile: the same steps each in a turn of their own, 16-27 ms
at worst.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QTimer


def next_turn(callback: Callable[[], object]) -> None:
    """Run ``callback`` on a later turn of the event loop, after what is already due (input, paint,
    timers)."""
    QTimer.singleShot(1, callback)


__all__ = ["next_turn"]
