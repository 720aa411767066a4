"""Rollback to a chapter (issue 15 point 5): the chapters after it move to the archive, never destroyed, and
the state, memories, foreshadowing ledger, contracts and volume position are exactly as right after it."""

from __future__ import annotations

import json

import pytest

from novel_desktop.domain.records import ResummarizedChapter
from novel_desktop.storage import layout
from novel_desktop.storage.maintenance import drop_chapters
from novel_desktop.storage.rollback import RollbackRefused
from novel_desktop.storage.store import NovelStore, content_hash
from tests.storage.staging import stage_chapter

CONTRACT = "characters/active/lin-feng.json"


def _ops(n: int) -> list[dict]:
    return [
        {"op": "set", "path": "characters.lin-feng.location", "value": f"第{n}峰"},
        {"op": "inc", "path": "characters.lin-feng.level", "value": 1},
        {"op": "foreshadow", "path": "ancient_prophecy", "value": "advanced", "detail": f"第{n}章"},
    ]


def write_six(store: NovelStore) -> dict[int, dict]:
    """Six chapters with state ops, a memory and a ledger entry each, a contract update in 5 and 6, and the
    volume moving on at chapter 5. Returns what the novel looked like right after each chapter."""
    store.put_document(CONTRACT, '{"id": "lin-feng", "contracts": []}')
    after: dict[int, dict] = {}
    for n in range(1, 7):
        if n == 5:
            store.update_checkpoint(current_volume=2, orchestrator_state="WRITING")
        delta = {"chapter": n, "base_state_version": store.state_version(), "ops": _ops(n)}
        stage_chapter(store, n, f"# 第{n}章\n\n林风登上第{n}峰。", delta=delta)
        store.put_staging(layout.memory_path("main"), f"主线记忆到第{n}章", chapter=n)
        if n >= 5:
            store.put_staging(CONTRACT, json.dumps({"id": "lin-feng", "contracts": [n]}), chapter=n)
        store.commit_chapter(n)
        after[n] = {
            "state": store.current_state(),
            "memory": store.document(layout.memory_path("main")),
            "ledger": store.document(layout.GLOBAL_FORESHADOWING),
            "contract": store.document(CONTRACT),
            "checkpoint": store.checkpoint(),
        }
    return after


def _without_version(state: dict) -> dict:
    return {k: v for k, v in state.items() if k != "state_version"}


def test_rollback_to_4_brings_back_the_novel_right_after_chapter_4(store: NovelStore) -> None:
    after = write_six(store)
    texts = {n: store.chapter_text(n) for n in (5, 6)}
    revisions = {n: [r.kind for r in store.revisions(n)] for n in (5, 6)}

    plan = store.rollback_plan(4)
    assert [n for n, _t, _c in plan.chapters] == [5, 6]
    assert plan.chars == sum(c.chars for c in store.list_chapters() if c.number > 4) > 0
    report = store.rollback_to(4)

    assert report.removed == [5, 6]
    assert [c.number for c in store.list_chapters()] == [1, 2, 3, 4]
    state = store.current_state()
    assert state["state_version"] > after[6]["state"]["state_version"]
    assert _without_version(state) == _without_version(after[4]["state"])
    assert store.document(layout.memory_path("main")) == after[4]["memory"] == "主线记忆到第4章"
    assert store.document(layout.GLOBAL_FORESHADOWING) == after[4]["ledger"]
    assert store.document(CONTRACT) == after[4]["contract"] == '{"id": "lin-feng", "contracts": []}'
    cp = store.checkpoint()
    assert (cp["last_completed_chapter"], cp["current_volume"], cp["inflight_chapter"]) == (4, 1, None)
    status = store.status()
    assert (status.chapters, status.last_completed_chapter, status.stale_chapters) == (4, 4, [])
    point = store.chapter_point(4)
    assert point is not None
    assert point.kind == "rollback"
    assert store.chapter_point(5) is None

    archived = store.archived_chapters()
    assert [(a.chapter, a.rollback_id) for a in archived] == [(5, 1), (6, 1)]
    for info in archived:
        full = store.archived_chapter(info.id)
        assert full.content == texts[info.chapter]
        assert [r.kind for r in full.revisions] == revisions[info.chapter]
        assert full.summary == f"第{info.chapter}章摘要"

    # Restoring 6 first is refused (it is not the next chapter); 5 comes back, stale.
    with pytest.raises(RollbackRefused, match="第 5 章"):
        store.restore_archived(archived[1].id)
    store.restore_archived(archived[0].id)
    assert store.chapter_text(5) == texts[5]
    assert [r.kind for r in store.revisions(5)] == revisions[5]
    assert store.stale_chapters() == [5]
    assert store.checkpoint()["last_completed_chapter"] == 5
    assert store.archived_chapters()[0].restored_at is not None
    with pytest.raises(RollbackRefused, match="恢复过"):
        store.restore_archived(archived[0].id)


