"""Write a split manuscript (:class:`~novel_desktop.domain.manuscript.SplitResult`) into a NEW novel.

Chapters become committed chapters whose only revision is of kind ``imported``; volume titles go to
``volumes/vol-NN/volume.json``; what the split kept aside (front matter, trailing boilerplate, words between a
volume heading and its first chapter) is kept as extra files under ``import/``, with a report of the import.
The novel is built in a temporary file beside the target (everything in one transaction) and given its name
only when complete: after a failure or a kill -9 at any point there is no half novel and no stale lock, and
the retry of the same import succeeds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from novel_desktop.domain.common import iso_now
from novel_desktop.domain.manuscript import SplitResult
from novel_desktop.storage import layout
from novel_desktop.storage.atomic import new_novel_file, publish_novel
from novel_desktop.storage.store import (
    NovelStore,
    StoreError,
    content_hash,
    default_checkpoint,
    dumps,
    title_of,
)
from novel_desktop.storage.tables import (
    ChapterRevisionRow,
    ChapterRow,
    CheckpointRow,
    DocumentRow,
    ExtraFileRow,
)

FRONT_MATTER_FILE = "import/front-matter.txt"
TRAILING_FILE = "import/trailing.txt"
REPORT_FILE = "import/report.json"
#: The new novel has chapters but no outline yet: the next step is planning the (next) volume.
IMPORTED_STATE = "VOL_PLANNING"


def volume_intro_file(volume: int) -> str:
    """Where the words between a volume heading and its first chapter are kept."""
    return f"import/volume-{volume:02d}-intro.txt"


@dataclass
class ImportSummary:
    """What :func:`import_manuscript` wrote."""

    novel: Path
    title: str
    chapters: int
    volumes: int
    total_chars: int
    last_chapter: int
    current_volume: int
    kept_files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def import_manuscript(
    split: SplitResult,
    novel_path: str | Path,
    *,
    title: str,
    genre: str | None = None,
    platform: str = "web",
    source_name: str = "",
    encoding: str | None = None,
    documents: Mapping[str, str] | None = None,
) -> ImportSummary:
    """Create ``novel_path`` (which must not exist) holding the chapters and volumes of ``split`` (and the
    project ``documents`` a new novel starts with, such as the AI-phrase list).

    The checkpoint ends after the last chapter, in its volume, in state ``VOL_PLANNING``. Raises
    :class:`~novel_desktop.storage.store.StoreError` for a split without chapters, chapter numbers that
    collide, or a target that exists; a failure while writing leaves no file behind.
    """
    if not split.chapters:
        raise StoreError("没有可导入的章节 (no chapters to import)")
    numbers = [c.number for c in split.chapters]
    if len(set(numbers)) != len(numbers) or min(numbers) < 0:
        raise StoreError("章节序号重复或为负，无法导入 (chapter numbers collide)")
    path = Path(novel_path)
    with new_novel_file(path) as tmp:
        store = NovelStore.create(tmp, title=title, genre=genre, platform=platform, documents=documents)
        try:
            summary = _write(store, split, title, source_name, encoding)
        finally:
            store.close()
        publish_novel(tmp, path)
    summary.novel = path
    return summary


def _write(
    store: NovelStore, split: SplitResult, title: str, source_name: str, encoding: str | None
) -> ImportSummary:
    now = iso_now()
    kept: dict[str, str] = {}
    if split.front_matter.strip():
        kept[FRONT_MATTER_FILE] = split.front_matter + "\n"
    if split.trailing.strip():
        kept[TRAILING_FILE] = split.trailing + "\n"
    for volume in split.volumes:
        if volume.text.strip():
            kept[volume_intro_file(volume.number)] = volume.text + "\n"
    last = max(split.chapters, key=lambda c: c.number)
    total = 0
    with store._write() as s:
        for chapter in split.chapters:
            text = chapter.stored_text()
            row = ChapterRow(
                number=chapter.number,
                volume=chapter.volume,
                title=title_of(text),
                content_hash=content_hash(text),
                committed_at=now,
                updated_at=now,
            )
            s.add(row)
            s.flush()
            rev = ChapterRevisionRow(
                chapter=chapter.number,
                kind="imported",
                content=text,
                chars=chapter.chars,
                created_at=now,
                note=f"导入自 {source_name}" if source_name else "导入 (imported)",
            )
            s.add(rev)
            s.flush()
            row.current_revision_id = rev.id
            row.chars = rev.chars
            s.add(row)
            total += rev.chars
        for volume in split.volumes:
            info = {"volume": volume.number, "title": volume.title}
            s.merge(
                DocumentRow(path=layout.volume_info_path(volume.number), content=dumps(info), updated_at=now)
            )
        report = {
            "source": source_name,
            "encoding": encoding,
            "imported_at": now,
            "chapters": [
                {
                    "number": c.number,
                    "title": c.title,
                    "heading": c.heading,
                    "kind": c.kind,
                    "volume": c.volume,
                }
                for c in split.chapters
            ],
            "gaps": split.gaps,
            "duplicates": split.duplicates,
            "warnings": split.warnings,
            # The places the split was unsure of, as the author saw (and maybe adjusted) them.
            "notes": [{"kind": n.kind, "chapter": n.chapter, "message": n.message} for n in split.notes],
        }
        kept[REPORT_FILE] = json.dumps(report, ensure_ascii=False, indent=2) + "\n"
        for rel, text in kept.items():
            s.merge(ExtraFileRow(path=rel, data=text.encode("utf-8")))
        checkpoint = default_checkpoint()
        checkpoint.update(
            last_completed_chapter=last.number,
            current_volume=last.volume,
            orchestrator_state=IMPORTED_STATE,
            pipeline_stage=None,
            inflight_chapter=None,
            last_checkpoint_time=now,
        )
        s.merge(CheckpointRow(id=1, content=dumps(checkpoint)))
    return ImportSummary(
        novel=store.path,
        title=title,
        chapters=len(split.chapters),
        volumes=len({c.volume for c in split.chapters} | {v.number for v in split.volumes}),
        total_chars=total,
        last_chapter=last.number,
        current_volume=last.volume,
        kept_files=sorted(kept),
        warnings=list(split.warnings),
    )


__all__ = [
    "FRONT_MATTER_FILE",
    "IMPORTED_STATE",
    "REPORT_FILE",
    "TRAILING_FILE",
    "ImportSummary",
    "import_manuscript",
    "volume_intro_file",
]
