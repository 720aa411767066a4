"""NOVEL_ASK: the tool-neutral question gate (seed 000).

A step's InstructionPacket may carry a QuestionSpec (``novel_ask``) and an ``answer_path``. Before the main
agent runs, the executor makes sure a valid AnswerSpec sits at ``answer_path``:

- present and valid   -> the questions are skipped (resume semantics);
- missing             -> the user is asked, and the AnswerSpec is written first;
- present but invalid -> the step is *blocked* with the reasons, until the file is fixed or deleted.

This module holds the models and the QuestionSpec checks; answers, ``answer_path`` and the gate itself are
:mod:`.novel_ask_answers`.

The validators here take raw JSON values (``object``) and never raise: they return a list of
:class:`ValidationProblem`, each naming the field (``questions[1].id``, ``answers.platform``) with a Chinese
message, so the CLI, the dialogs and the pipeline all report the same words.

Decisions where the seed is silent:

- Unknown keys are allowed at every level of a QuestionSpec, a question, an option and at the top level of an
  AnswerSpec (forward compatibility; :class:`SeedModel` keeps them on round trips). Only the keys of
  ``answers`` are closed: an unknown question id there is an error, as the seed requires.
- "Non-empty string" means a string with at least one non-whitespace character.
- A question's ``default`` must itself be a valid answer to that question: an option label (or, with
  ``allow_other``, any non-empty string) for single_choice; a non-empty list of unique labels for multi_choice
  (a bare string is *not* accepted, so a default always has the same shape as an answer); a string for
  free_text. ``"default": null`` means no default.
- An option's ``description`` is optional (default ``""``) but must be a string when present.
- An optional free_text question may be answered with ``""``; :func:`build_answer_spec` leaves blank optional
  answers out instead, as it does for an optional multi_choice with nothing selected.
- ``answered_at`` must be RFC 3339 ``date-time`` with ``T`` (or ``t``) and a zone (``Z`` or ``±hh:mm``);
  a space separator, a naive time or another date format is rejected. The string is kept as written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, Literal

from pydantic import Field, field_validator

from novel_desktop.domain.common import SNAKE_CASE_RE, SeedModel

QuestionKind = Literal["single_choice", "multi_choice", "free_text"]
QUESTION_KINDS: tuple[str, ...] = ("single_choice", "multi_choice", "free_text")
CHOICE_KINDS: tuple[str, ...] = ("single_choice", "multi_choice")

# RFC 3339 section 5.6 date-time; the zone is mandatory. Range checks happen in _parse_rfc3339.
_RFC3339_RE = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})[Tt](?P<h>\d{2}):(?P<m>\d{2}):(?P<s>\d{2})(?P<frac>\.\d+)?"
    r"(?P<zone>[Zz]|[+-]\d{2}:\d{2})$"
)


# -------------------- models


class QuestionOption(SeedModel):
    """One choice of a single_choice or multi_choice question."""

    label: str
    description: str = ""


class Question(SeedModel):
    """One question of a QuestionSpec."""

    id: str
    header: str
    question: str
    kind: QuestionKind
    required: bool = True
    options: list[QuestionOption] = Field(default_factory=list)
    default: str | list[str] | None = None
    allow_other: bool = False

    @field_validator("options", mode="before")
    @classmethod
    def _null_options_are_none(cls, value: object) -> object:
        # validate_question_spec lets a free_text question write "options": null for "no options".
        return [] if value is None else value

    @property
    def labels(self) -> list[str]:
        """The option labels, in order."""
        return [option.label for option in self.options]


class QuestionSpec(SeedModel):
    """The questions of one gate (the ``novel_ask`` value of an InstructionPacket)."""

    version: int
    topic: str
    questions: list[Question]

    def question(self, question_id: str) -> Question | None:
        """The question with this id, or None."""
        return next((q for q in self.questions if q.id == question_id), None)


class AnswerSpec(SeedModel):
    """The audited record of a gate's answers, written to ``answer_path``."""

    version: int
    topic: str
    answers: dict[str, str | list[str]]
    answered_at: str
    answered_by: str


class AgentRef(SeedModel):
    """Which agent an InstructionPacket addresses."""

    kind: str
    name: str


