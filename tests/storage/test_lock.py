"""The single-writer lock: refusal with the holder's details, stale detection, clearing."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlmodel import Session

from novel_desktop.storage import lock
from novel_desktop.storage.engine import writer
from novel_desktop.storage.store import NovelStore, clear_stale_lock
from novel_desktop.storage.tables import LockRow


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _plant_lock(store: NovelStore, *, pid: int, host: str, age: timedelta) -> None:
    with Session(writer(store.engine)) as s, s.begin():
        row = s.get(LockRow, 1)
        if row is not None:
            s.delete(row)
            s.flush()
        started = (datetime.now(UTC) - age).isoformat(timespec="seconds")
        s.add(LockRow(id=1, token="other", pid=pid, host=host, started=started, purpose="write"))


def test_second_writer_is_refused_with_the_holders_pid_host_and_time(
    store: NovelStore, novel_path: Path
) -> None:
    with pytest.raises(lock.ProjectLocked) as info:
        NovelStore.open(novel_path, write=True)
    message = str(info.value)
    assert f"pid {os.getpid()}" in message
    assert socket.gethostname() in message
    assert datetime.now().astimezone().strftime("%Y-%m-%d") in message
    assert info.value.stale is False
    # Reading is still allowed while someone writes.
    with NovelStore.open(novel_path, write=False) as ro:
        assert ro.status().chapters == 0


def test_closing_releases_the_lock(store: NovelStore, novel_path: Path) -> None:
    store.close()
    with NovelStore.open(novel_path, write=True) as again:
        assert again.writable


def test_lock_of_a_process_that_is_gone_is_stale_and_can_be_cleared(
    store: NovelStore, novel_path: Path
) -> None:
    _plant_lock(store, pid=_dead_pid(), host=socket.gethostname(), age=timedelta(minutes=1))
    removed = clear_stale_lock(novel_path)
    assert removed is not None and removed.token == "other"
    assert clear_stale_lock(novel_path) is None  # nothing left to clear
    with NovelStore.open(novel_path, write=True) as again:
        assert again.writable


def test_lock_of_a_dead_process_on_this_host_is_taken_over_without_unlock(
    store: NovelStore, novel_path: Path
) -> None:
    _plant_lock(store, pid=_dead_pid(), host=socket.gethostname(), age=timedelta(seconds=5))
    with NovelStore.open(novel_path, write=True) as again:
        assert again.writable
        assert again._lock is not None and again._lock.replaced is not None
        assert again._lock.replaced.token == "other"


def _holder(novel_path: Path) -> lock.ProjectLocked:
    """What a second writer is told about the lock's holder."""
    with pytest.raises(lock.ProjectLocked) as info:
        NovelStore.open(novel_path, write=True)
    return info.value


def test_live_holder_is_not_stale_even_when_old(store: NovelStore, novel_path: Path) -> None:
    _plant_lock(store, pid=os.getppid(), host=socket.gethostname(), age=timedelta(hours=3))
    refused = _holder(novel_path)
    assert refused.holder.pid == os.getppid() and not refused.stale
    with pytest.raises(lock.ProjectLocked):
        lock.clear_stale(store.engine)
    assert lock.clear_stale(store.engine, force=True) is not None
    assert lock.clear_stale(store.engine) is None  # no lock left


@pytest.mark.parametrize(("age", "stale"), [(timedelta(minutes=9), False), (timedelta(minutes=11), True)])
def test_other_hosts_lock_is_stale_after_ten_minutes_without_heartbeat(
    store: NovelStore, novel_path: Path, age: timedelta, stale: bool
) -> None:
    _plant_lock(store, pid=12345, host="another-laptop", age=age)
    refused = _holder(novel_path)
    assert refused.holder.host == "another-laptop"
    assert lock.is_stale(refused.holder) is stale
    assert refused.stale is stale