def test_a_later_rebuild_never_replays_the_removed_chapters(store: NovelStore) -> None:
    after = write_six(store)
    store.rollback_to(4)
    again = ResummarizedChapter(3, content_hash(store.chapter_text(3) or ""), "第3章摘要", _ops(3))
    report = store.write_rebuild(3, {3: again})
    assert sorted(report.disagreeing) == []
    assert _without_version(store.current_state()) == _without_version(after[4]["state"])
    # The next chapter 5 is written from chapter 4's state, and its own ops count from then on.
    delta = {"chapter": 5, "base_state_version": store.state_version(), "ops": _ops(50)}
    stage_chapter(store, 5, "# 第5章 新写", delta=delta)
    store.commit_chapter(5)
    assert store.current_state()["characters"]["lin-feng"]["location"] == "第50峰"
    assert store.current_state()["characters"]["lin-feng"]["level"] == 5
    assert store.chapter_point(5) is not None


def test_rolling_back_twice_and_writing_again_in_between(store: NovelStore) -> None:
    after = write_six(store)
    store.rollback_to(5)
    assert store.document(CONTRACT) == after[5]["contract"]
    store.rollback_to(3)
    assert store.document(CONTRACT) == after[3]["contract"]
    assert store.document(layout.GLOBAL_FORESHADOWING) == after[3]["ledger"]
    assert _without_version(store.current_state()) == _without_version(after[3]["state"])
    assert [(a.rollback_id, a.chapter) for a in store.archived_chapters()] == [(2, 4), (2, 5), (1, 6)]
    for n in (4, 5):
        delta = {"chapter": n, "base_state_version": store.state_version(), "ops": _ops(n * 10)}
        stage_chapter(store, n, f"# 第{n}章 重写", delta=delta)
        store.commit_chapter(n)
    store.rollback_to(4)
    assert store.current_state()["characters"]["lin-feng"]["location"] == "第40峰"
    assert store.current_state()["characters"]["lin-feng"]["level"] == 4


def test_an_in_flight_chapter_goes_to_the_archive_too(store: NovelStore) -> None:
    write_six(store)
    stage_chapter(store, 7, "# 第7章 写到一半")
    store.update_checkpoint(inflight_chapter=7, pipeline_stage="drafted")
    assert store.rollback_plan(5).staged_chapter == 7
    store.rollback_to(5)
    assert store.list_staging() == []
    archived = {a.chapter: a for a in store.archived_chapters()}
    assert sorted(archived) == [6, 7]
    assert archived[7].staged
    full = store.archived_chapter(archived[7].id)
    assert full.content == "# 第7章 写到一半"
    assert [r.kind for r in full.revisions] == ["draft", "refined"]


@pytest.mark.parametrize(
    ("target", "message"),
    [(0, "正整数"), (-2, "正整数"), (9, "第 9 章不存在"), (6, "最后一章"), (7, "不存在")],
)
def test_bad_targets_are_refused_and_change_nothing(store: NovelStore, target: int, message: str) -> None:
    write_six(store)
    before = (store.status(), store.history_position(), store.current_state())
    with pytest.raises(RollbackRefused, match=message):
        store.rollback_to(target)
    assert (store.status(), store.history_position(), store.current_state()) == before
    assert store.archived_chapters() == []


def test_a_chapter_without_a_point_names_the_nearest_one_that_has_one(store: NovelStore) -> None:
    write_six(store)
    with store._write() as s:  # what a chapter committed before schema 2 looks like
        s.connection().exec_driver_sql("DELETE FROM chapter_points WHERE chapter IN (2, 3)")
    with pytest.raises(RollbackRefused, match="最近可回滚到第 4 章"):
        store.rollback_to(3)
    assert len(store.list_chapters()) == 6


def test_the_trial_reset_archives_the_chapters(store: NovelStore) -> None:
    write_six(store)
    text = store.chapter_text(2)
    drop_chapters(store, [1, 2, 3])
    assert [c.number for c in store.list_chapters()] == [4, 5, 6]
    archived = store.archived_chapters()
    assert [a.chapter for a in archived] == [1, 2, 3]
    assert store.archived_chapter(archived[1].id).content == text
