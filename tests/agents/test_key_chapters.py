"""Which chapters get a second judge (004 §6.5.6): volume start and end, and chapters inside a storyline
convergence event."""

from __future__ import annotations

import json
from pathlib import Path

from novel_desktop.agents.context import load_facts
from novel_desktop.storage.folder import import_folder
from novel_desktop.storage.store import NovelStore
from tests.conftest import FIXTURES

SCHEDULE = "volumes/vol-01/storyline-schedule.json"


def test_volume_start_end_and_convergence_chapters_are_key(tmp_path: Path) -> None:
    novel = tmp_path / "n.novel"
    import_folder(FIXTURES / "seed_project", novel)  # volume 1 outlines chapters 1-5, no convergence
    with NovelStore.open(novel) as store:
        assert [n for n in range(1, 6) if load_facts(store, n).key_chapter] == [1, 5]

        schedule = json.loads(store.document(SCHEDULE) or "{}")
        schedule["convergence_events"] = [
            {"event": "两线在山门相遇", "chapter_range": [3, 3], "involved_storylines": ["main_arc"]}
        ]
        store.put_document(SCHEDULE, json.dumps(schedule, ensure_ascii=False))
        assert [n for n in range(1, 6) if load_facts(store, n).key_chapter] == [1, 3, 5]
