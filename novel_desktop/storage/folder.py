"""Export a novel to the seed's project folder (004 §9.1) and import such a folder into a new novel.

Every file of the seed layout is written back as the text it was read as, so import → export is lossless.
A file the layout does not name is kept byte for byte (``extra_files``) and reported, never dropped. Known
JSON files are checked against the domain models; a file that fails is still kept, with a warning.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlmodel import Session, col, select

from novel_desktop.domain.common import iso_now
from novel_desktop.domain.text import count_chars
from novel_desktop.storage import layout
from novel_desktop.storage.engine import writer
from novel_desktop.storage.store import NovelStore, StoreError, content_hash, dumps, title_of
from novel_desktop.storage.tables import (
    AnswerRow,
    ChangelogRow,
    ChapterRevisionRow,
    ChapterRow,
    CheckpointRow,
    DocumentRow,
    EvaluationRow,
    ExtraFileRow,
    MetaRow,
    PipelineLogRow,
    StagingRow,
    StateSnapshotRow,
    SummaryRow,
)

#: Folders and files of a seed project that are not data: the plugin's lock directory.
SKIPPED_DIRS = {".novel.lock"}
#: Meta key holding the folders an imported project had (JSON list), so export recreates exactly those.
FOLDER_DIRS_META = "folder_dirs"
#: The folders of the seed layout, created on export even when empty, so an external executor finds them —
#: for a novel that did not come from a folder, or when asked (``skeleton=True``). An imported one otherwise
#: gets back exactly the folders it had, empty ones included, so import → export → ``diff -r`` is empty.
SKELETON_DIRS = (
    "research",
    "world",
    "characters/active",
    "characters/retired",
    "storylines",
    "volumes",
    "chapters",
    "staging/chapters",
    "staging/state",
    "staging/evaluations",
    "staging/novel-ask",
    "summaries",
    "state/history",
    "foreshadowing",
    "evaluations",
    "logs",
)


@dataclass
class ExportReport:
    folder: Path
    files: int = 0
    chapters: int = 0


@dataclass
class ImportReport:
    """What an import read: counts per kind, the extra files kept, and warnings for the author."""

    novel: Path
    counts: dict[str, int] = field(default_factory=dict)
    chapters: int = 0
    extra_files: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def count(self, kind: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1


# ---------------------------------------------------------------------------- export
def export_folder(store: NovelStore, folder: str | Path, *, skeleton: bool = False) -> ExportReport:
    """Write the novel as a seed project folder. The folder must be new or empty.

    ``skeleton`` also creates every folder of the seed layout (``staging/chapters`` …) where an external
    executor writes its outputs; without it an imported novel gets back exactly the folders it came with.
    """
    out = Path(folder)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise StoreError(f"目标文件夹不是空的，不会覆盖：{out} (target folder is not empty)")
    files: dict[str, bytes] = {}

    def put(path: str, text: str) -> None:
        files[path] = text.encode("utf-8")

    with Session(store.engine) as s:
        cp = s.get(CheckpointRow, 1)
        if cp is not None:
            put(layout.CHECKPOINT, cp.content)
        for doc in s.exec(select(DocumentRow)):
            put(doc.path, doc.content)
        chapters = 0
        for ch in s.exec(select(ChapterRow)):
            rev = s.get(ChapterRevisionRow, ch.current_revision_id) if ch.current_revision_id else None
            if rev is not None:
                put(layout.chapter_path(ch.number), rev.content)
                chapters += 1
        for summary in s.exec(select(SummaryRow)):
            put(layout.summary_path(summary.chapter), summary.content)
        for ev in s.exec(select(EvaluationRow)):
            put(layout.evaluation_path(ev.chapter), ev.content)
        for log in s.exec(select(PipelineLogRow)):
            put(layout.log_path(log.chapter), log.content)
        snap = s.exec(
            select(StateSnapshotRow).order_by(col(StateSnapshotRow.state_version).desc()).limit(1)
        ).first()
        if snap is not None:
            put(layout.CURRENT_STATE, snap.content)
        lines = [row.content for row in s.exec(select(ChangelogRow).order_by(col(ChangelogRow.id)))]
        if lines:
            put(layout.CHANGELOG, "".join(line + "\n" for line in lines))
        for staged in s.exec(select(StagingRow)):
            put(f"staging/{staged.path}", staged.content)
        for answer in s.exec(select(AnswerRow)):
            put(answer.answer_path, answer.content)
        for extra in s.exec(select(ExtraFileRow)):
            files[extra.path] = extra.data

    dirs = _export_dirs(store)
    if skeleton:
        dirs = sorted({*dirs, *SKELETON_DIRS})
    for rel in dirs:
        (out / rel).mkdir(parents=True, exist_ok=True)
    for rel, data in sorted(files.items()):
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return ExportReport(out, len(files), chapters)


def _export_dirs(store: NovelStore) -> list[str]:
    """The folders to create: those the imported folder had, else the seed skeleton."""
    recorded = store.meta().get(FOLDER_DIRS_META)
    if recorded is not None:
        try:
            dirs = json.loads(recorded)
        except json.JSONDecodeError:
            dirs = None
        if isinstance(dirs, list) and all(isinstance(d, str) for d in dirs):
            # Never outside the target folder, whatever the file says.
            return [d for d in dirs if d and not d.startswith("/") and ".." not in d.split("/")]
    return list(SKELETON_DIRS)


# ---------------------------------------------------------------------------- import
def _walk(root: Path, report: ImportReport, dirs: list[str] | None = None) -> list[tuple[str, Path]]:
    found: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root)
        for skipped in sorted(d for d in dirnames if d in SKIPPED_DIRS):
            report.skipped.append((rel_dir / skipped).as_posix() + "/")
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        if dirs is not None:
            dirs.extend((rel_dir / d).as_posix() for d in dirnames)
        for name in sorted(filenames):
            found.append(((rel_dir / name).as_posix(), Path(dirpath) / name))
    return found


def _check(rel: str, text: str, report: ImportReport) -> None:
    """Warn (never refuse) when a known JSON file does not match its seed format."""
    if not rel.endswith(".json"):
        return
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        report.warnings.append(f"{rel}: 不是合法的 JSON，已原样保留 (not valid JSON, kept as is): {exc.msg}")
        return
    from novel_desktop.domain.validate import problems_for

    for problem in problems_for(rel, data):
        report.warnings.append(f"{rel}: {problem}")


def import_folder(
    folder: str | Path,
    novel: str | Path,
    *,
    title: str | None = None,
    genre: str | None = None,
    platform: str = "web",
) -> ImportReport:
    """Read a seed project folder into a new ``.novel`` file and report what was read."""
    root = Path(folder)
    if not root.is_dir():
        raise StoreError(f"找不到文件夹：{root} (no such folder)")
    report = ImportReport(Path(novel))
    folder_dirs: list[str] = []
    entries = _walk(root, report, folder_dirs)
    if not entries:
        raise StoreError(f"文件夹是空的：{root} (the folder is empty)")

    texts: dict[str, str] = {}
    extras: dict[str, bytes] = {}
    kinds: dict[str, tuple[layout.Kind, int | None]] = {}
    for rel, path in entries:
        data = path.read_bytes()
        kind, number = layout.classify(rel)
        if kind is layout.Kind.EXTRA:
            extras[rel] = data
            continue
        try:
            texts[rel] = data.decode("utf-8")
        except UnicodeDecodeError:
            report.warnings.append(
                f"{rel}: 不是 UTF-8 文本，已作为附加文件原样保留 (not UTF-8; kept as an extra file)"
            )
            extras[rel] = data
            continue
        kinds[rel] = (kind, number)

    chapter_numbers = {n for rel, (k, n) in kinds.items() if k is layout.Kind.CHAPTER and n is not None}
    # Summaries, evaluations and logs of chapters the folder has no text for cannot hang off a chapter row:
    # keep them as extra files so nothing is lost.
    for rel, (kind, number) in list(kinds.items()):
        if kind in (layout.Kind.SUMMARY, layout.Kind.EVALUATION) and number not in chapter_numbers:
            report.warnings.append(
                f"{rel}: 没有对应的章节正文，已作为附加文件保留 (no chapter text; kept as extra)"
            )
            extras[rel] = texts.pop(rel).encode("utf-8")
            del kinds[rel]

    volumes = _chapter_volumes(kinds)
    brief = texts.get("brief.md", "")
    novel_title = title or title_of(brief) or root.name
    store = NovelStore.create(novel, title=novel_title, genre=genre, platform=platform)
    try:
        now = iso_now()
        with Session(writer(store.engine)) as s, s.begin():
            for rel, text in sorted(texts.items()):
                kind, number = kinds[rel]
                _check(rel, text, report)
                _import_one(s, rel, text, kind, number, volumes, now, report)
                report.count(kind.value)
            for rel, data in sorted(extras.items()):
                s.merge(ExtraFileRow(path=rel, data=data))
                report.extra_files.append(rel)
            s.merge(MetaRow(key=FOLDER_DIRS_META, value=json.dumps(sorted(folder_dirs), ensure_ascii=False)))
            if layout.CHECKPOINT not in texts and chapter_numbers:
                # A folder without a checkpoint: resume after its last chapter.
                cp = json.loads(s.get(CheckpointRow, 1).content)  # type: ignore[union-attr]
                cp.update(last_completed_chapter=max(chapter_numbers), orchestrator_state="WRITING")
                s.merge(CheckpointRow(id=1, content=dumps(cp)))
                report.warnings.append(
                    ".checkpoint.json 缺失，已按最后一章重建 (no checkpoint; rebuilt from the last chapter)"
                )
        report.chapters = len(chapter_numbers)
    except Exception:
        store.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{novel}{suffix}").unlink(missing_ok=True)
        raise
    store.close()
    return report


def _chapter_volumes(kinds: dict[str, tuple[layout.Kind, int | None]]) -> dict[int, int]:
    """Chapter → volume, from the chapter contracts under ``volumes/vol-NN/``."""
    out: dict[int, int] = {}
    for rel in kinds:
        parts = rel.split("/")
        if len(parts) == 4 and parts[0] == "volumes" and parts[2] == "chapter-contracts":
            try:
                out[int(parts[3].removeprefix("chapter-").removesuffix(".json"))] = int(
                    parts[1].removeprefix("vol-")
                )
            except ValueError:
                continue
    return out


def _volume_for(number: int, volumes: dict[int, int]) -> int:
    if number in volumes:
        return volumes[number]
    earlier = [c for c in volumes if c < number]
    return volumes[max(earlier)] if earlier else 1


def _import_one(
    s: Session,
    rel: str,
    text: str,
    kind: layout.Kind,
    number: int | None,
    volumes: dict[int, int],
    now: str,
    report: ImportReport,
) -> None:
    K = layout.Kind
    if kind is K.CHECKPOINT:
        s.merge(CheckpointRow(id=1, content=text))
    elif kind is K.DOCUMENT:
        s.merge(DocumentRow(path=rel, content=text, updated_at=now))
    elif kind is K.CHAPTER and number is not None:
        rev = ChapterRevisionRow(
            chapter=number, kind="imported", content=text, chars=count_chars(text), created_at=now
        )
        chapter = ChapterRow(
            number=number,
            volume=_volume_for(number, volumes),
            title=title_of(text),
            chars=rev.chars,
            content_hash=content_hash(text),
            committed_at=now,
            updated_at=now,
        )
        s.add(chapter)
        s.flush()
        s.add(rev)
        s.flush()
        chapter.current_revision_id = rev.id
        s.add(chapter)
    elif kind is K.SUMMARY and number is not None:
        s.merge(SummaryRow(chapter=number, content=text, updated_at=now))
    elif kind is K.EVALUATION and number is not None:
        overall, rec = _json_fields(text, "overall", "recommendation")
        s.merge(
            EvaluationRow(
                chapter=number,
                content=text,
                overall=float(overall) if isinstance(overall, int | float) else None,
                recommendation=rec if isinstance(rec, str) else None,
                updated_at=now,
            )
        )
    elif kind is K.LOG and number is not None:
        (cost,) = _json_fields(text, "total_cost_usd")
        s.merge(
            PipelineLogRow(
                chapter=number,
                content=text,
                total_cost_usd=float(cost) if isinstance(cost, int | float) else None,
                updated_at=now,
            )
        )
    elif kind is K.CURRENT_STATE:
        (version, chapter_no) = _json_fields(text, "state_version", "last_updated_chapter")
        v = int(version) if isinstance(version, int) else 0
        # The imported state replaces the empty version-0 state that create() wrote.
        for old in s.exec(select(StateSnapshotRow)):
            s.delete(old)
        s.flush()
        s.add(
            StateSnapshotRow(
                state_version=v,
                chapter=chapter_no if isinstance(chapter_no, int) else None,
                content=text,
                created_at=now,
            )
        )
    elif kind is K.CHANGELOG:
        for i, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                report.warnings.append(f"{rel} 第 {i} 行不是 JSON，已原样保留 (line {i} is not JSON; kept)")
                entry = {}
            sv = entry.get("state_version") if isinstance(entry, dict) else None
            ch = entry.get("chapter") if isinstance(entry, dict) else None
            s.add(
                ChangelogRow(
                    state_version=sv if isinstance(sv, int) else None,
                    chapter=ch if isinstance(ch, int) else None,
                    content=line,
                )
            )
    elif kind is K.ANSWER:
        s.merge(AnswerRow(answer_path=rel, content=text, updated_at=now))
    elif kind is K.STAGING:
        staged = rel.removeprefix("staging/")
        s.merge(StagingRow(path=staged, chapter=layout.staged_chapter(staged), content=text, updated_at=now))


def _json_fields(text: str, *keys: str) -> tuple[Any, ...]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return tuple(None for _ in keys)
    if not isinstance(data, dict):
        return tuple(None for _ in keys)
    return tuple(data.get(k) for k in keys)


__all__ = ["ExportReport", "ImportReport", "dumps", "export_folder", "import_folder"]
