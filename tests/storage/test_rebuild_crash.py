"""A rebuild is one transaction: killing the process at any moment leaves the novel exactly as before the rebuild
or exactly as after it (issue 15). The child rebuilds the scripted key novel with a Summarizer written in
Python, pausing a random moment at each chapter of the chain inside the write transaction; the parent kills
it with SIGKILL at a random time, many times, each on a fresh copy, and compares the file with both ends."""

from __future__ import annotations

import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from novel_desktop.storage import lock
from novel_desktop.storage.engine import make_engine
from novel_desktop.storage.store import NovelStore
from tests.pipeline import rebuild_novel as rn

CHILD = r"""
import asyncio, random, sys, time
import novel_desktop.storage.rebuild as rebuild_storage
from novel_desktop.agents.ports import AgentResult, ChapterBrief, SummaryOutput
from novel_desktop.pipeline.rebuild import rebuild_from
from novel_desktop.storage.store import NovelStore

path, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
real_step, real_point = rebuild_storage.replay_step, rebuild_storage.record_point

def slow_step(*a, **k):
    time.sleep(rng.random() * 0.02)
    return real_step(*a, **k)

def slow_point(*a, **k):
    time.sleep(rng.random() * 0.02)
    return real_point(*a, **k)

rebuild_storage.replay_step, rebuild_storage.record_point = slow_step, slow_point

class Summarizer:
    async def brief(self, chapter):
        return ChapterBrief(chapter=chapter, volume=1, storyline_id="main_arc")
    async def summarize(self, brief, text):
        time.sleep(rng.random() * 0.02)
        ops = [{"op": "set", "path": "characters.lin-feng.location", "value": "藏经阁"}]
        return AgentResult(SummaryOutput("林风抄经。", {"ops": ops}, "main_arc", "记忆：抄经。"))

store = NovelStore.open(path, write=True)
print("ready", flush=True)
asyncio.run(rebuild_from(store, Summarizer(), 3))
store.close()
print("done", flush=True)
"""

KILLS = 12


def _view(path: Path) -> dict[str, Any]:
    """The novel as an author sees it (no timestamps, no staging)."""
    con = sqlite3.connect(path)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        con.close()
    engine = make_engine(path)
    try:
        lock.clear_stale(engine)
    except lock.ProjectLocked:
        pytest.fail("a killed writer's lock must be reported stale")
    engine.dispose()
    with NovelStore.open(path, write=False) as store:
        cascade = store.document_json("state/history/cascade.json")
        return {
            "versions": store.state_versions(),
            "state": store.current_state(),
            "summaries": {n: store.summary(n) for n in range(1, 6)},
            "chapters": [(c.number, c.status) for c in store.list_chapters()],
            "stale": store.stale_chapters(),
            "ledger": store.document_json("foreshadowing/global.json"),
            "memory": store.document("storylines/main_arc/memory.md"),
            "cascade": cascade.get("chapters") if isinstance(cascade, dict) else None,
            "points": sorted((p.chapter, p.kind, p.state_version) for p in store.chapter_points().values()),
            "changelog": len(store.changelog()),
        }


def _run(path: Path, seed: int, kill_after: float | None) -> bool:
    """Run the child; kill it ``kill_after`` seconds after it is ready. True when it finished."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(seed)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    if kill_after is None:
        assert child.wait(timeout=60) == 0
        return True
    time.sleep(kill_after)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    return child.returncode == 0


def test_kill_9_during_a_rebuild_leaves_the_novel_before_or_after(tmp_path: Path) -> None:
    original = rn.make_novel(tmp_path / "原.novel")
    rn.edit_chapter_3(original)
    before = _view(original)
    done = tmp_path / "完成.novel"
    shutil.copy(original, done)
    assert _run(done, 0, None)
    after = _view(done)
    assert after != before and after["stale"] == [] and before["stale"] == [3, 4, 5]

    rng = random.Random(15)
    seen = set()
    for i in range(KILLS):
        target = tmp_path / f"杀{i}.novel"
        shutil.copy(original, target)
        _run(target, i, rng.random() * 0.25)
        got = _view(target)
        assert got in (before, after), f"kill {i} left the novel between before and after"
        seen.add("after" if got == after else "before")
    assert "before" in seen  # some kills landed before the transaction committed
