"""The storyline swimlane over the seed novel, plus lines, a convergence event and a 50-chapter volume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.storage import layout
from novel_desktop.ui.storyline_view import StorylineView

SCHEDULE = "volumes/vol-01/storyline-schedule.json"
STORYLINES = "storylines/storylines.json"
OUTLINE = "volumes/vol-01/outline.md"


@pytest.fixture
def view(qtbot: QtBot, project: ProjectController) -> StorylineView:
    widget = StorylineView(project)
    qtbot.addWidget(widget)
    widget.resize(1600, 1000)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _lane_of(view: StorylineView, chapter: int) -> str | None:
    plan = next(p for p in view.canvas.chapters if p.number == chapter)
    row = view.canvas.lane_of(plan)
    return None if row is None else view.canvas.lanes[row].storyline_id


def _add_lines(project: ProjectController) -> None:
    """A second active line, a dormant one and a planned one; chapter 3 of the outline moves to sect_war."""
    data = json.loads(project.document(STORYLINES) or "{}")
    data["storylines"] += [
        {
            "id": "sect_war",
            "name": "宗门暗斗",
            "type": "faction_conflict",
            "scope": "multi_volume",
            "pov_characters": ["苏清寒"],
            "status": "active",
        },
        {"id": "old_case", "name": "二十年前旧案", "type": "mystery", "scope": "novel", "status": "active"},
        {"id": "demon_rise", "name": "魔道复苏", "type": "conspiracy", "scope": "novel", "status": "planned"},
    ]
    project.save_document(STORYLINES, json.dumps(data, ensure_ascii=False))
    outline = (project.document(OUTLINE) or "").replace(
        "## 第 3 章 开山\n- **Storyline**: main_arc\n- **POV**: 林枫",
        "## 第 3 章 开山\n- **Storyline**: sect_war\n- **POV**: 苏清寒",
    )
    # Chapter 2 has a contract on main_arc: the contract wins over the outline.
    outline = outline.replace(
        "## 第 2 章 夜半灵光\n- **Storyline**: main_arc", "## 第 2 章 夜半灵光\n- **Storyline**: sect_war"
    )
    project.save_document(OUTLINE, outline)
    schedule = json.loads(project.document(SCHEDULE) or "{}")
    schedule["active_storylines"].append(
        {
            "storyline_id": "sect_war",
            "volume_role": "secondary",
            "target_chapters": 2,
            "arc_goal": "长老会分裂",
        }
    )
    schedule["dormant_storylines"] = ["old_case"]
    schedule["convergence_events"] = [
        {
            "chapter_range": [3, 4],
            "involved_storylines": ["main_arc", "sect_war"],
            "trigger": "问心阶上长老起冲突",
        }
    ]
    project.save_document(SCHEDULE, json.dumps(schedule, ensure_ascii=False))


def test_the_seed_volume_maps_every_chapter_to_main_arc_with_pov(view: StorylineView) -> None:
    canvas = view.canvas
    assert [lane.storyline_id for lane in canvas.lanes] == ["main_arc"]
    lane = canvas.lanes[0]
    assert (lane.name, lane.role) == ("林枫问道", "primary")
    assert [p.number for p in canvas.chapters] == [1, 2, 3, 4, 5]
    assert all(_lane_of(view, n) == "main_arc" for n in range(1, 6))
    assert {p.pov for p in canvas.chapters} == {"林枫"}
    assert [p.written for p in canvas.chapters] == [True, True, False, False, False]
    assert "本卷主题：入山" in view.subheading.text()
    assert view.plan_table.item(0, 0).text() == "林枫问道（main_arc）"
    assert view.plan_table.item(0, 1).text() == "主线"
    assert view.plan_table.item(0, 5).text() == "林枫得玉入山，成为外门弟子"
    assert not view.events_label.isVisible()
    assert canvas.convergence_rects() == []


def test_clicking_a_cell_requests_its_chapter(qtbot: QtBot, view: StorylineView) -> None:
    rect = view.canvas.cell_rect("main_arc", 2)
    assert rect.isValid()
    with qtbot.waitSignal(view.chapter_requested) as blocker:
        qtbot.mouseClick(view.canvas, Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [2]


def test_hovering_a_cell_tells_title_pov_and_the_summarys_first_line(view: StorylineView) -> None:
    tip = view.canvas.tooltip_at(view.canvas.cell_rect("main_arc", 1).center())
    assert "第 1 章 药篓里的残玉" in tip
    assert "视角：林枫" in tip
    assert "入秋雨季，青石镇陈记药铺学徒林枫" in tip
    unwritten = view.canvas.tooltip_at(view.canvas.cell_rect("main_arc", 4).center())
    assert "（未写）" in unwritten
    assert "考核中残玉再次发光" in unwritten


def test_lines_roles_dormancy_and_the_contract_over_outline_rule(
    view: StorylineView, project: ProjectController
) -> None:
    _add_lines(project)  # the view refreshes on document_changed
    lanes = {lane.storyline_id: lane for lane in view.canvas.lanes}
    assert [lane.storyline_id for lane in view.canvas.lanes][:2] == ["main_arc", "sect_war"]
    assert lanes["sect_war"].role == "secondary"
    assert lanes["old_case"].dormant
    assert lanes["demon_rise"].planned and not lanes["demon_rise"].dormant
    assert _lane_of(view, 3) == "sect_war"
    assert next(p for p in view.canvas.chapters if p.number == 3).pov == "苏清寒"
    assert _lane_of(view, 2) == "main_arc"
    # A chapter's own contract outranks the outline: give chapter 4 a contract on sect_war.
    project.save_document(
        layout.contract_path(1, 4), json.dumps({"chapter": 4, "storyline_id": "sect_war"}, ensure_ascii=False)
    )
    assert _lane_of(view, 4) == "sect_war"


def test_a_convergence_event_is_a_band_across_its_chapters_and_lines(
    view: StorylineView, project: ProjectController
) -> None:
    _add_lines(project)
    canvas = view.canvas
    bands = canvas.convergence_rects()
    assert len(bands) == 2  # one per involved line
    main_band = canvas.cell_rect("main_arc", 3).united(canvas.cell_rect("main_arc", 4))
    war_band = canvas.cell_rect("sect_war", 3).united(canvas.cell_rect("sect_war", 4))
    assert set(map(tuple, (b.getRect() for b in bands))) == {main_band.getRect(), war_band.getRect()}
    assert not any(b.intersects(canvas.cell_rect("main_arc", 5)) for b in bands)
    assert view.events_label.isVisible()
    assert "交汇 第 3–4 章：main_arc、sect_war — 问心阶上长老起冲突" in view.events_label.text()
    assert "交汇：main_arc、sect_war" in canvas.tooltip_at(canvas.cell_rect("sect_war", 3).center())
    assert "1 处交汇" in view.subheading.text()


def test_a_chapter_on_an_unregistered_line_still_gets_a_flagged_row(
    view: StorylineView, project: ProjectController
) -> None:
    outline = (project.document(OUTLINE) or "").replace(
        "## 第 5 章 另一半\n- **Storyline**: main_arc", "## 第 5 章 另一半\n- **Storyline**: lost_line"
    )
    project.save_document(OUTLINE, outline)
    lane = next(lane for lane in view.canvas.lanes if lane.storyline_id == "lost_line")
    assert not lane.registered
    assert _lane_of(view, 5) == "lost_line"


def test_a_fifty_chapter_volume_lays_out_every_column_and_clicks_the_last(
    qtbot: QtBot, view: StorylineView, project: ProjectController
) -> None:
    sections = [f"## 第 {n} 章 第{n}章\n- **Storyline**: main_arc\n- **POV**: 林枫\n" for n in range(1, 51)]
    project.save_document(OUTLINE, "# 第一卷\n\n" + "\n".join(sections))
    canvas = view.canvas
    assert len(canvas.chapters) == 50
    assert canvas.width() >= canvas.HEADER_WIDTH + 50 * canvas.CELL_WIDTH
    assert not view.grab().isNull()
    rect = canvas.cell_rect("main_arc", 50)
    view.scroll_area.ensureVisible(rect.center().x(), rect.center().y())
    with qtbot.waitSignal(view.chapter_requested) as blocker:
        qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [50]


def test_a_novel_without_storylines_explains_where_they_come_from(qtbot: QtBot, tmp_path: Path) -> None:
    project = ProjectController()
    project.create(tmp_path / "空白.novel", title="空白", genre=None, platform="qidian")
    try:
        view = StorylineView(project)
        qtbot.addWidget(view)
        view.show()
        assert view.empty.isVisible()
        assert not view.scroll_area.isVisible()
        assert "本书还没有故事线" in view.empty.text()
        assert "storylines.json" in view.empty.text()
    finally:
        project.close()
