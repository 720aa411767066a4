"""The second polish's budget and focus (domain/polish.py, domain/refine.apply_edits ``budget``)."""

from __future__ import annotations

from novel_desktop.domain.polish import remaining_budget, style_points
from novel_desktop.domain.refine import RefineEdit, apply_edits
from tests.pipeline.scripted_agents import evaluation

TEXT = "他走到门口。" * 100  # 600 characters: 15% is 90


def test_edits_beyond_the_remaining_budget_are_rejected() -> None:
    first = [{"original": "x" * 30, "refined": "y" * 20}]  # the first pass spent 30
    left = remaining_budget(TEXT, first)
    assert left == 60
    edits = [RefineEdit(original="他走到门口。" * 4, refined="他到了门口。" * 4)] * 4  # 24 each
    result = apply_edits(TEXT, edits, budget=left)
    assert len(result.applied) == 2 and result.changed_chars == 48
    assert len(result.rejected) == 2 and "15%" in result.rejected[0].reason
    # Without a budget the whole 15% is open.
    assert len(apply_edits(TEXT, edits).applied) == 3


def test_no_budget_left_applies_nothing() -> None:
    assert remaining_budget(TEXT, [{"original": "x" * 200, "refined": ""}]) == 0
    edits = [RefineEdit(original="他走到门口。", refined="他到了门口。")]
    assert apply_edits(TEXT, edits, budget=0).applied == []


def test_style_points_take_only_the_style_findings() -> None:
    ev = evaluation(3, 3.7)
    ev = ev.model_copy(
        update={
            "issues": ["句式单一", "节奏拖沓，主线推进慢"],
            "risk_flags": ["character_speech_missing:林枫", "ai_phrase_density:high"],
            "new_ai_phrases": ["心中一凛"],
        }
    )
    points = style_points(ev)
    assert points[0].startswith("文风自然度 3.7 分：理由")
    assert "评审问题：句式单一" in points
    assert not any("节奏拖沓" in p for p in points)
    assert "风险标记：ai_phrase_density（high）" in points
    assert any("「心中一凛」" in p for p in points)
