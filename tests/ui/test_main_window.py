"""The main window: tree, editor tabs and status bar, find/replace, docks remembered, lock, pipeline wiring."""

from __future__ import annotations

import ast
import json
import os
import re
import socket
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from novel_desktop.config import AppSettings
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.storage.store import NovelStore
from novel_desktop.ui.chapter_editor import ChapterTab
from novel_desktop.ui.main_window import MainWindow
from tests.fakes.alerts import RecordingAlerts
from tests.ui.test_chapter_editor import type_text

# Their jobs run work in threads: Qt objects left in cycles are collected in the GUI thread.
pytestmark = pytest.mark.usefixtures("gui_thread_gc")


def test_window_shows_the_seed_novel_in_the_tree(window: MainWindow) -> None:
    assert "《青石问道》" in window.windowTitle()
    assert window.tree.model.chapter_rows() == [("第1章 药篓里的残玉", "628字"), ("第2章 夜半灵光", "605字")]
    assert "全书 2 章 · 1,233 字" in window.novel_label.text()


def test_workspace_opens_the_latest_chapter_and_the_tree_opens_others(window: MainWindow) -> None:
    current = window.tabs.currentWidget()
    assert isinstance(current, ChapterTab) and current.number == 2
    window.tree.view.activated.emit(window.tree.model.chapter_index(1))
    tab = window.tabs.currentWidget()
    assert isinstance(tab, ChapterTab) and tab.number == 1
    assert "药篓里翻出" in tab.editor.toPlainText() or "药篓" in tab.editor.toPlainText()
    assert window.tabs.tabText(window.tabs.currentIndex()) == "第1章 药篓里的残玉"
    assert window.counts_label.text() == "本章 628 字"  # as the tree counts it, the title included


def test_typing_updates_the_char_count_in_the_status_bar(window: MainWindow) -> None:
    tab = window.open_chapter(1)
    assert tab is not None
    tab.editor.moveCursor(tab.editor.textCursor().MoveOperation.End)
    type_text(tab.editor, "雨停了")
    assert window.counts_label.text() == "本章 631 字"
    tab.editor.selectAll()
    assert "选中 622 字" in window.counts_label.text()  # the text selected: the body without its title


def test_switching_tabs_saves_the_chapter_left_behind(window: MainWindow, project: ProjectController) -> None:
    tab = window.open_chapter(1)
    assert tab is not None
    type_text(tab.editor, "甲")
    window.open_chapter(2)
    assert project.chapter_text(1).startswith("# 第一章 药篓里的残玉\n\n甲")
    assert project.revisions(1)[-1].kind == "manual"
    assert "已保存" in window.save_label.text()
    assert window.tree.model.node(window.tree.model.chapter_index(2)).status == "needs_rebuild"


