"""The atomic chapter commit (seed 001 §10.4): staging becomes the novel in one transaction."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable

from sqlmodel import select

from novel_desktop.domain.common import iso_now
from novel_desktop.domain.records import CommitResult
from novel_desktop.domain.state_ops import apply_patch, record_ops_skip
from novel_desktop.domain.state_patch import PatchRejected
from novel_desktop.storage import layout
from novel_desktop.storage.chapters import REVISION_KINDS, new_revision
from novel_desktop.storage.checkpoint import OPS_SKIP_KEY, get_checkpoint, meta_value, put_checkpoint
from novel_desktop.storage.history import history_position, record_point, write_origin
from novel_desktop.storage.repository import Repository, StoreError, content_hash, title_of
from novel_desktop.storage.story_state import latest_state, store_patch_result
from novel_desktop.storage.tables import (
    ChapterRow,
    DocumentRow,
    EvaluationRow,
    MetaRow,
    PipelineLogRow,
    StagingRow,
    SummaryRow,
)


class ChapterCommit(Repository):
    """Moves one chapter's staged outputs into the novel."""

    def commit_chapter(
        self,
        number: int,
        *,
        volume: int | None = None,
        storyline_id: str | None = None,
        on_step: Callable[[str], None] | None = None,
        status: str = "committed",
    ) -> CommitResult:
        """Move chapter ``number`` from staging into the novel, in ONE transaction (seed 001 §10.4).

        Staged inputs: the text ``chapters/chapter-NNN.md`` (required; its staging ``kind`` is the revision
        kind), the first draft ``chapters/chapter-NNN.draft.md``, the summary, the state delta, the
        evaluation, the pipeline log, any ``storylines/<id>/memory.md`` and any ``characters/`` document (a
        contract update, seed 004 §6.5.3) and ``ai-blacklist.json`` (the judge's new phrases) staged for this
        chapter.
        The commit stores the revisions, summary, evaluation and log, merges the delta into the state (ops
        that fail validation are dropped with reasons; a patch that cannot be applied at all is skipped and
        counted, §10.6), updates ``foreshadowing/global.json`` and the storyline memories, advances the
        checkpoint and clears the chapter's staging. A crash at any point leaves the novel as before.
        ``status`` is the chapter's status afterwards (``needs_rebuild`` for a text committed without its
        summary, so the rebuild re-summarizes it).
        ``on_step`` is called between the steps (tests use it to kill the process mid-commit).
        """
        step = on_step or (lambda _name: None)
        with self._write() as s, write_origin(s, f"commit:{number}"):
            docs_before = history_position(s)
            staged = {r.path: r for r in s.exec(select(StagingRow).where(StagingRow.chapter == number))}
            text_row = staged.get(layout.chapter_path(number))
            if text_row is None:
                raise StoreError(
                    f"第 {number} 章没有暂存的正文，无法提交 (no staged text for chapter {number})"
                )
            now = iso_now()
            checkpoint = get_checkpoint(s)
            vol = volume if volume is not None else int(checkpoint.get("current_volume") or 1)

            # 1. the chapter and its revisions
            chapter = s.get(ChapterRow, number) or ChapterRow(number=number, committed_at=now)
            chapter.volume = vol
            chapter.storyline_id = storyline_id or chapter.storyline_id
            s.add(chapter)
            s.flush()
            # The history in the order it was written: the first draft, each judged text a revision
            # replaced and each revision, then the final text. Of two equal texts in a row only the later is
            # kept (a draft the refiner left alone is stored once, as refined).
            history: list[tuple[str, str]] = []
            draft_row = staged.get(layout.draft_path(number))
            if draft_row is not None:
                history.append(("draft", draft_row.content))
            versions = sorted(
                (
                    (v[1], row)
                    for path, row in staged.items()
                    if (v := layout.version_of(path)) and v[0] == number
                ),
                key=lambda kv: kv[0],
            )
            for _, row in versions:
                history.append((row.kind if row.kind in REVISION_KINDS else "revision", row.content))
            final_kind = text_row.kind if text_row.kind in REVISION_KINDS else "refined"
            history.append((final_kind, text_row.content))
            kept = [h for h, after in itertools.pairwise(history) if after[1] != h[1]]
            for kind, content in kept:
                s.add(new_revision(number, kind, content, now))
            final = new_revision(number, final_kind, text_row.content, now)
            s.add(final)
            s.flush()
            chapter.current_revision_id = final.id
            chapter.chars = final.chars
            chapter.content_hash = content_hash(text_row.content)
            # A text committed without its summary (status needs_rebuild) has no state derived from it yet.
            chapter.source_hash = chapter.content_hash if status == "committed" else ""
            chapter.title = title_of(text_row.content)
            chapter.status = status
            chapter.committed_at = now
            chapter.updated_at = now
            s.add(chapter)
            step("chapter")

            # 2. summary
            summary_row = staged.get(layout.summary_path(number))
            if summary_row is not None:
                s.merge(
                    SummaryRow(
                        chapter=number, content=summary_row.content, storyline_id=storyline_id, updated_at=now
                    )
                )
            step("summary")

            # 3. state delta, validated (§10.6)
            current = latest_state(s)  # read and parsed once (the state of a long novel is large)
            state_version = int(current.get("state_version", 0))
            applied, dropped, skipped, recommend = 0, [], None, False
            delta_row = staged.get(layout.delta_path(number))
            if delta_row is not None:
                try:
                    result = apply_patch(current, delta_row.content)
                except PatchRejected as exc:
                    skipped = exc.reason
                    count, recommend = record_ops_skip(int(meta_value(s, OPS_SKIP_KEY) or 0))
                    s.merge(MetaRow(key=OPS_SKIP_KEY, value=str(count)))
                else:
                    store_patch_result(s, result, chapter=number)
                    state_version = int(result.state["state_version"])
                    applied = len(result.applied)
                    dropped = [f"{d.index}: {d.reason}" for d in result.dropped]
            step("state")

            # 4. evaluation and pipeline log
            eval_row = staged.get(layout.evaluation_path(number))
            if eval_row is not None:
                data = json.loads(eval_row.content)
                overall = data.get("overall")
                s.merge(
                    EvaluationRow(
                        chapter=number,
                        content=eval_row.content,
                        overall=float(overall) if isinstance(overall, int | float) else None,
                        recommendation=data.get("recommendation"),
                        updated_at=now,
                    )
                )
            log_row = staged.get(layout.log_path(number))
            if log_row is not None:
                cost = json.loads(log_row.content).get("total_cost_usd")
                s.merge(
                    PipelineLogRow(
                        chapter=number,
                        content=log_row.content,
                        total_cost_usd=float(cost) if isinstance(cost, int | float) else None,
                        updated_at=now,
                    )
                )
            step("evaluation")

            # 5. storyline memories; the character files and changelog a contract update rewrote; the
            # phrase list with the judge's new phrases
            for path, row in staged.items():
                memory = path.startswith("storylines/") and path.endswith("/memory.md")
                character = (
                    path.startswith("characters/") and layout.classify(path)[0] is layout.Kind.DOCUMENT
                )
                if memory or character or path == layout.AI_BLACKLIST:
                    s.merge(DocumentRow(path=path, content=row.content, updated_at=now))
            step("memory")

            # 6. checkpoint, then staging cleared
            checkpoint.update(
                last_completed_chapter=max(number, int(checkpoint.get("last_completed_chapter") or 0)),
                pipeline_stage="committed",
                inflight_chapter=None,
                last_checkpoint_time=now,
            )
            put_checkpoint(s, checkpoint)
            for row in staged.values():
                s.delete(row)
            record_point(s, number, "commit", state_version, docs_before)
            step("checkpoint")
            return CommitResult(number, state_version, applied, dropped, skipped, recommend)
