"""NOVEL_ASK (seed 000): models, validators, building and loading AnswerSpecs."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from novel_desktop.domain.novel_ask import (
    AnswerSpec,
    InstructionPacket,
    QuestionSpecInvalid,
    ValidationProblem,
    parse_question_spec,
    validate_question_spec,
)
from novel_desktop.domain.novel_ask_answers import (
    validate_answer_path,
    validate_answer_spec,
)
from tests.domain.novel_ask_examples import fields, load_fixture

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


def test_a_free_text_question_may_write_null_options_and_still_parses() -> None:
    """Found by the property test: the checker accepted "options": null on a free_text question, but the
    model refused it, so a spec the executor called valid failed when the question was shown."""
    from novel_desktop.domain.novel_ask import QuestionSpec, validate_question_spec

    spec = {
        "version": 1,
        "topic": "备注",
        "questions": [
            {"id": "notes", "header": "备注", "question": "还有什么？", "kind": "free_text", "options": None}
        ],
    }
    assert validate_question_spec(spec) == []
    assert QuestionSpec.model_validate(spec).questions[0].options == []