def test_rebuild_offer_runs_the_pipeline_rebuild(window: MainWindow, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(window.pipeline, "rebuild", calls.append)
    tab = window.open_chapter(1)
    assert tab is not None
    bar = window.runs.stale.bar
    assert not bar.isVisible()
    type_text(tab.editor, "乙")
    tab.editor.save()
    assert bar.isVisible()
    assert "第 1-2 章需要重建" in bar.label.text()
    bar.rebuild_button.click()
    assert calls == [1]


def test_find_and_replace_across_chapters(window: MainWindow, project: ProjectController) -> None:
    dialog = window.show_find_replace()
    assert dialog is not None
    dialog.find_edit.setText("林枫")
    hits = dialog.search()
    assert {h.chapter for h in hits} == {1, 2}
    assert dialog.results.topLevelItemCount() == len(hits)
    first = dialog.results.topLevelItem(0)
    assert first is not None and "【林枫】" in first.text(1)
    dialog.results.itemActivated.emit(first, 0)
    editor = window.current_editor()
    assert editor is not None and editor.textCursor().selectedText() == "林枫"
    dialog.replace_edit.setText("林峰")
    changed = dialog.replace_all()
    assert changed == [1, 2]
    assert "林枫" not in project.chapter_text(1) and "林峰" in project.chapter_text(2)
    assert project.revisions(2)[-1].kind == "manual"
    assert "林枫" not in editor.toPlainText()  # the open editor shows the replaced text
    assert dialog.hits == []


def test_replace_one_hit(window: MainWindow, project: ProjectController) -> None:
    dialog = window.show_find_replace()
    assert dialog is not None
    dialog.find_edit.setText("林枫")
    hits = dialog.search()
    dialog.replace_edit.setText("小枫")
    first = dialog.results.topLevelItem(0)
    assert first is not None
    first.setSelected(True)
    dialog.replace(dialog.selected_hits())
    assert len(dialog.hits) == len(hits) - 1
    assert project.chapter_text(hits[0].chapter).count("小枫") >= 1


def test_dock_layout_is_remembered(qtbot: QtBot, window: MainWindow) -> None:
    window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, window.quality_dock)
    window.progress_dock.hide()
    window.close()
    again = MainWindow(settings=AppSettings())
    qtbot.addWidget(again)
    again.show()
    assert again.dockWidgetArea(again.quality_dock) == Qt.DockWidgetArea.LeftDockWidgetArea
    assert again.progress_dock.isHidden()


def test_closing_releases_the_lock(window: MainWindow, seed_novel: Path) -> None:
    window.close()
    NovelStore.open(seed_novel, write=True).close()


def test_a_novel_held_elsewhere_names_the_holder(
    qtbot: QtBot, seed_novel: Path, alerts: RecordingAlerts
) -> None:
    holder = NovelStore.open(seed_novel, write=True)
    try:
        win = MainWindow(settings=AppSettings())
        qtbot.addWidget(win)
        assert not win.open_novel(seed_novel)
        assert f"进程 pid {os.getpid()}" in alerts.texts[-1] and socket.gethostname() in alerts.texts[-1]
        assert not win.project.is_open
    finally:
        holder.close()


def test_a_stale_lock_is_cleared_when_the_author_agrees(
    qtbot: QtBot, seed_novel: Path, alerts: RecordingAlerts
) -> None:
    from tests.storage.test_lock import _plant_lock

    store = NovelStore.open(seed_novel, write=True)
    from datetime import timedelta

    # Another host's lock without a heartbeat for over ten minutes is stale: cleared when the author agrees.
    _plant_lock(store, pid=4242, host="another-laptop", age=timedelta(minutes=11))
    store.engine.dispose()  # leave the planted lock behind, as a crashed process would
    alerts.answer = True
    settings = AppSettings()
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    assert win.open_novel(seed_novel)
    assert "很久没有心跳" in alerts.texts[0] and "another-laptop" in alerts.texts[0]
    assert win.project.is_open
    assert settings.recent_novels == [str(seed_novel.resolve())]
    win.close()


def test_the_lock_of_a_dead_process_on_this_host_is_taken_over_without_asking(
    qtbot: QtBot, seed_novel: Path, alerts: RecordingAlerts
) -> None:
    from datetime import timedelta

    from tests.storage.test_lock import _dead_pid, _plant_lock

    store = NovelStore.open(seed_novel, write=True)
    _plant_lock(store, pid=_dead_pid(), host=socket.gethostname(), age=timedelta(minutes=1))
    store.engine.dispose()
    alerts.answer = False
    win = MainWindow(settings=AppSettings())
    qtbot.addWidget(win)
    assert win.open_novel(seed_novel)
    assert alerts.shown == []
    assert win.project.is_open
    win.close()


