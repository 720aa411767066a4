"""The story state: every version kept, the changelog."""

from __future__ import annotations

from novel_desktop.storage.store import NovelStore
from tests.storage.staging import stage_chapter


def test_every_earlier_state_is_one_read_away(store: NovelStore) -> None:
    for n in range(1, 4):
        delta = {
            "chapter": n,
            "base_state_version": n - 1,
            "ops": [{"op": "set", "path": "world_state.time_marker", "value": f"第{n}天"}],
        }
        stage_chapter(store, n, f"第{n}章", delta=delta)
        store.commit_chapter(n)
    assert store.state_versions() == [0, 1, 2, 3]
    assert store.state_at(2)["world_state"]["time_marker"] == "第2天"
    assert store.state_at(0)["world_state"] == {}
    assert store.state_at(9) is None
    assert [e["value"] for e in store.changelog(since_version=1)] == ["第2天", "第3天"]
