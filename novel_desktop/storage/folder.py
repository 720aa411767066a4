"""Export a novel to the seed's project folder (004 §9.1) and import such a folder into a new novel.

Every file of the seed layout is written back as the text it was read as, so import → export is lossless.
A file the layout does not name is kept byte for byte (``extra_files``) and reported, never dropped. Known
JSON files are checked against the domain models; a file that fails is still kept, with a warning.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlmodel import Session, col, select

from novel_desktop.domain.common import iso_now
from novel_desktop.domain.text import count_chars
from novel_desktop.i18n import tr
from novel_desktop.storage import errors, layout
from novel_desktop.storage.atomic import (
    clean_stale,
    new_novel_file,
    publish_novel,
    replace_folder,
    temp_sibling,
)
from novel_desktop.storage.errors import FileTooLargeError, TargetExistsError, UnsafePathError
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
    """What an export wrote, and the stored names it refused (paths that would leave the folder)."""

    folder: Path
    files: int = 0
    chapters: int = 0
    skipped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


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
def _novel_files(novel: Path) -> list[Path]:
    return [novel, *(Path(f"{novel}{suffix}") for suffix in ("-wal", "-shm", "-journal", ".lock"))]


def _check_output(store: NovelStore, out: Path) -> None:
    """Refuse an output that is the novel (any spelling, symlink or hard link), its journal or lock files,
    or a folder holding the novel (replacing it would delete the novel)."""
    novel = store.path.resolve()
    for own in _novel_files(novel):
        same = out == own
        if not same and out.exists() and own.exists():
            try:
                same = os.path.samefile(out, own)
            except OSError:
                same = False
        if same:
            raise UnsafePathError(
                tr("导出目标就是小说文件本身（或它的日志/锁文件），不会写入：{path}").format(path=out)
            )
    if novel.is_relative_to(out):
        raise UnsafePathError(tr("导出目标文件夹包含小说文件本身，不会替换：{path}").format(path=out))


def export_folder(
    store: NovelStore, folder: str | Path, *, skeleton: bool = False, force: bool = False
) -> ExportReport:
    """Write the novel as a seed project folder.

    The folder is written into a temporary sibling and renamed into place at the end, so a kill or a full
    disk never leaves half a folder. An existing non-empty ``folder`` is replaced only with ``force``
    (:class:`TargetExistsError` otherwise); an output that is the novel or holds it raises
    :class:`UnsafePathError`. A stored name that would leave the folder (absolute, ``..``) is not written
    and is listed in the report's ``skipped``. ``skeleton`` also creates every folder of the seed layout
    (``staging/chapters`` …) where an external executor writes its outputs; without it an imported novel gets
    back exactly the folders it came with. Works on a store opened read-only.
    """
    out = Path(folder).resolve()
    _check_output(store, out)
    if not out.parent.is_dir():
        raise StoreError(tr("目录不存在：{path}").format(path=out.parent))
    if out.exists() and not force and (not out.is_dir() or any(out.iterdir())):
        raise TargetExistsError(
            tr("目标文件夹不是空的，不会覆盖：{path}（确认要替换请加 --force）").format(path=out)
        )
    report = ExportReport(out)
    files: dict[str, bytes] = {}

    def put(path: str, text: str) -> None:
        files[path] = text.encode("utf-8", errors="surrogateescape")

    with store._read() as s:
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

    for rel in sorted(files):
        if not layout.is_safe_relpath(rel):
            del files[rel]
            report.skipped.append(rel)
            report.warnings.append(
                tr("{name}：存储的路径会写到导出文件夹之外，已拒绝").format(name=repr(rel))
            )
    dirs = _export_dirs(store)
    if skeleton:
        dirs = sorted({*dirs, *SKELETON_DIRS})
    clean_stale(out, "export")
    tmp = temp_sibling(out, "export")
    try:
        tmp.mkdir()
        root = os.path.realpath(tmp)
        for rel in dirs:
            (tmp / rel).mkdir(parents=True, exist_ok=True)
        for rel, data in sorted(files.items()):
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if not os.path.realpath(target).startswith(root + os.sep):
                report.skipped.append(rel)  # cannot happen with safe names; never write outside
                continue
            with open(target, "xb") as fh:  # never through an existing file or link
                fh.write(data)
            report.files += 1
        replace_folder(tmp, out, force=force)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError):
            mapped = errors.translate(exc, out)
            if mapped is not None:
                raise mapped from exc
        raise
    report.chapters = chapters
    return report


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
            return [d for d in dirs if layout.is_safe_relpath(d)]
    return list(SKELETON_DIRS)


# ---------------------------------------------------------------------------- import
#: No single file of a folder import is read beyond this many bytes.
MAX_IMPORT_FILE_BYTES = 64 * 1024 * 1024


def _walk(root: Path, report: ImportReport, dirs: list[str] | None = None) -> list[tuple[str, Path]]:
    """The regular files under ``root``; symlinks and special files (FIFO, device, socket) are skipped and
    listed in ``report.skipped`` with a warning, so nothing outside the folder is ever read."""
    found: list[tuple[str, Path]] = []
    real_root = os.path.realpath(root)
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root)
        keep: list[str] = []
        for d in sorted(dirnames):
            rel = (rel_dir / d).as_posix()
            if d in SKIPPED_DIRS:
                report.skipped.append(rel + "/")
            elif os.path.islink(os.path.join(dirpath, d)):
                report.skipped.append(rel + "/")
                report.warnings.append(tr("{name}：是符号链接，已跳过").format(name=rel + "/"))
            else:
                keep.append(d)
        dirnames[:] = keep
        if dirs is not None:
            dirs.extend((rel_dir / d).as_posix() for d in dirnames)
        for name in sorted(filenames):
            rel = (rel_dir / name).as_posix()
            full = Path(dirpath) / name
            try:
                st = full.lstat()
            except OSError as exc:
                report.skipped.append(rel)
                report.warnings.append(
                    tr("{name}：无法读取（{reason}），已跳过").format(name=rel, reason=exc.strerror)
                )
                continue
            if stat.S_ISLNK(st.st_mode):
                report.skipped.append(rel)
                report.warnings.append(tr("{name}：是符号链接，已跳过").format(name=rel))
            elif not stat.S_ISREG(st.st_mode):
                report.skipped.append(rel)
                report.warnings.append(
                    tr("{name}：不是普通文件（管道、设备或套接字），已跳过").format(name=rel)
                )
            elif not os.path.realpath(full).startswith(real_root + os.sep) or not layout.is_safe_relpath(rel):
                report.skipped.append(rel)
                report.warnings.append(tr("{name}：路径在所选文件夹之外，已跳过").format(name=rel))
            else:
                found.append((rel, full))
    return found


def read_capped(path: Path, rel: str, limit: int = MAX_IMPORT_FILE_BYTES) -> bytes:
    """The bytes of the regular file ``path``, refused beyond ``limit`` (never read unbounded).

    Raises :class:`FileTooLargeError` naming ``rel`` over the limit, :class:`StoreError` for a file that
    cannot be opened or is not a regular file (a FIFO is never waited on, a device never read).
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise StoreError(
            tr("无法读取 {name}：{reason}").format(name=rel, reason=exc.strerror or exc)
        ) from exc
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced by a FIFO or device since the walk
            raise StoreError(tr("{name} 不是普通文件，已拒绝").format(name=rel))
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise FileTooLargeError(
            tr("{name} 超过 {mb} MB，不能导入；请把它移出文件夹或拆分后重试").format(
                name=rel, mb=limit // 2**20
            )
        )
    return data


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
    max_file_bytes: int = MAX_IMPORT_FILE_BYTES,
) -> ImportReport:
    """Read a seed project folder into a new ``.novel`` file and report what was read.

    Only regular files inside ``folder`` are read (symlinks and special files are skipped with a warning);
    a file over ``max_file_bytes`` raises :class:`FileTooLargeError` naming it. The novel is built in a
    temporary file beside ``novel`` and renamed at the end: after a kill at any point there is either no
    ``novel`` (and the retry succeeds) or a complete one.
    """
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
        data = read_capped(path, rel, max_file_bytes)
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
    target = Path(novel)
    with new_novel_file(target) as tmp:
        store = NovelStore.create(tmp, title=novel_title, genre=genre, platform=platform)
        try:
            _fill(store, texts, extras, kinds, folder_dirs, volumes, chapter_numbers, report)
        finally:
            store.close()
        publish_novel(tmp, target)
    report.chapters = len(chapter_numbers)
    return report


def _fill(
    store: NovelStore,
    texts: dict[str, str],
    extras: dict[str, bytes],
    kinds: dict[str, tuple[layout.Kind, int | None]],
    folder_dirs: list[str],
    volumes: dict[int, int],
    chapter_numbers: set[int],
    report: ImportReport,
) -> None:
    """Everything the folder held, in one transaction."""
    now = iso_now()
    with store._write() as s:
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
            # A project folder's summaries and state were derived from its chapters' texts.
            source_hash=content_hash(text),
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


__all__ = [
    "MAX_IMPORT_FILE_BYTES",
    "ExportReport",
    "ImportReport",
    "dumps",
    "export_folder",
    "import_folder",
    "read_capped",
]