def test_pipeline_stream_commit_and_failure(
    qtbot: QtBot, window: MainWindow, alerts: RecordingAlerts
) -> None:
    p = window.pipeline
    p.chapter_started.emit(3, "")
    assert window.tabs.tabText(window.tabs.currentIndex()) == "第3章（生成中）"
    live = window.tabs.currentWidget()
    p.text_delta.emit(3, "夜色渐深。")
    live.flush()  # type: ignore[attr-defined]
    assert "夜色渐深" in live.toPlainText()  # type: ignore[attr-defined]
    p.text_reset.emit(3)
    assert live.toPlainText() == ""  # type: ignore[attr-defined]
    p.failed.emit("没有 API Key。")
    assert alerts.shown == [("warning", "续写没有完成", "没有 API Key。")]
    p.finished.emit()
    assert "未完成" in window.tabs.tabText(window.tabs.indexOf(live))
    p.chapter_committed.emit(2)
    assert window.tabs.indexOf(live) < 0
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), ChapterTab))
    current = window.tabs.currentWidget()
    assert isinstance(current, ChapterTab) and current.number == 2


def test_toolbar_actions_follow_the_running_pipeline(
    window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts: list[int] = []
    monkeypatch.setattr(window.pipeline, "continue_chapters", counts.append)
    assert not window.stop_action.isEnabled()
    window.continue_action.trigger()
    assert counts == [1]
    window.pipeline.running_changed.emit(True)
    assert window.stop_action.isEnabled() and not window.continue_action.isEnabled()
    window.pipeline.running_changed.emit(False)
    assert window.continue_action.isEnabled()


def test_start_page_when_no_novel_is_open(qtbot: QtBot) -> None:
    win = MainWindow(settings=AppSettings(recent_novels=["/nowhere/旧书.novel"]))
    qtbot.addWidget(win)
    assert win.center.currentWidget() is win.start_page
    assert win.start_page.recommend_button.text() == "创建新项目"
    assert not win.continue_action.isEnabled()
    assert win.start_page.recent_paths() == ["/nowhere/旧书.novel"]


def test_the_first_run_guide_opens_the_demo_and_the_provider_settings(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    from novel_desktop.ui.settings_dialog import SettingsDialog

    win = MainWindow(settings=AppSettings())
    qtbot.addWidget(win)
    win.show()
    win.start_page.settings_button.click()
    [dialog] = [d for d in win.findChildren(SettingsDialog) if d.isVisible()]
    assert dialog.isModal()  # opened with open() over the window: no nested loop
    dialog.reject()

    win.start_page.guide_demo_button.click()
    assert win.project.is_open
    assert len(win.project.chapters()) == 6  # the demo's six chapters, in a fresh copy
    assert win.center.currentWidget() is win.tabs
    win.close_novel()


def test_start_page_from_the_file_menu_recommends_for_the_open_novel(window: MainWindow) -> None:
    window.start_action.trigger()
    assert window.center.currentWidget() is window.start_page
    assert window.start_page.recommend_button.text() == "继续写作"


def test_english_catalogue_covers_the_window(qtbot: QtBot) -> None:
    from novel_desktop import i18n
    from novel_desktop.paths import resource

    # The catalogues are merged at run time (one file per module), so the window's strings may be in any.
    entries: dict[str, str] = {}
    for path in sorted(resource("i18n", "en").glob("*.json")):
        entries.update(json.loads(path.read_text(encoding="utf-8")))
    from novel_desktop.ui.flows.runs import RUN_TITLES

    missing = [title for title in RUN_TITLES.values() if title not in entries]
    sources = [
        "main_window",
        "window_actions",
        "alerts",
        "flows/novels",
        "flows/files",
        "flows/runs",
        "story_actions",
        "import_dialog",
        "start_page",
        "project_tree",
        "chapter_editor",
        "chapter_title",
        "revision_dialog",
        "find_replace",
        "novel_banner",
        "flows/stale",
        "flows/context",
        "context_dialog",
        "drops",
        "flows/drops",
        "style_drop",
        "shortcuts",
        "adopt_dialog",
        "flows/adopt",
    ]
    for name in sources:
        text = (Path(__file__).resolve().parents[2] / "novel_desktop" / "ui" / f"{name}.py").read_text(
            "utf-8"
        )
        for m in re.finditer(r'tr\(\s*"((?:[^"\\]|\\.)*)"', text):
            key = ast.literal_eval(f'"{m.group(1)}"')
            if key not in entries:
                missing.append(key)
    assert missing == []
    i18n.set_language("en")
    try:
        win = MainWindow(settings=AppSettings())
        qtbot.addWidget(win)
        assert win.continue_action.text() == "Continue"
        assert win.start_page.recommend_button.text() == "Create a new project"
        assert win.tree_dock.windowTitle() == "Project"
    finally:
        i18n.set_language("zh")


def test_the_recommended_rebuild_runs_from_the_start_page(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo's chapter 4 was edited by hand: the start page recommends the rebuild, and its button starts
    it from chapter 4."""
    win = MainWindow(settings=AppSettings())
    qtbot.addWidget(win)
    assert win.open_demo()
    win.show_start_page()
    assert win.start_page.recommend_button.text() == "重建第 4 章起的故事状态"
    status = win.start_page.subtitle.text()
    assert (
        "《剑冢守灯人》 · 第 1 卷 · 已写 6 章" in status and "未回收伏笔" in status and "3 章待重建" in status
    )
    started: list[int] = []
    monkeypatch.setattr(win.pipeline, "rebuild", started.append)
    win.start_page.recommend_button.click()
    assert started == [4]
    win.close_novel()


def test_the_quality_report_follows_the_chapter_tab(qtbot: QtBot, window: MainWindow) -> None:
    # The report is analysed in a worker thread: on a loaded machine that can take longer than waitUntil's
    # default 5 s (a failure seen once in a full run beside another Qt process), so wait up to 30 s.
    window.open_chapter(1)
    qtbot.waitUntil(lambda: getattr(window.quality_panel, "chapter", None) == 1, timeout=30_000)
    window.open_chapter(2)
    qtbot.waitUntil(lambda: getattr(window.quality_panel, "chapter", None) == 2, timeout=30_000)


def test_a_review_in_the_middle_of_a_volume_asks_first(
    window: MainWindow, monkeypatch: pytest.MonkeyPatch, alerts: RecordingAlerts
) -> None:
    started: list[str] = []
    monkeypatch.setattr(window.pipeline, "run_lifecycle", started.append)
    alerts.answer = False
    window.review_action.trigger()  # the seed novel has written 2 of its 5 chapters
    assert len(alerts.shown) == 1 and alerts.shown[0][0] == "confirm" and "还没有写完" in alerts.texts[0]
    assert started == []
    alerts.answer = True
    window.review_action.trigger()
    assert started == ["review"]


@pytest.mark.parametrize("start_now", [True, False])
def test_a_new_novel_is_created_and_the_quick_start_offered(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, start_now: bool, alerts: RecordingAlerts
) -> None:
    from PySide6.QtWidgets import QFileDialog, QInputDialog

    win = MainWindow(settings=AppSettings())
    qtbot.addWidget(win)
    target = tmp_path / "青云志"
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("青云志", True)))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    alerts.answer = start_now
    started: list[str] = []
    monkeypatch.setattr(win.pipeline, "run_lifecycle", started.append)
    monkeypatch.setattr(QInputDialog, "getInt", staticmethod(lambda *a, **k: (40, True)))

    win.new_action.trigger()
    assert (tmp_path / "青云志.novel").exists()  # the suffix is added
    assert win.project.title() == "青云志"
    assert len(alerts.shown) == 1 and "《青云志》已建好" in alerts.texts[0]
    assert started == (["quick_start"] if start_now else [])
    if start_now:
        assert win.project.planned_chapters(1) == 40  # asked before the quick start plans volume 1
    else:
        assert win.center.currentWidget() is win.start_page
        assert win.start_page.recommend_button.text() == "创建新项目"
    win.close_novel()
