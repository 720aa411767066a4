"""The keyboard shortcuts as the window's menus hold them: the Help menu's list (帮助 → 快捷键…) is built from
the actions themselves, so it cannot go stale, and tooltips name each action's keys."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QMenu,
    QMenuBar,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.i18n import tr

#: How a key sequence is shown: the platform's own names (Ctrl+S, ⌘S).
NATIVE = QKeySequence.SequenceFormat.NativeText


def keys_text(action: QAction) -> str:
    """All of ``action``'s shortcuts, as the platform names them ("" when it has none); keys the platform
    names alike (Qt's Chinese names both Return and Enter 回车) are listed once."""
    names = dict.fromkeys(k.toString(NATIVE) for k in action.shortcuts() if not k.isEmpty())
    return tr("，").join(names)


def plain_text(action: QAction) -> str:
    """An action's menu text without its mnemonic and trailing ellipsis."""
    return action.text().replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…").rstrip(".")


def show_keys_in_tooltip(action: QAction) -> None:
    """Let the tooltip (toolbar buttons show it) name the shortcut: "续写（Ctrl+Return）"."""
    keys = keys_text(action)
    if not keys:
        return
    tip = action.toolTip() if action.toolTip() != action.text() else plain_text(action)
    action.setToolTip(tr("{tip}（{keys}）").format(tip=tip or plain_text(action), keys=keys))


def shortcut_rows(menu_bar: QMenuBar) -> list[tuple[str, str, str]]:
    """(menu, action, keys) for every action with a shortcut in the menu bar's menus, in menu order."""
    rows: list[tuple[str, str, str]] = []

    def walk(title: str, actions: Iterable[QAction]) -> None:
        for action in actions:
            menu = action.menu()
            if isinstance(menu, QMenu):
                walk(title, menu.actions())
            elif not action.isSeparator() and keys_text(action):
                rows.append((title, plain_text(action), keys_text(action)))

    for top in menu_bar.actions():
        menu = top.menu()
        if isinstance(menu, QMenu):
            walk(plain_text(top), menu.actions())
    return rows


def clashes(actions: Iterable[QAction]) -> dict[str, list[str]]:
    """Key sequences that more than one action uses (a clash makes Qt trigger neither): keys → actions."""
    users: dict[str, list[str]] = {}
    for action in actions:
        for key in action.shortcuts():
            if not key.isEmpty():
                users.setdefault(key.toString(QKeySequence.SequenceFormat.PortableText), []).append(
                    plain_text(action)
                )
    return {key: names for key, names in users.items() if len(names) > 1}


def _local_keys(focus: QWidget | None, window: QWidget) -> set[str]:
    """The keys of the QShortcuts that views between ``focus`` and ``window`` hold for themselves."""
    keys: set[str] = set()
    widget = focus
    while widget is not None and widget is not window:
        for shortcut in widget.findChildren(QShortcut, options=Qt.FindChildOption.FindDirectChildrenOnly):
            context = shortcut.context()
            if shortcut.isEnabled() and (
                context == Qt.ShortcutContext.WidgetWithChildrenShortcut
                or (context == Qt.ShortcutContext.WidgetShortcut and widget is focus)
            ):
                keys.add(shortcut.key().toString(QKeySequence.SequenceFormat.PortableText))
        widget = widget.parentWidget()
    return keys


class LocalShortcutsFirst(QObject):
    """A view's own shortcut (the outline's Ctrl+S saves the outline) wins inside the view. Qt triggers
    neither of two shortcuts with the same keys ("ambiguous overload"), so while the focus is inside a widget
    with a shortcut of its own for a window action's keys, that action steps back (its context narrows to its
    menu entry, where keys never reach it); outside such a view it is the window's again. Its keys stay
    listed.

    Decided on each key's ShortcutOverride, which Qt sends (up from the focus widget to the window) before it
    looks the key up; not on focusChanged, whose widgets may be half destroyed when PySide converts them."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride:
            self.prefer_local(QApplication.focusWidget())
        return False

    def prefer_local(self, focus: QWidget | None) -> None:
        local = _local_keys(focus, self.window)
        for action in self.window.findChildren(QAction):
            keys = {k.toString(QKeySequence.SequenceFormat.PortableText) for k in action.shortcuts()}
            if not keys:
                continue
            context = Qt.ShortcutContext.WidgetShortcut if keys & local else Qt.ShortcutContext.WindowShortcut
            if action.shortcutContext() != context:
                action.setShortcutContext(context)


class ShortcutsDialog(QDialog):
    """帮助 → 快捷键…: every shortcut of the window's menus, read from the actions when it opens."""

    def __init__(self, menu_bar: QMenuBar, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("快捷键列表"))
        rows = shortcut_rows(menu_bar)
        self.table = QTableWidget(len(rows), 3)
        self.table.setHorizontalHeaderLabels([tr("菜单"), tr("命令"), tr("快捷键")])
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                item = QTableWidgetItem(text)
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                self.table.setItem(r, c, item)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.table.setShowGrid(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setMinimumSectionSize(self.fontMetrics().horizontalAdvance("MMMMM"))
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        note = QLabel(tr("编辑器里的常用键（撤销、复制、粘贴、全选）与系统一致。"))
        note.setWordWrap(True)
        note.setStyleSheet("color: palette(dark);")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.button(QDialogButtonBox.StandardButton.Close).setText(tr("关闭"))
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addWidget(note)
        layout.addWidget(buttons)
        self.resize(520, min(720, 120 + self.table.verticalHeader().defaultSectionSize() * (len(rows) + 1)))

    def rows(self) -> list[tuple[str, str, str]]:
        """What the table shows, row by row."""
        rows: list[tuple[str, str, str]] = []
        for r in range(self.table.rowCount()):
            menu, action, keys = (item.text() if (item := self.table.item(r, c)) else "" for c in range(3))
            rows.append((menu, action, keys))
        return rows

    @classmethod
    def show_for(cls, window: QWidget, menu_bar: QMenuBar) -> ShortcutsDialog:
        """Open the list over ``window`` (``open()``: no nested loop); it deletes itself when closed."""
        dialog = cls(menu_bar, window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog
