"""Which judge findings force a revision whatever the score (seed 004 §6.5.6 track 1, seed 001 §10.4)."""

from __future__ import annotations

import json
from typing import Any

from novel_desktop.domain.evaluation import Evaluation, Violation, violation_rule_id
from tests.e2e.replies import judge_json


def _evaluation(verification: Any, violations: list[Any] | None = None) -> Evaluation:
    data = json.loads(judge_json(4.5))
    data["contract_verification"] = verification
    data["violations"] = violations or []
    return Evaluation.model_validate(data)


def _ids(evaluation: Evaluation, soft: set[str] | None = None) -> list[str]:
    return [violation_rule_id(v) for v in evaluation.blocking_violations(soft)]


def test_a_violation_recorded_only_in_the_layered_checks_blocks() -> None:
    evaluation = _evaluation(
        {
            "l1_checks": [{"id": "W-001", "status": "pass"}],
            "l2_checks": [{"id": "C-LINFENG-001", "status": "violation", "confidence": "high"}],
            "l3_checks": [{"id": "OBJ-003-1", "status": "fail", "detail": "密信线索没写到"}],
            "ls_checks": [{"id": "LS-001", "status": "violation", "confidence": "medium"}],
        }
    )
    blocking = evaluation.blocking_violations()
    assert _ids(evaluation) == ["C-LINFENG-001", "OBJ-003-1"]  # medium confidence only reported
    assert isinstance(blocking[1], Violation) and blocking[1].description == "密信线索没写到"


def test_a_by_id_violation_blocks_and_the_union_has_no_duplicates() -> None:
    listed = {"rule_id": "W-001", "confidence": "high", "description": "越级使用法术", "evidence": "掌心雷"}
    evaluation = _evaluation({"W-001": "violation", "OBJ-003-1": "fail", "W-002": "pass"}, [listed])
    blocking = evaluation.blocking_violations()
    assert _ids(evaluation) == ["W-001", "OBJ-003-1"]
    assert isinstance(blocking[0], Violation) and blocking[0].evidence == "掌心雷"  # the listed one is kept
    # A bare string naming its rule is not counted twice either.
    assert _ids(_evaluation({"W-001": "violation"}, ["W-001 被违反：灵气不足却突破"])) == ["W-001"]


def test_soft_rules_are_reported_not_blocking() -> None:
    evaluation = _evaluation(
        {"LS-002": "fail", "LS-005": "violation", "W-003": "violation"},
        [{"rule_id": "W-003", "confidence": "high", "description": "软规则例外未说明"}],
    )
    assert _ids(evaluation) == ["W-003", "LS-005"]  # the seed's soft LS rules by default
    assert _ids(evaluation, {"W-003", "LS-002"}) == ["LS-005"]  # the novel's soft rules
    assert not _evaluation({"W-001": "pass"}).blocking_violations()
