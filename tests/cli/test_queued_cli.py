"""``novel start -n K`` runs a queued run through the orchestrator: the next chapter is drafted while the one
before is judged, and the progress on stderr says which chapter each stage belongs to."""

from __future__ import annotations

from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.storage.store import NovelStore
from tests.fakes.anthropic_server import FakeAnthropicServer


def test_start_n_drafts_the_next_chapter_early_and_says_so(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["start", str(novel), "-n", "2", "--non-interactive"]) == 0
    err = capsys.readouterr().err
    assert "第4章 提前开始写作（第3章评审期间）" in err
    assert "  · 第4章 写作" in err  # chapter 4's stage, printed while chapter 3 is the one in flight
    assert "第5章 提前开始写作" not in err  # the last chapter of the queue drafts nothing after it
    with NovelStore.open(novel, write=False) as store:
        assert store.checkpoint()["last_completed_chapter"] == 4
        assert store.list_staging() == []
    assert len(fake.requests_for("chapter_writer")) == 2
