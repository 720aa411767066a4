"""The foreshadowing view over the seed novel: threads, volume plans, overdue marking, filter, double-click."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.storage import layout
from novel_desktop.ui.foreshadowing_view import ForeshadowingModel, ForeshadowingView


@pytest.fixture
def view(qtbot: QtBot, project: ProjectController) -> ForeshadowingView:
    widget = ForeshadowingView(project)
    qtbot.addWidget(widget)
    widget.resize(1366, 768)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _cell(view: ForeshadowingView, item_id: str, column: int) -> str:
    model = view.model
    for row in range(model.rowCount()):
        if model.data(model.index(row, ForeshadowingModel.COL_ID)) == item_id:
            return str(model.data(model.index(row, column)))
    raise AssertionError(f"{item_id} not shown")


def _make_overdue(project: ProjectController) -> None:
    """chen_lao_past was due by chapter 2; the novel is at chapter 3. wang_limp is resolved."""
    data = json.loads(project.document(layout.GLOBAL_FORESHADOWING) or "{}")
    data["foreshadowing"][1]["target_resolve_range"] = [1, 2]
    data["foreshadowing"].append(
        {
            "id": "wang_limp",
            "description": "王瘸子的药篓从哪里来",
            "scope": "volume",
            "status": "resolved",
            "planted_chapter": 1,
            "advanced_chapters": [],
            "resolved_chapter": 2,
            "target_resolve_range": [1, 2],
            "storyline_id": "main_arc",
            "history": [],
        }
    )
    project.save_document(layout.GLOBAL_FORESHADOWING, json.dumps(data, ensure_ascii=False))


def _double_click(qtbot: QtBot, view: ForeshadowingView, item_id: str, column: int) -> int:
    row = view.visible_ids().index(item_id)
    index = view.proxy.index(row, column)
    view.table.scrollTo(index)
    rect = view.table.visualRect(index)
    with qtbot.waitSignal(view.chapter_requested) as blocker:
        # Qt 6's QTest double-click only reaches an item view after a plain click on the same spot.
        qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        qtbot.mouseDClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    return int(blocker.args[0])


def test_the_seed_threads_show_their_chapters_and_the_volume_plan_item(view: ForeshadowingView) -> None:
    assert sorted(view.visible_ids()) == ["broken_jade", "chen_lao_past", "sect_token"]
    assert (
        _cell(view, "broken_jade", ForeshadowingModel.COL_DESCRIPTION)
        == "半块水云纹残玉，苍梧宗失落信物的一半"
    )
    assert _cell(view, "broken_jade", ForeshadowingModel.COL_STATUS) == "推进中"
    assert _cell(view, "broken_jade", ForeshadowingModel.COL_PLANTED) == "1"
    assert _cell(view, "broken_jade", ForeshadowingModel.COL_ADVANCED) == "2"
    assert _cell(view, "chen_lao_past", ForeshadowingModel.COL_TARGET) == "4–5"
    assert _cell(view, "chen_lao_past", ForeshadowingModel.COL_STORYLINE) == "main_arc"
    # sect_token exists only in volume 1's plan: a 计划 row with its planned chapter.
    assert _cell(view, "sect_token", ForeshadowingModel.COL_STATUS) == "计划（第 1 卷）"
    assert _cell(view, "sect_token", ForeshadowingModel.COL_PLANTED) == "计划 3"
    assert _cell(view, "sect_token", ForeshadowingModel.COL_TARGET) == "30–40"
    summary = view.summary_text()
    assert "未回收 2" in summary
    assert "逾期 0" in summary
    assert "计划 1" in summary
    assert _cell(view, "chen_lao_past", ForeshadowingModel.COL_NOTE) == ""


def test_an_overdue_thread_is_marked_with_its_reason(
    view: ForeshadowingView, project: ProjectController
) -> None:
    _make_overdue(project)
    assert _cell(view, "chen_lao_past", ForeshadowingModel.COL_STATUS) == "已埋设 · 逾期"
    assert (
        _cell(view, "chen_lao_past", ForeshadowingModel.COL_NOTE)
        == "逾期：应在第 1–2 章回收，现已写到第 2 章"
    )
    # A resolved thread is never overdue, even with the same deadline.
    assert _cell(view, "wang_limp", ForeshadowingModel.COL_NOTE) == ""
    row = view.visible_ids().index("chen_lao_past")
    background = view.proxy.data(view.proxy.index(row, 0), Qt.ItemDataRole.BackgroundRole)
    assert background is not None
    assert (
        view.proxy.data(
            view.proxy.index(view.visible_ids().index("broken_jade"), 0), Qt.ItemDataRole.BackgroundRole
        )
        is None
    )
    summary = view.summary_text()
    assert "逾期 1" in summary
    assert "已回收 1" in summary


def test_the_status_filter_shows_open_overdue_resolved_and_planned_threads(
    view: ForeshadowingView, project: ProjectController
) -> None:
    _make_overdue(project)
    view.set_filter("overdue")
    assert view.visible_ids() == ["chen_lao_past"]
    view.set_filter("open")
    assert sorted(view.visible_ids()) == ["broken_jade", "chen_lao_past"]
    view.set_filter("resolved")
    assert view.visible_ids() == ["wang_limp"]
    view.set_filter("planned")
    assert view.visible_ids() == ["sect_token"]
    view.filter_combo.setCurrentIndex(0)
    assert len(view.visible_ids()) == 4


def test_double_click_opens_the_chapter_of_the_cell_or_the_latest(
    qtbot: QtBot, view: ForeshadowingView
) -> None:
    assert _double_click(qtbot, view, "broken_jade", ForeshadowingModel.COL_PLANTED) == 1
    assert _double_click(qtbot, view, "broken_jade", ForeshadowingModel.COL_ADVANCED) == 2
    assert _double_click(qtbot, view, "broken_jade", ForeshadowingModel.COL_DESCRIPTION) == 2
    assert _double_click(qtbot, view, "sect_token", ForeshadowingModel.COL_ID) == 3


def test_selecting_a_thread_shows_its_history(view: ForeshadowingView) -> None:
    view.table.selectRow(view.visible_ids().index("broken_jade"))
    text = view.detail.toPlainText()
    assert "第 1 章 埋设：药篓里翻出半块水云纹残玉" in text
    assert "第 2 章 推进：残玉夜里发光，暖意入体即散" in text


def test_a_novel_without_foreshadowing_says_where_it_comes_from(qtbot: QtBot, tmp_path: Path) -> None:
    project = ProjectController()
    project.create(tmp_path / "空白.novel", title="空白", genre=None, platform="qidian")
    try:
        view = ForeshadowingView(project)
        qtbot.addWidget(view)
        view.show()
        assert view.empty.isVisible()
        assert "本书还没有伏笔" in view.empty.text()
        assert view.model.rowCount() == 0
    finally:
        project.close()
