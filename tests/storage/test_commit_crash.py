"""A chapter commit is one transaction: killing the writer at any moment leaves the novel before or after.

A child process stages and commits chapter after chapter, pausing a random moment between the steps of each
commit; the test kills it with SIGKILL at a random time, many times over, and checks the file after each kill.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from novel_desktop.storage import layout, lock
from novel_desktop.storage.engine import make_engine
from novel_desktop.storage.store import NovelStore

CHILD = r"""
import json, random, sys, time
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore

path, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
store = NovelStore.open(path, write=True)
print("ready", flush=True)
n = store.checkpoint()["last_completed_chapter"] + 1
while True:
    state_version = store.state_version()
    store.update_checkpoint(inflight_chapter=n, pipeline_stage="drafting")
    store.put_staging(layout.draft_path(n), f"# 第{n}章 初稿\n\n林风走进山门。" * 20, kind="draft")
    store.put_staging(layout.chapter_path(n), f"# 第{n}章 定稿\n\n林风踏进山门，抬头看天。" * 20, kind="refined")
    store.put_staging(layout.summary_path(n), f"第{n}章摘要：林风入山。")
    store.put_staging(layout.delta_path(n), json.dumps({
        "chapter": n, "base_state_version": state_version, "storyline_id": "main_arc",
        "ops": [
            {"op": "set", "path": "characters.lin-feng.location", "value": f"第{n}峰"},
            {"op": "foreshadow", "path": "ancient_prophecy", "value": "advanced", "detail": f"第{n}章"},
        ],
    }, ensure_ascii=False))
    store.put_staging(layout.evaluation_path(n), json.dumps({"chapter": n, "overall": 3.9, "recommendation": "pass"}))
    store.put_staging(layout.memory_path("main_arc"), f"主线记忆 {n}", chapter=n)
    store.commit_chapter(n, on_step=lambda _s: time.sleep(rng.random() * 0.004))
    n += 1
"""

KILLS = 30


def _check(path: Path) -> int:
    """Assert the file is whole and consistent; return the number of committed chapters."""
    con = sqlite3.connect(path)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        con.close()
    engine = make_engine(path)
    try:
        lock.clear_stale(engine)  # raises for a live holder
    except lock.ProjectLocked:
        pytest.fail("a killed writer's lock must be reported stale")
    engine.dispose()
    with NovelStore.open(path, write=False) as store:
        chapters = store.list_chapters()
        count = len(chapters)
        cp = store.checkpoint()
        assert cp["last_completed_chapter"] == count
        assert [c.number for c in chapters] == list(range(1, count + 1))
        for c in chapters:
            assert store.summary(c.number) == f"第{c.number}章摘要：林风入山。"
            assert store.evaluation(c.number) is not None
            assert [r.kind for r in store.revisions(c.number)] == ["draft", "refined"]
            assert store.chapter_text(c.number).startswith(f"# 第{c.number}章 定稿")
            assert not list(store.list_staging(c.number)), "committed chapters leave no staging"
        state = store.current_state()
        assert state["state_version"] == count
        if count:
            assert state["characters"]["lin-feng"]["location"] == f"第{count}峰"
            history = json.loads(store.document(layout.GLOBAL_FORESHADOWING))["foreshadowing"][0]["history"]
            assert len(history) == count
            assert store.document(layout.memory_path("main_arc")) == f"主线记忆 {count}"
        assert len(store.changelog()) == 2 * count
    return count


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_killing_the_writer_mid_commit_never_half_writes(novel_path: Path) -> None:
    NovelStore.create(novel_path, title="崩溃测试").close()
    rng = random.Random(20261122)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    counts = []
    for i in range(KILLS):
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(novel_path), str(i)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line.strip() == b"ready", child.stderr.read() if child.stderr else b""
        time.sleep(rng.uniform(0.005, 0.25))
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        counts.append(_check(novel_path))
    # The children really made progress between kills (so kills landed mid-work, not before it began).
    print("chapters after each kill:", counts)
    assert counts[-1] > KILLS // 2
    assert counts == sorted(counts)
