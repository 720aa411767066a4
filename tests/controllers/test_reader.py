"""NovelReader: what the story views read and write, as domain types, through the ProjectController."""

from __future__ import annotations

import json

import pytest

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.controllers.reader import NovelReader


@pytest.fixture
def reader(project: ProjectController) -> NovelReader:
    return NovelReader(project)


def test_a_volume_lists_planned_and_written_chapters_with_their_storyline(reader: NovelReader) -> None:
    plans = reader.chapters(1)
    assert [p.number for p in plans] == [1, 2, 3, 4, 5]
    assert [p.written for p in plans] == [True, True, False, False, False]
    assert plans[0].title == "药篓里的残玉"
    assert plans[0].storyline_id == "main_arc"
    assert plans[0].pov == "林枫"
    assert plans[0].info is not None and plans[0].info.chars > 0


def test_the_checkpoint_reads_as_the_volume_and_the_next_chapter(reader: NovelReader) -> None:
    assert reader.current_volume() == 1
    assert reader.last_completed_chapter() == 2
    assert reader.next_chapter() == 3
    assert reader.inflight_chapter() is None


def test_a_saved_outline_is_read_back_and_announced(project: ProjectController, reader: NovelReader) -> None:
    changed: list[str] = []
    project.document_changed.connect(changed.append)
    reader.save_outline(1, "# 第一卷\n\n## 第 1 章 新的开头\n- **POV**: 陈老\n")
    assert reader.outline(1) == "# 第一卷\n\n## 第 1 章 新的开头\n- **POV**: 陈老\n"
    assert changed and changed[-1].startswith(reader.volume_prefix(1))
    first = reader.chapters(1)[0]
    assert (first.title, first.pov) == ("新的开头", "陈老")


def test_a_contract_round_trips_and_a_bad_one_says_where(reader: NovelReader) -> None:
    contract = reader.contract(1, 1)
    assert contract is not None and contract.chapter == 1
    assert 1 in reader.contract_numbers(1)
    data = contract.to_json_dict()
    data["acceptance_criteria"] = ["残玉第一次发光"]
    reader.save_contract(1, 1, data)
    saved = reader.contract(1, 1)
    assert saved is not None and saved.acceptance_criteria == ["残玉第一次发光"]
    assert reader.contract(1, 99) is None

    parsed, problems = reader.validate_contract({"chapter": "第一章"})
    assert parsed is None
    assert problems and problems[0][0] == "chapter"
    assert reader.objective_id(12, 3) == "OBJ-012-3"


def test_an_evaluation_is_a_model_and_its_score_survives_a_bad_edit(
    project: ProjectController, reader: NovelReader
) -> None:
    evaluation = reader.evaluation(1)
    assert evaluation is not None
    assert reader.overall_score(1) == pytest.approx(float(evaluation.overall))
    assert reader.evaluation(5) is None and reader.overall_score(5) is None


def test_storylines_and_the_volume_schedule(reader: NovelReader) -> None:
    storylines = reader.storylines()
    assert storylines is not None and "main_arc" in [line.id for line in storylines.storylines]
    assert [line["id"] for line in reader.storylines_json()] == [line.id for line in storylines.storylines]
    assert reader.storyline_schedule(1) is not None
    assert reader.storyline_schedule(9) is None


def test_foreshadowing_keeps_the_entries_that_parse(project: ProjectController, reader: NovelReader) -> None:
    items = reader.global_foreshadowing()
    assert items
    assert [v for v, _plan in reader.volume_foreshadowing()] == [1]
    assert reader.is_foreshadowing("foreshadowing/global.json")
    assert reader.is_foreshadowing("volumes/vol-01/foreshadowing.json")
    assert not reader.is_foreshadowing("volumes/vol-01/outline.md")

    raw = reader.global_foreshadowing_json()
    project.save_document(
        "foreshadowing/global.json",
        json.dumps({"foreshadowing": [*raw, {"id": "broken", "status": 42}]}, ensure_ascii=False),
    )
    assert [item.id for item in reader.global_foreshadowing()] == [item.id for item in items]


def test_world_rules_and_characters_are_listed_for_the_tree(reader: NovelReader) -> None:
    assert reader.world_rules_json()
    cards = reader.active_characters_json()
    assert cards and all(path.startswith("characters/active/") for path, _card in cards)
