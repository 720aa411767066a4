"""The entity index: appearances from records and jieba, and the continuity findings an author would act on."""

from __future__ import annotations

import json
from typing import Any

from novel_desktop.analysis.continuity import ChapterEntityScan, build_index
from novel_desktop.analysis.entities import EntityRecords, NameMatcher
from novel_desktop.analysis.novel_analysis import NovelAnalyzer, analyze_store
from novel_desktop.domain.characters import Character
from novel_desktop.domain.storylines import StorylineSchedule, StorylinesFile
from novel_desktop.storage import layout

LIN = Character(id="lin-feng", name="林枫", aliases=["小枫"])
SU = Character(id="su-yao", name="苏瑶")
CHEN = Character(id="chen-lao", name="陈老", status="retired")

STORYLINES = StorylinesFile.model_validate(
    {
        "storylines": [
            {
                "id": "main_arc",
                "name": "林枫问道",
                "type": "main_arc",
                "scope": "novel",
                "status": "active",
                "pov_characters": ["林枫"],
                "affiliated_factions": ["苍梧宗"],
            },
            {
                "id": "palace",
                "name": "宫廷暗流",
                "type": "conspiracy",
                "scope": "novel",
                "status": "active",
                "pov_characters": ["苏瑶"],
            },
        ],
        "relationships": [],
    }
)
SCHEDULE = StorylineSchedule.model_validate(
    {
        "volume": 1,
        "convergence_events": [{"chapter_range": [5, 6], "involved_storylines": ["main_arc", "palace"]}],
    }
)


def _records(**kwargs: Any) -> EntityRecords:
    base: dict[str, Any] = {
        "characters": [LIN, SU, CHEN],
        "storylines": STORYLINES,
        "schedules": [SCHEDULE],
        "chapter_storylines": {1: "main_arc", 2: "main_arc", 3: "main_arc", 5: "main_arc"},
    }
    base.update(kwargs)
    return EntityRecords.build(**base)


def _index(records: EntityRecords, chapters: dict[int, str]) -> Any:
    analyzer = NovelAnalyzer(records=records)
    return analyzer.analyze(chapters.items()).entities


def test_appearances_follow_names_and_aliases_with_first_and_last_chapter() -> None:
    index = _index(_records(), {1: "林枫上山。", 2: "小枫回头看了一眼。", 3: "山里下雨了。", 4: "林枫到了。"})
    lin = index.appearances["lin-feng"]
    assert lin.chapters == (1, 2, 4)
    assert lin.last_chapter == 4
    assert index.by_chapter[2] == {"lin-feng": 1}  # 小枫 is 林枫


def test_an_entity_of_another_storyline_outside_a_convergence_event_is_reported() -> None:
    chapters = {1: "林枫上山。", 3: "林枫在山门外，忽然听说苏瑶进了宫。", 5: "林枫终于见到了苏瑶。"}
    findings = [f for f in _index(_records(), chapters).findings if f.kind == "cross_storyline"]
    assert [(f.chapter, f.entity, f.storyline) for f in findings] == [(3, "苏瑶", "palace")]
    assert chapters[3][findings[0].offset or 0 :].startswith("苏瑶")
    assert "交汇" in findings[0].message


def test_a_character_declared_shared_by_both_storylines_is_not_a_leak() -> None:
    shared = StorylinesFile.model_validate(
        {
            **STORYLINES.to_json_dict(),
            "relationships": [
                {
                    "from": "main_arc",
                    "to": "palace",
                    "type": "parallel",
                    "bridges": {"shared_characters": ["苏瑶"]},
                }
            ],
        }
    )
    findings = _index(_records(storylines=shared), {3: "苏瑶来了。"}).findings
    assert not [f for f in findings if f.kind == "cross_storyline"]


def test_a_retired_character_who_speaks_is_reported_but_one_who_is_remembered_is_not() -> None:
    chapters = {
        7: "林枫想起陈老当年的样子。",
        8: "陈老冷笑道：“你终究还是来了。”",
        9: "“回去吧。”陈老说。",
    }
    findings = [f for f in _index(_records(), chapters).findings if f.kind == "retired_speaking"]
    assert [f.chapter for f in findings] == [8, 9]
    assert chapters[8][findings[0].offset or 0 :].startswith("陈老")


def test_knowing_something_is_not_speaking() -> None:
    mentions = NameMatcher(_records()).scan("陈老知道这件事。陈老听说了。")
    assert mentions.counts == {"chen-lao": 2}
    assert mentions.speaking == {}


def test_a_name_one_character_off_a_record_is_reported_where_it_first_appears() -> None:
    chapters = {1: "林枫上山。", 2: "林峰回头看了一眼，又往前走。"}
    findings = [f for f in _index(_records(), chapters).findings if f.kind == "near_duplicate_name"]
    assert [(f.entity, f.other, f.chapter) for f in findings] == [("林峰", "林枫", 2)]
    assert chapters[2][findings[0].offset or 0 :].startswith("林峰")


