"""The seed-format models read every JSON example of the seeds and write it back unchanged.

Fixtures in ``tests/fixtures/seed_examples/`` are the examples printed in seed 004 (§5.8, §6.5, §6.6, §9.2)
and seed 001 (§10.1, §10.5), with comments stripped and placeholders filled in.
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from novel_desktop.domain.agent_returns import (
    ChapterCompleted,
    ConflictDetected,
    RequiresUserDecision,
    parse_agent_return,
)
from novel_desktop.domain.characters import Character, CharacterContracts, Relationships
from novel_desktop.domain.checkpoint import Checkpoint, OrchestratorState, PipelineStage
from novel_desktop.domain.contracts import ChapterContract
from novel_desktop.domain.evaluation import (
    DIMENSION_WEIGHTS,
    DIMENSIONS,
    ContractChecks,
    DimensionScore,
    Evaluation,
    Violation,
    split_risk_flag,
    weighted_overall,
)
from novel_desktop.domain.foreshadowing import (
    ForeshadowItem,
    GlobalForeshadowing,
    VolumeForeshadowItem,
    overdue,
)
from novel_desktop.domain.pipeline_log import PipelineLog
from novel_desktop.domain.state import CurrentState
from novel_desktop.domain.storylines import StorylineSchedule, StorylinesFile, StorylineSpec
from novel_desktop.domain.style import AiBlacklist, StyleProfile
from novel_desktop.domain.summary import ChapterSummary
from novel_desktop.domain.world import WorldRules

EXAMPLES = Path(__file__).resolve().parent.parent / "fixtures" / "seed_examples"

#: Each seed example and the model that reads it.
EXAMPLE_MODELS: dict[str, type[BaseModel]] = {
    "checkpoint.json": Checkpoint,
    "current-state.json": CurrentState,
    "style-profile.json": StyleProfile,
    "evaluation.json": Evaluation,
    "judge-output.json": Evaluation,
    "pipeline-log.json": PipelineLog,
    "world-rules.json": WorldRules,
    "character-contracts.json": CharacterContracts,
    "chapter-contract.json": ChapterContract,
    "chapter-contract-storyline.json": ChapterContract,
    "storylines.json": StorylinesFile,
    "storyline-spec.json": StorylineSpec,
    "storyline-schedule.json": StorylineSchedule,
    "agent-return-completed.json": ChapterCompleted,
    "agent-return-conflict.json": ConflictDetected,
    "agent-return-decision.json": RequiresUserDecision,
}


def load(name: str) -> Any:
    return json.loads((EXAMPLES / name).read_text(encoding="utf-8"))


def error_locs(exc: ValidationError) -> list[tuple[str | int, ...]]:
    return [tuple(err["loc"]) for err in exc.errors()]


def test_every_example_file_has_a_model() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.json")) == sorted(EXAMPLE_MODELS)


@pytest.mark.parametrize("name", sorted(EXAMPLE_MODELS))
def test_seed_example_round_trips(name: str) -> None:
    data = load(name)
    model = EXAMPLE_MODELS[name].model_validate(data)
    assert model.to_json_dict() == data  # type: ignore[attr-defined]
    # Through JSON text too, as an export writes it.
    again = EXAMPLE_MODELS[name].model_validate_json(json.dumps(model.to_json_dict(), ensure_ascii=False))
    assert again.to_json_dict() == data  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(EXAMPLE_MODELS))
def test_unknown_keys_survive(name: str) -> None:
    data = load(name)
    data["x_future_field"] = {"kept": ["as", "is"]}
    model = EXAMPLE_MODELS[name].model_validate(data)
    assert model.to_json_dict()["x_future_field"] == {"kept": ["as", "is"]}  # type: ignore[attr-defined]


def test_unknown_keys_survive_in_nested_objects() -> None:
    data = load("judge-output.json")
    data["scores"]["pacing"]["x_note"] = "多线节奏"
    data["required_fixes"][0]["priority"] = 1
    assert Evaluation.model_validate(data).to_json_dict() == data


def test_numbers_keep_their_kind() -> None:
    # 18 must not come back as 18.0, or an exported file differs from the imported one.
    profile = StyleProfile.model_validate({"avg_sentence_length": 18, "dialogue_ratio": 0.4})
    assert isinstance(profile.avg_sentence_length, int)
    assert json.dumps(profile.to_json_dict()["avg_sentence_length"]) == "18"
    fractional = StyleProfile.model_validate({"avg_sentence_length": 17.5, "dialogue_ratio": 0.4})
    assert fractional.to_json_dict()["avg_sentence_length"] == 17.5


# ---------------------------------------------------------------- invalid values name their field


@pytest.mark.parametrize(
    ("name", "mutate", "loc_prefix"),
    [
        ("checkpoint.json", lambda d: d.update(orchestrator_state="PAUSED"), ("orchestrator_state",)),
        ("checkpoint.json", lambda d: d.update(pipeline_stage="polished"), ("pipeline_stage",)),
        ("checkpoint.json", lambda d: d.update(last_checkpoint_time="yesterday"), ("last_checkpoint_time",)),
        ("checkpoint.json", lambda d: d.update(last_completed_chapter=-1), ("last_completed_chapter",)),
        ("evaluation.json", lambda d: d["scores"]["pacing"].update(score=7), ("scores", "pacing", "score")),
        ("evaluation.json", lambda d: d["scores"]["pacing"].update(score=0), ("scores", "pacing", "score")),
        ("evaluation.json", lambda d: d.update(recommendation="accept"), ("recommendation",)),
        ("evaluation.json", lambda d: d["scores"].pop("storyline_coherence"), ("scores",)),
        (
            "judge-output.json",
            lambda d: d["contract_verification"].update({"W-001": "ok"}),
            ("contract_verification",),
        ),
        (
            "evaluation.json",
            lambda d: d["contract_verification"].update(has_violations="maybe"),
            ("contract_verification",),
        ),
        ("judge-output.json", lambda d: d["required_fixes"][0].pop("instruction"), ("required_fixes", 0)),
        ("current-state.json", lambda d: d["characters"].update({"陆尘": {}}), ("characters",)),
        ("style-profile.json", lambda d: d.update(dialogue_ratio=1.4), ("dialogue_ratio",)),
        ("style-profile.json", lambda d: d.update(source_type="copied"), ("source_type",)),
        (
            "pipeline-log.json",
            lambda d: d["stages"][0].update(input_tokens=-5),
            ("stages", 0, "input_tokens"),
        ),
        ("world-rules.json", lambda d: d["rules"][0].update(constraint_type="firm"), ("rules", 0)),
        ("world-rules.json", lambda d: d["rules"][0].update(id="R-1"), ("rules", 0, "id")),
        ("character-contracts.json", lambda d: d["contracts"][0].update(id="LUCHEN"), ("contracts", 0, "id")),
        ("storylines.json", lambda d: d["storylines"][0].update(scope="galaxy"), ("storylines", 0, "scope")),
        (
            "storylines.json",
            lambda d: d["storylines"][1].update(status="asleep"),
            ("storylines", 1, "status"),
        ),
        (
            "storyline-schedule.json",
            lambda d: d["active_storylines"][0].update(volume_role="lead"),
            ("active_storylines", 0, "volume_role"),
        ),
        (
            "storyline-schedule.json",
            lambda d: d["convergence_events"][0].update(chapter_range=[28, 25]),
            ("convergence_events", 0, "chapter_range"),
        ),
        ("storyline-spec.json", lambda d: d["rules"][0].update(id="L-1"), ("rules", 0, "id")),
        (
            "chapter-contract.json",
            lambda d: d["postconditions"]["foreshadowing_updates"].update(ancient_prophecy="forgotten"),
            ("postconditions", "foreshadowing_updates", "ancient_prophecy"),
        ),
        ("agent-return-conflict.json", lambda d: d.update(severity="critical"), ("severity",)),
        ("agent-return-completed.json", lambda d: d.update(chapter=0), ("chapter",)),
    ],
)
def test_invalid_value_names_the_field(name: str, mutate: Any, loc_prefix: tuple[str | int, ...]) -> None:
    data = load(name)
    mutate(data)
    with pytest.raises(ValidationError) as info:
        EXAMPLE_MODELS[name].model_validate(data)
    locs = error_locs(info.value)
    assert any(loc[: len(loc_prefix)] == loc_prefix for loc in locs), locs


def test_missing_score_dimension_is_named() -> None:
    data = load("evaluation.json")
    del data["scores"]["storyline_coherence"]
    with pytest.raises(ValidationError, match="storyline_coherence"):
        Evaluation.model_validate(data)


def test_duplicate_ids_are_rejected() -> None:
    rules = load("world-rules.json")
    rules["rules"].append(dict(rules["rules"][0]))
    with pytest.raises(ValidationError, match="W-001"):
        WorldRules.model_validate(rules)
    contracts = load("character-contracts.json")
    contracts["contracts"][1]["id"] = "C-LUCHEN-001"
    with pytest.raises(ValidationError, match="C-LUCHEN-001"):
        CharacterContracts.model_validate(contracts)


def test_storyline_relationship_to_unknown_storyline_is_rejected() -> None:
    data = load("storylines.json")
    data["relationships"][0]["to"] = "jinghai-plan"  # a typo of jinghai_plan
    with pytest.raises(ValidationError, match="jinghai-plan"):
        StorylinesFile.model_validate(data)


# ---------------------------------------------------------------- checkpoint


def test_new_checkpoint_has_the_seed_defaults_and_writes_every_key() -> None:
    data = Checkpoint().to_json_dict()
    assert data.keys() == {
        "last_completed_chapter",
        "current_volume",
        "orchestrator_state",
        "pipeline_stage",
        "inflight_chapter",
        "pending_actions",
        "last_checkpoint_time",
    }
    assert data["last_completed_chapter"] == 0
    assert data["current_volume"] == 1
    assert data["orchestrator_state"] == "INIT"
    assert data["pipeline_stage"] is None
    assert data["inflight_chapter"] is None
    assert data["pending_actions"] == []
    assert datetime.fromisoformat(Checkpoint.model_validate(data).last_checkpoint_time).tzinfo is not None


def test_checkpoint_accepts_a_datetime_and_keeps_the_text_of_a_string() -> None:
    text = "2026-02-27T10:12:34.000Z"
    assert Checkpoint(last_checkpoint_time=text).to_json_dict()["last_checkpoint_time"] == text
    from datetime import UTC, datetime

    moment = datetime(2026, 3, 1, 8, 0, tzinfo=UTC)
    assert Checkpoint(last_checkpoint_time=moment).last_checkpoint_time == "2026-03-01T08:00:00+00:00"


def test_pipeline_stages_in_the_order_a_chapter_passes_them() -> None:
    assert [s.value for s in PipelineStage] == ["drafting", "drafted", "refined", "judged", "committed"]


def test_checkpoint_recovery_and_next_chapter() -> None:
    idle = Checkpoint.model_validate(load("checkpoint.json"))
    assert not idle.needs_recovery
    assert idle.next_chapter == 48
    crashed = idle.model_copy(
        update={"pipeline_stage": PipelineStage.DRAFTED, "inflight_chapter": 48},
    )
    assert crashed.needs_recovery
    assert crashed.next_chapter == 48
    assert crashed.to_json_dict()["pipeline_stage"] == "drafted"
    assert crashed.orchestrator_state is OrchestratorState.WRITING


# ---------------------------------------------------------------- state


def test_current_state_defaults_and_optional_categories() -> None:
    fresh = CurrentState().to_json_dict()
    assert fresh == {
        "schema_version": 1,
        "state_version": 0,
        "last_updated_chapter": 0,
        "characters": {},
        "world_state": {},
        "active_foreshadowing": [],
    }
    # The seed example has no items/locations/factions; they must not appear on the way out.
    seed = load("current-state.json")
    assert "items" not in CurrentState.model_validate(seed).to_json_dict()
    state = CurrentState.model_validate(seed)
    assert state.entity("characters", "protagonist") == seed["characters"]["protagonist"]
    assert state.entity("items", "sword") is None


# ---------------------------------------------------------------- evaluation


def test_dimension_weights_sum_to_one() -> None:
    assert math.isclose(sum(DIMENSION_WEIGHTS.values()), 1.0)
    assert len(DIMENSIONS) == 8


def test_examples_carry_the_seed_weights() -> None:
    for name in ("evaluation.json", "judge-output.json"):
        evaluation = Evaluation.model_validate(load(name))
        assert {k: v.weight for k, v in evaluation.scores.items()} == dict(DIMENSION_WEIGHTS)


def test_weighted_overall() -> None:
    assert weighted_overall(dict.fromkeys(DIMENSIONS, 4)) == 4.0
    judge = Evaluation.model_validate(load("judge-output.json"))
    assert judge.computed_overall() == judge.overall == 3.51
    # The §9.2 example's own "overall" (3.78) does not match its scores; the model keeps it as written.
    stored = Evaluation.model_validate(load("evaluation.json"))
    assert stored.overall == 3.78
    assert stored.computed_overall() == 3.82
    # A dimension missing: the others are renormalised, the scale stays 1-5.
    assert weighted_overall({"plot_logic": 5, "character": 3}) == 4.0
    with pytest.raises(ValueError, match="no known dimension"):
        weighted_overall({"charm": 5})


def test_contract_verification_both_shapes() -> None:
    judge = Evaluation.model_validate(load("judge-output.json"))
    assert isinstance(judge.contract_verification, dict)
    assert judge.contract_results()["C-LUCHEN-001"] == "pass"
    assert not judge.has_violations

    stored = Evaluation.model_validate(load("evaluation.json"))
    assert isinstance(stored.contract_verification, ContractChecks)
    assert stored.contract_results() == {}
    assert not stored.has_violations

    data = load("evaluation.json")
    data["contract_verification"]["l1_checks"] = [{"id": "W-001", "status": "violation"}, "W-002 未涉及"]
    broken = Evaluation.model_validate(data)
    assert broken.contract_results() == {"W-001": "violation"}
    assert broken.has_violations
    assert broken.to_json_dict() == data

    data = load("judge-output.json")
    data["contract_verification"]["LS-001"] = "fail"
    assert Evaluation.model_validate(data).has_violations


def test_violations_objects_and_strings() -> None:
    data = load("judge-output.json")
    data["violations"] = [
        {
            "rule_id": "C-LUCHEN-001",
            "confidence": "high",
            "description": "使用了金丹期法术",
            "evidence": "掌心雷",
        },
        {"rule_id": "LS-002", "confidence": "low", "description": "切线缺少时空锚点"},
        "W-001 被违反：灵气浓度不足却突破",
    ]
    evaluation = Evaluation.model_validate(data)
    assert evaluation.to_json_dict() == data
    blocking = evaluation.blocking_violations()
    assert len(blocking) == 2
    assert isinstance(blocking[0], Violation)
    assert blocking[0].rule_id == "C-LUCHEN-001"
    assert blocking[1] == "W-001 被违反：灵气浓度不足却突破"

    data["violations"] = [{"rule_id": "W-001", "confidence": "certain"}]
    with pytest.raises(ValidationError) as info:
        Evaluation.model_validate(data)
    assert any(loc[:2] == ("violations", 0) for loc in error_locs(info.value))


def test_risk_flags_split() -> None:
    judge = Evaluation.model_validate(load("judge-output.json"))
    assert [tuple(split_risk_flag(f)) for f in judge.risk_flags] == [
        ("character_speech_missing", "陆尘"),
        ("foreshadow_premature", "ancient_prophecy"),
    ]
    assert split_risk_flag("storyline_contamination：许象乾") == ("storyline_contamination", "许象乾")
    assert split_risk_flag("pacing_drag") == ("pacing_drag", "")


def test_dimension_score_accepts_half_points() -> None:
    assert DimensionScore(score=3.5).to_json_dict() == {"score": 3.5}


# ---------------------------------------------------------------- pipeline log


def test_pipeline_log_cache_fields_default_to_zero() -> None:
    log = PipelineLog.model_validate(load("pipeline-log.json"))
    assert log.stages[0].cache_read_input_tokens == 0
    first = log.stages[0]
    billed = (
        first.input_tokens
        + first.output_tokens
        + first.cache_creation_input_tokens
        + first.cache_read_input_tokens
    )
    assert billed == 15500
    assert sum(stage.duration_ms for stage in log.stages) == 110000
    assert all(stage.cost_usd is None for stage in log.stages)
    assert "cache_read_input_tokens" not in log.to_json_dict()["stages"][0]


# ---------------------------------------------------------------- characters and contracts


def test_character_contracts_keep_their_exceptions() -> None:
    contracts = CharacterContracts.model_validate(load("character-contracts.json"))
    _first, second = contracts.contracts
    assert second.exceptions == ["极度愤怒时可能失控（需要前文铺垫 ≥2 章）"]


def test_character_file_and_relationships() -> None:
    data = {
        "id": "lu-chen",
        "name": "陆尘",
        "aliases": ["陆师兄"],
        **load("character-contracts.json"),
    }
    character = Character.model_validate(data)
    assert character.status == "active"
    assert (character.name, character.aliases) == ("陆尘", ["陆师兄"])
    assert character.to_json_dict() == data
    with pytest.raises(ValidationError) as info:
        Character.model_validate({**data, "id": "陆尘"})
    assert ("id",) in error_locs(info.value)

    rels = {
        "relationships": [
            {"from": "lu-chen", "to": "mentor", "type": "师徒", "value": 50, "note": "救命之恩"}
        ]
    }
    parsed = Relationships.model_validate(rels)
    assert parsed.to_json_dict() == rels
    between = parsed.between("lu-chen", "mentor")
    assert between is not None
    assert between.value == 50
    assert parsed.between("mentor", "lu-chen") is None
    with pytest.raises(ValidationError):
        Relationships.model_validate({"relationships": [{"from": "a", "to": "b", "type": "x", "value": 150}]})


def test_chapter_contract_helpers() -> None:
    contract = ChapterContract.model_validate(load("chapter-contract.json"))
    assert [o.id for o in contract.required_objectives()] == ["OBJ-048-1"]
    assert [o.target for o in contract.objectives if o.target is not None] == ["ancient_prophecy"]
    storyline = ChapterContract.model_validate(load("chapter-contract-storyline.json"))
    assert storyline.storyline_context is not None
    assert storyline.storyline_context.concurrent_state["zhonggu_secret"] == "遗迹线索指向龙宫（ch22）"
    assert storyline.transition_hint is not None
    assert storyline.transition_hint.next_storyline == "jiangwang_dao"


# ---------------------------------------------------------------- storylines


def test_storylines_helpers() -> None:
    storylines = StorylinesFile.model_validate(load("storylines.json"))
    assert [s.id for s in storylines.active()] == ["jiangwang_dao"]
    zhonggu = storylines.get("zhonggu_secret")
    assert zhonggu is not None
    assert zhonggu.pov_characters == []
    assert storylines.relationships[0].from_ == "jiangwang_dao"
    spec = StorylineSpec.model_validate(load("storyline-spec.json"))
    assert [r.id for r in spec.hard_rules()] == ["LS-001"]


def test_convergence_events_cover_their_chapters() -> None:
    schedule = StorylineSchedule.model_validate(load("storyline-schedule.json"))
    covered = [n for n in range(20, 32) if any(e.covers(n) for e in schedule.convergence_events)]
    assert covered == [25, 26, 27, 28]
    assert schedule.role_of("jinghai_plan") == "secondary"
    assert schedule.role_of("faction_internal") is None


# ---------------------------------------------------------------- foreshadowing


def _thread(item_id: str, status: str, target: list[int] | None, **extra: Any) -> dict[str, Any]:
    return {
        "id": item_id,
        "description": "",
        "scope": "volume",
        "status": status,
        "planted_chapter": 1,
        "advanced_chapters": [],
        "resolved_chapter": None,
        "target_resolve_range": target,
        "storyline_id": "main_arc",
        "history": [{"chapter": 1, "action": "planted", "detail": None}],
        **extra,
    }


def test_foreshadow_item_always_writes_its_shape() -> None:
    item = ForeshadowItem(id="ancient_prophecy")
    assert set(item.to_json_dict()) == {
        "id",
        "description",
        "scope",
        "status",
        "planted_chapter",
        "advanced_chapters",
        "resolved_chapter",
        "target_resolve_range",
        "storyline_id",
        "history",
    }
    with pytest.raises(ValidationError) as info:
        ForeshadowItem.model_validate(_thread("x", "buried", None))
    assert ("status",) in error_locs(info.value)


def test_overdue() -> None:
    doc = GlobalForeshadowing.model_validate(
        {
            "foreshadowing": [
                _thread("late", "planted", [3, 8]),
                _thread("due_now", "advanced", [5, 9]),
                _thread("done", "resolved", [2, 4], resolved_chapter=4),
                _thread("open_ended", "planted", None),
            ]
        }
    )
    assert [item.id for item in overdue(doc.foreshadowing, 9)] == ["late"]
    assert [item.id for item in overdue(doc.foreshadowing, 10)] == ["late", "due_now"]
    planned = VolumeForeshadowItem.model_validate(
        _thread("vol", "planted", [3, 20], planned_resolve_chapter=6)
    )
    assert overdue([planned], 7) == [planned]
    assert overdue([planned], 6) == []


# ---------------------------------------------------------------- style


def test_blacklist_plain_list_and_object_form() -> None:
    plain = AiBlacklist.model_validate(["不禁", "莫名的"])
    assert plain.effective_words() == ["不禁", "莫名的"]
    assert plain.to_json_dict() == {"words": ["不禁", "莫名的"]}
    full = AiBlacklist.model_validate(
        {
            "version": 1,
            "words": ["不禁", "仿佛"],
            "categories": {"神态": ["嘴角微微上扬", "不禁"]},
            "custom_added": ["一股暖流"],
            "custom_removed": ["仿佛"],
        }
    )
    assert full.effective_words() == ["不禁", "嘴角微微上扬", "一股暖流"]
    with pytest.raises(ValidationError) as info:
        AiBlacklist.model_validate({"words": "不禁"})
    assert ("words",) in error_locs(info.value)


# ---------------------------------------------------------------- agent returns


@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("agent-return-completed.json", ChapterCompleted),
        ("agent-return-conflict.json", ConflictDetected),
        ("agent-return-decision.json", RequiresUserDecision),
    ],
)
def test_parse_agent_return_picks_the_model(name: str, model: type[BaseModel]) -> None:
    data = load(name)
    parsed = parse_agent_return(data)
    assert type(parsed) is model
    assert parsed.to_json_dict() == data
    # As an agent really replies: prose around a fenced JSON block.
    text = f"好的，结果如下：\n\n```json\n{json.dumps(data, ensure_ascii=False, indent=2)}\n```\n以上。"
    assert parse_agent_return(text).to_json_dict() == data


def test_parse_agent_return_rejects_unknown_and_garbage() -> None:
    with pytest.raises(ValidationError):
        parse_agent_return({"status": "done", "chapter": 1})
    with pytest.raises(ValueError, match="no JSON"):
        parse_agent_return("第48章写完了")
    with pytest.raises(ValidationError) as info:
        parse_agent_return({"type": "requires_user_decision", "recommendation": "x", "options": []})
    assert any("options" in loc for loc in error_locs(info.value))


def test_agent_return_built_in_code_writes_its_tag() -> None:
    built = ChapterCompleted(chapter=3, word_count=3000)
    assert built.to_json_dict() == {"status": "completed", "chapter": 3, "word_count": 3000}
    assert type(parse_agent_return(built.to_json_dict())) is ChapterCompleted


# ---------------------------------------------------------------- summary


def test_summary_markdown_round_trip() -> None:
    text = "# 第 48 章摘要\n\n陆尘破解密信暗号，夜探城北废墟，发现预言符文。\n"
    summary = ChapterSummary(
        chapter=48, storyline_id="jiangwang_dao", text=text, cross_references=["许象乾"], leak_risk="medium"
    )
    markdown = summary.to_markdown()
    assert markdown.startswith(text)
    back = ChapterSummary.from_markdown(markdown)
    assert back.text == text
    assert back.cross_references == ["许象乾"]
    assert back.leak_risk == "medium"
    assert back.to_markdown() == markdown


def test_summary_without_metadata_line_is_all_text() -> None:
    text = "# 摘要\n\n手写的摘要，没有元数据。\n"
    summary = ChapterSummary.from_markdown(text, chapter=5)
    assert summary.text == text
    assert summary.chapter == 5
    assert summary.leak_risk == "low"
    with pytest.raises(ValidationError) as info:
        ChapterSummary.from_markdown(text)
    assert ("chapter",) in error_locs(info.value)
