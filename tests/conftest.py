"""Fixtures shared by every test: settings and data folders go to tmp_path, Qt runs offscreen."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: Public-domain excerpts of three novels (see tests/fixtures/README.md).
CORPUS = FIXTURES / "corpus"


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the real user's settings, data or API key."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("NOVEL_DESKTOP_CONFIG_DIR", str(home / "config"))
    monkeypatch.setenv("NOVEL_DESKTOP_DATA_DIR", str(home / "data"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


@pytest.fixture
def novel_path(tmp_path: Path) -> Path:
    """Where a test's fresh novel file goes."""
    return tmp_path / "测试小说.novel"


@pytest.fixture
def store(novel_path: Path) -> Iterator[object]:
    """A new novel, open for writing."""
    from novel_desktop.storage.store import NovelStore

    s = NovelStore.create(novel_path, title="测试小说", genre="玄幻", platform="qidian")
    yield s
    s.close()
