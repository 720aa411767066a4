"""The staged chapter as the author sees it after 手动改 (issue 14, item 1): read it, replace it, commit it.

At the low-score gate the author may choose 手动改: the chapter stays in staging and the run stops. Here the
author (the window's draft tab, or ``novel draft``) reads the staged text with the judge's issues, and either

- replaces it (:func:`replace_staged_text`): the new text is staged, the old one kept as a version for the
  chapter's history, everything derived from the old text dropped, and the checkpoint set back to
  ``drafted``; the next run re-summarizes and re-judges it — no writer call, no refiner rewriting it — and
  then the gate decides as usual; or
- commits it as it stands (:func:`commit_as_is`, 直接提交), flagged like 接受.

While the author has not replaced the draft, a run stops at once (:func:`~novel_desktop.pipeline.chapter.
awaiting_unchanged`): the same question is never asked twice about the same text.
All functions are synchronous store calls (the controllers run them in a worker thread).
"""

from __future__ import annotations

import json
from typing import Any

from novel_desktop.domain.common import iso_now
from novel_desktop.domain.draft import StagedDraft
from novel_desktop.domain.evaluation import Evaluation
from novel_desktop.domain.records import CommitResult
from novel_desktop.pipeline.commit_documents import stage_commit_documents
from novel_desktop.pipeline.verdict import GATE_NOTES, SECONDARY_EVAL, awaiting_unchanged, parse_evaluation
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore, content_hash

#: The largest replacement text accepted (characters): a chapter is a few thousand; this stops a wrong file.
MAX_DRAFT_CHARS = 200_000


class DraftError(ValueError):
    """Nothing staged to read or replace, or the replacement is unusable; nothing was changed."""


#: The author's unfinished edit of a staged chapter (the draft tab closed, the window quit): kept until the
#: author re-judges or commits the draft, so closing the tab never loses a word.
WORK_IN_PROGRESS = "state/chapter-{n}-author-wip.md"


def work_in_progress_path(n: int) -> str:
    return WORK_IN_PROGRESS.format(n=layout.num(n))


def keep_work_in_progress(store: NovelStore, n: int, text: str) -> None:
    """Keep the author's unfinished edit of staged chapter ``n`` (dropped when it equals the staged text)."""
    staged = store.staging(layout.chapter_path(n))
    if staged is None:
        return
    if text == staged:
        store.delete_staging(work_in_progress_path(n))
    else:
        store.put_staging(work_in_progress_path(n), text, chapter=n)


def work_in_progress(store: NovelStore, n: int) -> str | None:
    """The author's kept unfinished edit of staged chapter ``n``, if any."""
    return store.staging(work_in_progress_path(n))


def _notes_path(n: int) -> str:
    return GATE_NOTES.format(n=layout.num(n))


def _notes(store: NovelStore, n: int) -> dict[str, Any]:
    raw = store.staging(_notes_path(n))
    data: dict[str, Any] = json.loads(raw) if raw else {}
    return data


def staged_chapter(store: NovelStore) -> int | None:
    """The chapter in flight with a staged text, else None."""
    cp = store.checkpoint()
    inflight = cp.get("inflight_chapter")
    if inflight is None or cp.get("pipeline_stage") in (None, "committed", "drafting"):
        return None
    n = int(inflight)
    return n if store.staging(layout.chapter_path(n)) is not None else None


def staged_draft(store: NovelStore) -> StagedDraft | None:
    """The staged chapter with the judge's issues (the lower judge's on key chapters), or None."""
    n = staged_chapter(store)
    if n is None:
        return None
    text = store.staging(layout.chapter_path(n)) or ""
    notes = _notes(store, n)
    evaluation = parse_evaluation(store.staging(layout.evaluation_path(n)))
    stale = False
    if evaluation is None and notes.get("judged_evaluation"):
        evaluation, stale = parse_evaluation(str(notes["judged_evaluation"])), True
    elif evaluation is not None:
        second = parse_evaluation(store.staging(SECONDARY_EVAL.format(n=layout.num(n))))
        if second is not None and _overall(second) < _overall(evaluation):
            evaluation = second
    return StagedDraft(
        chapter=n,
        text=text,
        stage=store.checkpoint().get("pipeline_stage"),
        awaiting_author=awaiting_unchanged(notes, text),
        author_edited=bool(notes.get("author_edited")) or notes.get("author_hash") == content_hash(text),
        judged_text_changed=stale,
        score=round(_overall(evaluation), 2) if evaluation is not None else None,
        issues=list(evaluation.issues) if evaluation else [],
        required_fixes=[f"{f.target}：{f.instruction}" for f in evaluation.required_fixes]
        if evaluation
        else [],
        violations=[_violation(v) for v in evaluation.violations] if evaluation else [],
        scores=[float(s) for s in notes.get("scores", [])],
        revisions=int(notes.get("revisions", 0)),
    )


def _overall(evaluation: Evaluation) -> float:
    return float(evaluation.overall if evaluation.overall is not None else evaluation.computed_overall())


