"""StyleRefiner edits are applied by code, within the seed's 15% limit and never inside dialogue."""

from __future__ import annotations

from novel_desktop.domain.refine import RefineEdit, apply_edits

DRAFT = "林风嘴角勾起一抹冷笑，眼中闪过一丝寒光。“你来晚了。”陈老说。山风吹过，林风深吸一口气，握紧了剑。" * 3


def test_edits_replace_exact_substrings_and_keep_a_change_log() -> None:
    edits = [
        RefineEdit(original="嘴角勾起一抹冷笑", refined="冷哼一声", reason="黑名单"),
        RefineEdit(original="眼中闪过一丝寒光", refined="眯起眼", reason="黑名单"),
    ]
    out = apply_edits(DRAFT, edits)
    assert out.text.startswith("林风冷哼一声，眯起眼。")
    assert [e.refined for e in out.applied] == ["冷哼一声", "眯起眼"]
    assert out.rejected == []
    assert out.changed_chars == 16


def test_an_edit_that_is_not_in_the_draft_is_rejected_with_a_reason() -> None:
    out = apply_edits(DRAFT, [RefineEdit(original="不存在的句子", refined="x")])
    assert out.text == DRAFT
    assert out.rejected[0].reason == "原文中找不到这段文字"


def test_dialogue_content_is_never_changed() -> None:
    out = apply_edits(DRAFT, [RefineEdit(original="你来晚了", refined="你迟到了", reason="风格")])
    assert out.text == DRAFT
    assert "对话" in out.rejected[0].reason


def test_changes_stop_at_fifteen_percent() -> None:
    text = "他深吸一口气。" * 100  # 700 characters: budget 105
    edits = [RefineEdit(original="他深吸一口气。" * 2, refined="他屏住呼吸。" * 2, reason="黑名单")] * 10
    out = apply_edits(text, edits)
    assert out.changed_chars <= 0.15 * len(text)
    assert len(out.applied) == 7  # 7 × 14 = 98 ≤ 105; the 8th would pass the limit
    assert all("15%" in r.reason for r in out.rejected)


def test_repeated_phrases_are_edited_occurrence_by_occurrence() -> None:
    edit = RefineEdit(original="深吸一口气", refined="定了定神", reason="黑名单")
    out = apply_edits(DRAFT, [edit, edit])
    assert out.text.count("定了定神") == 2
    assert out.text.count("深吸一口气") == 1
