"""`novel rebuild` and `novel cascade` as an author runs them against the fake model (issue 15 points 1 and 4):
chapter 3 brings in a key that chapter 5 hands on; the author edits chapter 3 so the key never appears."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.storage.store import NovelStore
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.lock_holder import held_by_another_writer
from tests.pipeline import rebuild_novel as rn


@pytest.fixture
def keyed(tmp_path: Path) -> Path:
    path = rn.make_novel(tmp_path / "钥匙.novel")
    rn.edit_chapter_3(path)
    return path


def _snapshot(path: Path) -> dict[str, object]:
    with NovelStore.open(path, write=False) as store:
        return {
            "versions": store.state_versions(),
            "state": store.current_state(),
            "summaries": {n: store.summary(n) for n in range(1, 6)},
            "stale": store.stale_chapters(),
            "points": len(store.chapter_points()),
            "history": store.history_position(),
        }


def test_rebuild_from_3_shows_the_item_change_and_names_chapter_5(
    keyed: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _snapshot(keyed)["stale"] == [3, 4, 5]
    fake.script("summarizer", rn.EDITED_3_REPLY)

    assert main(["rebuild", str(keyed), "--from-chapter", "3"]) == 0
    out = capsys.readouterr().out
    assert "物品 青铜钥匙：持有者 林风 → 已不存在" in out
    assert "第5章：" in out
    assert "物品 青铜钥匙 在新状态中已不存在，第5章摘要仍写到它" in out
    assert "伏笔 ancient-door 在新状态中从未埋下，第5章却在推进它" in out
    assert "状态 op 不再适用" in out  # chapter 5 took the key out of 林风's pockets

    # Only chapter 3 was re-summarized; chapters 4 and 5 replayed their ops.
    assert len(fake.requests_for("summarizer")) == 1
    with NovelStore.open(keyed, write=False) as store:
        assert store.stale_chapters() == []
        assert store.summary(3) is not None and "抄了一天经书" in store.summary(3)
        assert store.current_state()["characters"]["lin-feng"]["location"] == "后山"
        assert set(store.cascade()) == {5}
        assert {c.status for c in store.list_chapters()} == {"committed"}
        assert store.chapter_point(3).kind == "rebuild"
        ledger = store.document_json("foreshadowing/global.json")
        door = next(t for t in ledger["foreshadowing"] if t["id"] == "ancient-door")
        assert door["planted_chapter"] is None  # chapter 3 no longer plants it
        # The memory after the chain is not the rebuilt chapter 3's: chapters 4 and 5 wrote on after it, and
        # the author edited it after chapter 5 — that edit stays.
        assert store.document("storylines/main_arc/memory.md") == rn.TODAY_MEMORY
        point3 = store.chapter_point(3)
        assert (
            store.document_at("storylines/main_arc/memory.md", point3.docs_after)
            == "主线记忆：第3章林风抄经。"
        )
        point4 = store.chapter_point(4)
        assert (
            store.document_at("storylines/main_arc/memory.md", point4.docs_after)
            == "主线记忆：写到第4章为止。"
        )


def test_the_summarizer_reads_the_memory_and_state_of_chapter_3s_time(
    keyed: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.script("summarizer", rn.EDITED_3_REPLY)
    assert main(["rebuild", str(keyed), "--from-chapter", "3", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["resummarized"] == [3]
    assert "5" in report["disagreeing"]
    assert report["changes"]["3"][0].startswith("人物 林风：位置 山门 → 藏经阁")

    [request] = fake.requests_for("summarizer")
    sent = json.dumps(request.body, ensure_ascii=False)
    assert rn.OLD_MEMORY in sent  # the memory as it was when chapter 3 was written …
    assert rn.TODAY_MEMORY not in sent  # … not today's
    assert "后山" not in sent  # the state after chapter 2, not after chapter 5


def test_rebuild_from_a_later_chapter_starts_at_the_first_stale_one(
    keyed: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.script("summarizer", rn.EDITED_3_REPLY)
    assert main(["rebuild", str(keyed), "--from-chapter", "4", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["chapter"] == 3 and report["requested"] == 4
    assert "第 3 章在第 4 章之前就已过期，重建从第 3 章开始" in report["notes"][0]


def test_cascade_lists_and_rejudges_in_one_batch(
    keyed: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.script("summarizer", rn.EDITED_3_REPLY)
    assert main(["rebuild", str(keyed), "--from-chapter", "3"]) == 0
    capsys.readouterr()
    assert main(["cascade", str(keyed), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert list(listed["chapters"]) == ["5"]

    assert main(["cascade", str(keyed), "--rejudge", "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["rejudged"] == [5] and done["chapters"] == {}
    with NovelStore.open(keyed, write=False) as store:
        assert store.cascade() == {}
        assert store.evaluation(5) is not None


def test_a_chapter_that_does_not_exist_changes_nothing(
    keyed: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _snapshot(keyed)
    assert main(["rebuild", str(keyed), "--from-chapter", "9"]) == 1
    assert "错误 / error: 第 9 章不存在：可重建的章节为第 1-5 章" in capsys.readouterr().err
    assert main(["rebuild", str(keyed), "--from-chapter", "0"]) == 1
    assert _snapshot(keyed) == before
    assert fake.requests_for("summarizer") == []


def test_a_failing_summarizer_changes_nothing(
    keyed: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _snapshot(keyed)
    fake.set_default("summarizer", "这不是 JSON")
    assert main(["rebuild", str(keyed), "--from-chapter", "3"]) == 1
    err = capsys.readouterr().err
    assert "错误 / error: 第 3 章的摘要未能生成，小说未改动" in err
    assert _snapshot(keyed) == before


def test_rebuild_in_a_novel_locked_by_another_writer_exits_3(
    keyed: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _snapshot(keyed)
    with held_by_another_writer(keyed):
        assert main(["rebuild", str(keyed), "--from-chapter", "3"]) == 3
        assert "错误 / error:" in capsys.readouterr().err
    assert _snapshot(keyed) == before
    assert fake.requests_for("summarizer") == []
