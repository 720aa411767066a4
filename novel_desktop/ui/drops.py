"""A drag's QMimeData as plain data for the drop table (controllers/drops.py); whether a target takes it."""

from __future__ import annotations

from PySide6.QtCore import QMimeData
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent

from novel_desktop.controllers.drops import Dropped, Target, accepts_drag, dropped_from


def dropped_of(mime: QMimeData | None) -> Dropped:
    """What a drag carries: its local files, how many other links, its text (when it carries no links)."""
    if mime is None:
        return Dropped()
    urls = [(u.isLocalFile(), u.toLocalFile() if u.isLocalFile() else u.toString()) for u in mime.urls()]
    return dropped_from(urls, mime.text() if mime.hasText() else "")


def accept_drag(event: QDragEnterEvent | QDragMoveEvent | QDropEvent, target: Target) -> bool:
    """Accept the drag when ``target`` has a use for it (files and links always: a refusal is explained on
    drop); ignore it otherwise. Returns whether it was accepted."""
    mime = event.mimeData()
    accepted = mime is not None and accepts_drag(mime.hasUrls(), mime.hasText(), target)
    if accepted:
        event.acceptProposedAction()
    else:
        event.ignore()
    return accepted
