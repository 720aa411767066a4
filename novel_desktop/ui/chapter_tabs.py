"""A chapter tab's label: "第N章 标题" as the tree shows it (shortened, the whole in its tooltip), set when
the tab opens and again whenever the chapter is saved, so a renamed chapter's tab follows its title field."""

from __future__ import annotations

from PySide6.QtWidgets import QTabWidget, QWidget

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.i18n import tr
from novel_desktop.ui.project_tree import chapter_label

#: Longer labels are cut (with "…"): the tab bar holds several chapters.
MAX_LABEL = 14


def label_chapter_tab(tabs: QTabWidget, tab: QWidget, project: ProjectController, number: int) -> None:
    """Label ``tab`` (in ``tabs``) with chapter ``number``'s stored title."""
    index = tabs.indexOf(tab)
    if index < 0:
        return
    info = next((c for c in project.chapters() if c.number == number), None)
    title = chapter_label(info) if info else tr("第{n}章").format(n=number)
    tabs.setTabText(index, title if len(title) <= MAX_LABEL else title[: MAX_LABEL - 1] + "…")
    tabs.setTabToolTip(index, title)
