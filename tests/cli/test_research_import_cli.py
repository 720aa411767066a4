"""``novel research import``: every note or none (one transaction), each file read with a cap."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.storage import folder as folder_module
from novel_desktop.storage.store import NovelStore

REPO = Path(__file__).resolve().parents[2]
NOTES = 40

CHILD = r"""
import sys
from novel_desktop.cli import main
print("ready", flush=True)
sys.stdin.readline()
sys.exit(main(["research", "import", *sys.argv[1:]]))
"""


@pytest.fixture
def novel(tmp_path: Path) -> Path:
    path = tmp_path / "我的小说.novel"
    NovelStore.create(path, title="剑来").close()
    return path


def _notes(folder: Path) -> list[Path]:
    folder.mkdir(exist_ok=True)
    paths = []
    for i in range(NOTES):
        path = folder / f"资料{i:03d}.txt"
        path.write_text(f"第 {i} 份资料。\n" + "山川地理。" * 2000, encoding="utf-8")
        paths.append(path)
    return paths


def _research(novel: Path) -> list[str]:
    with NovelStore.open(novel, readonly=True) as store:
        return store.list_documents("research/")


def test_a_file_over_the_cap_is_a_warning_and_the_others_import(
    novel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    small = tmp_path / "官制.md"
    small.write_text("# 官制\n\n县令管一县。\n", encoding="utf-8")
    big = tmp_path / "地方志.txt"
    big.write_text("志" * 4000, encoding="utf-8")
    monkeypatch.setattr(folder_module, "MAX_IMPORT_FILE_BYTES", 1024)
    assert main(["research", "import", str(novel), str(big), str(small)]) == 0
    captured = capsys.readouterr()
    assert "research/官制.md" in captured.out
    assert "地方志.txt" in captured.out + captured.err and "超过" in captured.out + captured.err
    assert _research(novel) == ["research/官制.md"]


def test_a_fifo_is_skipped_not_waited_on(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "管道.txt"
    os.mkfifo(fifo)
    note = tmp_path / "官制.md"
    note.write_text("# 官制\n", encoding="utf-8")
    assert main(["research", "import", str(novel), str(fifo), str(note)]) == 0
    assert "管道.txt" in "".join(capsys.readouterr())
    assert _research(novel) == ["research/官制.md"]


def test_nothing_importable_exits_1_and_writes_nothing(
    novel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "空.txt"
    empty.write_text("  \n", encoding="utf-8")
    assert main(["research", "import", str(novel), str(empty)]) == 1
    assert "空" in capsys.readouterr().err
    assert _research(novel) == []


def _trial(novel: Path, files: list[Path], rng: random.Random) -> None:
    before = _research(novel)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(novel), *map(str, files)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert child.stdout is not None and child.stdin is not None
    assert child.stdout.readline().strip() == b"ready"
    child.stdin.write(b"go\n")
    child.stdin.flush()
    time.sleep(rng.random() * 0.3)
    child.send_signal(signal.SIGKILL)
    child.wait()
    child.stdout.close()
    child.stdin.close()
    added = len(_research(novel)) - len(before)
    assert added in (0, NOTES), added  # all or none
    # The retry of the same command succeeds with no manual step (no stale lock, no half import).
    assert main(["research", "import", str(novel), *map(str, files)]) == 0
    assert len(_research(novel)) - len(before) - added == NOTES


@pytest.mark.parametrize("seed", range(3))
def test_kill_9_during_a_research_import_then_the_retry_succeeds(
    novel: Path, tmp_path: Path, seed: int, capsys: pytest.CaptureFixture[str]
) -> None:
    _trial(novel, _notes(tmp_path / "资料"), random.Random(seed))


@pytest.mark.slow
def test_kill_9_during_a_research_import_many_times(novel: Path, tmp_path: Path) -> None:
    files = _notes(tmp_path / "资料")
    rng = random.Random(17)
    for _ in range(100):
        _trial(novel, files, rng)
