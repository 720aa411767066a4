"""The staged chapter's full quality report beside the gate's low-score question (自动修订 / 手动改 / 接受).

The question's text lists only the main issues; the author decides better seeing what the quality panel
would show for a committed chapter: the score per dimension with reasons and evidence, each violation with
the rule it breaks, the gate's findings, and the AI-phrase density of the staged text. The window's quality
panel is turned to the same chapter, so the report beside the dialog is not a stale one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QWidget

from novel_desktop.controllers.project_controller import ProjectController

if TYPE_CHECKING:
    from novel_desktop.ui.quality_panel import QualityPanel

#: The topic of the gate's question (pipeline/verdict.py low_score_spec): ``chapter 7 low score``.
_LOW_SCORE_TOPIC = re.compile(r"^chapter (\d+) low score$")


def low_score_chapter(topic: str) -> int | None:
    """The chapter a low-score question is about, None for any other question."""
    match = _LOW_SCORE_TOPIC.match(topic or "")
    return int(match.group(1)) if match else None


def staged_report(project: ProjectController, chapter: int) -> QualityPanel | None:
    """The 本章 report of ``chapter`` as judged in staging, without the panel's chapter picker and tabs;
    None when nothing of it was judged."""
    from novel_desktop.ui.quality_panel import QualityPanel

    if project.staged_report(chapter)[0] is None and project.evaluation(chapter) is None:
        return None
    panel = QualityPanel(project)
    panel.tabs.tabBar().hide()
    panel.picker_row.hide()  # the picker lists committed chapters only
    panel.show_chapter(chapter)
    panel.setObjectName("gate_report")
    return panel


def gate_report_for(
    project: ProjectController, window_panel: Callable[[], QWidget | None]
) -> Callable[[str], QWidget | None]:
    """For AskDialog: the report to show beside a question of ``topic`` (only the gate's low-score one);
    turns the window's quality panel (``window_panel()``, when it has one) to that chapter as well."""

    def report(topic: str) -> QWidget | None:
        chapter = low_score_chapter(topic)
        if chapter is None or not project.is_open:
            return None
        from novel_desktop.ui.quality_panel import QualityPanel

        panel = window_panel()
        if isinstance(panel, QualityPanel):
            panel.show_chapter(chapter)
        return staged_report(project, chapter)

    return report
