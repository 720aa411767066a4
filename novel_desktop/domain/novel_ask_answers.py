"""NOVEL_ASK answers: validating an AnswerSpec against its QuestionSpec, building one from the author's
choices, checking an ``answer_path``, and the gate a step passes before its agent runs (seed 000).

The questions themselves, the models and the shared checks are :mod:`.novel_ask`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any

from novel_desktop.domain.common import SNAKE_CASE_RE, utc_now
from novel_desktop.domain.novel_ask import (
    ROOT,
    AnswerSpec,
    AnswerSpecInvalid,
    Question,
    QuestionSpec,
    ValidationProblem,
    as_question_spec,
    check_non_empty_str,
    format_timestamp,
    is_int,
    is_rfc3339_timestamp,
    json_type_name,
    key_field,
    labels_text,
    show_value,
)

_WINDOWS_DRIVE_RE = re.compile(r"^[A-Za-z]:")


# -------------------- AnswerSpec


def _check_answer(question: Question, value: object, name: str, problems: list[ValidationProblem]) -> None:
    labels = question.labels
    if question.kind == "free_text":
        if not isinstance(value, str):
            problems.append(
                ValidationProblem(name, f"free_text 的答案必须是字符串，实际为 {show_value(value)}")
            )
        elif question.required and not value.strip():
            problems.append(ValidationProblem(name, "必答问题的答案不能为空"))
        return
    if question.kind == "single_choice":
        if not isinstance(value, str):
            problems.append(
                ValidationProblem(name, f"single_choice 的答案必须是字符串，实际为 {show_value(value)}")
            )
        elif question.allow_other:
            if not value.strip():
                problems.append(ValidationProblem(name, "答案不能是空字符串"))
        elif value not in labels:
            problems.append(
                ValidationProblem(
                    name, f"必须是选项 label 之一（{labels_text(labels)}），实际为 {show_value(value)}"
                )
            )
        return
    if not isinstance(value, list):
        problems.append(
            ValidationProblem(name, f"multi_choice 的答案必须是字符串数组，实际为 {show_value(value)}")
        )
        return
    if not value:
        if question.required:
            problems.append(ValidationProblem(name, "必答的 multi_choice 至少要选 1 项"))
        else:
            problems.append(
                ValidationProblem(name, "选填的 multi_choice 没有选择时必须完全省略该问题 id，不能写空数组")
            )
        return
    seen: set[str] = set()
    for k, item in enumerate(value):
        at = f"{name}[{k}]"
        if not isinstance(item, str):
            problems.append(ValidationProblem(at, f"必须是字符串，实际为 {show_value(item)}"))
            continue
        if item in seen:
            problems.append(ValidationProblem(at, f"重复的选项 {show_value(item)}"))
        elif question.allow_other:
            if not item.strip():
                problems.append(ValidationProblem(at, "不能是空字符串"))
        elif item not in labels:
            problems.append(
                ValidationProblem(
                    at, f"必须是选项 label 之一（{labels_text(labels)}），实际为 {show_value(item)}"
                )
            )
        seen.add(item)


def validate_answer_spec(spec: QuestionSpec | Mapping[str, Any], answer: object) -> list[ValidationProblem]:
    """Every reason ``answer`` (a parsed JSON value) is not a valid AnswerSpec for ``spec``.

    ``spec`` may be a model or raw data; an invalid QuestionSpec is reported first, with its fields prefixed
    by ``question_spec``, and the answer is not checked against it. Empty when the answer is valid.
    """
    question_spec, problems = as_question_spec(spec)
    if question_spec is None:
        return problems
    if not isinstance(answer, dict):
        return [ValidationProblem(ROOT, f"AnswerSpec 必须是 JSON 对象，实际为 {json_type_name(answer)}")]

    if "version" not in answer:
        problems.append(ValidationProblem("version", "缺少必填字段"))
    elif not is_int(answer["version"]) or answer["version"] != question_spec.version:
        problems.append(
            ValidationProblem(
                "version",
                f"必须与 QuestionSpec 的 version 一致（{question_spec.version}），"
                f"实际为 {show_value(answer['version'])}",
            )
        )
    if "topic" not in answer:
        problems.append(ValidationProblem("topic", "缺少必填字段"))
    elif answer["topic"] != question_spec.topic:
        problems.append(
            ValidationProblem(
                "topic",
                f"必须与 QuestionSpec 的 topic 一致（{show_value(question_spec.topic)}），"
                f"实际为 {show_value(answer['topic'])}",
            )
        )

    answers = answer.get("answers")
    if "answers" not in answer:
        problems.append(ValidationProblem("answers", "缺少必填字段"))
    elif not isinstance(answers, dict):
        problems.append(ValidationProblem("answers", f"必须是 JSON 对象，实际为 {json_type_name(answers)}"))
    else:
        for key, value in answers.items():
            name = key_field("answers", key)
            if not isinstance(key, str) or not SNAKE_CASE_RE.match(key):
                problems.append(ValidationProblem(name, f"key 必须是 snake_case，实际为 {show_value(key)}"))
                continue
            question = question_spec.question(key)
            if question is None:
                problems.append(
                    ValidationProblem(name, f"未知的问题 id {show_value(key)}（QuestionSpec 中没有该问题）")
                )
                continue
            _check_answer(question, value, name, problems)
        for question in question_spec.questions:
            if question.required and question.id not in answers:
                problems.append(ValidationProblem(f"answers.{question.id}", "必答问题未回答"))

    if "answered_at" not in answer:
        problems.append(ValidationProblem("answered_at", "缺少必填字段"))
    elif not is_rfc3339_timestamp(answer["answered_at"]):
        problems.append(
            ValidationProblem(
                "answered_at",
                '必须是带时区的 RFC 3339 时间（如 "2026-02-27T10:12:34.000Z" 或 '
                '"2026-02-27T18:12:34+08:00"），'
                f"实际为 {show_value(answer['answered_at'])}",
            )
        )
    check_non_empty_str(answer, "answered_by", ROOT, problems)
    return problems


def load_valid_answer(spec: QuestionSpec | Mapping[str, Any], data: object) -> AnswerSpec:
    """``data`` as an AnswerSpec for ``spec``, or raise :class:`AnswerSpecInvalid` (the step is blocked)."""
    problems = validate_answer_spec(spec, data)
    if problems:
        raise AnswerSpecInvalid(problems)
    return AnswerSpec.model_validate(data)


def build_answer_spec(
    spec: QuestionSpec | Mapping[str, Any],
    answers: Mapping[str, object],
    answered_by: str,
    answered_at: datetime | None = None,
) -> AnswerSpec:
    """The AnswerSpec to write for ``answers`` collected by a dialog, a prompter or an answers file.

    Unanswered entries are normalized away the way the seed requires: ``None``, an empty selection of an
    optional multi_choice and a blank optional free_text are left out; tuples become lists. The result is
    validated, so it always passes :func:`validate_answer_spec`; otherwise :class:`AnswerSpecInvalid` is
    raised.
    ``answered_at`` defaults to now; it is stored in UTC with a ``Z``.
    """
    question_spec, problems = as_question_spec(spec)
    if question_spec is None:
        raise AnswerSpecInvalid(problems)
    normalized: dict[str, object] = {}
    for key, value in answers.items():
        if isinstance(value, tuple):
            value = list(value)
        question = question_spec.question(key) if isinstance(key, str) else None
        if question is not None and not question.required:
            if value is None or value == []:
                continue
            if question.kind == "free_text" and isinstance(value, str) and not value.strip():
                continue
        elif value is None:
            continue
        normalized[key] = value
    data: dict[str, object] = {
        "version": question_spec.version,
        "topic": question_spec.topic,
        "answers": normalized,
        "answered_at": format_timestamp(answered_at if answered_at is not None else utc_now()),
        "answered_by": answered_by,
    }
    return load_valid_answer(question_spec, data)


# -------------------- answer_path


def validate_answer_path(path: object, root: Path | None = None) -> list[ValidationProblem]:
    """Every reason ``path`` is not a safe project-relative ``answer_path``; empty when it is fine.

    Rejected: non-strings, blank strings, absolute POSIX paths, Windows drive (``C:\\``, ``C:/``, ``C:x``) and
    UNC or backslash-leading paths, any ``..`` segment (``/`` or ``\\`` separated), a path naming the project
    root itself, and, when ``root`` is given, a path whose resolved form (symlinks followed) leaves ``root``.
    """
    name = "answer_path"
    if not isinstance(path, str):
        return [ValidationProblem(name, f"必须是字符串，实际为 {json_type_name(path)}")]
    if not path.strip():
        return [ValidationProblem(name, "不能为空")]
    if "\x00" in path:
        return [ValidationProblem(name, "不能包含 NUL 字符")]
    if path.startswith("/"):
        return [ValidationProblem(name, f"必须是项目相对路径，不能是绝对路径：{show_value(path)}")]
    if path.startswith("\\"):
        return [
            ValidationProblem(
                name, f"必须是项目相对路径，不能是 UNC 或以反斜杠开头的路径：{show_value(path)}"
            )
        ]
    if _WINDOWS_DRIVE_RE.match(path):
        return [ValidationProblem(name, f"必须是项目相对路径，不能带 Windows 盘符：{show_value(path)}")]
    segments = re.split(r"[/\\]", path)
    if ".." in segments:
        return [ValidationProblem(name, f'不能包含 ".." 段：{show_value(path)}')]
    if all(segment in ("", ".") for segment in segments):
        return [ValidationProblem(name, f"必须指向项目内的文件，不能是项目根目录本身：{show_value(path)}")]
    if root is not None:
        try:
            base = root.resolve()
            target = (base / path.replace("\\", "/")).resolve()
        except (OSError, RuntimeError, ValueError) as exc:
            return [ValidationProblem(name, f"无法解析路径 {show_value(path)}：{exc}")]
        if target == base or not target.is_relative_to(base):
            return [
                ValidationProblem(name, f"解析后逃出了项目根目录（可能经由符号链接）：{show_value(path)}")
            ]
    return []


# -------------------- gate


class GateState(Enum):
    """Where a step's NOVEL_ASK gate stands."""

    MISSING = "missing"  # no AnswerSpec yet: ask, then write it
    ANSWERED = "answered"  # a valid AnswerSpec exists: skip the questions
    BLOCKED = "blocked"  # an invalid AnswerSpec exists: do not run the agent


@dataclass(frozen=True)
class GateOutcome:
    """The state of a gate, with the answer when answered and the reasons when blocked."""

    state: GateState
    answer: AnswerSpec | None = None
    problems: list[ValidationProblem] = field(default_factory=list)


def evaluate_gate(
    spec: QuestionSpec | Mapping[str, Any], data: object, *, present: bool = True
) -> GateOutcome:
    """The resume semantics of seed 000 for ``data``, the parsed AnswerSpec file.

    Pass ``present=False`` when the file does not exist (``data`` is then ignored); a file that exists but
    holds ``null`` or garbage is blocked, not missing.
    """
    if not present:
        return GateOutcome(GateState.MISSING)
    try:
        return GateOutcome(GateState.ANSWERED, answer=load_valid_answer(spec, data))
    except AnswerSpecInvalid as exc:
        return GateOutcome(GateState.BLOCKED, problems=exc.problems)
