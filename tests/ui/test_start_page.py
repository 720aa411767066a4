"""The start page: with no novel, the first-run guide (new, import, demo, provider setup); with a novel, the
/novel:start recommendation first, then new / open / import / demo and the recent novels."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton
from pytestqt.qtbot import QtBot

from novel_desktop import i18n, paths
from novel_desktop.config import AppSettings
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.ui.main_window import MainWindow
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


def test_an_interrupted_chapter_is_named_with_where_it_stopped(
    qtbot: QtBot, project: ProjectController
) -> None:
    """A run stopped after chapter 3 was refined (a crash, 停止): 续写 picks it up there, and the page says so."""
    project.store.update_checkpoint(inflight_chapter=3, pipeline_stage="refined")
    page = _page(qtbot, project)
    assert page.recommend_button.text() == "继续写作"
    assert "第 3 章上次停在“润色完成”，续写会从那里接着做" in page.reason.text()


def test_unfinished_volume_recommends_continuing(qtbot: QtBot, project: ProjectController) -> None:
    page = _page(qtbot, project)
    assert page.recommend_button.text() == "继续写作"
    assert "已写 2/5 章" in page.reason.text()
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


# ---------------------------------------------------------------------------------------------- first run
def test_first_run_explains_the_three_ways_in_and_the_provider_setup(qtbot: QtBot) -> None:
    page = _page(qtbot, ProjectController())
    page.show()
    assert page.guide.isVisible()
    assert not page.workspace.isVisible()  # no "继续写作" before there is anything to continue
    new_title, new_text, import_title, import_text, demo_title, demo_text, setup_title, setup_text = (
        page.guide_texts()
    )
    assert (new_title, import_title, demo_title) == ("新建小说", "导入书稿", "打开示例小说")
    assert "书名" in new_text and "第一卷大纲" in new_text
    assert all(fmt in import_text for fmt in ("txt", "docx", "epub"))
    assert "6 章" in demo_text and "不需要 API 密钥" in demo_text and "副本" in demo_text
    assert setup_title == "设置模型与密钥"
    assert "测试连接" in setup_text and "DeepSeek" in setup_text


@pytest.mark.parametrize(
    ("button", "signal"),
    [
        ("guide_new_button", "new_requested"),
        ("guide_import_button", "import_requested"),
        ("guide_demo_button", "demo_requested"),
        ("guide_open_button", "open_requested"),
        ("settings_button", "settings_requested"),
    ],
)
def test_each_guide_button_asks_for_its_action(qtbot: QtBot, button: str, signal: str) -> None:
    page = _page(qtbot, ProjectController())
    page.show()
    clicked: QPushButton = getattr(page, button)
    assert clicked.isVisible() and clicked.isEnabled()
    with qtbot.waitSignal(getattr(page, signal), timeout=1000):
        qtbot.mouseClick(clicked, Qt.MouseButton.LeftButton)


def test_with_a_novel_open_the_guide_gives_way_to_the_next_step(
    qtbot: QtBot, project: ProjectController
) -> None:
    page = _page(qtbot, project)
    page.show()
    assert not page.guide.isVisible()
    assert page.workspace.isVisible() and page.recommend_button.isVisible()
    for button, signal in (
        (page.new_button, page.new_requested),
        (page.open_button, page.open_requested),
        (page.import_button, page.import_requested),
        (page.demo_button, page.demo_requested),
    ):
        assert button.isVisible()
        with qtbot.waitSignal(signal, timeout=1000):
            qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_closing_the_novel_brings_the_guide_back(qtbot: QtBot, project: ProjectController) -> None:
    page = _page(qtbot, project)
    page.show()
    project.close()
    page.refresh([])
    assert page.guide.isVisible() and not page.workspace.isVisible()


def test_the_demo_button_opens_a_copy_of_the_demo_in_the_window(qtbot: QtBot) -> None:
    win = MainWindow(settings=AppSettings())
    qtbot.addWidget(win)
    win.show()
    try:
        qtbot.mouseClick(win.start_page.guide_demo_button, Qt.MouseButton.LeftButton)
        assert win.project.is_open
        assert win.project.title() == "剑冢守灯人"
        path = win.project.path
        assert path is not None and path.parent == paths.user_data_dir() / "demo"
    finally:
        win.project.close()


# ---------------------------------------------------------------------------------------------- English
@pytest.fixture
def english() -> Iterator[None]:
    i18n.set_language("en")
    yield
    i18n.set_language("zh")


def test_every_start_page_string_has_an_english_translation() -> None:
    entries: dict[str, str] = {}
    for path in sorted(paths.resource("i18n", "en").glob("*.json")):
        entries.update(json.loads(path.read_text(encoding="utf-8")))
    source = Path(__file__).resolve().parents[2] / "novel_desktop" / "ui" / "start_page.py"
    keys = [
        ast.literal_eval(f'"{m.group(1)}"')
        for m in re.finditer(r'tr\(\s*"((?:[^"\\]|\\.)*)"', source.read_text("utf-8"))
    ]
    assert "设置模型与密钥" in keys  # the pattern reads the module
    assert [key for key in keys if key not in entries] == []


def test_the_guide_in_english(qtbot: QtBot, english: None) -> None:
    page = _page(qtbot, ProjectController())
    texts = page.guide_texts()
    assert texts[0::2] == [
        "New novel",
        "Import manuscript",
        "Open the demo novel",
        "Set up the model and key",
    ]
    assert "no API key needed" in texts[5]
    assert "Test connection" in texts[7]
    assert page.settings_button.text() == "Settings…"


def test_every_recommendation_phrase_has_an_english_template_with_the_same_slots() -> None:
    """The recommendation is built in the core as templates with values; the window translates each one."""
    import json
    import re
    import string

    from novel_desktop.paths import resource
    from novel_desktop.pipeline import orchestrator

    catalogue = json.loads(resource("i18n", "en", "recommendation.json").read_text(encoding="utf-8"))
    source = Path(orchestrator.__file__).read_text(encoding="utf-8")
    templates = set(re.findall(r'_say\(\s*"([^"]*)"', source)) | set(orchestrator.STAGE_DONE.values())
    assert len(templates) >= 20
    missing = sorted(t for t in templates if t not in catalogue)
    assert missing == []

    def slots(text: str) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name}

    assert all(slots(t) == slots(catalogue[t]) for t in templates)


def test_the_recommendation_in_english(qtbot: QtBot, project: ProjectController) -> None:
    from novel_desktop import i18n

    project.store.update_checkpoint(inflight_chapter=3, pipeline_stage="refined")
    i18n.set_language("en")
    try:
        page = _page(qtbot, project)
        assert page.recommend_button.text() == "Continue writing"
        assert page.reason.text() == (
            "Volume 1: chapters written: 2 of 5 (chapters 1-5); "
            "Chapter 3 stopped at “refined” last time; Continue picks it up there"
        )
    finally:
        i18n.set_language("zh")
