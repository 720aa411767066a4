"""The chapter commit: staging becomes the novel in one transaction, or nothing changes."""

from __future__ import annotations

import json

import pytest

from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore, StoreError
from tests.storage.staging import stage_chapter


def test_commit_moves_staging_into_the_novel_in_one_step(store: NovelStore) -> None:
    text = "# 第1章 入山\n\n　　林风背着铁剑走进青云山门。“到了。”他说。"
    delta = {
        "chapter": 1,
        "base_state_version": 0,
        "storyline_id": "main_arc",
        "ops": [
            {"op": "set", "path": "characters.lin-feng.location", "value": "青云山"},
            {"op": "set", "path": "characters.林风.location", "value": "青云山"},
            {"op": "foreshadow", "path": "ancient_prophecy", "value": "planted", "detail": "山门石碑"},
        ],
    }
    stage_chapter(store, 1, text, delta=delta)
    store.put_staging(layout.memory_path("main_arc"), "林风入青云山。", chapter=1)

    result = store.commit_chapter(1, storyline_id="main_arc")

    assert result.state_version == 1
    assert result.applied_ops == 2
    assert len(result.dropped_ops) == 1 and "slug" in result.dropped_ops[0]
    assert store.chapter_text(1) == text
    assert [r.kind for r in store.revisions(1)] == ["draft", "refined"]
    (info,) = store.list_chapters()
    assert info.title == "第1章 入山"
    assert info.chars == 26  # 5 in the heading (第 1 章 入 山) + 21: Han and full-width punctuation only
    assert store.summary(1) == "第1章摘要"
    assert store.evaluation(1)["overall"] == 3.8
    assert store.pipeline_log(1)["total_cost_usd"] == 0.5
    assert store.current_state()["characters"]["lin-feng"]["location"] == "青云山"
    assert store.document(layout.memory_path("main_arc")) == "林风入青云山。"
    fs = json.loads(store.document(layout.GLOBAL_FORESHADOWING))["foreshadowing"]
    assert fs[0]["id"] == "ancient_prophecy" and fs[0]["planted_chapter"] == 1
    cp = store.checkpoint()
    assert (cp["last_completed_chapter"], cp["pipeline_stage"], cp["inflight_chapter"]) == (
        1,
        "committed",
        None,
    )
    assert store.list_staging() == []
    status = store.status()
    assert (status.chapters, status.total_chars, status.mean_score) == (1, 26, 3.8)
    assert (status.open_foreshadowing, status.state_version) == (1, 1)


def test_commit_without_staged_text_changes_nothing(store: NovelStore) -> None:
    store.put_staging(layout.summary_path(1), "摘要")
    with pytest.raises(StoreError, match="没有暂存的正文"):
        store.commit_chapter(1)
    assert store.list_chapters() == []
    assert store.list_staging() == [layout.summary_path(1)]
    assert store.checkpoint()["last_completed_chapter"] == 0


def test_unusable_ops_are_skipped_and_counted_towards_a_rebuild(store: NovelStore) -> None:
    results = []
    for n in range(1, 4):
        stage_chapter(store, n, f"第{n}章正文")
        store.put_staging(layout.delta_path(n), "{这不是 JSON")
        results.append(store.commit_chapter(n))
    assert all(r.ops_skipped for r in results)
    assert [r.rebuild_recommended for r in results] == [False, False, True]
    assert store.checkpoint()["last_completed_chapter"] == 3
    assert store.state_version() == 0


def test_a_write_that_fails_rolls_back_whole(store: NovelStore, monkeypatch: pytest.MonkeyPatch) -> None:
    stage_chapter(store, 1, "第1章")

    def boom(name: str) -> None:
        if name == "evaluation":
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        store.commit_chapter(1, on_step=boom)
    assert store.list_chapters() == []
    assert store.summary(1) is None
    assert len(store.list_staging(1)) == 5  # text, draft, summary, evaluation, log: all still staged
    assert store.checkpoint()["last_completed_chapter"] == 0