def test_two_records_one_character_apart_are_reported_but_aliases_are_not() -> None:
    twin = Character(id="lin-feng2", name="林峰")
    findings = _index(_records(characters=[LIN, twin]), {}).findings
    assert [(f.kind, {f.entity, f.other}) for f in findings] == [("near_duplicate_name", {"林枫", "林峰"})]
    alias = Character(id="lin-feng", name="林枫", aliases=["林峰"])
    assert _index(_records(characters=[alias]), {}).findings == []


def test_proper_nouns_jieba_finds_enter_the_index_when_frequent_enough() -> None:
    chapters = {
        1: "萧无尘站在门口。萧无尘没有说话。",
        2: "第二天，萧无尘又来了。",
        3: "山下的集市很热闹。萧远也来了。",
    }
    index = _index(_records(characters=[]), chapters)
    detected = {a.name: a for a in index.appearances.values() if a.source == "jieba"}
    assert "萧无尘" in detected
    assert detected["萧无尘"].chapters == (1, 2)
    assert detected["萧无尘"].kind == "person"
    assert "萧远" not in detected  # once is not enough to be indexed


def test_analyze_store_reads_chapters_and_their_storylines(store: Any) -> None:
    store.put_document(
        "storylines/storylines.json", json.dumps(STORYLINES.to_json_dict(), ensure_ascii=False)
    )
    store.put_staging(
        layout.chapter_path(1), "# 第1章\n\n林枫上山，苏瑶在宫里等消息。\n", chapter=1, kind="refined"
    )
    store.commit_chapter(1, storyline_id="main_arc")
    analysis = analyze_store(store)
    assert [c.number for c in analysis.chapters] == [1]
    findings = [(f.kind, f.entity) for f in analysis.entities.findings if f.chapter == 1]
    assert findings == [("cross_storyline", "苏瑶")]


def test_build_index_of_nothing_is_empty() -> None:
    index = build_index(EntityRecords(), [ChapterEntityScan(1, NameMatcher(EntityRecords()).scan("空"), {})])
    assert index.appearances == {} and index.findings == []


def _index_json(index: Any) -> Any:
    """What an author sees of an index, in order (appearances and findings) plus each chapter's counts."""
    return (
        [(k, a.name, a.kind, a.chapters, a.mentions) for k, a in index.appearances.items()],
        {n: dict(c) for n, c in index.by_chapter.items()},
        [f.to_json() for f in index.findings],
    )


def test_an_index_patched_after_edits_is_the_one_built_from_scratch() -> None:
    # A typo 林峯 (rare) of the frequent 林峰, a name that moves its first chapter, one that leaves the novel.
    from novel_desktop.analysis.detected_names import DetectedNames

    def nouns(*items: tuple[str, str, int, int]) -> dict[str, tuple[str, int, int]]:
        return {word: (tag, count, offset) for word, tag, count, offset in items}

    chapters = {
        1: nouns(("林峰", "nr", 6, 3), ("青云山", "ns", 2, 10)),
        2: nouns(("林峰", "nr", 5, 0), ("林峯", "nr", 1, 40), ("赤霞宗", "nt", 3, 7)),
        3: nouns(("林峰", "nr", 4, 2), ("青云山", "ns", 2, 1), ("赤霞宗", "nt", 1, 9)),
        4: nouns(("周通", "nr", 3, 5)),
    }
    records = EntityRecords.build([LIN, SU])
    memo = DetectedNames()

    def both() -> tuple[Any, Any]:
        scans = [
            ChapterEntityScan(n, NameMatcher(records).scan("林枫"), dict(p)) for n, p in chapters.items()
        ]
        return _index_json(build_index(records, scans, detected=memo)), _index_json(
            build_index(records, scans)
        )

    patched, scratch = both()
    assert patched == scratch
    pairs = [(f["entity"], f["other"]) for f in scratch[2] if f["kind"] == "near_duplicate_name"]
    assert ("林峯", "林峰") in pairs and ("林峰", "林枫") in pairs
    edits = [
        (1, nouns(("林峰", "nr", 6, 3))),  # 青云山 now first appears in chapter 3
        (2, nouns(("林峰", "nr", 5, 0), ("赤霞宗", "nt", 3, 7))),  # the typo is corrected
        (4, {}),  # 周通 leaves the novel
        (
            1,
            nouns(("周通", "nr", 2, 0), ("林峰", "nr", 6, 3), ("青云山", "ns", 1, 4)),
        ),  # and comes back early
        (3, nouns(("林峯", "nr", 2, 0))),
    ]
    for number, changed in edits:
        chapters[number] = changed
        patched, scratch = both()
        assert patched == scratch, number
    del chapters[2]  # a chapter deleted: a pass over other chapters
    patched, scratch = both()
    assert patched == scratch