class Manifest(SeedModel):
    """The context handed to the agent: inline values or project paths."""

    mode: str
    inline: dict[str, Any] = Field(default_factory=dict)
    paths: dict[str, Any] = Field(default_factory=dict)


class ExpectedOutput(SeedModel):
    """A file the step is expected to produce."""

    path: str
    required: bool = True
    note: str | None = None


class NextAction(SeedModel):
    """A follow-up the orchestrator suggests after the step."""

    kind: str
    command: str


class InstructionPacket(SeedModel):
    """One step's instructions to an executor; with ``novel_ask`` + ``answer_path`` it has a gate."""

    version: int
    step: str
    agent: AgentRef
    manifest: Manifest
    novel_ask: QuestionSpec | None = None
    answer_path: str | None = None
    expected_outputs: list[ExpectedOutput] = Field(default_factory=list)
    next_actions: list[NextAction] = Field(default_factory=list)

    @property
    def has_gate(self) -> bool:
        """True when the step must pass a NOVEL_ASK gate before its agent runs (both keys present)."""
        return self.novel_ask is not None and self.answer_path is not None


# -------------------- problems


@dataclass(frozen=True)
class ValidationProblem:
    """One reason a NOVEL_ASK document is invalid: the field it concerns and a message in Chinese."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


class NovelAskInvalid(ValueError):
    """A NOVEL_ASK document failed validation; ``problems`` says why."""

    title = "NOVEL_ASK 数据无效"

    def __init__(self, problems: Sequence[ValidationProblem]) -> None:
        self.problems: list[ValidationProblem] = list(problems)
        lines = "\n".join(f"- {p}" for p in self.problems)
        super().__init__(f"{self.title}：\n{lines}" if lines else self.title)


class QuestionSpecInvalid(NovelAskInvalid):
    """A QuestionSpec is invalid."""

    title = "QuestionSpec 无效"


class AnswerSpecInvalid(NovelAskInvalid):
    """An AnswerSpec is invalid: the gate's step is blocked until it is fixed or deleted."""

    title = "AnswerSpec 无效，该步骤已阻塞（修复或删除答案文件后重试）"


# -------------------- helpers

ROOT = "$"


