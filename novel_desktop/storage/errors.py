"""The store's errors: each names the file and says what the author can do, in the user's language.

Every error a user can cause (a corrupt or read-only file, a full disk, a path that would leave the chosen
folder, a folder that would be overwritten) is a :class:`StoreError` subclass, so the CLI maps all of them to
exit 2 and the window shows the message as is. :func:`translate` turns what SQLite, SQLAlchemy or the OS
raised into one of them, so no SQLAlchemy text reaches the author.
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

from sqlalchemy.exc import DBAPIError

from novel_desktop.i18n import tr


class StoreError(Exception):
    """A request the store refuses, with a message for the author."""


class ReadOnlyError(StoreError):
    """A write to a novel opened read-only."""


class CorruptNovelError(StoreError):
    """The file is not a SQLite database, is truncated or its pages are damaged."""


class ReadOnlyFileError(StoreError):
    """The file (or its folder) cannot be written, but it was opened for writing."""


class DiskFullError(StoreError):
    """The disk (or the user's quota) is full: nothing was changed by the failed write."""


class NovelBusyError(StoreError):
    """Another process kept the file busy past the busy timeout."""


class UnsafePathError(StoreError):
    """A path that would leave the chosen folder (absolute, ``..``, a symlink) or overwrite the novel."""


class TargetExistsError(StoreError):
    """The output exists and is not empty; it is replaced only when asked (``force=True``)."""


class FileTooLargeError(StoreError):
    """An input file over the per-file cap of an import."""


def corrupt(path: Path | str) -> CorruptNovelError:
    return CorruptNovelError(
        tr(
            "文件已损坏或不是小说文件：{path}。请用备份（同目录下的 .bak-* 文件）恢复，或检查文件是否被截断"
        ).format(path=path)
    )


def read_only_file(path: Path | str) -> ReadOnlyFileError:
    return ReadOnlyFileError(
        tr("无法写入 {path}：文件或所在文件夹是只读的。请以只读方式打开，或把文件复制到可写的位置").format(
            path=path
        )
    )


def disk_full(path: Path | str) -> DiskFullError:
    return DiskFullError(
        tr("磁盘已满，无法写入 {path}；这次修改没有保存，原内容未受影响。请腾出空间后重试").format(path=path)
    )


def busy(path: Path | str) -> NovelBusyError:
    return NovelBusyError(tr("{path} 正被另一个程序长时间占用，请稍后重试").format(path=path))


def translate(exc: BaseException, path: Path | str, *, writing: bool = True) -> StoreError | None:
    """The :class:`StoreError` for what SQLite or the OS raised on ``path``, or None when it is a bug."""
    if isinstance(exc, StoreError):
        return exc
    orig: BaseException = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    if isinstance(orig, OSError):
        if orig.errno in (errno.ENOSPC, errno.EDQUOT):
            return disk_full(path)
        if orig.errno in (errno.EACCES, errno.EROFS, errno.EPERM):
            return read_only_file(path)
        return None
    if not isinstance(orig, sqlite3.Error):
        return None
    message = str(orig).lower()
    if "disk is full" in message or "database or disk is full" in message:
        return disk_full(path)
    if "not a database" in message or "malformed" in message or "disk image" in message:
        return corrupt(path)
    if "readonly" in message or "read-only" in message or (writing and "unable to open" in message):
        return read_only_file(path)
    if "database is locked" in message or "database is busy" in message:
        return busy(path)
    if "disk i/o error" in message:
        return StoreError(tr("读写 {path} 时发生磁盘错误，请检查磁盘或网络文件夹后重试").format(path=path))
    return None
