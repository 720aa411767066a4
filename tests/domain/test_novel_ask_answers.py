"""NOVEL_ASK answers (seed 000): AnswerSpec checks, loading, the gate, building an answer, answer_path."""

from __future__ import annotations

import copy
import os
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from novel_desktop.domain.novel_ask import (
    AnswerSpecInvalid,
    QuestionSpec,
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
from tests.domain.novel_ask_examples import fields, load_fixture

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