def json_type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def show_value(value: object) -> str:
    """A short JSON rendering of a value for a message; never raises (garbage may be circular)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        # Circular data, ints past the str-conversion limit and foreign objects: name the type only.
        text = f"<{json_type_name(value)}>"
    return text if len(text) <= 60 else text[:57] + "..."


def key_field(prefix: str, key: object) -> str:
    """``answers.platform`` for a plain key, ``answers["Odd Key"]`` for anything else."""
    if isinstance(key, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        return f"{prefix}.{key}"
    return f"{prefix}[{show_value(key)}]"


def _join(prefix: str, name: str) -> str:
    return name if prefix == ROOT else f"{prefix}.{name}"


def _non_empty_str(value: object) -> bool:
    return isinstance(value, str) and value.strip() != ""


def is_int(value: object) -> bool:
    # bool is a subclass of int in Python, but true/false is not a JSON integer.
    return isinstance(value, int) and not isinstance(value, bool)


def labels_text(labels: Sequence[str]) -> str:
    return "、".join(show_value(label) for label in labels)


def _parse_rfc3339(text: str) -> datetime | None:
    """The aware datetime for an RFC 3339 date-time with a zone, or None."""
    match = _RFC3339_RE.match(text)
    if match is None:
        return None
    zone = match["zone"]
    try:
        if zone in ("Z", "z"):
            tz = UTC
        else:
            zone_h, zone_m = int(zone[1:3]), int(zone[4:6])
            if zone_h > 23 or zone_m > 59:
                return None
            sign = -1 if zone[0] == "-" else 1
            tz = timezone(sign * timedelta(hours=zone_h, minutes=zone_m))
        second = int(match["s"])
        if second > 60:
            return None
        micro = int((match["frac"] or ".0")[1:7].ljust(6, "0"))
        year, month, day = (int(part) for part in match["date"].split("-"))
        # RFC 3339 allows a leap second (:60); datetime does not, so it stands as :59.
        return datetime(year, month, day, int(match["h"]), int(match["m"]), min(second, 59), micro, tzinfo=tz)
    except ValueError:
        return None


def is_rfc3339_timestamp(value: object) -> bool:
    """True for an RFC 3339 date-time string with a zone (``Z`` or ``±hh:mm``)."""
    return isinstance(value, str) and _parse_rfc3339(value) is not None


def format_timestamp(moment: datetime) -> str:
    """``moment`` as the RFC 3339 string an AnswerSpec stores: UTC, milliseconds, ``Z``.

    A naive datetime is taken as local time, as a desktop clock would mean it.
    """
    aware = moment if moment.tzinfo is not None else moment.astimezone()
    return aware.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# -------------------- QuestionSpec


def _check_version(data: Mapping[str, Any], problems: list[ValidationProblem]) -> None:
    if "version" not in data:
        problems.append(ValidationProblem("version", "缺少必填字段"))
    elif not is_int(data["version"]) or data["version"] < 1:
        problems.append(ValidationProblem("version", f"必须是正整数，实际为 {show_value(data['version'])}"))


def check_non_empty_str(
    data: Mapping[str, Any], key: str, where: str, problems: list[ValidationProblem]
) -> None:
    name = _join(where, key)
    if key not in data:
        problems.append(ValidationProblem(name, "缺少必填字段"))
    elif not _non_empty_str(data[key]):
        problems.append(ValidationProblem(name, f"必须是非空字符串，实际为 {show_value(data[key])}"))


def _check_optional_bool(
    data: Mapping[str, Any], key: str, where: str, problems: list[ValidationProblem]
) -> None:
    if key in data and not isinstance(data[key], bool):
        problems.append(
            ValidationProblem(
                _join(where, key), f"必须是布尔值 true 或 false，实际为 {show_value(data[key])}"
            )
        )


def _check_options(raw: object, where: str, problems: list[ValidationProblem]) -> list[str]:
    """Check a choice question's options; return the valid labels."""
    name = f"{where}.options"
    if not isinstance(raw, list) or not raw:
        problems.append(ValidationProblem(name, f"选择题必须有非空的 options 数组，实际为 {show_value(raw)}"))
        return []
    labels: list[str] = []
    for j, option in enumerate(raw):
        at = f"{name}[{j}]"
        if not isinstance(option, dict):
            problems.append(ValidationProblem(at, f"必须是 JSON 对象，实际为 {json_type_name(option)}"))
            continue
        check_non_empty_str(option, "label", at, problems)
        if "description" in option and not isinstance(option["description"], str):
            problems.append(
                ValidationProblem(
                    f"{at}.description", f"必须是字符串，实际为 {show_value(option['description'])}"
                )
            )
        label = option.get("label")
        if isinstance(label, str) and label.strip():
            if label in labels:
                problems.append(ValidationProblem(f"{at}.label", f"重复的选项 label {show_value(label)}"))
            else:
                labels.append(label)
    return labels


def _check_default(
    question: Mapping[str, Any], kind: str, labels: list[str], where: str, problems: list[ValidationProblem]
) -> None:
    if question.get("default") is None:
        return
    value = question["default"]
    name = f"{where}.default"
    allow_other = question.get("allow_other") is True
    if kind == "free_text":
        if not isinstance(value, str):
            problems.append(
                ValidationProblem(name, f"free_text 的默认值必须是字符串，实际为 {show_value(value)}")
            )
    elif kind == "single_choice":
        if not isinstance(value, str):
            problems.append(
                ValidationProblem(name, f"single_choice 的默认值必须是字符串，实际为 {show_value(value)}")
            )
        elif allow_other:
            if not value.strip():
                problems.append(ValidationProblem(name, "默认值不能是空字符串"))
        elif labels and value not in labels:
            problems.append(
                ValidationProblem(
                    name, f"必须是选项 label 之一（{labels_text(labels)}），实际为 {show_value(value)}"
                )
            )
    elif not isinstance(value, list):
        problems.append(
            ValidationProblem(
                name,
                "multi_choice 的默认值必须是由选项 label 组成的数组（不接受单个字符串），"
                f"实际为 {show_value(value)}",
            )
        )
    elif not value:
        problems.append(ValidationProblem(name, "默认值不能是空数组（没有默认选择时请省略 default）"))
    else:
        seen: set[str] = set()
        for k, item in enumerate(value):
            at = f"{name}[{k}]"
            if not isinstance(item, str):
                problems.append(ValidationProblem(at, f"必须是字符串，实际为 {show_value(item)}"))
            elif item in seen:
                problems.append(ValidationProblem(at, f"重复的选项 {show_value(item)}"))
            elif allow_other and not item.strip():
                problems.append(ValidationProblem(at, "不能是空字符串"))
            elif not allow_other and labels and item not in labels:
                problems.append(
                    ValidationProblem(
                        at, f"必须是选项 label 之一（{labels_text(labels)}），实际为 {show_value(item)}"
                    )
                )
            if isinstance(item, str):
                seen.add(item)


