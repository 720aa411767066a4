"""The novel file: creation, settings of the SQLite file, chapters and revisions, state, staging, status."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore, ReadOnlyError, StoreError


def _stage_chapter(
    store: NovelStore, n: int, text: str, *, delta: dict | None = None, score: float = 3.8
) -> None:
    store.put_staging(layout.draft_path(n), text + "（初稿）", kind="draft")
    store.put_staging(layout.chapter_path(n), text, kind="refined")
    store.put_staging(layout.summary_path(n), f"第{n}章摘要")
    if delta is not None:
        store.put_staging(layout.delta_path(n), json.dumps(delta, ensure_ascii=False))
    store.put_staging(
        layout.evaluation_path(n), json.dumps({"chapter": n, "overall": score, "recommendation": "pass"})
    )
    store.put_staging(layout.log_path(n), json.dumps({"chapter": n, "total_cost_usd": 0.5}))


def test_new_novel_is_one_wal_sqlite_file_with_foreign_keys(store: NovelStore, novel_path: Path) -> None:
    assert novel_path.is_file()
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    meta = store.meta()
    assert meta["title"] == "测试小说"
    assert meta["genre"] == "玄幻"
    assert meta["platform"] == "qidian"
    assert meta["schema_version"] == "1"
    cp = store.checkpoint()
    assert cp["last_completed_chapter"] == 0
    assert cp["orchestrator_state"] == "INIT"
    assert cp["pipeline_stage"] is None


def test_create_never_overwrites_and_checks_its_input(
    store: NovelStore, novel_path: Path, tmp_path: Path
) -> None:
    with pytest.raises(StoreError, match="已存在"):
        NovelStore.create(novel_path, title="另一部")
    with pytest.raises(StoreError, match="书名"):
        NovelStore.create(tmp_path / "a.novel", title="  ")
    with pytest.raises(StoreError, match="平台"):
        NovelStore.create(tmp_path / "b.novel", title="书", platform="douyin")
    assert not (tmp_path / "a.novel").exists()
    assert not (tmp_path / "b.novel").exists()


def test_open_refuses_what_is_not_a_novel(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="找不到"):
        NovelStore.open(tmp_path / "missing.novel")
    text = tmp_path / "notes.novel"
    text.write_text("第一章", encoding="utf-8")
    with pytest.raises(StoreError, match="不是"):
        NovelStore.open(text)
    other = tmp_path / "other.novel"
    sqlite3.connect(other).execute("CREATE TABLE t(x)").connection.commit()
    with pytest.raises(StoreError, match="不是"):
        NovelStore.open(other)


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
    _stage_chapter(store, 1, text, delta=delta)
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
        _stage_chapter(store, n, f"第{n}章正文")
        store.put_staging(layout.delta_path(n), "{这不是 JSON")
        results.append(store.commit_chapter(n))
    assert all(r.ops_skipped for r in results)
    assert [r.rebuild_recommended for r in results] == [False, False, True]
    assert store.checkpoint()["last_completed_chapter"] == 3
    assert store.state_version() == 0


def test_every_earlier_state_is_one_read_away(store: NovelStore) -> None:
    for n in range(1, 4):
        delta = {
            "chapter": n,
            "base_state_version": n - 1,
            "ops": [{"op": "set", "path": "world_state.time_marker", "value": f"第{n}天"}],
        }
        _stage_chapter(store, n, f"第{n}章", delta=delta)
        store.commit_chapter(n)
    assert store.state_versions() == [0, 1, 2, 3]
    assert store.state_at(2)["world_state"]["time_marker"] == "第2天"
    assert store.state_at(0)["world_state"] == {}
    assert store.state_at(9) is None
    assert [e["value"] for e in store.changelog(since_version=1)] == ["第2天", "第3天"]


def test_manual_edit_keeps_every_revision_and_marks_later_chapters(store: NovelStore) -> None:
    for n in range(1, 4):
        _stage_chapter(store, n, f"# 第{n}章\n正文{n}")
        store.commit_chapter(n)
    assert store.save_manual_edit(2, "# 第2章\n正文2") == []  # unchanged text writes nothing
    assert store.save_manual_edit(2, "# 第2章 改\n作者改过的正文") == [2, 3]
    assert store.chapter_text(2) == "# 第2章 改\n作者改过的正文"
    kinds = [r.kind for r in store.revisions(2)]
    assert kinds == ["draft", "refined", "manual"]
    first = store.revisions(2)[1]
    assert store.revision_text(first.id) == "# 第2章\n正文2"
    statuses = {c.number: c.status for c in store.list_chapters()}
    assert statuses == {1: "committed", 2: "needs_rebuild", 3: "needs_rebuild"}
    assert store.status().needs_rebuild == [2, 3]
    store.mark_rebuilt(2)
    assert store.status().needs_rebuild == [3]
    with pytest.raises(StoreError):
        store.save_manual_edit(9, "无")


def test_answers_are_stored_by_answer_path(store: NovelStore) -> None:
    path = "staging/novel-ask/chapter-048-draft.answers.json"
    store.put_answer(path, '{"version": 1}')
    assert store.answer(path) == '{"version": 1}'
    assert store.list_answers() == [path]
    store.delete_answer(path)
    assert store.answer(path) is None


def test_documents_only_take_seed_layout_paths(store: NovelStore) -> None:
    store.put_document("world/rules.json", '{"rules": []}')
    store.put_document("characters/active/lin-feng.json", "{}")
    assert store.list_documents("characters/") == ["characters/active/lin-feng.json"]
    with pytest.raises(StoreError):
        store.put_document("../etc/passwd", "x")


def test_read_only_store_refuses_writes(store: NovelStore, novel_path: Path) -> None:
    with NovelStore.open(novel_path, write=False) as ro:
        assert ro.meta()["title"] == "测试小说"
        with pytest.raises(ReadOnlyError, match="只读"):
            ro.put_staging("chapters/chapter-001.md", "x")


def test_a_write_that_fails_rolls_back_whole(store: NovelStore, monkeypatch: pytest.MonkeyPatch) -> None:
    _stage_chapter(store, 1, "第1章")

    def boom(name: str) -> None:
        if name == "evaluation":
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        store.commit_chapter(1, on_step=boom)
    assert store.list_chapters() == []
    assert store.summary(1) is None
    assert len(store.list_staging(1)) == 5  # text, draft, summary, evaluation, log: all still staged
    assert store.checkpoint()["last_completed_chapter"] == 0
