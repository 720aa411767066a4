"""Length governance (issue 16 point 2): a draft outside the platform's range gets ONE normalising pass.

After a draft (or a revision) is staged and before it is summarized and refined, a text whose 字数 lies
outside the platform profile's range is expanded or tightened by the length editor's find/replace edits
(``prompts/length_editor.md``, applied by :func:`novel_desktop.domain.refine.apply_edits` within a budget
sized to the gap): edits, not a rewrite. The pass is its own resumable step: the gate notes record the hash
of the text it was done for (``length_checked``), so a resume after a crash does not repeat it, and a new
draft or revision (another text) gets its own pass. A text still outside the range afterwards is reported at
the gate by :func:`novel_desktop.pipeline.platform_checks.length_issues` (a non-blocking ``LENGTH`` issue).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from novel_desktop.agents.ports import ChapterBrief, FitsLength
from novel_desktop.domain.platforms import body_chars, length_edit_ratio, length_gap, platform_profile
from novel_desktop.domain.refine import apply_edits
from novel_desktop.pipeline.events import Stage, StageStarted
from novel_desktop.storage import layout
from novel_desktop.storage.aio import db
from novel_desktop.storage.store import content_hash

if TYPE_CHECKING:
    from novel_desktop.pipeline.chapter import ChapterOutcome, ChapterPipeline

#: The gate notes' key: the hash of the text the length pass was last done for.
LENGTH_CHECKED = "length_checked"


async def fit_length(
    pipeline: ChapterPipeline, brief: ChapterBrief, notes: dict[str, Any], text: str, outcome: ChapterOutcome
) -> str:
    """The staged draft of ``brief``'s chapter in the platform's length range if one pass of edits gets it
    there; the text as it is when it is in range, the author's own, or already passed once."""
    n = brief.chapter
    agents = pipeline.agents
    if notes.get(LENGTH_CHECKED) == content_hash(text) or notes.get("author_edited"):
        return text
    meta = await db(pipeline.store.meta)
    profile = platform_profile(meta.get("platform", "web"))
    chars = body_chars(text)
    if length_gap(profile, chars) and isinstance(agents, FitsLength):
        pipeline._emit(StageStarted(n, Stage.LENGTH))
        started = time.monotonic()
        result = await agents.fit_length(brief, text)
        pipeline._warn(n, outcome.warnings, result)
        pipeline._record(n, notes, Stage.LENGTH, result.calls, started)
        if result.value is not None and result.value.edits:
            applied = apply_edits(text, result.value.edits, max_ratio=length_edit_ratio(profile, chars))
            if applied.applied:
                text = applied.text
                notes["length_edits"] = [e.to_json_dict() for e in applied.applied]
                kind = "draft" if not int(notes["revisions"]) else "revision"
                await db(pipeline.store.put_staging, layout.chapter_path(n), text, chapter=n, kind=kind)
    notes[LENGTH_CHECKED] = content_hash(text)
    await pipeline._save_notes(n, notes)
    return text


__all__ = ["LENGTH_CHECKED", "fit_length"]
