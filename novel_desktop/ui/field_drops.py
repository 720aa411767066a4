"""Files dropped on any text field of the window follow the drop table, never go in as ``file:///`` URLs.

The chapter editor hands its drops to the window itself (ChapterEditor.insertFromMimeData); every other
QLineEdit, QPlainTextEdit and QTextEdit (the outline's editor, the contract form's fields, the setting forms,
a table cell's editor …) is covered by one event filter on the application: a drag that carries files or
links is taken over before the field sees it. In a main window it asks, as the chapter editor does, whether
to import the file as a manuscript, use it as a style sample or insert its text where it was dropped; on the
style page (wherever it is shown) it does what the page's drop zone does; in any other window (a dialog) the
drop is refused. Dragged plain text is left to the field.

Every event of every widget passes through that filter (a few microseconds each in Python): code that builds
many widgets at once (the window itself, opening a novel, a quality report, a chapter tab, the tree) runs
under :func:`field_drops_paused`, which takes the filter off meanwhile. No drag can be delivered then: a drag
event only comes from the event loop, and such code runs in one turn of it without spinning it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication, QLineEdit, QPlainTextEdit, QTextEdit, QWidget

from novel_desktop.controllers.drops import Dropped

if TYPE_CHECKING:
    from novel_desktop.ui.flows.drops import DropFlows

_DRAG_ENTER, _DRAG_MOVE, _DROP = QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.Drop

#: A field's drop, to the window it belongs to: (field, what was dropped, where in the field's text).
FieldDrop = Callable[[QWidget, Dropped, int], None]


def text_field(receiver: QObject) -> QLineEdit | QPlainTextEdit | QTextEdit | None:
    """The text field a drag event for ``receiver`` is meant for (a line edit, or a text edit whose
    viewport receives it), else None. The chapter editor is not one: it handles its own drops."""
    from novel_desktop.ui.chapter_editor import ChapterEditor

    if isinstance(receiver, QLineEdit):
        return receiver
    parent = receiver.parent() if isinstance(receiver, QWidget) else None
    if isinstance(parent, (QPlainTextEdit, QTextEdit)) and parent.viewport() is receiver:
        return None if isinstance(parent, ChapterEditor) else parent
    return None


def drop_position(field: QLineEdit | QPlainTextEdit | QTextEdit, event: QDropEvent) -> int:
    """Where in the field's text the drop landed."""
    point = event.position().toPoint()
    if isinstance(field, QLineEdit):
        return field.cursorPositionAt(point)
    return field.cursorForPosition(point).position()


def insert_into(field: QWidget, position: int, text: str) -> None:
    """Insert ``text`` at ``position`` in ``field`` as one undoable edit (a dropped file's text, once asked);
    a line edit gets it on one line. Nothing when the field is gone or read-only."""
    if not shiboken6.isValid(field):
        return
    if isinstance(field, QLineEdit):
        if not field.isReadOnly():
            field.setCursorPosition(position)
            field.insert(" ".join(text.split()))
    elif isinstance(field, (QPlainTextEdit, QTextEdit)) and not field.isReadOnly():
        cursor = field.textCursor()
        cursor.setPosition(min(max(0, position), len(field.toPlainText())))
        cursor.insertText(text)
        field.setTextCursor(cursor)


class _FieldDropFilter(QObject):
    """The application's one filter: a drag carrying URLs onto a text field goes to the field's main window
    (registered with :func:`install_field_drops`), or is refused."""

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        # Weak both ways: a closed window (and its flows) is not kept alive by the application's filter.
        self.windows: weakref.WeakKeyDictionary[QWidget, weakref.WeakMethod[FieldDrop]] = (
            weakref.WeakKeyDictionary()
        )

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()  # every event of the application comes here: out at once unless a drag's
        if kind is not _DRAG_ENTER and kind is not _DRAG_MOVE and kind is not _DROP:
            return False
        assert isinstance(event, QDropEvent)  # QDragMoveEvent and QDragEnterEvent derive from it
        mime = event.mimeData()
        if mime is None or not mime.hasUrls():
            return False  # dragged text: the field inserts it, as any text field does
        field = text_field(watched)
        if field is None or field.isReadOnly():
            return False
        handler = self._handler(field)
        if handler is None:  # a dialog's field: refuse, rather than insert the URL
            event.ignore()
            return True
        event.acceptProposedAction()
        if kind is _DROP:
            from novel_desktop.ui.drops import dropped_of

            handler(field, dropped_of(mime), drop_position(field, event))
        return True

    def _handler(self, field: QWidget) -> FieldDrop | None:
        from novel_desktop.ui.style_drop import StylePage

        page = field.parentWidget()
        while page is not None and not isinstance(page, StylePage):
            page = page.parentWidget()
        if page is not None:  # the style page's fields: as its drop zone (samples measured, a book imported)
            style_page = page
            return lambda _field, dropped, _position: style_page.handle_drop(dropped)
        top = field.window()
        for window, handler in list(self.windows.items()):
            if shiboken6.isValid(window) and window is top:
                return handler()
        return None


#: The application's filter once installed, and how many :func:`field_drops_paused` blocks are open.
_filter: list[_FieldDropFilter] = []
_pauses = [0]


@contextmanager
def field_drops_paused() -> Iterator[None]:
    """Take the application's field-drop filter off while the block builds widgets synchronously (see the
    module docstring); it is back when the outermost block ends, however it ends. Also a decorator."""
    app = QApplication.instance()
    if app is None:
        yield
        return
    _pauses[0] += 1
    if _pauses[0] == 1 and (current := _installed()) is not None:
        app.removeEventFilter(current)
    try:
        yield
    finally:
        _pauses[0] -= 1
        # The filter may have been made meanwhile (the first window, built under a pause): put it on now.
        if _pauses[0] == 0 and (current := _installed()) is not None:
            app.installEventFilter(current)


def _installed() -> _FieldDropFilter | None:
    return _filter[0] if _filter and shiboken6.isValid(_filter[0]) else None


def install_field_drops(window: QWidget, flows: DropFlows) -> None:
    """Route file drops on ``window``'s text fields to ``flows`` (once per application, a filter)."""
    app = QApplication.instance()
    if app is None:
        return
    current = app.findChild(_FieldDropFilter, "fieldDropFilter")
    if current is None:
        current = _FieldDropFilter(app)
        current.setObjectName("fieldDropFilter")
        if _pauses[0] == 0:
            app.installEventFilter(current)
        _filter[:] = [current]
    current.windows[window] = weakref.WeakMethod(flows.field_drop)


__all__ = [
    "FieldDrop",
    "drop_position",
    "field_drops_paused",
    "insert_into",
    "install_field_drops",
    "text_field",
]
