"""Property tests of NOVEL_ASK: built answers always validate; garbage never raises."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from novel_desktop.domain.common import SNAKE_CASE_RE
from novel_desktop.domain.novel_ask import AnswerSpec, QuestionSpec, ValidationProblem, validate_question_spec
from novel_desktop.domain.novel_ask_answers import (
    build_answer_spec,
    load_valid_answer,
    validate_answer_path,
    validate_answer_spec,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "novel_ask"
ALL_KINDS_SPEC: dict[str, Any] = json.loads((FIXTURES / "question_spec_all_kinds.json").read_text("utf-8"))
ALL_KINDS_ANSWER: dict[str, Any] = json.loads((FIXTURES / "answer_spec_all_kinds.json").read_text("utf-8"))

non_blank = st.text(min_size=1, max_size=12).filter(lambda s: s.strip() != "")
snake_ids = st.from_regex(SNAKE_CASE_RE, fullmatch=True).filter(lambda s: len(s) <= 24)

json_garbage = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@st.composite
def questions(draw: st.DrawFn, qid: str) -> dict[str, Any]:
    kind = draw(st.sampled_from(["single_choice", "multi_choice", "free_text"]))
    question: dict[str, Any] = {
        "id": qid,
        "header": draw(non_blank),
        "question": draw(non_blank),
        "kind": kind,
    }
    if draw(st.booleans()):
        question["required"] = draw(st.booleans())
    if kind != "free_text":
        question["options"] = [
            {"label": label, "description": draw(st.text(max_size=6))}
            for label in draw(st.lists(non_blank, min_size=1, max_size=5, unique=True))
        ]
        if draw(st.booleans()):
            question["allow_other"] = draw(st.booleans())
    return question


@st.composite
def question_specs(draw: st.DrawFn) -> dict[str, Any]:
    ids = draw(st.lists(snake_ids, min_size=1, max_size=5, unique=True))
    return {
        "version": draw(st.integers(min_value=1, max_value=10)),
        "topic": draw(non_blank),
        "questions": [draw(questions(qid)) for qid in ids],
    }


@st.composite
def answer_for(draw: st.DrawFn, question: dict[str, Any]) -> object:
    """A value a dialog could hand over for ``question`` (None, [] or blank when the user skipped it)."""
    required = question.get("required", True)
    labels = [option["label"] for option in question.get("options", [])]
    other = question.get("allow_other", False)
    kind = question["kind"]
    if kind == "free_text":
        return draw(non_blank) if required else draw(st.none() | st.text(max_size=8))
    choice = st.sampled_from(labels) | non_blank if other else st.sampled_from(labels)
    if kind == "single_choice":
        return draw(choice) if required else draw(st.none() | choice)
    picked = draw(st.lists(choice, min_size=1 if required else 0, max_size=4, unique=True))
    # A dialog may report "nothing selected" as [] or as None; both must end up absent.
    keep_empty: bool = draw(st.booleans())
    return picked if picked or keep_empty else None


@st.composite
def specs_with_answers(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, object]]:
    spec = draw(question_specs())
    answers: dict[str, object] = {}
    for question in spec["questions"]:
        if question.get("required", True) or draw(st.booleans()):
            answers[question["id"]] = draw(answer_for(question))
    return spec, answers


# RFC 3339 offsets are whole minutes.
zones = st.just(UTC) | st.builds(
    lambda minutes: timezone(timedelta(minutes=minutes)), st.integers(min_value=-1439, max_value=1439)
)
moments = st.datetimes(
    min_value=datetime(1971, 1, 2), max_value=datetime(2200, 1, 1), timezones=st.one_of(st.none(), zones)
)


@settings(max_examples=200)
@given(specs_with_answers(), non_blank, moments)
def test_built_answer_specs_always_validate(
    spec_and_answers: tuple[dict[str, Any], dict[str, object]], answered_by: str, answered_at: datetime
) -> None:
    spec, answers = spec_and_answers
    assert validate_question_spec(spec) == []
    built = build_answer_spec(spec, answers, answered_by=answered_by, answered_at=answered_at)
    data = built.to_json_dict()
    assert validate_answer_spec(spec, data) == []
    # What is written reads back as the same record.
    assert load_valid_answer(QuestionSpec.model_validate(spec), data) == built
    # Stored in UTC to the millisecond; a naive time was local time.
    expected = answered_at.astimezone(UTC)
    assert datetime.fromisoformat(built.answered_at) == expected.replace(
        microsecond=expected.microsecond // 1000 * 1000
    )


def _all_problems(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(p, ValidationProblem) for p in value)


@given(json_garbage)
def test_garbage_question_spec_never_raises(data: object) -> None:
    problems = validate_question_spec(data)
    assert _all_problems(problems)
    assert problems, "random data is never a valid QuestionSpec"


@given(json_garbage, json_garbage)
def test_garbage_answer_spec_never_raises(spec: object, answer: object) -> None:
    assert _all_problems(validate_answer_spec(ALL_KINDS_SPEC, answer))
    assert _all_problems(validate_answer_spec(spec, answer))  # type: ignore[arg-type]


@st.composite
def mutated(draw: st.DrawFn, value: object, odds: int = 30) -> object:
    """``value`` with a few nodes (about one in ``odds``) replaced, dropped or added as garbage.

    Close enough to valid to reach the deep checks, which random JSON never does.
    """
    if draw(st.integers(min_value=1, max_value=odds)) == 1:
        return draw(json_garbage)
    if isinstance(value, dict):
        result = {
            key: draw(mutated(item, odds))
            for key, item in value.items()
            if draw(st.integers(min_value=1, max_value=odds)) != 1
        }
        if draw(st.integers(min_value=1, max_value=odds)) == 1:
            result[draw(st.text(max_size=6))] = draw(json_garbage)
        return result
    if isinstance(value, list):
        return [draw(mutated(item, odds)) for item in value]
    return value


@settings(max_examples=200)
@given(st.data())
def test_nearly_valid_documents_never_raise_and_parse_when_valid(data: st.DataObject) -> None:
    # Half the time the QuestionSpec stays intact, so the AnswerSpec checks get exercised too.
    spec = data.draw(mutated(ALL_KINDS_SPEC)) if data.draw(st.booleans()) else ALL_KINDS_SPEC
    problems = validate_question_spec(spec)
    assert _all_problems(problems)
    if problems:
        return
    # No problems means the models accept it too.
    QuestionSpec.model_validate(spec)
    answer = data.draw(mutated(ALL_KINDS_ANSWER))
    answer_problems = validate_answer_spec(spec, answer)  # type: ignore[arg-type]
    assert _all_problems(answer_problems)
    if not answer_problems:
        AnswerSpec.model_validate(answer)


@pytest.fixture(scope="module")
def project_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("project")


@given(json_garbage | st.text() | st.text(alphabet="./\\:Ca\x00 ", max_size=12))
def test_garbage_answer_path_never_raises(project_root: Path, path: object) -> None:
    assert _all_problems(validate_answer_path(path))
    problems = validate_answer_path(path, root=project_root)
    assert _all_problems(problems)
    if not problems:
        assert isinstance(path, str)
        assert (project_root / path.replace("\\", "/")).resolve().is_relative_to(project_root.resolve())
