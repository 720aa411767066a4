"""NOVEL_ASK (seed 000): models, validators, building and loading AnswerSpecs."""

from __future__ import annotations

import copy
import json
import os
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from novel_desktop.domain.novel_ask import (
    AnswerSpec,
    AnswerSpecInvalid,
    InstructionPacket,
    QuestionSpec,
    QuestionSpecInvalid,
    ValidationProblem,
    is_rfc3339_timestamp,
    parse_question_spec,
    validate_question_spec,
)
from novel_desktop.domain.novel_ask_answers import (
    GateState,
    build_answer_spec,
    evaluate_gate,
    load_valid_answer,
    validate_answer_path,
    validate_answer_spec,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "novel_ask"


def load_fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def fields(problems: list[ValidationProblem]) -> list[str]:
    return [p.field for p in problems]


@pytest.fixture
def spec() -> dict[str, Any]:
    """All three kinds: platform (single, required), genres (multi, optional, allow_other),
    tone (multi, required), protagonist_name (free_text, required), notes (free_text, optional)."""
    data: dict[str, Any] = load_fixture("question_spec_all_kinds.json")
    return data


@pytest.fixture
def answer() -> dict[str, Any]:
    data: dict[str, Any] = load_fixture("answer_spec_all_kinds.json")
    return data


# ------------------------------------------------------------------------------------------ seed examples


def test_seed_instruction_packet_parses_and_round_trips() -> None:
    data = load_fixture("instruction_packet.json")
    packet = InstructionPacket.model_validate(data)
    assert packet.has_gate
    assert packet.agent.name == "chapter-writer"
    assert packet.novel_ask is not None
    assert packet.novel_ask.questions[0].labels == ["qidian", "jjwxc", "web"]
    assert packet.expected_outputs[1].note is None
    assert packet.next_actions[0].command == "novel validate chapter:048:draft"
    assert packet.to_json_dict() == data


def test_seed_instruction_packet_gate_validates() -> None:
    data = load_fixture("instruction_packet.json")
    assert validate_question_spec(data["novel_ask"]) == []
    assert validate_answer_path(data["answer_path"]) == []
    assert validate_answer_spec(data["novel_ask"], load_fixture("answer_spec.json")) == []


def test_seed_answer_spec_round_trips_verbatim() -> None:
    data = load_fixture("answer_spec.json")
    answer = AnswerSpec.model_validate(data)
    assert answer.to_json_dict() == data
    # The audit timestamp is kept exactly as written, milliseconds and Z included.
    assert answer.answered_at == "2026-02-27T10:12:34.000Z"
    assert datetime.fromisoformat(answer.answered_at) == datetime(2026, 2, 27, 10, 12, 34, tzinfo=UTC)


def test_packet_without_answer_path_has_no_gate() -> None:
    data = load_fixture("instruction_packet.json")
    del data["answer_path"]
    assert not InstructionPacket.model_validate(data).has_gate


def test_unknown_keys_survive_a_packet_round_trip() -> None:
    data = load_fixture("instruction_packet.json")
    data["x_future"] = {"a": 1}
    data["novel_ask"]["questions"][0]["x_hint"] = "later"
    assert InstructionPacket.model_validate(data).to_json_dict() == data


def test_problem_str_is_field_colon_message() -> None:
    assert (
        str(ValidationProblem("questions[1].id", '重复的 id "platform"'))
        == 'questions[1].id: 重复的 id "platform"'
    )


# ------------------------------------------------------------------------------------------ QuestionSpec


def test_all_kinds_fixture_is_valid(spec: dict[str, Any]) -> None:
    assert validate_question_spec(spec) == []
    parsed = parse_question_spec(spec)
    assert [q.kind for q in parsed.questions] == [
        "single_choice",
        "multi_choice",
        "multi_choice",
        "free_text",
        "free_text",
    ]
    assert parsed.questions[0].required is True
    assert parsed.questions[0].allow_other is False
    assert parsed.questions[2].options[0].description == ""


@pytest.mark.parametrize("data", [None, [], "spec", 1, True])
def test_question_spec_must_be_an_object(data: object) -> None:
    problems = validate_question_spec(data)
    assert fields(problems) == ["$"]
    assert "JSON 对象" in problems[0].message


@pytest.mark.parametrize("version", [0, -1, "1", 1.0, 1.5, True, None])
def test_version_must_be_a_positive_int(spec: dict[str, Any], version: object) -> None:
    spec["version"] = version
    problems = validate_question_spec(spec)
    assert fields(problems) == ["version"]
    assert "正整数" in problems[0].message


@pytest.mark.parametrize("key", ["version", "topic", "questions"])
def test_top_level_keys_are_required(spec: dict[str, Any], key: str) -> None:
    del spec[key]
    problems = validate_question_spec(spec)
    assert fields(problems) == [key]
    assert "缺少" in problems[0].message


@pytest.mark.parametrize("topic", ["", "   ", 3, None, ["t"]])
def test_topic_must_be_a_non_empty_string(spec: dict[str, Any], topic: object) -> None:
    spec["topic"] = topic
    assert fields(validate_question_spec(spec)) == ["topic"]


@pytest.mark.parametrize("questions", [[], {}, "q", None])
def test_questions_must_be_a_non_empty_list(spec: dict[str, Any], questions: object) -> None:
    spec["questions"] = questions
    assert fields(validate_question_spec(spec)) == ["questions"]


def test_a_question_must_be_an_object(spec: dict[str, Any]) -> None:
    spec["questions"][2] = "tone"
    assert fields(validate_question_spec(spec)) == ["questions[2]"]


@pytest.mark.parametrize("qid", ["Platform", "1st", "with-dash", "", "a__b", "_a", 5, None])
def test_question_id_must_be_snake_case(spec: dict[str, Any], qid: object) -> None:
    spec["questions"][0]["id"] = qid
    problems = validate_question_spec(spec)
    assert fields(problems) == ["questions[0].id"]
    assert "snake_case" in problems[0].message


@pytest.mark.parametrize("qid", ["platform", "a", "chapter_048", "x1_y2"])
def test_snake_case_ids_are_accepted(spec: dict[str, Any], qid: str) -> None:
    spec["questions"][0]["id"] = qid
    assert validate_question_spec(spec) == []


def test_question_id_is_required(spec: dict[str, Any]) -> None:
    del spec["questions"][3]["id"]
    assert fields(validate_question_spec(spec)) == ["questions[3].id"]


def test_duplicate_question_id_names_the_second(spec: dict[str, Any]) -> None:
    spec["questions"][1]["id"] = "platform"
    problems = validate_question_spec(spec)
    assert [str(p) for p in problems] == ['questions[1].id: 重复的 id "platform"']


@pytest.mark.parametrize("key", ["header", "question"])
@pytest.mark.parametrize("value", ["", "  ", 7, None])
def test_header_and_question_must_be_non_empty_strings(spec: dict[str, Any], key: str, value: object) -> None:
    spec["questions"][1][key] = value
    assert fields(validate_question_spec(spec)) == [f"questions[1].{key}"]


@pytest.mark.parametrize("key", ["header", "question", "kind"])
def test_header_question_kind_are_required(spec: dict[str, Any], key: str) -> None:
    del spec["questions"][0][key]
    assert f"questions[0].{key}" in fields(validate_question_spec(spec))


@pytest.mark.parametrize("kind", ["choice", "SINGLE_CHOICE", "", None, 1])
def test_kind_must_be_one_of_three(spec: dict[str, Any], kind: object) -> None:
    spec["questions"][0]["kind"] = kind
    problems = validate_question_spec(spec)
    assert fields(problems) == ["questions[0].kind"]
    assert "single_choice" in problems[0].message


@pytest.mark.parametrize("index", [0, 2])
@pytest.mark.parametrize("options", [[], None, "qidian", {"label": "a"}])
def test_choice_questions_need_a_non_empty_options_list(
    spec: dict[str, Any], index: int, options: object
) -> None:
    spec["questions"][index]["options"] = options
    problems = validate_question_spec(spec)
    # A default can only be judged against labels, so with no options the default is not reported again.
    assert fields(problems) == [f"questions[{index}].options"]


def test_choice_question_without_options_key(spec: dict[str, Any]) -> None:
    del spec["questions"][2]["options"]
    assert fields(validate_question_spec(spec)) == ["questions[2].options"]


def test_an_option_must_be_an_object(spec: dict[str, Any]) -> None:
    spec["questions"][0]["options"][1] = "jjwxc"
    assert fields(validate_question_spec(spec)) == ["questions[0].options[1]"]


@pytest.mark.parametrize("label", ["", " ", None, 3])
def test_option_label_must_be_a_non_empty_string(spec: dict[str, Any], label: object) -> None:
    spec["questions"][2]["options"][1]["label"] = label
    assert fields(validate_question_spec(spec)) == ["questions[2].options[1].label"]


def test_option_label_is_required(spec: dict[str, Any]) -> None:
    del spec["questions"][2]["options"][0]["label"]
    assert fields(validate_question_spec(spec)) == ["questions[2].options[0].label"]


def test_duplicate_option_label(spec: dict[str, Any]) -> None:
    spec["questions"][0]["options"][2]["label"] = "qidian"
    problems = validate_question_spec(spec)
    assert [str(p) for p in problems] == ['questions[0].options[2].label: 重复的选项 label "qidian"']


def test_option_description_is_optional_but_a_string(spec: dict[str, Any]) -> None:
    del spec["questions"][0]["options"][0]["description"]
    assert validate_question_spec(spec) == []
    spec["questions"][0]["options"][0]["description"] = 1
    assert fields(validate_question_spec(spec)) == ["questions[0].options[0].description"]


def test_free_text_must_not_have_options(spec: dict[str, Any]) -> None:
    spec["questions"][3]["options"] = [{"label": "a", "description": ""}]
    problems = validate_question_spec(spec)
    assert fields(problems) == ["questions[3].options"]
    assert "free_text" in problems[0].message


@pytest.mark.parametrize("options", [[], None])
def test_free_text_may_have_empty_or_absent_options(spec: dict[str, Any], options: object) -> None:
    spec["questions"][3]["options"] = options
    assert validate_question_spec(spec) == []
    del spec["questions"][3]["options"]
    assert validate_question_spec(spec) == []


@pytest.mark.parametrize("key", ["required", "allow_other"])
@pytest.mark.parametrize("value", ["true", 1, 0, None, "yes"])
def test_required_and_allow_other_must_be_bools(spec: dict[str, Any], key: str, value: object) -> None:
    spec["questions"][0][key] = value
    problems = validate_question_spec(spec)
    assert fields(problems) == [f"questions[0].{key}"]
    assert "布尔" in problems[0].message


@pytest.mark.parametrize("key", ["required", "allow_other"])
@pytest.mark.parametrize("value", [True, False])
def test_required_and_allow_other_accept_bools(spec: dict[str, Any], key: str, value: bool) -> None:
    spec["questions"][0][key] = value
    assert validate_question_spec(spec) == []


@pytest.mark.parametrize("default", ["jjwxc", None])
def test_single_choice_default_is_a_label(spec: dict[str, Any], default: object) -> None:
    spec["questions"][0]["default"] = default
    assert validate_question_spec(spec) == []


@pytest.mark.parametrize("default", ["fanqie", "", ["qidian"], 1])
def test_single_choice_default_outside_labels_is_rejected(spec: dict[str, Any], default: object) -> None:
    spec["questions"][0]["default"] = default
    assert fields(validate_question_spec(spec)) == ["questions[0].default"]


def test_single_choice_default_with_allow_other_may_be_custom(spec: dict[str, Any]) -> None:
    spec["questions"][0]["allow_other"] = True
    spec["questions"][0]["default"] = "番茄"
    assert validate_question_spec(spec) == []
    spec["questions"][0]["default"] = " "
    assert fields(validate_question_spec(spec)) == ["questions[0].default"]


def test_multi_choice_default_is_a_list_of_labels(spec: dict[str, Any]) -> None:
    spec["questions"][2]["default"] = ["爽文", "轻松"]
    assert validate_question_spec(spec) == []


def test_multi_choice_default_as_a_bare_string_is_rejected(spec: dict[str, Any]) -> None:
    # Decision: a default has the same shape as an answer, so a multi_choice default is always a list.
    spec["questions"][2]["default"] = "爽文"
    problems = validate_question_spec(spec)
    assert fields(problems) == ["questions[2].default"]
    assert "数组" in problems[0].message


def test_multi_choice_default_empty_list_is_rejected(spec: dict[str, Any]) -> None:
    spec["questions"][2]["default"] = []
    assert fields(validate_question_spec(spec)) == ["questions[2].default"]


def test_multi_choice_default_items(spec: dict[str, Any]) -> None:
    spec["questions"][2]["default"] = ["爽文", "爽文", "甜宠", 3]
    assert fields(validate_question_spec(spec)) == [
        "questions[2].default[1]",
        "questions[2].default[2]",
        "questions[2].default[3]",
    ]


def test_multi_choice_default_with_allow_other_may_be_custom(spec: dict[str, Any]) -> None:
    spec["questions"][1]["default"] = ["赛博修仙"]
    assert validate_question_spec(spec) == []
    spec["questions"][1]["default"] = [""]
    assert fields(validate_question_spec(spec)) == ["questions[1].default[0]"]


def test_free_text_default_is_a_string(spec: dict[str, Any]) -> None:
    spec["questions"][3]["default"] = "林七夜"
    assert validate_question_spec(spec) == []
    spec["questions"][3]["default"] = ["林七夜"]
    assert fields(validate_question_spec(spec)) == ["questions[3].default"]


def test_unknown_keys_are_allowed_everywhere(spec: dict[str, Any]) -> None:
    spec["x_future"] = 1
    spec["questions"][0]["x_hint"] = {"a": [1]}
    spec["questions"][0]["options"][0]["x_icon"] = "star"
    assert validate_question_spec(spec) == []
    assert parse_question_spec(spec).to_json_dict() == spec


def test_every_problem_is_reported_not_just_the_first(spec: dict[str, Any]) -> None:
    spec["version"] = 0
    spec["questions"][0]["id"] = "Bad"
    spec["questions"][3]["kind"] = "essay"
    assert fields(validate_question_spec(spec)) == ["version", "questions[0].id", "questions[3].kind"]


def test_parse_question_spec_raises_with_problems(spec: dict[str, Any]) -> None:
    spec["topic"] = ""
    with pytest.raises(QuestionSpecInvalid) as info:
        parse_question_spec(spec)
    assert fields(info.value.problems) == ["topic"]
    assert "topic:" in str(info.value)


# ------------------------------------------------------------------------------------------ AnswerSpec


def test_all_kinds_answer_is_valid(spec: dict[str, Any], answer: dict[str, Any]) -> None:
    assert validate_answer_spec(spec, answer) == []
    assert validate_answer_spec(QuestionSpec.model_validate(spec), answer) == []


@pytest.mark.parametrize("data", [None, [], "answers", 1])
def test_answer_spec_must_be_an_object(spec: dict[str, Any], data: object) -> None:
    assert fields(validate_answer_spec(spec, data)) == ["$"]


@pytest.mark.parametrize("version", [1, 3, "2", 2.0, None])
def test_answer_version_must_equal_the_spec(
    spec: dict[str, Any], answer: dict[str, Any], version: object
) -> None:
    answer["version"] = version
    problems = validate_answer_spec(spec, answer)
    assert fields(problems) == ["version"]
    assert "QuestionSpec" in problems[0].message


def test_answer_version_true_is_not_1(spec: dict[str, Any], answer: dict[str, Any]) -> None:
    spec["version"] = 1
    answer["version"] = True
    assert fields(validate_answer_spec(spec, answer)) == ["version"]


@pytest.mark.parametrize("topic", ["novel-init", "Novel init", "", None])
def test_answer_topic_must_equal_the_spec(
    spec: dict[str, Any], answer: dict[str, Any], topic: object
) -> None:
    answer["topic"] = topic
    assert fields(validate_answer_spec(spec, answer)) == ["topic"]


@pytest.mark.parametrize("key", ["version", "topic", "answers", "answered_at", "answered_by"])
def test_answer_keys_are_required(spec: dict[str, Any], answer: dict[str, Any], key: str) -> None:
    del answer[key]
    problems = validate_answer_spec(spec, answer)
    assert fields(problems) == [key]
    assert "缺少" in problems[0].message


@pytest.mark.parametrize("answers", [[], "platform", None])
def test_answers_must_be_an_object(spec: dict[str, Any], answer: dict[str, Any], answers: object) -> None:
    answer["answers"] = answers
    assert fields(validate_answer_spec(spec, answer)) == ["answers"]


@pytest.mark.parametrize(("key", "field"), [("Platform", "answers.Platform"), ("主角", 'answers["主角"]')])
def test_answer_keys_must_be_snake_case(
    spec: dict[str, Any], answer: dict[str, Any], key: str, field: str
) -> None:
    answer["answers"][key] = "x"
    problems = validate_answer_spec(spec, answer)
    assert fields(problems) == [field]
    assert "snake_case" in problems[0].message


def test_unknown_answer_keys_are_rejected(spec: dict[str, Any], answer: dict[str, Any]) -> None:
    answer["answers"]["word_count"] = "3000"
    problems = validate_answer_spec(spec, answer)
    assert fields(problems) == ["answers.word_count"]
    assert "未知的问题 id" in problems[0].message


def test_unknown_top_level_keys_are_allowed(spec: dict[str, Any], answer: dict[str, Any]) -> None:
    answer["x_adapter"] = {"session": "abc"}
    assert validate_answer_spec(spec, answer) == []


@pytest.mark.parametrize("qid", ["platform", "tone", "protagonist_name"])
def test_required_questions_must_be_answered(spec: dict[str, Any], answer: dict[str, Any], qid: str) -> None:
    del answer["answers"][qid]
    problems = validate_answer_spec(spec, answer)
    assert [str(p) for p in problems] == [f"answers.{qid}: 必答问题未回答"]


def test_optional_questions_may_be_left_out(spec: dict[str, Any], answer: dict[str, Any]) -> None:
    del answer["answers"]["genres"]
    answer["answers"].pop("notes", None)
    assert validate_answer_spec(spec, answer) == []


def test_required_false_question_counts_as_optional(spec: dict[str, Any], answer: dict[str, Any]) -> None:
    spec["questions"][0]["required"] = False
    del answer["answers"]["platform"]
    assert validate_answer_spec(spec, answer) == []


@pytest.mark.parametrize("value", ["fanqie", "Qidian", "", ["jjwxc"], 1, None])
def test_single_choice_answer_must_be_a_label(
    spec: dict[str, Any], answer: dict[str, Any], value: object
) -> None:
    answer["answers"]["platform"] = value
    assert fields(validate_answer_spec(spec, answer)) == ["answers.platform"]


def test_single_choice_with_allow_other_accepts_custom_text(
    spec: dict[str, Any], answer: dict[str, Any]
) -> None:
    spec["questions"][0]["allow_other"] = True
    answer["answers"]["platform"] = "番茄小说"
    assert validate_answer_spec(spec, answer) == []
    answer["answers"]["platform"] = "  "
    assert fields(validate_answer_spec(spec, answer)) == ["answers.platform"]
    answer["answers"]["platform"] = ["番茄小说"]
    assert fields(validate_answer_spec(spec, answer)) == ["answers.platform"]


def test_multi_choice_required_needs_at_least_one(spec: dict[str, Any], answer: dict[str, Any]) -> None:
    answer["answers"]["tone"] = []
    problems = validate_answer_spec(spec, answer)
    assert fields(problems) == ["answers.tone"]
    assert "至少" in problems[0].message


def test_multi_choice_optional_empty_array_is_rejected(spec: dict[str, Any], answer: dict[str, Any]) -> None:
    answer["answers"]["genres"] = []
    problems = validate_answer_spec(spec, answer)
    assert fields(problems) == ["answers.genres"]
    assert "省略" in problems[0].message


def test_multi_choice_duplicates_are_rejected(spec: dict[str, Any], answer: dict[str, Any]) -> None:
    answer["answers"]["tone"] = ["爽文", "轻松", "爽文"]
    problems = validate_answer_spec(spec, answer)
    assert fields(problems) == ["answers.tone[2]"]
    assert "重复" in problems[0].message


def test_multi_choice_duplicates_rejected_with_allow_other(
    spec: dict[str, Any], answer: dict[str, Any]
) -> None:
    answer["answers"]["genres"] = ["赛博修仙", "赛博修仙"]
    assert fields(validate_answer_spec(spec, answer)) == ["answers.genres[1]"]


def test_multi_choice_items_must_be_labels(spec: dict[str, Any], answer: dict[str, Any]) -> None:
    answer["answers"]["tone"] = ["甜宠", "爽文", 3]
    assert fields(validate_answer_spec(spec, answer)) == ["answers.tone[0]", "answers.tone[2]"]


def test_multi_choice_with_allow_other_accepts_custom_items(
    spec: dict[str, Any], answer: dict[str, Any]
) -> None:
    answer["answers"]["genres"] = ["赛博修仙", "玄幻"]
    assert validate_answer_spec(spec, answer) == []
    answer["answers"]["genres"] = [""]
    assert fields(validate_answer_spec(spec, answer)) == ["answers.genres[0]"]


@pytest.mark.parametrize("value", ["爽文", {"爽文": True}, None])
def test_multi_choice_answer_must_be_a_list(
    spec: dict[str, Any], answer: dict[str, Any], value: object
) -> None:
    answer["answers"]["tone"] = value
    assert fields(validate_answer_spec(spec, answer)) == ["answers.tone"]


@pytest.mark.parametrize("value", ["", "   ", 1, ["林七夜"], None])
def test_required_free_text_must_be_a_non_empty_string(
    spec: dict[str, Any], answer: dict[str, Any], value: object
) -> None:
    answer["answers"]["protagonist_name"] = value
    assert fields(validate_answer_spec(spec, answer)) == ["answers.protagonist_name"]


def test_optional_free_text_may_be_empty_but_must_be_a_string(
    spec: dict[str, Any], answer: dict[str, Any]
) -> None:
    answer["answers"]["notes"] = ""
    assert validate_answer_spec(spec, answer) == []
    answer["answers"]["notes"] = 0
    assert fields(validate_answer_spec(spec, answer)) == ["answers.notes"]


@pytest.mark.parametrize(
    "stamp",
    [
        "2026-02-27T10:12:34.000Z",
        "2026-02-27T10:12:34Z",
        "2026-02-27t10:12:34z",
        "2026-02-27T18:12:34+08:00",
        "2026-02-27T05:12:34.123456789-05:30",
        "2016-12-31T23:59:60Z",
    ],
)
def test_answered_at_accepts_rfc3339_with_zone(
    spec: dict[str, Any], answer: dict[str, Any], stamp: str
) -> None:
    answer["answered_at"] = stamp
    assert validate_answer_spec(spec, answer) == []
    assert is_rfc3339_timestamp(stamp)


@pytest.mark.parametrize(
    "stamp",
    [
        "2026-02-27T10:12:34",  # naive
        "2026-02-27T10:12:34.000",  # naive with fraction
        "2026/02/27",
        "2026-02-27",
        "2026-02-27 10:12:34Z",
        "2026-02-27T10:12:34+0800",
        "2026-02-27T10:12:34+08",
        "2026-13-01T00:00:00Z",
        "2026-02-30T00:00:00Z",
        "2026-02-27T24:00:00Z",
        "2026-02-27T10:61:00Z",
        "2026-02-27T10:12:34+24:00",
        "2026-02-27T10:12:34.Z",
        " 2026-02-27T10:12:34Z",
        "",
        1772187154,
        None,
    ],
)
def test_answered_at_rejects_other_forms(spec: dict[str, Any], answer: dict[str, Any], stamp: object) -> None:
    answer["answered_at"] = stamp
    problems = validate_answer_spec(spec, answer)
    assert fields(problems) == ["answered_at"]
    assert "RFC 3339" in problems[0].message


@pytest.mark.parametrize("by", ["", "  ", 1, None])
def test_answered_by_must_be_a_non_empty_string(
    spec: dict[str, Any], answer: dict[str, Any], by: object
) -> None:
    answer["answered_by"] = by
    assert fields(validate_answer_spec(spec, answer)) == ["answered_by"]


def test_an_invalid_question_spec_is_reported_instead(spec: dict[str, Any], answer: dict[str, Any]) -> None:
    spec["questions"][1]["id"] = "platform"
    problems = validate_answer_spec(spec, answer)
    assert [str(p) for p in problems] == ['question_spec.questions[1].id: 重复的 id "platform"']
    not_a_spec: Any = []
    assert fields(validate_answer_spec(not_a_spec, answer)) == ["question_spec"]


# ------------------------------------------------------------------------------------------ load / gate


def test_load_valid_answer_returns_the_model(spec: dict[str, Any], answer: dict[str, Any]) -> None:
    loaded = load_valid_answer(spec, answer)
    assert loaded.answers["tone"] == ["爽文", "轻松"]
    assert loaded.to_json_dict() == answer


def test_load_valid_answer_raises_with_problems(spec: dict[str, Any], answer: dict[str, Any]) -> None:
    answer["answers"]["genres"] = []
    with pytest.raises(AnswerSpecInvalid) as info:
        load_valid_answer(spec, answer)
    assert fields(info.value.problems) == ["answers.genres"]
    assert "阻塞" in str(info.value)
    assert "answers.genres:" in str(info.value)


def test_gate_missing_answered_blocked(spec: dict[str, Any], answer: dict[str, Any]) -> None:
    assert evaluate_gate(spec, None, present=False).state is GateState.MISSING
    answered = evaluate_gate(spec, answer)
    assert answered.state is GateState.ANSWERED
    assert answered.answer is not None
    assert answered.answer.answers["platform"] == "jjwxc"
    answer["answered_at"] = "2026/02/27"
    blocked = evaluate_gate(spec, answer)
    assert blocked.state is GateState.BLOCKED
    assert fields(blocked.problems) == ["answered_at"]


def test_gate_with_a_null_file_is_blocked_not_missing(spec: dict[str, Any]) -> None:
    assert evaluate_gate(spec, None).state is GateState.BLOCKED


# ------------------------------------------------------------------------------------------ build


def test_build_answer_spec_validates_and_round_trips(spec: dict[str, Any]) -> None:
    when = datetime(2026, 2, 27, 18, 12, 34, 500000, tzinfo=timezone(timedelta(hours=8)))
    built = build_answer_spec(
        spec,
        {"platform": "web", "tone": ("虐心",), "protagonist_name": "林七夜"},
        answered_by="human",
        answered_at=when,
    )
    assert built.answered_at == "2026-02-27T10:12:34.500Z"
    assert built.answers == {"platform": "web", "tone": ["虐心"], "protagonist_name": "林七夜"}
    assert validate_answer_spec(spec, built.to_json_dict()) == []
    assert (built.version, built.topic, built.answered_by) == (2, "novel init", "human")


def test_build_answer_spec_leaves_out_unanswered_optionals(spec: dict[str, Any]) -> None:
    built = build_answer_spec(
        spec,
        {"platform": "web", "tone": ["爽文"], "protagonist_name": "林七夜", "genres": [], "notes": "  "},
        answered_by="codex",
    )
    assert set(built.answers) == {"platform", "tone", "protagonist_name"}
    assert validate_answer_spec(spec, built.to_json_dict()) == []


def test_build_answer_spec_defaults_to_now_in_utc(spec: dict[str, Any]) -> None:
    before = datetime.now(UTC)
    built = build_answer_spec(
        spec, {"platform": "web", "tone": ["爽文"], "protagonist_name": "x"}, answered_by="human"
    )
    assert built.answered_at.endswith("Z")
    assert before - timedelta(seconds=1) <= datetime.fromisoformat(built.answered_at) <= datetime.now(UTC)


def test_build_answer_spec_takes_a_naive_time_as_local(spec: dict[str, Any]) -> None:
    naive = datetime(2026, 2, 27, 10, 12, 34)
    built = build_answer_spec(
        spec,
        {"platform": "web", "tone": ["爽文"], "protagonist_name": "x"},
        answered_by="human",
        answered_at=naive,
    )
    assert datetime.fromisoformat(built.answered_at) == naive.astimezone()


def test_build_answer_spec_rejects_invalid_answers(spec: dict[str, Any]) -> None:
    with pytest.raises(AnswerSpecInvalid) as info:
        build_answer_spec(spec, {"platform": "fanqie", "tone": ["爽文"], "extra": "x"}, answered_by="")
    assert fields(info.value.problems) == [
        "answers.platform",
        "answers.extra",
        "answers.protagonist_name",
        "answered_by",
    ]


def test_build_answer_spec_rejects_an_invalid_spec(spec: dict[str, Any]) -> None:
    spec["version"] = 0
    with pytest.raises(AnswerSpecInvalid) as info:
        build_answer_spec(spec, {}, answered_by="human")
    assert fields(info.value.problems) == ["question_spec.version"]


def test_build_from_defaults_of_the_seed_question() -> None:
    spec = parse_question_spec(load_fixture("question_spec.json"))
    defaults = {q.id: q.default for q in spec.questions if q.default is not None}
    assert defaults == {"platform": "qidian"}
    built = build_answer_spec(spec, defaults, answered_by="claude_code")
    assert built.answers == {"platform": "qidian"}


# ------------------------------------------------------------------------------------------ answer_path


@pytest.mark.parametrize(
    "path",
    [
        "staging/novel-ask/chapter-048-draft.answers.json",
        "a.json",
        "./staging/a.json",
        "staging\\novel-ask\\a.json",
        "staging/..answers.json",
        "staging/a..json",
    ],
)
def test_answer_path_accepts_project_relative_paths(path: str) -> None:
    assert validate_answer_path(path) == []


@pytest.mark.parametrize(
    ("path", "words"),
    [
        (None, "字符串"),
        (3, "字符串"),
        ("", "为空"),
        ("   ", "为空"),
        ("/etc/passwd", "绝对路径"),
        ("//server/share/a.json", "绝对路径"),
        ("C:\\novel\\a.json", "盘符"),
        ("C:/novel/a.json", "盘符"),
        ("c:a.json", "盘符"),
        ("\\\\server\\share\\a.json", "UNC"),
        ("\\staging\\a.json", "反斜杠"),
        ("../a.json", ".."),
        ("staging/../../a.json", ".."),
        ("staging\\..\\..\\a.json", ".."),
        ("staging/..", ".."),
        ("..", ".."),
        (".", "根目录"),
        ("./", "根目录"),
        ("a\x00b.json", "NUL"),
    ],
)
def test_answer_path_rejections(path: object, words: str) -> None:
    problems = validate_answer_path(path)
    assert fields(problems) == ["answer_path"]
    assert words in problems[0].message


def test_answer_path_inside_root(tmp_path: Path) -> None:
    assert validate_answer_path("staging/novel-ask/a.json", root=tmp_path) == []


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_answer_path_escaping_through_a_symlink_is_rejected(tmp_path: Path) -> None:
    root = tmp_path / "project"
    outside = tmp_path / "outside"
    (root / "staging").mkdir(parents=True)
    outside.mkdir()
    (root / "staging" / "novel-ask").symlink_to(outside, target_is_directory=True)
    problems = validate_answer_path("staging/novel-ask/a.json", root=root)
    assert fields(problems) == ["answer_path"]
    assert "逃出" in problems[0].message
    # Without a root there is nothing to resolve against; the text alone is fine.
    assert validate_answer_path("staging/novel-ask/a.json") == []


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_answer_path_symlink_inside_root_is_fine(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "staging").symlink_to(tmp_path / "real", target_is_directory=True)
    assert validate_answer_path("staging/a.json", root=tmp_path) == []


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_answer_path_through_a_symlinked_root(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    assert validate_answer_path("a.json", root=tmp_path / "link") == []


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_answer_path_symlink_loop_does_not_raise(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    problems = validate_answer_path("loop/a.json", root=tmp_path)
    assert fields(problems) in ([], ["answer_path"])


def test_problem_lists_are_independent_copies(spec: dict[str, Any]) -> None:
    # Validators must not mutate their input: the CLI and the pipeline reuse the same parsed data.
    before = copy.deepcopy(spec)
    validate_question_spec(spec)
    validate_answer_spec(spec, {"answers": {}})
    assert spec == before
