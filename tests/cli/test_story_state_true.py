"""Issue 15 in one story, as an author meets it on the command line: chapter 3 brings in a key that chapter 5
hands on; the author rewrites chapter 3 without it. Writing on is refused (nothing sent to the model) until the
rebuild, which names chapter 5 as contradicting the new state; then the author rolls back to chapter 4 and the
novel is exactly as it was right after chapter 4, with chapter 5 kept in the archive."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.storage.store import NovelStore
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.pipeline import rebuild_novel as rn


def _without_version(state: dict) -> dict:
    return {k: v for k, v in state.items() if k != "state_version"}


def test_edit_refuse_rebuild_cascade_then_rollback(
    tmp_path: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    novel = rn.make_novel(tmp_path / "钥匙.novel")
    rn.edit_chapter_3(novel)
    capsys.readouterr()

    assert main(["status", str(novel), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["stale_chapters"] == [3, 4, 5]
    assert main(["continue", str(novel), "--non-interactive"]) == 1
    err = capsys.readouterr().err
    assert f"novel rebuild {novel} --from-chapter 3" in err
    assert fake.requests == []  # the refusal came before any model request

    fake.script("summarizer", rn.EDITED_3_REPLY)
    assert main(["rebuild", str(novel), "--from-chapter", "3", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "5" in {str(k) for k in report["disagreeing"]}
    assert main(["status", str(novel), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["stale_chapters"] == []
    # (Writing chapter 6 after the rebuild: tests/cli/test_stale_cli.py.)

    with NovelStore.open(novel, write=False) as store:
        point = store.chapter_point(4)
        assert point is not None
        after_4 = store.state_at(point.state_version)
        memory_after_4 = store.document_at("storylines/main_arc/memory.md", point.docs_after)
        text_5 = store.chapter_text(5)
    assert after_4 is not None
    assert main(["rollback", str(novel), "--to-chapter", "4", "--yes"]) == 0
    assert "已回滚到第 4 章" in capsys.readouterr().out
    with NovelStore.open(novel, write=False) as store:
        assert _without_version(store.current_state()) == _without_version(after_4)
        assert store.document("storylines/main_arc/memory.md") == memory_after_4
        assert [c.number for c in store.list_chapters()] == [1, 2, 3, 4]
        assert store.checkpoint()["last_completed_chapter"] == 4
        archived = store.archived_chapters()
        assert [a.chapter for a in archived] == [5]
        assert store.archived_chapter(archived[0].id).content == text_5
    # Every model call of the story is in the novel's total.
    assert main(["status", str(novel), "--json"]) == 0
    cost = json.loads(capsys.readouterr().out)["cost"]
    assert cost["calls"] == len(fake.requests)
