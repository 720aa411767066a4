"""Deleting and moving an outline section (domain/outline_form.py): the numbers stay in order, every other
line stays as it was."""

from __future__ import annotations

from novel_desktop.domain.outline_form import delete_section, move_section, section_numbers

OUTLINE = (
    "# 第一卷 山门\n\n概要。\n\n"
    "## 第 1 章 甲\n- **POV**: 林枫\n\n"
    "## 第2章 乙\n- **POV**: 陈老\n要点\n\n\n"
    "## 第 3 章 丙\n- **POV**: 苏瑶"
)


def test_deleting_a_section_moves_the_later_ones_a_number_down() -> None:
    result = delete_section(OUTLINE, 2)
    assert result is not None
    text, moved = result
    assert moved == {2: None, 3: 2}
    assert (
        text == "# 第一卷 山门\n\n概要。\n\n## 第 1 章 甲\n- **POV**: 林枫\n\n## 第 2 章 丙\n- **POV**: 苏瑶"
    )
    last = delete_section(OUTLINE, 3)
    assert (
        last is not None and last[0].endswith("## 第2章 乙\n- **POV**: 陈老\n要点\n") and last[1] == {3: None}
    )
    assert delete_section(OUTLINE, 9) is None


def test_moving_a_section_swaps_it_with_its_neighbour_and_their_numbers() -> None:
    result = move_section(OUTLINE, 3, -1)
    assert result is not None
    text, moved = result
    assert moved == {3: 2, 2: 3}
    assert section_numbers(text) == [1, 2, 3]
    assert "## 第 2 章 丙\n- **POV**: 苏瑶\n\n\n## 第3章 乙\n- **POV**: 陈老\n要点\n" in text
    back = move_section(text, 2, 1)
    assert back is not None and back[0] == OUTLINE + "\n"  # and back: the same outline, a final line break
    assert move_section(OUTLINE, 1, -1) is None and move_section(OUTLINE, 3, 1) is None


def test_a_deleted_section_moves_the_storyline_meetings_after_it_down_one() -> None:
    from novel_desktop.domain.storylines import schedule_after_deleted_chapter

    data = {
        "volume": 1,
        "convergence_events": [
            {"chapter_range": [1, 2], "trigger": "前"},  # before the deleted chapter: kept
            {"chapter_range": [2, 3], "trigger": "止于此"},  # ends at it: ends one before
            {"chapter_range": [3, 3], "trigger": "只此一章"},  # its only chapter: the next takes its number
            {"chapter_range": [3, 6], "trigger": "始于此"},  # starts at it: the rest moves down
            {"chapter_range": [5, 7], "trigger": "后"},
            {"chapter_range": "坏的", "trigger": "手改坏了"},  # a hand-broken range is left as it is
        ],
    }
    shifted = schedule_after_deleted_chapter(data, 3)
    assert [e["chapter_range"] for e in shifted["convergence_events"]] == [
        [1, 2], [2, 2], [3, 3], [3, 5], [4, 6], "坏的"
    ]  # fmt: skip
    assert data["convergence_events"][1]["chapter_range"] == [2, 3]  # the input is not changed
