"""The AI-phrase list of the open novel for the window (seed 004 §7 黑名单维护).

The panel reads the phrases with their source and hits and the judge's proposals, and changes the list
through here, as ``novel blacklist`` does on the command line. A change is announced as
``document_changed("ai-blacklist.json")`` so the editors underline the new list and the quality panel
recounts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from novel_desktop.analysis.blacklist import BLACKLIST, blacklist_report, edit_blacklist
from novel_desktop.domain.style import BlacklistEdit, BlacklistReport
from novel_desktop.i18n import tr
from novel_desktop.storage.store import ReadOnlyError

if TYPE_CHECKING:
    from novel_desktop.controllers.project_controller import ProjectController


class BlacklistController(QObject):
    """Reads and edits ``ai-blacklist.json`` of the project's open novel."""

    def __init__(self, project: ProjectController) -> None:
        super().__init__(project)
        self.project = project

    def report(self) -> BlacklistReport:
        """Every phrase in force with source and hits over the committed chapters, and the proposals.

        Raises ValueError (a Chinese message) when the novel's list does not parse."""
        return blacklist_report(self.project.store, self.project.analysis.cache)

    @property
    def readonly(self) -> bool:
        return self.project.readonly

    def edit(self, edit: BlacklistEdit) -> bool:
        """Apply the author's change in one write; True when the list changed.

        Raises ValueError for a request that makes no sense and ``ReadOnlyError`` for a read-only novel,
        before anything is written."""
        if self.project.readonly:
            raise ReadOnlyError(tr("这部小说是只读打开的，不能修改黑名单"))
        changed = edit_blacklist(self.project.store, edit)
        if changed:
            self.project.document_changed.emit(BLACKLIST)
        return changed
