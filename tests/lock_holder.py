"""Another process holding a novel open for writing, for the tests of what a locked novel does."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_HOLD = (
    "import sys, time\n"
    "from novel_desktop.storage.store import NovelStore\n"
    "s = NovelStore.open(sys.argv[1], write=True)\n"
    "print('held', flush=True)\n"
    "time.sleep(60)\n"
)


@contextmanager
def held_by_another_writer(novel: Path) -> Iterator[subprocess.Popen[str]]:
    """A child process holds ``novel``'s writer lock for the block (it is killed afterwards)."""
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(novel)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.kill()
        holder.wait()
