"""Which step an external executor runs next: the orchestrator's order (seed 004 §8.2), from the checkpoint.

INIT/QUICK_START: ``novel:init`` (world, characters, storylines), ``novel:style``, the three trial chapters,
``novel:trial`` (the author's verdict on them); VOL_PLANNING: ``volume:NN:plan``; WRITING: each chapter's
draft → summarize → refine → judge (twice on a key chapter) → [polish once | revise | ask] → commit;
after the volume's last chapter VOL_REVIEW: ``volume:NN:review``, then the next volume's planning.
"""

from __future__ import annotations

from typing import Any

from novel_desktop.domain.checkpoint import OrchestratorState as S
from novel_desktop.domain.gate import GateAction
from novel_desktop.pipeline.executor import (
    PIPELINE_STAGES,
    CheckpointError,
    answer_choice,
    commit_answer_path,
    key_chapter,
    staged_gate,
)
from novel_desktop.pipeline.orchestrator import effective_state
from novel_desktop.pipeline.quick_start import TRIAL_CHAPTERS
from novel_desktop.pipeline.stale import refuse_stale
from novel_desktop.pipeline.verdict import SECONDARY_EVAL, awaiting_unchanged, low_score_spec, staged_notes
from novel_desktop.pipeline.volume_plan import volume_range
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore


def inflight_chapter(cp: dict[str, Any]) -> int | None:
    """The chapter in flight, or None: no chapter, a committed one, or a chapter number below 1 (0 is how
    some checkpoints write "none")."""
    stage = cp.get("pipeline_stage")
    if stage is not None and stage not in PIPELINE_STAGES:
        raise CheckpointError(
            f"检查点的 pipeline_stage={stage!r} 无法识别（应为 {'、'.join(PIPELINE_STAGES)} 或空），"
            "不知道下一步做什么；请修正 .checkpoint.json 后重试 (unknown pipeline_stage in the checkpoint)"
        )
    raw = cp.get("inflight_chapter")
    try:
        n = int(raw) if raw is not None else 0
    except (TypeError, ValueError):
        n = 0
    if n < 1 or stage in (None, "committed"):
        return None
    return n


def next_step(store: NovelStore) -> str:
    """The step the checkpoint calls for next (``novel continue``'s order); StaleChaptersError while stale,
    :class:`CheckpointError` when the checkpoint names an unknown stage."""
    cp = store.checkpoint()
    meta = store.meta()
    inflight = inflight_chapter(cp)
    state = effective_state(cp, meta)
    if state in (S.INIT, S.QUICK_START):
        if store.document("world/rules.json") is None:
            return "novel:init"
        if store.document("style-profile.json") is None:
            return "novel:style"
        last = int(cp.get("last_completed_chapter") or 0)
        if inflight is None and last >= TRIAL_CHAPTERS:
            return "novel:trial"
    refuse_stale(store)
    volume = int(cp.get("current_volume") or 1)
    if state == S.VOL_REVIEW:
        return f"volume:{volume:02d}:review"
    if inflight is None:
        return _fresh(store, cp, volume, state)
    return _chapter_step(store, inflight, str(cp.get("pipeline_stage")))


def _fresh(store: NovelStore, cp: dict[str, Any], volume: int, state: str) -> str:
    """No chapter in flight: plan, review or the next chapter's draft."""
    last = int(cp.get("last_completed_chapter") or 0)
    rng = volume_range(store, volume)
    if state == S.VOL_PLANNING or rng is None:
        return f"volume:{volume:02d}:plan"
    if state != S.QUICK_START and last >= rng[1]:
        # The volume's last chapter is in: the review comes before the next volume's planning.
        return f"volume:{volume:02d}:review"
    return f"chapter:{layout.num(last + 1)}:draft"


def _chapter_step(store: NovelStore, n: int, stage: str) -> str:
    chapter = layout.num(n)
    text = store.staging(layout.chapter_path(n))
    if stage == "drafting" or text is None or not text.strip():
        # Nothing to summarize, judge or commit: the text is written (again) first.
        return f"chapter:{chapter}:draft"
    notes = staged_notes(store, n)
    if stage == "drafted":
        if store.staging(layout.summary_path(n)) is None:
            return f"chapter:{chapter}:summarize"
        authors = notes.get("author_edited")  # the author's text is never restyled
        return f"chapter:{chapter}:{'judge' if authors else 'refine'}"
    if stage == "refined":
        return f"chapter:{chapter}:judge"
    gate = staged_gate(store, n)
    if gate is None:
        return f"chapter:{chapter}:judge"
    if key_chapter(store, n) and store.staging(SECONDARY_EVAL.format(n=chapter)) is None:
        return f"chapter:{chapter}:judge"  # a key chapter is judged twice; the lower score counts
    decision = gate.decision
    if decision.action in (GateAction.REVISE, GateAction.REWRITE):
        return f"chapter:{chapter}:revise"
    if decision.action is GateAction.ASK_USER:
        choice = answer_choice(
            store, commit_answer_path(store, n), low_score_spec(n, gate), "low_score_action"
        )
        if choice == "自动修订":
            return f"chapter:{chapter}:revise"
        waiting = awaiting_unchanged(notes, text)
        if choice == "手动改" or waiting:  # an unchanged draft after 手动改 is not asked about again
            return f"chapter:{chapter}:judge"
    if decision.action is GateAction.POLISH and not notes["polished"] and not notes.get("author_edited"):
        return f"chapter:{chapter}:refine"  # 3.5-3.9: the refiner once more, then the commit
    return f"chapter:{chapter}:commit"


__all__ = ["inflight_chapter", "next_step"]
