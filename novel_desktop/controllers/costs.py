"""What the window shows of the novel's cost (the ledger): its total and each chapter's."""

from __future__ import annotations

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.ledger import DISCARDED_DRAFT, CostTotals


def novel_cost(project: ProjectController) -> CostTotals:
    """The open novel's total over every model call (nothing open: zero)."""
    return project.store.cost_total() if project.is_open else CostTotals()


def chapter_costs(project: ProjectController) -> dict[int, CostTotals]:
    """Each chapter's tokens and cost, in one query (the tree shows 500 chapters)."""
    return project.store.chapter_costs() if project.is_open else {}


def discarded_costs(project: ProjectController) -> dict[int, CostTotals]:
    """What each chapter's thrown-away early drafts cost (a queued run's; in one query)."""
    return project.store.chapter_costs(DISCARDED_DRAFT) if project.is_open else {}


__all__ = ["CostTotals", "chapter_costs", "discarded_costs", "novel_cost"]
