"""Documents a chapter's commit rewrites besides the chapter itself (issue 14 items 4 and 5).

Called once, just before :meth:`~novel_desktop.storage.commit.ChapterCommit.commit_chapter`: it stages, for
the chapter, the character files and changelog a contract update rewrites
(:mod:`novel_desktop.pipeline.contract_lifecycle`) and ``ai-blacklist.json`` with the new AI phrases the judge
found (proposed, or added when the author turned ``auto_add`` on). The commit moves them into the novel in
the same transaction as the chapter.
"""

from __future__ import annotations

from novel_desktop.analysis.blacklist import BLACKLIST, with_judge_findings
from novel_desktop.domain.evaluation import Evaluation
from novel_desktop.pipeline.contract_lifecycle import stage_contract_updates
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore

#: The secondary judge's staged verdict (as pipeline/chapter.py names it).
_SECONDARY = "evaluations/chapter-{n}-eval-secondary.json"


def judge_phrases(store: NovelStore, chapter: int) -> list[str]:
    """The new AI phrases the staged verdicts of ``chapter`` name, once each, in order."""
    found: list[str] = []
    for path in (layout.evaluation_path(chapter), _SECONDARY.format(n=layout.num(chapter))):
        raw = store.staging(path)
        if not raw:
            continue
        try:
            found += Evaluation.model_validate_json(raw).new_ai_phrases
        except ValueError:
            continue
    return list(dict.fromkeys(p.strip() for p in found if p.strip()))


def stage_commit_documents(store: NovelStore, chapter: int) -> list[str]:
    """Stage what the commit of ``chapter`` also writes; returns warnings for the author."""
    warnings = stage_contract_updates(store, chapter)
    store.delete_staging(BLACKLIST)
    text = with_judge_findings(store, chapter, judge_phrases(store, chapter))
    if text is not None:
        store.put_staging(BLACKLIST, text, chapter=chapter)
    return warnings
