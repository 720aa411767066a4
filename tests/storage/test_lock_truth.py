"""Locks that tell the truth: process start time, heartbeat, reused pids, other hosts."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlmodel import Session

from novel_desktop.storage import lock
from novel_desktop.storage.engine import writer
from novel_desktop.storage.store import NovelStore
from novel_desktop.storage.tables import LockRow, MetaRow

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/<pid>/stat")


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc
    proc.kill()
    proc.wait()


def _plant(
    store: NovelStore,
    *,
    pid: int,
    host: str,
    started: timedelta,
    heartbeat: timedelta | None = None,
    proc_start: int | None = None,
) -> None:
    now = datetime.now(UTC)
    with Session(writer(store.engine)) as s, s.begin():
        row = s.get(LockRow, 1)
        if row is not None:
            s.delete(row)
            s.flush()
        s.add(
            LockRow(
                id=1, token="other", pid=pid, host=host, started=(now - started).isoformat(), purpose="write"
            )
        )
        beat = (now - heartbeat).isoformat() if heartbeat is not None else None
        s.merge(
            MetaRow(
                key=lock.LOCK_META,
                value=json.dumps({"token": "other", "proc_start": proc_start, "heartbeat": beat}),
            )
        )


def _refused(novel_path: Path) -> lock.ProjectLocked:
    with pytest.raises(lock.ProjectLocked) as info:
        NovelStore.open(novel_path, write=True)
    return info.value


@linux_only
def test_the_lock_records_host_pid_and_process_start_time(store: NovelStore) -> None:
    held = store._lock
    assert held is not None
    assert held.host == socket.gethostname() and held.pid == os.getpid()
    assert held.proc_start == lock.process_start_time(os.getpid()) is not None
    assert held.heartbeat is not None


@linux_only
def test_a_reused_pid_is_stale_at_once_and_taken_over(
    store: NovelStore, novel_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    real = lock.process_start_time(sleeper.pid)
    assert real is not None
    # The pid runs, but it is not the process that took the lock: it started at another time.
    _plant(
        store, pid=sleeper.pid, host=socket.gethostname(), started=timedelta(hours=1), proc_start=real - 100
    )
    store.close()
    with NovelStore.open(novel_path, write=True) as again:
        assert again._lock is not None and again._lock.replaced is not None
        assert again._lock.replaced.pid == sleeper.pid


@linux_only
def test_the_same_live_process_keeps_its_lock(
    store: NovelStore, novel_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    real = lock.process_start_time(sleeper.pid)
    _plant(store, pid=sleeper.pid, host=socket.gethostname(), started=timedelta(hours=5), proc_start=real)
    refused = _refused(novel_path)
    assert not refused.stale and refused.holder.pid == sleeper.pid


def test_another_hosts_lock_with_a_fresh_heartbeat_is_live_however_old(
    store: NovelStore, novel_path: Path
) -> None:
    _plant(store, pid=4242, host="another-laptop", started=timedelta(days=2), heartbeat=timedelta(minutes=1))
    refused = _refused(novel_path)
    assert not refused.stale
    message = str(refused)
    assert "another-laptop" in message and "4242" in message
    assert "最近心跳" in message and "开始于" in message
    with pytest.raises(lock.ProjectLocked):
        lock.clear_stale(store.engine)


def test_another_hosts_lock_without_heartbeat_for_ten_minutes_is_stale_but_not_taken(
    store: NovelStore, novel_path: Path
) -> None:
    _plant(
        store, pid=4242, host="another-laptop", started=timedelta(hours=1), heartbeat=timedelta(minutes=11)
    )
    refused = _refused(novel_path)
    assert refused.stale
    assert "novel unlock" in str(refused)
    assert lock.clear_stale(store.engine) is not None


def test_the_heartbeat_is_refreshed_while_held(store: NovelStore) -> None:
    held = store._lock
    assert held is not None
    _plant(
        store,
        pid=os.getpid(),
        host=socket.gethostname(),
        started=timedelta(hours=1),
        heartbeat=timedelta(hours=1),
    )
    with Session(writer(store.engine)) as s, s.begin():
        row = s.get(LockRow, 1)
        assert row is not None
        row.token = held.token
        meta = s.get(MetaRow, lock.LOCK_META)
        assert meta is not None
        meta.value = meta.value.replace('"other"', f'"{held.token}"')
    beat = lock.Heartbeat(store.engine, held.token, interval=timedelta(milliseconds=50))
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with Session(store.engine) as s:
                row = s.get(LockRow, 1)
                assert row is not None
                info = lock._info(row, s.get(MetaRow, lock.LOCK_META))
            if info.heartbeat and datetime.now(UTC) - info.heartbeat < timedelta(seconds=30):
                break
            time.sleep(0.05)
        else:
            pytest.fail("the heartbeat was not refreshed")
    finally:
        beat.stop()


def test_closing_removes_the_lock_and_its_heartbeat(store: NovelStore, novel_path: Path) -> None:
    store.close()
    with NovelStore.open(novel_path, readonly=True) as ro, Session(ro.engine) as s:
        assert s.get(LockRow, 1) is None
        assert s.get(MetaRow, lock.LOCK_META) is None
