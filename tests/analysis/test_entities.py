"""Entity records: what the novel's own files say exists."""

from __future__ import annotations

import json
from typing import Any

from novel_desktop.analysis.entities import EntityRecords, _guess_kind, _guessed_kinds
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


def test_the_one_scan_guesses_the_kinds_the_readable_rule_gives() -> None:
    # _guessed_kinds scans a chapter's unknown words in one regular expression; _guess_kind is its readable
    # twin (a surname first wins over a place's last character, which wins over an organisation's ending).
    words = [
        "林枫",
        "慕容雪",
        "欧阳",
        "青云山",
        "林家山",
        "天剑宗",
        "玄天家族",
        "萧家",
        "什么",
        "山",
        "长长长长长",
        "ab",
        "青云",
        "白玉京城",
        "  ",
        "\u3000\u3000",
    ]
    expected = {w: _guess_kind(w) for w in words if 2 <= len(w) <= 4 and w.isalpha() and _guess_kind(w)}
    assert expected["林家山"] == "nr" and expected["青云山"] == "ns" and expected["天剑宗"] == "nt"
    assert _guessed_kinds(words) == expected