def _check_question(
    question: object, where: str, seen_ids: set[str], problems: list[ValidationProblem]
) -> None:
    if not isinstance(question, dict):
        problems.append(ValidationProblem(where, f"必须是 JSON 对象，实际为 {json_type_name(question)}"))
        return
    qid = question.get("id")
    if "id" not in question:
        problems.append(ValidationProblem(f"{where}.id", "缺少必填字段"))
    elif not isinstance(qid, str) or not SNAKE_CASE_RE.match(qid):
        problems.append(
            ValidationProblem(
                f"{where}.id", f'必须是 snake_case（小写字母开头，如 "platform"），实际为 {show_value(qid)}'
            )
        )
    elif qid in seen_ids:
        problems.append(ValidationProblem(f"{where}.id", f"重复的 id {show_value(qid)}"))
    else:
        seen_ids.add(qid)
    check_non_empty_str(question, "header", where, problems)
    check_non_empty_str(question, "question", where, problems)
    _check_optional_bool(question, "required", where, problems)
    _check_optional_bool(question, "allow_other", where, problems)

    kind = question.get("kind")
    if "kind" not in question:
        problems.append(ValidationProblem(f"{where}.kind", "缺少必填字段"))
        return
    if kind not in QUESTION_KINDS:
        problems.append(
            ValidationProblem(
                f"{where}.kind",
                f"必须是 single_choice、multi_choice 或 free_text 之一，实际为 {show_value(kind)}",
            )
        )
        return
    labels: list[str] = []
    if kind in CHOICE_KINDS:
        labels = _check_options(question.get("options"), where, problems)
    elif question.get("options") not in (None, []):
        problems.append(
            ValidationProblem(f"{where}.options", "free_text 问题不能有 options（请省略或写空数组）")
        )
    _check_default(question, kind, labels, where, problems)


def validate_question_spec(data: object) -> list[ValidationProblem]:
    """Every reason ``data`` (a parsed JSON value) is not a valid QuestionSpec; empty when it is valid."""
    problems: list[ValidationProblem] = []
    if not isinstance(data, dict):
        return [ValidationProblem(ROOT, f"QuestionSpec 必须是 JSON 对象，实际为 {json_type_name(data)}")]
    _check_version(data, problems)
    check_non_empty_str(data, "topic", ROOT, problems)
    questions = data.get("questions")
    if "questions" not in data:
        problems.append(ValidationProblem("questions", "缺少必填字段"))
    elif not isinstance(questions, list) or not questions:
        problems.append(ValidationProblem("questions", f"必须是非空数组，实际为 {show_value(questions)}"))
    else:
        seen_ids: set[str] = set()
        for i, question in enumerate(questions):
            _check_question(question, f"questions[{i}]", seen_ids, problems)
    return problems


def parse_question_spec(data: object) -> QuestionSpec:
    """``data`` as a QuestionSpec, or raise :class:`QuestionSpecInvalid` with every problem."""
    problems = validate_question_spec(data)
    if problems:
        raise QuestionSpecInvalid(problems)
    return QuestionSpec.model_validate(data)


def as_question_spec(
    spec: QuestionSpec | Mapping[str, Any] | object,
) -> tuple[QuestionSpec | None, list[ValidationProblem]]:
    """A validated QuestionSpec from a model or raw data, or its problems prefixed ``question_spec``."""
    raw: object = spec.to_json_dict() if isinstance(spec, QuestionSpec) else spec
    if isinstance(raw, Mapping) and not isinstance(raw, dict):
        raw = dict(raw)
    problems = validate_question_spec(raw)
    if problems:
        return None, [
            ValidationProblem("question_spec" if p.field == ROOT else f"question_spec.{p.field}", p.message)
            for p in problems
        ]
    return QuestionSpec.model_validate(raw), []
