"""Entity records: what the novel's own files say exists."""

from __future__ import annotations

import json
from typing import Any

from novel_desktop.analysis.entities import EntityRecords
from tests.conftest import FIXTURES


def test_records_are_read_from_a_novel(store: Any) -> None:
    for path in [
        "characters/active/lin-feng.json",
        "characters/active/chen-lao.json",
        "storylines/storylines.json",
        "volumes/vol-01/storyline-schedule.json",
    ]:
        store.put_document(path, (FIXTURES / "seed_project" / path).read_text(encoding="utf-8"))
    retired = {"id": "wang-er", "name": "王二", "status": "active"}
    store.put_document("characters/retired/wang-er.json", json.dumps(retired, ensure_ascii=False))
    store.put_document("characters/active/broken.json", "{not json")
    records = EntityRecords.from_store(store)
    by_key = {e.key: e for e in records.entities}
    assert by_key["lin-feng"].aliases == ("小枫",)
    assert by_key["lin-feng"].storylines == ("main_arc",)
    assert by_key["wang-er"].status == "retired"  # the folder says so
    assert any(e.name == "苍梧宗" and e.kind == "faction" for e in records.entities)
