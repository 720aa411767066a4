"""The open novel, as the GUI sees it: reads for the views, writes on their behalf, and change signals.

Views never touch the store or a database session: they call this controller and listen to its signals.
Reads are short SQLite queries (milliseconds) and run in the GUI thread; anything long goes through
``asyncio.to_thread`` in the pipeline controller.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from novel_desktop.controllers.turns import next_turn
from novel_desktop.i18n import tr
from novel_desktop.storage import layout, lock
from novel_desktop.storage.errors import ReadOnlyError, ReadOnlyFileError, StoreError
from novel_desktop.storage.lock import ProjectLocked
from novel_desktop.storage.store import ChapterInfo, NovelStore, RevisionInfo, StatusReport, clear_stale_lock

#: What the window catches when a novel is held by another process (its ``holder`` and ``stale``).
__all__ = ["ChapterInfo", "ProjectController", "ProjectLocked", "RevisionInfo", "StatusReport", "StoreError"]

if TYPE_CHECKING:
    from novel_desktop.analysis.ai_phrases import PhraseEntry
    from novel_desktop.controllers.analysis_controller import AnalysisController
    from novel_desktop.domain.manuscript import Manuscript, SplitResult
    from novel_desktop.pipeline.orchestrator import Recommendation
    from novel_desktop.storage.book_export import ExportResult
    from novel_desktop.storage.manuscript_import import ImportSummary


class ProjectController(QObject):
    """Owns the :class:`NovelStore` of the open novel (opened for writing: it holds the writer lock)."""

    project_opened = Signal(str)
    project_closed = Signal()
    #: Chapters were added, removed, or changed status (tree and views refresh).
    chapters_changed = Signal()
    #: A chapter's text was saved by the author; the list holds the chapters now marked needs_rebuild.
    chapter_saved = Signal(int, list)
    #: A document (outline, contract, style profile …) changed; the argument is its path.
    document_changed = Signal(str)
    status_changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._store: NovelStore | None = None
        #: The AI-phrase list in force, with the ai-blacklist.json text it was built from.
        self._phrases: tuple[str | None, list[PhraseEntry]] | None = None
        self._chapters_memo: tuple[NovelStore, list[ChapterInfo]] | None = None  # chapters() in reading()
        self._reading = 0
        self._commit_pending = False  #: a commit's signals are on their way (notify_pipeline_commit)

    # ------------------------------------------------------------------ lifecycle
    @property
    def store(self) -> NovelStore:
        """The open store; only controllers (never views) may use it directly."""
        if self._store is None:
            raise RuntimeError("no novel is open")
        return self._store

    @cached_property
    def analysis(self) -> AnalysisController:
        """AI-phrase matching and density for the views, over the one analysis cache of the GUI."""
        from novel_desktop.controllers.analysis_controller import AnalysisController

        return AnalysisController(self)

    @property
    def is_open(self) -> bool:
        return self._store is not None

    @property
    def path(self) -> Path | None:
        return self._store.path if self._store else None

    @property
    def readonly(self) -> bool:
        """The open novel cannot be written (a read-only file or folder): the window only shows it."""
        return self._store is not None and self._store.readonly

    def journal_note(self) -> str | None:
        """Why the open novel does not use WAL (a network file system …), or None when it does."""
        journal = self._store.journal if self._store is not None else None
        if journal is None or journal.mode.upper() == "WAL":
            return None
        return journal.reason

    def open(self, path: str | Path) -> None:
        """Open a novel for writing, or read-only when the file or its folder cannot be written (nothing
        is written then: no lock, no journal change). Raises StoreError (CorruptNovelError, DiskFullError …),
        SchemaError or ProjectLocked (with the holder)."""
        self.close()
        try:
            self._store = NovelStore.open(path, write=True)
        except ReadOnlyFileError:
            self._store = NovelStore.open(path, readonly=True)
        self.project_opened.emit(str(self._store.path))

    def create(self, path: str | Path, *, title: str, genre: str | None, platform: str) -> None:
        self.close()
        from novel_desktop.analysis.blacklist import initial_documents

        self._store = NovelStore.create(
            path, title=title, genre=genre, platform=platform, documents=initial_documents()
        )
        self.project_opened.emit(str(self._store.path))

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
            self.project_closed.emit()

    @staticmethod
    def clear_stale_lock(path: str | Path) -> lock.LockInfo | None:
        """Clear a stale writer lock (after the author confirmed it)."""
        return clear_stale_lock(path)

    # ------------------------------------------------------------------ reads
    def title(self) -> str:
        return self.store.meta().get("title", "") if self.is_open else ""

    def meta(self) -> dict[str, str]:
        return self.store.meta()

    def status(self) -> StatusReport:
        return self.store.status()

    def checkpoint(self) -> dict[str, Any]:
        return self.store.checkpoint()

    def chapters(self) -> list[ChapterInfo]:
        """Every chapter's info; inside :meth:`reading`, read once for all who ask."""
        store = self.store
        memo = self._chapters_memo
        if memo is not None and memo[0] is store:
            return list(memo[1])
        chapters = store.list_chapters()
        if self._reading:
            self._chapters_memo = (store, chapters)
        return list(chapters)

    @contextmanager
    def reading(self) -> Iterator[None]:
        """A stretch of reads with no write in between (opening a novel, the views following a commit):
        the tree, the tabs and the quality panel each ask for the chapter list, and a 500-chapter list is
        read once for all of them. A write through this controller forgets it at once."""
        self._reading += 1
        try:
            yield
        finally:
            self._reading -= 1
            if not self._reading:
                self._chapters_memo = None

    def _forget_chapters(self) -> None:
        self._chapters_memo = None

    def chapter_text(self, number: int) -> str:
        return self.store.chapter_text(number) or ""

    def revisions(self, number: int) -> list[RevisionInfo]:
        return self.store.revisions(number)

    def revision_text(self, revision_id: int) -> str:
        return self.store.revision_text(revision_id) or ""

    def summary(self, number: int) -> str:
        return self.store.summary(number) or ""

    def evaluation(self, number: int) -> dict[str, Any] | None:
        return self.store.evaluation(number)

    def pipeline_log(self, number: int) -> dict[str, Any] | None:
        return self.store.pipeline_log(number)

    def document(self, path: str) -> str | None:
        return self.store.document(path)

    def document_json(self, path: str) -> Any:
        text = self.store.document(path)
        if not text:
            return None
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return None

    def documents(self, prefix: str) -> list[str]:
        return self.store.list_documents(prefix)

    def current_state(self) -> dict[str, Any]:
        return self.store.current_state()

    def volumes(self) -> list[tuple[int, str]]:
        """(number, title) of every volume that has chapters, an outline or a name."""
        numbers = self.store.chapter_volumes()
        for path in self.documents("volumes/"):
            part = path.split("/")[1]
            if part.startswith("vol-") and part[4:].isdigit():
                numbers.add(int(part[4:]))
        numbers.add(int(self.checkpoint().get("current_volume") or 1))
        out = []
        for n in sorted(numbers):
            info = self.document_json(layout.volume_info_path(n)) or {}
            out.append((n, str(info.get("title") or "")))
        return out

    def outline_paths(self) -> list[str]:
        """The stored path of every volume's outline (whether written yet or not)."""
        return [f"{layout.volume_dir(volume)}/outline.md" for volume, _title in self.volumes()]

    def staged_report(self, number: int) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """The in-flight chapter's judgement in staging, as (evaluation, pipeline-log-like notes: revisions,
        gate_violations, gate_issues); (None, None) when nothing of ``number`` is staged."""
        from novel_desktop.pipeline.verdict import GATE_NOTES

        raw_eval = self.store.staging(layout.evaluation_path(number))
        raw_notes = self.store.staging(GATE_NOTES.format(n=layout.num(number)))
        try:
            evaluation = json.loads(raw_eval) if raw_eval else None
            notes = json.loads(raw_notes) if raw_notes else None
        except ValueError:
            return None, None
        return evaluation, notes

    def staged_text(self, number: int) -> str | None:
        """The uncommitted text of an in-flight chapter, if any."""
        return self.store.staging(layout.chapter_path(number))

    def chapter_scores(self) -> dict[int, float]:
        """Every evaluated chapter's overall score, in one query (the tree shows 500 chapters)."""
        return self.store.chapter_scores()

    def chapter_texts(self) -> dict[int, str]:
        """The current text of every chapter, in one query (find/replace across the novel)."""
        return self.store.chapter_texts()

    def ai_phrases(self) -> list[PhraseEntry]:
        """The AI phrases in force for this novel: the shipped list with the novel's ai-blacklist applied."""
        from novel_desktop.analysis.ai_phrases import load_default_phrases, phrases_for_novel

        if not self.is_open:
            return load_default_phrases()
        # Every editor tab asks for the list when it opens; it is rebuilt only when the blacklist changed.
        raw = self.store.document("ai-blacklist.json")
        if self._phrases is None or self._phrases[0] != raw:
            self._phrases = (raw, phrases_for_novel(self.document_json("ai-blacklist.json")))
        return list(self._phrases[1])

    def recommendation(self) -> Recommendation:
        """What ``/novel:start`` recommends now (the same logic as ``novel start``); "create" when closed."""
        from novel_desktop.pipeline.orchestrator import recommend

        return recommend(self._store)

    def volume_to_plan(self) -> int:
        """The volume 规划卷 would plan now (the current one, or the next when it is written)."""
        from novel_desktop.pipeline.volume_plan import volume_to_plan

        return volume_to_plan(self.store)

    def planned_chapters(self, volume: int) -> int:
        """How many chapters the author wants in ``volume`` (30 until they say otherwise)."""
        from novel_desktop.pipeline.volume_plan import plan_params

        return plan_params(self.store, volume).chapters

    def set_planned_chapters(self, volume: int, chapters: int) -> None:
        """Remember the chapter count the next planning of ``volume`` uses."""
        from novel_desktop.pipeline.volume_plan import PlanParams, plan_params, set_plan_params

        params = plan_params(self.store, volume)
        set_plan_params(self.store, volume, PlanParams(chapters, params.direction, params.round))

    @staticmethod
    def export_format(path: str | Path) -> str:
        """The export format a file name asks for (txt when the suffix names none)."""
        from novel_desktop.storage.book_export import format_for

        return format_for(path) or "txt"

    @staticmethod
    def demo_copy() -> Path:
        """A fresh copy of the bundled demo novel (the one ``--demo`` opens)."""
        from novel_desktop.demo import demo_copy

        return demo_copy()

    def export_book(self, out_path: str | Path, fmt: str, *, force: bool = False) -> ExportResult:
        """Export the whole novel as ``fmt`` (txt, md, epub, docx); an existing file is replaced only with
        ``force`` (the window has asked). Raises ExportError (ExportTargetIsNovel, ExportTargetReadOnly …)."""
        from novel_desktop.storage.book_export import export_book

        return export_book(self.store, out_path, fmt, force=force)

    @staticmethod
    def read_manuscript(source: str | Path) -> tuple[Manuscript, SplitResult]:
        """Read a manuscript (txt/md/docx/epub) and split it into chapters; nothing is written.
        Raises ManuscriptError for a file that cannot be read."""
        from novel_desktop.analysis.manuscript import read_manuscript, split_for_import

        manuscript = read_manuscript(source)
        return manuscript, split_for_import(manuscript)

    @staticmethod
    def write_manuscript(
        source: str | Path, manuscript: Manuscript, split: SplitResult, target: str | Path, *, title: str
    ) -> ImportSummary:
        """Create the novel ``target`` from a split the author has seen and confirmed."""
        from novel_desktop.analysis.blacklist import initial_documents
        from novel_desktop.storage.manuscript_import import import_manuscript

        return import_manuscript(
            split,
            target,
            title=title,
            source_name=Path(source).name,
            encoding=manuscript.encoding,
            documents=initial_documents(),
        )

    # ------------------------------------------------------------------ writes
    def _writable(self) -> None:
        """Refuse a write to a read-only novel before anything touches the file."""
        if self.readonly:
            raise ReadOnlyError(
                tr("{path} 是只读打开的，不能保存；请用“导出…”另存一份，或复制到可写的文件夹再打开").format(
                    path=self.path
                )
            )

    def save_chapter(self, number: int, text: str) -> list[int]:
        """Keep the author's edit as a new revision; returns the chapters now needing a rebuild (none when
        only the heading line changed: a renamed chapter is saved, but its state still holds)."""
        self._writable()
        before = self.store.chapter_text(number)
        marked = self.store.save_manual_edit(number, text)
        self._forget_chapters()
        if marked or (before is not None and before != text):
            self.chapter_saved.emit(number, marked)
            self.chapters_changed.emit()
            self.status_changed.emit()
        return marked

    def save_document(self, path: str, content: str) -> None:
        self._writable()
        self.store.put_document(path, content)
        self.document_changed.emit(path)

    def save_documents(self, documents: dict[str, str], delete: Sequence[str] = ()) -> None:
        """Write ``documents`` and delete ``delete`` in one transaction (all of it or nothing)."""
        self._writable()
        self.store.put_documents(documents, delete=delete)
        for path in dict.fromkeys([*documents, *delete]):
            self.document_changed.emit(path)

    def notify_pipeline_commit(self) -> None:
        """The pipeline committed a chapter (called by the pipeline controller).

        The signals follow on later event-loop turns, one each, and several commits in a row coalesce: the
        views re-read the novel then, not inside the pipeline's coroutine, so a commit never freezes the
        window for all of them at once (the next chapter may already be streaming)."""
        self._forget_chapters()
        if not self._commit_pending:
            self._commit_pending = True
            next_turn(self._emit_chapters_changed)

    def _emit_chapters_changed(self) -> None:
        self._commit_pending = False
        with self.reading():  # every view re-reads: the chapter list once for all
            self.chapters_changed.emit()
        next_turn(self.status_changed.emit)
