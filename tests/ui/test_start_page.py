"""The start page: the /novel:start recommendation first, then new / open / import and the recent novels."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.ui.start_page import StartPage


def _page(qtbot: QtBot, project: ProjectController, recent: list[str] | None = None) -> StartPage:
    page = StartPage(project)
    qtbot.addWidget(page)
    page.refresh(recent or [])
    return page


def test_no_novel_recommends_creating_one(qtbot: QtBot) -> None:
    page = _page(qtbot, ProjectController())
    assert page.recommend_button.text() == "创建新项目"
    with qtbot.waitSignal(page.action_requested) as sig:
        page.recommend_button.click()
    assert sig.args == ["create"]


def test_unfinished_volume_recommends_continuing(qtbot: QtBot, project: ProjectController) -> None:
    page = _page(qtbot, project)
    assert page.recommend_button.text() == "继续写作"
    assert "第 2 章" in page.reason.text() and "5 章" in page.reason.text()
    assert "《青石问道》" in page.subtitle.text()
    with qtbot.waitSignal(page.action_requested) as sig:
        page.recommend_button.click()
    assert sig.args == ["continue"]


@pytest.mark.parametrize(
    ("changes", "label", "action"),
    [
        ({"last_completed_chapter": 5}, "第 1 卷卷末回顾", "review"),
        ({"orchestrator_state": "VOL_PLANNING", "current_volume": 2}, "规划第 2 卷", "plan"),
        ({"orchestrator_state": "INIT"}, "创建新项目", "quick_start"),
    ],
)
def test_recommendation_follows_the_novels_state(
    qtbot: QtBot, project: ProjectController, changes: dict[str, object], label: str, action: str
) -> None:
    project.store.update_checkpoint(**changes)
    page = _page(qtbot, project)
    assert page.recommend_button.text() == label
    assert page.action == action


def test_recent_novels_are_listed_and_open_on_click(qtbot: QtBot, tmp_path: Path) -> None:
    existing = tmp_path / "剑冢守灯人.novel"
    existing.write_bytes(b"")
    missing = str(tmp_path / "丢失.novel")
    page = _page(qtbot, ProjectController(), [str(existing), missing])
    assert page.recent_paths() == [str(existing), missing]
    assert "剑冢守灯人" in page.recent_list.item(0).text()
    assert "文件不存在" in page.recent_list.item(1).text()
    with qtbot.waitSignal(page.recent_requested) as sig:
        page._on_recent_list_item_clicked(page.recent_list.item(0))
    assert sig.args == [str(existing)]
    with qtbot.assertNotEmitted(page.recent_requested):
        page._on_recent_list_item_clicked(page.recent_list.item(1))


def test_without_recent_novels_a_hint_is_shown(qtbot: QtBot) -> None:
    page = _page(qtbot, ProjectController())
    page.show()
    assert page.recent_empty.isVisible()
    assert not page.recent_list.isVisible()
