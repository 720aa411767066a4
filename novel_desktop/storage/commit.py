"""The atomic chapter commit (seed 001 §10.4): staging becomes the novel in one transaction.

Plain SQL on one pooled DBAPI connection (``Repository._raw_write``: ``BEGIN IMMEDIATE`` … ``COMMIT``, any
exception rolls it all back): the ORM's statement compilation and flushes cost ~30 ms a commit, this ~2 ms.
The rows written are the ones the ORM wrote; the document history triggers see the same writes.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

from novel_desktop.domain.common import iso_now
from novel_desktop.domain.records import CommitResult
from novel_desktop.domain.state_ops import apply_foreshadow_updates, apply_patch, record_ops_skip
from novel_desktop.domain.state_patch import PatchRejected
from novel_desktop.domain.text import count_chars
from novel_desktop.storage import layout
from novel_desktop.storage.chapters import REVISION_KINDS
from novel_desktop.storage.checkpoint import OPS_SKIP_KEY
from novel_desktop.storage.migrations import WRITE_ORIGIN_KEY
from novel_desktop.storage.repository import (
    Repository,
    StoreError,
    content_hash,
    default_checkpoint,
    dumps,
    dumps_row,
    empty_state,
    title_of,
)

_UPSERT_DOCUMENT = (
    "INSERT INTO documents (path, content, updated_at) VALUES (?, ?, ?)"
    " ON CONFLICT(path) DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at"
)
_UPSERT_META = (
    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"
)

# An existing chapter (committed again) keeps its storyline when none is given, as the ORM's merge did; its
# current revision is set once the revisions are in (they refer to the chapter's row).
_UPSERT_CHAPTER = (
    "INSERT INTO chapters (number, volume, title, storyline_id, status, current_revision_id, chars,"
    " content_hash, source_hash, committed_at, updated_at)"
    " VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?)"
    " ON CONFLICT(number) DO UPDATE SET volume = excluded.volume, title = excluded.title,"
    " storyline_id = COALESCE(excluded.storyline_id, chapters.storyline_id),"
    " status = excluded.status, chars = excluded.chars, content_hash = excluded.content_hash,"
    " source_hash = excluded.source_hash, committed_at = excluded.committed_at,"
    " updated_at = excluded.updated_at"
)
_UPSERT_LOG = (
    "INSERT INTO pipeline_logs (chapter, content, total_cost_usd, updated_at) VALUES (?, ?, ?, ?)"
    " ON CONFLICT(chapter) DO UPDATE SET content = excluded.content,"
    " total_cost_usd = excluded.total_cost_usd, updated_at = excluded.updated_at"
)
_INSERT_POINT = (
    "INSERT INTO chapter_points (chapter, kind, state_version, docs_before, docs_after, checkpoint,"
    " created_at) VALUES (?, 'commit', ?, ?, ?, ?, ?)"
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
        with self._raw_write() as cur:
            # Every document write of the transaction is tagged ``commit:N`` in the history (the triggers
            # read this meta row); the row goes again before the transaction ends.
            cur.execute(_UPSERT_META, (WRITE_ORIGIN_KEY, f"commit:{number}"))
            docs_before = _history_position(cur)
            staged: dict[str, tuple[str, str]] = {
                path: (kind, content)
                for path, kind, content in cur.execute(
                    "SELECT path, kind, content FROM staging WHERE chapter = ?", (number,)
                ).fetchall()
            }
            text_row = staged.get(layout.chapter_path(number))
            if text_row is None:
                raise StoreError(
                    f"第 {number} 章没有暂存的正文，无法提交 (no staged text for chapter {number})"
                )
            text_kind, text = text_row
            now = iso_now()
            checkpoint = _checkpoint(cur)
            vol = volume if volume is not None else int(checkpoint.get("current_volume") or 1)

            # 1. the chapter and its revisions
            # The history in the order it was written: the first draft, each judged text a revision
            # replaced and each revision, then the final text. Of two equal texts in a row only the later is
            # kept (a draft the refiner left alone is stored once, as refined).
            history: list[tuple[str, str]] = []
            draft_row = staged.get(layout.draft_path(number))
            if draft_row is not None:
                history.append(("draft", draft_row[1]))
            versions = sorted(
                (
                    (v[1], row)
                    for path, row in staged.items()
                    if (v := layout.version_of(path)) and v[0] == number
                ),
                key=lambda kv: kv[0],
            )
            for _, (kind, content) in versions:
                history.append((kind if kind in REVISION_KINDS else "revision", content))
            final_kind = text_kind if text_kind in REVISION_KINDS else "refined"
            history.append((final_kind, text))
            kept = [h for h, after in itertools.pairwise(history) if after[1] != h[1]]
            chars = count_chars(text)
            text_hash = content_hash(text)
            # A text committed without its summary (status needs_rebuild) has no state derived from it yet.
            source = text_hash if status == "committed" else ""
            cur.execute(
                _UPSERT_CHAPTER,
                (
                    number,
                    vol,
                    title_of(text),
                    storyline_id or None,
                    status,
                    chars,
                    text_hash,
                    source,
                    now,
                    now,
                ),
            )
            revisions = [(kind, content, count_chars(content)) for kind, content in kept]
            revisions.append((final_kind, text, chars))
            final_id = 0
            for kind, content, count in revisions:
                cur.execute(
                    "INSERT INTO chapter_revisions (chapter, kind, content, chars, created_at, note)"
                    " VALUES (?, ?, ?, ?, ?, '')",
                    (number, kind, content, count, now),
                )
                final_id = int(cur.lastrowid)
            cur.execute("UPDATE chapters SET current_revision_id = ? WHERE number = ?", (final_id, number))
            step("chapter")

            # 2. summary
            summary_row = staged.get(layout.summary_path(number))
            if summary_row is not None:
                cur.execute(
                    "INSERT INTO summaries (chapter, content, storyline_id, updated_at) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT(chapter) DO UPDATE SET content = excluded.content,"
                    " storyline_id = excluded.storyline_id, updated_at = excluded.updated_at",
                    (number, summary_row[1], storyline_id, now),
                )
            step("summary")

            # 3. state delta, validated (§10.6)
            current = _latest_state(cur)  # read and parsed once (the state of a long novel is large)
            state_version = int(current.get("state_version", 0))
            applied, dropped, skipped, recommend = 0, [], None, False
            delta_row = staged.get(layout.delta_path(number))
            if delta_row is not None:
                try:
                    result = apply_patch(current, delta_row[1])
                except PatchRejected as exc:
                    skipped = exc.reason
                    row = cur.execute("SELECT value FROM meta WHERE key = ?", (OPS_SKIP_KEY,)).fetchone()
                    count, recommend = record_ops_skip(int((row[0] if row else None) or 0))
                    cur.execute(_UPSERT_META, (OPS_SKIP_KEY, str(count)))
                else:
                    state_version = int(result.state["state_version"])
                    cur.execute(
                        "INSERT INTO state_snapshots (state_version, chapter, content, created_at)"
                        " VALUES (?, ?, ?, ?)",
                        (state_version, number, dumps_row(result.state), now),
                    )
                    cur.executemany(
                        "INSERT INTO changelog (state_version, chapter, content) VALUES (?, ?, ?)",
                        [
                            (state_version, entry.get("chapter"), json.dumps(entry, ensure_ascii=False))
                            for entry in result.changelog
                        ],
                    )
                    if result.foreshadow_updates:
                        found = cur.execute(
                            "SELECT content FROM documents WHERE path = ?", (layout.GLOBAL_FORESHADOWING,)
                        ).fetchone()
                        doc = json.loads(found[0]) if found else {"foreshadowing": []}
                        updated = apply_foreshadow_updates(doc, result.foreshadow_updates, number)
                        cur.execute(_UPSERT_DOCUMENT, (layout.GLOBAL_FORESHADOWING, dumps(updated), now))
                    applied = len(result.applied)
                    dropped = [f"{d.index}: {d.reason}" for d in result.dropped]
            step("state")

            # 4. evaluation and pipeline log
            eval_row = staged.get(layout.evaluation_path(number))
            if eval_row is not None:
                data = json.loads(eval_row[1])
                overall = data.get("overall")
                cur.execute(
                    "INSERT INTO evaluations (chapter, content, overall, recommendation, updated_at)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT(chapter) DO UPDATE SET content = excluded.content,"
                    " overall = excluded.overall, recommendation = excluded.recommendation,"
                    " updated_at = excluded.updated_at",
                    (
                        number,
                        eval_row[1],
                        float(overall) if isinstance(overall, int | float) else None,
                        data.get("recommendation"),
                        now,
                    ),
                )
            log_row = staged.get(layout.log_path(number))
            if log_row is not None:
                cost = json.loads(log_row[1]).get("total_cost_usd")
                cur.execute(
                    _UPSERT_LOG,
                    (number, log_row[1], float(cost) if isinstance(cost, int | float) else None, now),
                )
            step("evaluation")

            # 5. storyline memories; the character files and changelog a contract update rewrote; the
            # phrase list with the judge's new phrases
            for path, (_kind, content) in staged.items():
                memory = path.startswith("storylines/") and path.endswith("/memory.md")
                character = (
                    path.startswith("characters/") and layout.classify(path)[0] is layout.Kind.DOCUMENT
                )
                if memory or character or path == layout.AI_BLACKLIST:
                    cur.execute(_UPSERT_DOCUMENT, (path, content, now))
            step("memory")

            # 6. checkpoint, then staging cleared, then the chapter's point
            checkpoint.update(
                last_completed_chapter=max(number, int(checkpoint.get("last_completed_chapter") or 0)),
                pipeline_stage="committed",
                inflight_chapter=None,
                last_checkpoint_time=now,
            )
            cur.execute("INSERT OR REPLACE INTO checkpoint (id, content) VALUES (1, ?)", (dumps(checkpoint),))
            cur.execute("DELETE FROM staging WHERE chapter = ?", (number,))
            cur.execute(
                _INSERT_POINT,
                (
                    number,
                    state_version,
                    docs_before,
                    _history_position(cur),
                    json.dumps(checkpoint, ensure_ascii=False),
                    iso_now(),
                ),
            )
            cur.execute("DELETE FROM meta WHERE key = ?", (WRITE_ORIGIN_KEY,))
            step("checkpoint")
            return CommitResult(number, state_version, applied, dropped, skipped, recommend)


def _history_position(cur: Any) -> int:
    """The newest document history position (0 before any document)."""
    return int(cur.execute("SELECT MAX(id) FROM document_history").fetchone()[0] or 0)


def _checkpoint(cur: Any) -> dict[str, Any]:
    row = cur.execute("SELECT content FROM checkpoint WHERE id = 1").fetchone()
    data: dict[str, Any] = json.loads(row[0]) if row else default_checkpoint()
    return data


def _latest_state(cur: Any) -> dict[str, Any]:
    row = cur.execute("SELECT content FROM state_snapshots ORDER BY state_version DESC LIMIT 1").fetchone()
    data: dict[str, Any] = json.loads(row[0]) if row else empty_state()
    return data