def _violation(v: Any) -> str:
    if isinstance(v, str):
        return v
    detail = v.description or v.evidence
    return f"{v.rule_id}（{v.confidence}）：{detail}" if detail else f"{v.rule_id}（{v.confidence}）"


def check_text(text: str) -> str:
    """The replacement text, checked: not empty, not absurdly long (raises :class:`DraftError`)."""
    if not text.strip():
        raise DraftError("替换的正文是空的，未做任何改动 (the replacement text is empty)")
    if len(text) > MAX_DRAFT_CHARS:
        raise DraftError(
            f"替换的正文太长（{len(text)} 字符，上限 {MAX_DRAFT_CHARS}），未做任何改动 (the text is too long)"
        )
    return text


def _require_staged(store: NovelStore, n: int) -> str:
    if staged_chapter(store) != n:
        raise DraftError(f"第 {n} 章不在暂存区，没有可修改的草稿 (chapter {n} is not staged)")
    return store.staging(layout.chapter_path(n)) or ""


def replace_staged_text(store: NovelStore, n: int, text: str) -> StagedDraft:
    """Replace the staged text of chapter ``n`` with the author's ``text``, in ONE transaction.

    The previous text is kept as a version (it becomes a revision at commit); the summary, state delta,
    evaluations and storyline memory derived from it are dropped; the notes mark the text as the author's
    (``author_edited`` and its hash) and the checkpoint goes back to ``drafted``, so the next run
    re-summarizes and re-judges it without a writer call and without the refiner,
    then the gate decides as usual.
    Raises :class:`DraftError` (nothing staged, empty or unchanged text).
    """
    text = check_text(text)
    previous = _require_staged(store, n)
    if text == previous:
        raise DraftError(f"与暂存的第 {n} 章正文相同，没有改动 (the text is unchanged)")
    notes = _notes(store, n)
    k = 2 * (int(notes.get("revisions", 0)) + int(notes.get("manual_edits", 0))) + 1
    old_kind = "manual" if notes.get("author_edited") else "refined"
    evaluation = store.staging(layout.evaluation_path(n))
    if evaluation:
        notes["judged_evaluation"] = evaluation
    for key in ("awaiting_author", "pending_revision", "refine_log", "refine_rejected"):
        notes.pop(key, None)
    notes["manual_edits"] = int(notes.get("manual_edits", 0)) + 1
    notes["author_edited"] = True
    notes["author_hash"] = content_hash(text)
    notes["polished"] = False
    notes.setdefault("started_at", iso_now())
    derived = [
        layout.summary_path(n),
        layout.delta_path(n),
        layout.evaluation_path(n),
        SECONDARY_EVAL.format(n=layout.num(n)),
    ]
    derived.append(work_in_progress_path(n))
    derived += [p for p in store.list_staging(n) if p.startswith("storylines/") and p.endswith("/memory.md")]
    store.replace_staging(
        n,
        put={
            layout.version_path(n, k): (previous, old_kind),
            layout.chapter_path(n): (text, "manual"),
            _notes_path(n): (json.dumps(notes, ensure_ascii=False), ""),
        },
        delete=derived,
        checkpoint={"inflight_chapter": n, "pipeline_stage": "drafted"},
    )
    draft = staged_draft(store)
    assert draft is not None
    return draft


def commit_as_is(store: NovelStore, n: int) -> CommitResult:
    """直接提交: commit the staged text of chapter ``n`` as it stands, flagged (``force_pass``) as 接受 does.

    A text the author replaced and that was not re-summarized has no summary: it is committed marked
    ``needs_rebuild``, so the rebuild re-summarizes it and brings the state up to date.
    Raises :class:`DraftError` when chapter ``n`` is not staged.
    """
    from novel_desktop.agents.context import load_facts

    _require_staged(store, n)
    notes = _notes(store, n)
    facts = load_facts(store, n)
    log = {
        "chapter": n,
        "storyline_id": facts.storyline_id,
        "started_at": notes.get("started_at", iso_now()),
        "stages": notes.get("stages", []),
        "gate_decision": "force_pass",
        "revisions": int(notes.get("revisions", 0)),
        "scores": notes.get("scores", []),
        "refine_edits": notes.get("refine_log", []),
        "author_edited": bool(notes.get("author_edited")),
        "committed_by": "author",
        "total_duration_ms": sum(int(s.get("duration_ms", 0)) for s in notes.get("stages", [])),
        "total_cost_usd": round(sum(float(s.get("cost_usd", 0)) for s in notes.get("stages", [])), 6),
    }
    store.put_staging(layout.log_path(n), json.dumps(log, ensure_ascii=False, indent=2), chapter=n)
    # The contract updates the chapter's contract marks and the judge's AI phrases commit with it, as in
    # the pipeline's own commit.
    stage_commit_documents(store, n)
    summarized = store.staging(layout.summary_path(n)) is not None
    result = store.commit_chapter(
        n,
        volume=facts.volume,
        storyline_id=facts.storyline_id,
        status="committed" if summarized else "needs_rebuild",
    )
    store.update_checkpoint(orchestrator_state="WRITING")
    return result
