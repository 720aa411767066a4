"""The refiner's change log in a chapter's gate notes: what each pass applied and rejected.

Both StyleRefiner passes of a chapter (the first after the draft, the second polish of a 3.5-3.9 chapter)
share the seed's 15% budget; the applied edits recorded here (``refine_log``) are what the second pass's
budget is computed from (:func:`novel_desktop.domain.polish.remaining_budget`) and what the pipeline log
shows as ``refine_edits``.
"""

from __future__ import annotations

from typing import Any

from novel_desktop.domain.refine import RefineOutcome


def record_edits(notes: dict[str, Any], result: RefineOutcome, *, append: bool = False) -> None:
    """Note a pass's applied and rejected edits: the first pass of a text starts the log afresh (a new
    text's budget owes nothing to the old one's edits), a later pass adds to it."""
    applied = [e.to_json_dict() for e in result.applied]
    rejected = [{**r.edit.to_json_dict(), "why": r.reason} for r in result.rejected]
    if append:
        notes["refine_log"] = [*(notes.get("refine_log") or []), *applied]
        notes["refine_rejected"] = [*(notes.get("refine_rejected") or []), *rejected]
    else:
        notes["refine_log"] = applied
        notes["refine_rejected"] = rejected


__all__ = ["record_edits"]
