"""Benchmarks: run by hand (``python -m tests.benchmarks.<name>``), not by pytest. Only these may read the
full public-domain texts in ../shared/corpus; the tests use the excerpts in tests/fixtures/corpus/."""

from __future__ import annotations

import sys
from pathlib import Path

#: Where the full texts live: a folder named shared beside the repository.
CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"


def require_corpus(path: Path | None = None) -> Path:
    """``path`` (a corpus folder or one of its files; the default folder when None), or a clear message on
    stderr and exit status 2 when it does not exist."""
    path = CORPUS if path is None else path
    if not path.exists():
        print(
            f"找不到语料 corpus not found: {path}\n"
            "The benchmarks read the full public-domain texts in ../shared/corpus (beside the repository);\n"
            "put them there or pass --corpus PATH. The test suite does not need them.",
            file=sys.stderr,
        )
        raise SystemExit(2)
    return path
