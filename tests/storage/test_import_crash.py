"""kill -9 at any point of import-text, import-folder, a research import or export-folder: the retry of the
same operation succeeds with no manual step (no half novel, no stale lock, no half folder in the way).

A child process prepares its input, says "ready", starts the operation when told and is killed with SIGKILL
after a random moment (before, during or after the work). The parent then checks that the result is all or
nothing and runs the operation again in-process. A few trials per operation run by default, hundreds in the
``slow`` run.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from novel_desktop.analysis.manuscript import split_manuscript
from novel_desktop.storage.folder import export_folder, import_folder
from novel_desktop.storage.manuscript_import import import_manuscript
from novel_desktop.storage.store import NovelStore
from tests.conftest import FIXTURES

SEED_PROJECT = FIXTURES / "seed_project"
CHAPTERS = 300
NOTES = {f"research/note-{i:03d}.md": f"# 资料 {i}\n\n" + "山川地理。" * 300 + "\n" for i in range(60)}
REPO = Path(__file__).resolve().parents[2]
#: How long after "go" the kill may come, per operation: about the operation's own duration.
KILL_WITHIN = {"import-text": 0.5, "import-folder": 0.4, "export-folder": 0.2, "research": 0.1}
#: (operation, "finished" | "interrupted") → count, to show the kills landed on both sides.
OUTCOMES: Counter[tuple[str, str]] = Counter()

CHILD = r"""
import sys
from pathlib import Path
from novel_desktop.analysis.manuscript import split_manuscript
from novel_desktop.storage.folder import export_folder, import_folder
from novel_desktop.storage.manuscript_import import import_manuscript
from novel_desktop.storage.store import NovelStore
from tests.storage.test_import_crash import NOTES, manuscript

op, a, b = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
split = split_manuscript(manuscript()) if op == "import-text" else None
print("ready", flush=True)
sys.stdin.readline()
if op == "import-text":
    import_manuscript(split, b, title="书")
elif op == "import-folder":
    import_folder(a, b)
elif op == "export-folder":
    with NovelStore.open(a, readonly=True) as store:
        export_folder(store, b, force=True)
elif op == "research":
    with NovelStore.open(a, write=True) as store:
        store.put_documents(NOTES)
print("done", flush=True)
"""


def manuscript() -> str:
    return "".join(f"第{n}章 标题{n}\n　　" + "林风走进山门。" * 200 + "\n" for n in range(1, CHAPTERS + 1))


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _run_and_kill(op: str, a: Path, b: Path, rng: random.Random) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, op, str(a), str(b)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=REPO,
        env=env,
    )
    assert child.stdout is not None and child.stdin is not None
    assert child.stdout.readline().strip() == b"ready"
    child.stdin.write(b"go\n")
    child.stdin.flush()
    time.sleep(rng.random() * KILL_WITHIN[op])
    child.send_signal(signal.SIGKILL)
    child.wait()
    child.stdout.close()
    child.stdin.close()


def _no_temporaries(folder: Path) -> None:
    left = [p.name for p in folder.iterdir() if p.name.startswith(".") and "-" in p.name]
    assert left == [], left


def _check_novel(novel: Path, chapters: int) -> None:
    with NovelStore.open(novel, write=True) as store:  # no stale lock in the way
        assert store.status().chapters == chapters


def _trial_import_text(tmp: Path, rng: random.Random) -> None:
    novel = tmp / "书.novel"
    _run_and_kill("import-text", tmp, novel, rng)
    OUTCOMES["import-text", "finished" if novel.exists() else "interrupted"] += 1
    if novel.exists():  # finished before the kill: it must be whole
        _check_novel(novel, CHAPTERS)
        novel.unlink()
    import_manuscript(split_manuscript(manuscript()), novel, title="书")
    _check_novel(novel, CHAPTERS)
    _no_temporaries(tmp)


def _trial_import_folder(tmp: Path, rng: random.Random) -> None:
    novel = tmp / "n.novel"
    chapters = len(list((SEED_PROJECT / "chapters").glob("chapter-*.md")))
    _run_and_kill("import-folder", SEED_PROJECT, novel, rng)
    OUTCOMES["import-folder", "finished" if novel.exists() else "interrupted"] += 1
    if novel.exists():
        _check_novel(novel, chapters)
        novel.unlink()
    import_folder(SEED_PROJECT, novel)
    _check_novel(novel, chapters)
    _no_temporaries(tmp)


def _trial_export_folder(tmp: Path, rng: random.Random, novel: Path, expected: dict[str, bytes]) -> None:
    out = tmp / "out"
    if out.exists():
        shutil.rmtree(out)
    (tmp / "out").mkdir()
    (out / "old.txt").write_text("旧的导出", encoding="utf-8")
    _run_and_kill("export-folder", novel, out, rng)
    got = _tree(out)
    OUTCOMES["export-folder", "finished" if got == expected else "interrupted"] += 1
    assert got in ({"old.txt": "旧的导出".encode()}, expected)  # the old folder or the new one, never half
    with NovelStore.open(novel, readonly=True) as store:
        export_folder(store, out, force=True)
    assert _tree(out) == expected
    _no_temporaries(tmp)


def _trial_research(tmp: Path, rng: random.Random, novel: Path) -> None:
    with NovelStore.open(novel, readonly=True) as store:
        before = set(store.list_documents("research/"))
    _run_and_kill("research", novel, novel, rng)
    with NovelStore.open(novel, write=True) as store:  # the dead writer's lock is taken over
        present = set(store.list_documents("research/"))
        assert present in (before, before | set(NOTES))  # all notes or none
        OUTCOMES["research", "finished" if present != before else "interrupted"] += 1
        store.put_documents(NOTES)
        assert set(store.list_documents("research/")) == before | set(NOTES)
        for name in NOTES:
            store.delete_document(name)


def _trials(tmp_path: Path, count: int, seed: int) -> None:
    rng = random.Random(seed)
    folder_novel = tmp_path / "source" / "n.novel"
    folder_novel.parent.mkdir()
    import_folder(SEED_PROJECT, folder_novel)
    with NovelStore.open(folder_novel, readonly=True) as store:
        export_folder(store, tmp_path / "expected")
    expected = _tree(tmp_path / "expected")
    for i in range(count):
        work = tmp_path / f"t{i}"
        work.mkdir()
        _trial_import_text(work, rng)
        _trial_import_folder(work, rng)
        _trial_export_folder(work, rng, folder_novel, expected)
        _trial_research(work, rng, folder_novel)
        shutil.rmtree(work)


@pytest.mark.timeout(300)
def test_kill_9_during_imports_and_exports_then_the_retry_succeeds(tmp_path: Path) -> None:
    _trials(tmp_path, 3, seed=17)


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_kill_9_hundreds_of_times(tmp_path: Path) -> None:
    OUTCOMES.clear()
    _trials(tmp_path, 50, seed=1717)  # 200 kills: four operations a trial
    print(dict(OUTCOMES))
    for op in KILL_WITHIN:  # the kills landed both before and after each operation finished
        assert OUTCOMES[op, "finished"] > 0 and OUTCOMES[op, "interrupted"] > 0, dict(OUTCOMES)
