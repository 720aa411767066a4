"""Where an export may write, and how: never over the novel, replacing a file only when asked, atomically.

An author's novel is months of work in one file, so an export's output (OUT) is checked before anything is
rendered: OUT must not be the novel under any spelling (a relative path, a symlink, a hard link, another case
on a case-insensitive disk) nor one of its journal or lock files; an existing OUT is replaced only with
``force=True`` and never when it is read-only. The new file is written to a temporary file in OUT's folder
and renamed over OUT, so a failure part-way leaves the old OUT as it was and no temporary file behind.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from novel_desktop.i18n import tr

#: Files SQLite and the lock keep beside a novel: writing any of them would corrupt it.
NOVEL_SIDECARS = ("-wal", "-shm", "-journal", ".lock", "-lock")


class ExportError(Exception):
    """An export the author has to fix something for, with a message for them."""


class ChapterRangeError(ExportError):
    """A malformed chapter range, or a range that selects no chapter of the novel."""


class ExportWriteError(ExportError):
    """The output file could not be written."""


class ExportTargetIsNovel(ExportWriteError):
    """OUT is the novel being exported, or one of its journal or lock files: refused, nothing written."""


class ExportTargetExists(ExportWriteError):
    """OUT exists and ``force`` was not given: refused, the file is left as it was."""


class ExportTargetReadOnly(ExportWriteError):
    """OUT exists and is read-only: refused even with ``force``."""


def _same_file(a: Path, b: Path) -> bool:
    try:
        sa, sb = os.stat(a), os.stat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def is_novel_file(out: Path, novel: Path) -> bool:
    """Whether writing ``out`` would write the novel ``novel`` or one of its journal or lock files."""
    novel_real = novel.resolve()
    out_real = out.resolve()
    names = {novel_real.name + suffix for suffix in ("", *NOVEL_SIDECARS)}
    if any(out_real == novel_real.with_name(name) for name in names):
        return True
    # Hard links and other spellings of an existing file: the same device and inode.
    if any(_same_file(out, novel_real.with_name(name)) for name in names):
        return True
    # A case-insensitive disk makes 小说.NOVEL-WAL the journal even before it exists.
    folded = {name.casefold() for name in names}
    return out_real.name.casefold() in folded and _same_file(out_real.parent, novel_real.parent)


def _read_only(path: Path) -> bool:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False  # a dangling symlink: replacing the link itself is allowed with force
    writable_bits = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
    # Mode bits too, not only access(): root may write anything, yet a file marked read-only is a request.
    return not mode & writable_bits or not os.access(path, os.W_OK)


def check_target(out: Path, novel: Path | None, *, force: bool = False) -> None:
    """Refuse an OUT that is the novel (or its journal or lock), a folder, a missing folder's child, an
    existing file without ``force``, or a read-only file. Raises a subclass of :class:`ExportWriteError`.
    """
    if novel is not None and is_novel_file(out, novel):
        raise ExportTargetIsNovel(
            tr("输出文件 {out} 就是小说文件 {novel}（或它的日志、锁文件），不能覆盖；请换一个文件名").format(
                out=out, novel=novel.name
            )
        )
    if out.is_dir():
        raise ExportWriteError(tr("输出路径是一个文件夹：{path}").format(path=out))
    if not out.parent.is_dir():
        raise ExportWriteError(tr("目录不存在：{path}").format(path=out.parent))
    if not os.path.lexists(out):
        return
    # Read-only first: --force would not help, so it is not what the message should suggest.
    if _read_only(out):
        raise ExportTargetReadOnly(
            tr("输出文件 {path} 是只读的，不会替换它；请换一个文件名，或先取消它的只读属性").format(path=out)
        )
    if not force:
        raise ExportTargetExists(
            tr("输出文件已存在：{path}，未覆盖；确认要替换它时请用 --force（窗口中会先询问）").format(
                path=out
            )
        )


def write_atomic(out_path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file next to ``out_path``, then rename it over ``out_path``.

    An existing file is replaced only after the whole new file is on disk; on any failure the temporary file
    is removed and the old file, if any, is left as it was. (Whether replacing is allowed is
    :func:`check_target`'s question.)
    """
    folder = out_path.parent
    if out_path.is_dir():
        raise ExportWriteError(tr("输出路径是一个文件夹：{path}").format(path=out_path))
    if not folder.is_dir():
        raise ExportWriteError(tr("目录不存在：{path}").format(path=folder))
    tmp = folder / f".{out_path.name}.{secrets.token_hex(4)}.tmp"
    try:
        # "x": never reuse a file someone else created; created with the user's umask, unlike mkstemp's 0600.
        with tmp.open("xb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, out_path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        reason = exc.strerror or str(exc)
        raise ExportWriteError(tr("无法写入 {path}：{reason}").format(path=out_path, reason=reason)) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
