"""A rollback is one transaction: killing it at any moment leaves the novel exactly as before or exactly as
after (a dump of every table compared), never in between."""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from novel_desktop.storage.store import NovelStore
from tests.storage.test_rollback import write_six

CHILD = r"""
import random, sys, time
from novel_desktop.storage.store import NovelStore

path, target, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
store = NovelStore.open(path, write=True)
print("ready", flush=True)
def step(name):
    print(name, flush=True)
    time.sleep(rng.random() * 0.01)

store.rollback_to(target, on_step=step)
print("done", flush=True)
time.sleep(60)
"""

KILLS = 16
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?")


def dump(path: Path) -> dict[str, list[tuple]]:
    """Every table's rows (times blanked: two runs of the same rollback differ only in when), the writer
    lock and its heartbeat aside."""
    con = sqlite3.connect(path)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        out = {}
        for table in sorted(t for t in tables if t != "writer_lock"):
            rows = con.execute(f'SELECT * FROM "{table}"').fetchall()
            if table == "meta":  # the lock's heartbeat
                rows = [r for r in rows if r[0] != "writer_lock"]
            out[table] = sorted(
                (tuple(_TIME.sub("T", v) if isinstance(v, str) else v for v in row) for row in rows), key=repr
            )
        return out
    finally:
        con.close()


def _diff(one: dict[str, list[tuple]], two: dict[str, list[tuple]]) -> dict[str, object]:
    return {t: set(one[t]) ^ set(two.get(t, [])) for t in one if one[t] != two.get(t)}


def _copy(src: Path, dst: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{dst}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(src, dst)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_killing_a_rollback_leaves_the_novel_before_or_after(tmp_path: Path) -> None:
    base = tmp_path / "base.novel"
    with NovelStore.create(base, title="回滚崩溃") as store:
        write_six(store)
    before = dump(base)
    after = {}
    for target in range(1, 6):
        _copy(base, tmp_path / "after.novel")
        with NovelStore.open(tmp_path / "after.novel") as store:
            store.rollback_to(target)
        after[target] = dump(tmp_path / "after.novel")
        assert after[target] != before

    rng = random.Random(20261125)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    work = tmp_path / "work.novel"
    seen = []
    for i in range(KILLS):
        _copy(base, work)
        target = rng.randint(1, 5)
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(work), str(target), str(i)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line.strip() == b"ready", child.stderr.read() if child.stderr else b""
        # Kill it after a random number of its steps (inside the transaction, or once it is done).
        for _ in range(rng.randint(1, 9)):
            if child.stdout.readline().strip() in (b"done", b""):
                break
        time.sleep(rng.uniform(0.0, 0.005))
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        now = dump(work)
        assert now in (before, after[target]), f"kill {i}: neither before nor after: {_diff(now, before)}"
        seen.append("before" if now == before else "after")
        with NovelStore.open(work) as store:  # a killed writer's lock is taken over; the novel opens
            assert store.checkpoint()["last_completed_chapter"] in (6, target)
    print("after each kill:", seen)
    assert "before" in seen, "no kill landed inside the rollback"
