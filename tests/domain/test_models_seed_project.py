"""The seed project fixture is valid against the models and agrees with itself.

``tests/fixtures/seed_project/`` is the two-chapter novel that the import/export round-trip tests use; a
file that contradicts another would make those tests prove less than they claim.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from novel_desktop.domain.characters import Character, Relationships
from novel_desktop.domain.checkpoint import Checkpoint, OrchestratorState, PipelineStage
from novel_desktop.domain.contracts import ChapterContract
from novel_desktop.domain.evaluation import Evaluation
from novel_desktop.domain.foreshadowing import GlobalForeshadowing, VolumeForeshadowing, overdue
from novel_desktop.domain.novel_ask_answers import validate_answer_spec
from novel_desktop.domain.pipeline_log import PipelineLog
from novel_desktop.domain.state import CurrentState
from novel_desktop.domain.state_ops import replay_changelog
from novel_desktop.domain.storylines import StorylineSchedule, StorylinesFile, StorylineSpec
from novel_desktop.domain.style import AiBlacklist, StyleProfile
from novel_desktop.domain.summary import ChapterSummary
from novel_desktop.domain.text import count_chars
from novel_desktop.domain.world import WorldRules

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PROJECT = FIXTURES / "seed_project"

#: Path pattern → model, for every JSON file the project holds.
JSON_MODELS: list[tuple[str, type[BaseModel]]] = [
    (r"\.checkpoint\.json", Checkpoint),
    (r"style-profile\.json", StyleProfile),
    (r"ai-blacklist\.json", AiBlacklist),
    (r"world/rules\.json", WorldRules),
    (r"characters/active/[a-z0-9-]+\.json", Character),
    (r"characters/relationships\.json", Relationships),
    (r"storylines/storylines\.json", StorylinesFile),
    (r"storylines/storyline-spec\.json", StorylineSpec),
    (r"volumes/vol-01/storyline-schedule\.json", StorylineSchedule),
    (r"volumes/vol-01/foreshadowing\.json", VolumeForeshadowing),
    (r"volumes/vol-01/chapter-contracts/chapter-\d{3}\.json", ChapterContract),
    (r"state/current-state\.json", CurrentState),
    (r"foreshadowing/global\.json", GlobalForeshadowing),
    (r"evaluations/chapter-\d{3}-eval\.json", Evaluation),
    (r"logs/chapter-\d{3}-log\.json", PipelineLog),
]

#: The project's JSON files that belong to another module's format.
OTHER_JSON = {"staging/novel-ask/novel-init.answers.json"}


def rel(path: Path) -> str:
    return path.relative_to(PROJECT).as_posix()


def read_json(relative: str) -> Any:
    return json.loads((PROJECT / relative).read_text(encoding="utf-8"))


def model_of(relative: str) -> type[BaseModel]:
    matches = [model for pattern, model in JSON_MODELS if re.fullmatch(pattern, relative)]
    assert len(matches) == 1, f"{relative}: {len(matches)} models"
    return matches[0]


def chapter_numbers(folder: str, pattern: str) -> list[int]:
    found = (re.fullmatch(pattern, p.name) for p in (PROJECT / folder).iterdir())
    return sorted(int(m.group(1)) for m in found if m)


JSON_FILES = sorted(rel(p) for p in PROJECT.rglob("*.json") if rel(p) not in OTHER_JSON)


def test_the_seed_layout_is_complete() -> None:
    for relative in (
        ".checkpoint.json",
        "brief.md",
        "style-profile.json",
        "ai-blacklist.json",
        "research/notes.md",
        "world/rules.md",
        "world/rules.json",
        "world/changelog.md",
        "characters/relationships.json",
        "characters/changelog.md",
        "storylines/storylines.json",
        "storylines/storyline-spec.json",
        "storylines/main_arc/memory.md",
        "volumes/vol-01/outline.md",
        "volumes/vol-01/storyline-schedule.json",
        "volumes/vol-01/foreshadowing.json",
        "state/current-state.json",
        "state/changelog.jsonl",
        "foreshadowing/global.json",
        "staging/novel-ask/novel-init.answers.json",
    ):
        assert (PROJECT / relative).is_file(), relative
    for folder in ("characters/retired", "state/history"):
        assert (PROJECT / folder).is_dir(), folder


@pytest.mark.parametrize("relative", JSON_FILES)
def test_every_json_file_parses_and_round_trips(relative: str) -> None:
    data = read_json(relative)
    model = model_of(relative).model_validate(data)
    assert model.to_json_dict() == data  # type: ignore[attr-defined]


def test_chapters_summaries_evaluations_logs_and_checkpoint_agree() -> None:
    chapters = chapter_numbers("chapters", r"chapter-(\d{3})\.md")
    assert chapters == [1, 2]
    assert chapter_numbers("summaries", r"chapter-(\d{3})-summary\.md") == chapters
    assert chapter_numbers("evaluations", r"chapter-(\d{3})-eval\.json") == chapters
    assert chapter_numbers("logs", r"chapter-(\d{3})-log\.json") == chapters
    assert chapter_numbers("volumes/vol-01/chapter-contracts", r"chapter-(\d{3})\.json") == chapters

    checkpoint = Checkpoint.model_validate(read_json(".checkpoint.json"))
    assert checkpoint.last_completed_chapter == max(chapters)
    assert checkpoint.orchestrator_state is OrchestratorState.WRITING
    assert checkpoint.pipeline_stage is PipelineStage.COMMITTED
    assert not checkpoint.needs_recovery
    assert checkpoint.next_chapter == 3


def test_chapters_are_real_prose_free_of_the_blacklist() -> None:
    blacklist = AiBlacklist.model_validate(read_json("ai-blacklist.json")).effective_words()
    forbidden = StyleProfile.model_validate(read_json("style-profile.json")).forbidden_words
    for path in sorted((PROJECT / "chapters").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        assert count_chars(text) >= 300, path.name
        hits = [word for word in [*blacklist, *forbidden] if word in text]
        assert hits == [], f"{path.name}: {hits}"


def test_changelog_replays_to_the_current_state() -> None:
    entries = [
        json.loads(line)
        for line in (PROJECT / "state/changelog.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    for entry in entries:
        assert {
            "chapter",
            "state_version",
            "base_state_version",
            "op",
            "path",
            "value",
            "storyline_id",
            "ts",
        } <= (entry.keys())
        assert entry["state_version"] == entry["base_state_version"] + 1
    current = read_json("state/current-state.json")
    assert current["state_version"] == 2
    assert entries[-1]["state_version"] == current["state_version"]
    empty = CurrentState(items={}, locations={}, factions={}).to_json_dict()
    assert replay_changelog(empty, entries) == current


def test_characters_in_state_have_files_and_relationships_match_the_state() -> None:
    state = CurrentState.model_validate(read_json("state/current-state.json"))
    active = {
        p.stem: Character.model_validate(read_json(rel(p)))
        for p in (PROJECT / "characters/active").glob("*.json")
    }
    assert set(state.characters) == set(active)
    for slug, character in active.items():
        assert character.id == slug
        assert (PROJECT / f"characters/active/{slug}.md").is_file()
    relationships = Relationships.model_validate(read_json("characters/relationships.json"))
    for relationship in relationships.relationships:
        assert relationship.from_ in active
        assert relationship.to in active
    lin_to_chen = relationships.between("lin-feng", "chen-lao")
    assert lin_to_chen is not None
    assert state.characters["lin-feng"]["relationships"]["chen-lao"] == lin_to_chen.value
    speech = StyleProfile.model_validate(read_json("style-profile.json")).character_speech_patterns
    assert set(speech) <= set(active)


def test_foreshadowing_files_agree_with_the_state() -> None:
    state = CurrentState.model_validate(read_json("state/current-state.json"))
    threads = GlobalForeshadowing.model_validate(read_json("foreshadowing/global.json"))
    assert sorted(state.active_foreshadowing) == sorted(item.id for item in threads.open_items())
    volume = VolumeForeshadowing.model_validate(read_json("volumes/vol-01/foreshadowing.json"))
    planned = {item.id: item for item in volume.foreshadowing}
    for item in threads.foreshadowing:
        assert item.id in planned
        assert planned[item.id].status == item.status
        assert [event.chapter for event in item.history] == sorted(event.chapter for event in item.history)
    assert overdue(volume.foreshadowing, 3) == []


def test_specs_referenced_by_contracts_and_evaluations_exist() -> None:
    rule_ids = {rule.id for rule in WorldRules.model_validate(read_json("world/rules.json")).rules}
    contract_ids = {
        contract.id
        for p in (PROJECT / "characters/active").glob("*.json")
        for contract in Character.model_validate(read_json(rel(p))).contracts
    }
    ls_ids = {
        rule.id for rule in StorylineSpec.model_validate(read_json("storylines/storyline-spec.json")).rules
    }
    storylines = StorylinesFile.model_validate(read_json("storylines/storylines.json"))
    storyline_ids = {storyline.id for storyline in storylines.storylines}
    schedule = StorylineSchedule.model_validate(read_json("volumes/vol-01/storyline-schedule.json"))
    assert {entry.storyline_id for entry in schedule.active_storylines} <= storyline_ids
    for storyline_id in storyline_ids:
        assert (PROJECT / f"storylines/{storyline_id}/memory.md").is_file()

    threads = {
        item.id
        for item in VolumeForeshadowing.model_validate(
            read_json("volumes/vol-01/foreshadowing.json")
        ).foreshadowing
    }
    for n in (1, 2):
        contract = ChapterContract.model_validate(
            read_json(f"volumes/vol-01/chapter-contracts/chapter-{n:03d}.json")
        )
        assert contract.chapter == n
        assert contract.storyline_id in storyline_ids
        assert set(contract.preconditions.required_world_rules) <= rule_ids
        assert {o.target for o in contract.objectives if o.target is not None} <= threads
        assert set(contract.postconditions.foreshadowing_updates) <= threads

        evaluation = Evaluation.model_validate(read_json(f"evaluations/chapter-{n:03d}-eval.json"))
        assert evaluation.chapter == n
        assert evaluation.overall == evaluation.computed_overall()
        assert not evaluation.has_violations
        objective_ids = {o.id for o in contract.objectives}
        assert set(evaluation.contract_results()) <= rule_ids | contract_ids | ls_ids | objective_ids
        assert objective_ids <= set(evaluation.contract_results())

        summary_path = PROJECT / f"summaries/chapter-{n:03d}-summary.md"
        summary = ChapterSummary.from_markdown(summary_path.read_text(encoding="utf-8"))
        assert summary.chapter == n
        assert summary.storyline_id in storyline_ids
        assert summary.to_markdown() == summary_path.read_text(encoding="utf-8")

        log = PipelineLog.model_validate(read_json(f"logs/chapter-{n:03d}-log.json"))
        assert log.chapter == n
        assert log.storyline_id in storyline_ids
        assert log.total_duration_ms >= sum(stage.duration_ms for stage in log.stages)
        stage_costs = [stage.cost_usd for stage in log.stages if stage.cost_usd is not None]
        assert log.total_cost_usd == pytest.approx(sum(stage_costs), abs=0.001)


def test_novel_init_answers_are_a_valid_answer_spec() -> None:
    spec = json.loads((FIXTURES / "novel_ask" / "question_spec_all_kinds.json").read_text(encoding="utf-8"))
    answers = read_json("staging/novel-ask/novel-init.answers.json")
    assert validate_answer_spec(spec, answers) == []
