"""The quality gate follows the seed's table and double track."""

from __future__ import annotations

import pytest

from novel_desktop.domain.gate import GateAction, decide


@pytest.mark.parametrize(
    ("overall", "action"),
    [
        (5.0, GateAction.PASS),
        (4.0, GateAction.PASS),
        (3.99, GateAction.POLISH),
        (3.5, GateAction.POLISH),
        (3.49, GateAction.REVISE),
        (3.0, GateAction.REVISE),
        (2.99, GateAction.ASK_USER),
        (2.0, GateAction.ASK_USER),
        (1.99, GateAction.REWRITE),
        (1.0, GateAction.REWRITE),
    ],
)
def test_score_bands_follow_the_seed_table(overall: float, action: GateAction) -> None:
    assert decide(overall).action is action


def test_a_high_confidence_violation_forces_revision_whatever_the_score() -> None:
    decision = decide(4.8, blocking_violations=1)
    assert decision.action is GateAction.REVISE
    assert "违规" in decision.reason
    assert not decision.commits


def test_after_two_revisions_the_chapter_is_committed_with_a_flag() -> None:
    assert decide(3.2, revisions=1).action is GateAction.REVISE
    forced = decide(3.2, revisions=2)
    assert forced.action is GateAction.FORCE_PASS
    assert forced.flagged
    assert forced.commits
    still_violating = decide(4.5, blocking_violations=2, revisions=2)
    assert still_violating.action is GateAction.FORCE_PASS
    assert still_violating.flagged


def test_low_scores_go_to_the_author_not_round_in_circles() -> None:
    assert decide(2.5, revisions=2).action is GateAction.ASK_USER
    assert decide(1.5, revisions=2).action is GateAction.ASK_USER
    assert not decide(1.5).commits
