"""Multi-step writes that a kill -9 cannot leave half done: build beside the target, then rename into place.

A new novel (import-text, import-folder) is built in a temporary file in the target's folder, closed, switched
to a rollback journal (so no ``-wal`` holds part of it) and linked to its final name only when complete. An
exported folder is written into a temporary sibling folder and renamed into place. Temporary names carry the
host and pid of their builder (``.<name>.<tag>-<host>-<pid>-<random>``), so the retry of an operation whose
process died removes what that process left, and nothing needs to be cleaned up by hand.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from novel_desktop.i18n import tr
from novel_desktop.storage import errors

_SQLITE_SUFFIXES = ("", "-wal", "-shm", "-journal")


def _host() -> str:
    return socket.gethostname().replace("-", "_").replace("/", "_") or "host"


def temp_sibling(target: Path, tag: str) -> Path:
    """A fresh temporary name in ``target``'s folder, owned by this process."""
    return target.with_name(f".{target.name}.{tag}-{_host()}-{os.getpid()}-{uuid.uuid4().hex[:8]}")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        for suffix in _SQLITE_SUFFIXES:
            Path(f"{path}{suffix}").unlink(missing_ok=True)


def clean_stale(target: Path, tag: str) -> list[Path]:
    """Remove what a dead process on this host left while building ``target`` (see the module docstring)."""
    removed: list[Path] = []
    prefix = f".{target.name}.{tag}-{_host()}-"
    try:
        names = os.listdir(target.parent)
    except OSError:
        return removed
    for name in names:
        if not name.startswith(prefix) or name.endswith(("-wal", "-shm", "-journal")):
            continue
        try:
            pid = int(name[len(prefix) :].split("-")[0])
        except ValueError:
            continue
        if pid != os.getpid() and not _pid_alive(pid):
            _remove(target.parent / name)
            removed.append(target.parent / name)
    return removed


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextmanager
def new_novel_file(target: Path) -> Iterator[Path]:
    """A temporary path to build a new novel at; :func:`publish_novel` it at the end of the block.

    ``target`` must not exist. Whatever the block raises, the temporary file is removed.
    """
    if target.exists() or target.is_symlink():
        raise errors.StoreError(tr("文件已存在，不会覆盖：{path}").format(path=target))
    clean_stale(target, "building")
    tmp = temp_sibling(target, "building")
    try:
        yield tmp
    finally:
        _remove(tmp)


def publish_novel(tmp: Path, target: Path) -> None:
    """Give the closed novel built at ``tmp`` its final name ``target``, never replacing a file there."""
    try:
        con = sqlite3.connect(tmp)
        try:
            # Everything into the main file: a -wal left beside the temporary name would be lost.
            con.execute("PRAGMA journal_mode=DELETE")
        finally:
            con.close()
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except (OSError, sqlite3.Error) as exc:
        raise errors.translate(exc, target) or errors.StoreError(str(exc)) from exc
    try:
        os.link(tmp, target)  # atomic, and fails rather than replace a file created meanwhile
    except FileExistsError:
        raise errors.StoreError(tr("文件已存在，不会覆盖：{path}").format(path=target)) from None
    except OSError:
        # A file system without hard links: check, then rename (atomic on the same folder).
        if target.exists():
            raise errors.StoreError(tr("文件已存在，不会覆盖：{path}").format(path=target)) from None
        os.replace(tmp, target)
    _remove(tmp)
    _fsync_dir(target.parent)


def replace_folder(tmp: Path, target: Path, *, force: bool) -> None:
    """Move the finished folder ``tmp`` to ``target``; an existing non-empty ``target`` only with ``force``.

    The old folder is first renamed aside, then removed, so the target is always either the old folder or
    the new one.
    """
    if target.is_dir() and not target.is_symlink() and not any(target.iterdir()):
        target.rmdir()
    if target.exists() or target.is_symlink():
        if not force:
            raise errors.TargetExistsError(
                tr("目标文件夹不是空的，不会覆盖：{path}（确认要替换请加 --force）").format(path=target)
            )
        clean_stale(target, "old")
        aside = temp_sibling(target, "old")
        os.rename(target, aside)
        os.rename(tmp, target)
        _remove(aside)
    else:
        os.rename(tmp, target)
    _fsync_dir(target.parent)
