"""The 统计 view in the real window: after the fake server wrote a chapter, it shows the pass rate, the judge
issues, tokens and cost per chapter and words per day that the logs and the ledger hold; an empty novel says
so; every string has its English."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
import qasync
from pytestqt.qtbot import QtBot

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.ui.analytics_view import AnalyticsView
from novel_desktop.ui.main_window import MainWindow
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.ui.shots import save_shot
from tests.ui.test_lifecycle_window import run

pytestmark = pytest.mark.usefixtures("gui_thread_gc")


def test_the_view_shows_what_the_logs_and_the_ledger_hold(
    qtbot: QtBot, qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer
) -> None:
    run(qloop, window, window.continue_action.trigger)  # the fake server writes chapter 3
    project = window.project
    logs = {c.number: project.pipeline_log(c.number) for c in project.chapters()}
    assert logs.get(3), "chapter 3 was committed by the pipeline"
    view_menu = next(m.menu() for m in window.menuBar().actions() if m.text() == "视图")
    assert window.analytics_action in view_menu.actions()
    window.analytics_action.trigger()
    view = window.tabs.currentWidget()
    assert isinstance(view, AnalyticsView)

    committed = sorted(n for n, log in logs.items() if log)
    forced = [n for n in committed if logs[n]["gate_decision"] == "force_pass"]  # type: ignore[index]
    assert view.data.committed == committed and view.data.forced == forced
    assert f"{round(100 * (len(committed) - len(forced)) / len(committed))}%" in view.pass_label.text()

    ledger = project.store.chapter_costs()
    assert set(view.data.costs) == {n for n, c in ledger.items() if c.calls} and 3 in view.data.costs
    assert view.data.costs[3] == ledger[3]
    assert f"${sum(c.cost_usd for c in view.data.costs.values()):.4f}" in view.cost_label.text()

    revisions = project.revisions(3)
    assert [d.pipeline for d in view.data.days] == [revisions[-1].chars]
    assert f"共 {revisions[-1].chars} 字" in view.words_label.text()
    assert view.issue_table.rowCount() == len(view.data.issues)
    assert not view.empty_label.isVisible()
    save_shot(window, "analytics_view")
    _english_shot(qtbot, project)

    # A hand edit is counted as such: at once while the tab is shown, else when it is shown again.
    project.save_chapter(3, project.chapter_text(3) + "\n\n他又添了一句。")
    assert view.data.days[-1].manual == 7  # 他又添了一句。
    window.open_chapter(3)
    project.save_chapter(3, project.chapter_text(3) + "又一句。")
    assert view.data.days[-1].manual == 7  # not re-read while its tab is hidden
    window.analytics_action.trigger()
    assert window.tabs.currentWidget() is view
    assert view.data.days[-1].manual == 7 + 4  # 字数 counts the full stop


def _english_shot(qtbot: QtBot, project: ProjectController) -> None:
    from novel_desktop import i18n

    i18n.set_language("en")
    try:
        view = AnalyticsView(project)
        qtbot.addWidget(view)
        view.resize(1200, 900)
        view.show()
        assert view.pass_label.text().startswith("Pass rate ")
        save_shot(view, "analytics_view_en")
    finally:
        i18n.set_language("zh")


def test_an_empty_novel_says_there_is_no_data(qtbot: QtBot, tmp_path: Path) -> None:
    project = ProjectController()
    project.create(tmp_path / "空.novel", title="空", genre=None, platform="qidian")
    try:
        view = AnalyticsView(project)
        qtbot.addWidget(view)
        view.resize(1200, 800)
        view.show()
        assert view.empty_label.isVisible() and "还没有数据" in view.empty_label.text()
        assert view.issue_table.rowCount() == 0
        assert view.pass_label.text() == "还没有由流水线提交的章节。"
    finally:
        project.close()


def test_the_english_catalogue_translates_every_string_with_the_same_slots() -> None:
    from novel_desktop.paths import resource

    catalogue = json.loads(resource("i18n", "en", "analytics.json").read_text(encoding="utf-8"))
    merged: dict[str, str] = {}
    for path in sorted(resource("i18n", "en").glob("*.json")):
        merged.update(json.loads(path.read_text(encoding="utf-8")))
    source = Path(__file__).resolve().parents[2] / "novel_desktop" / "ui" / "analytics_view.py"
    missing = []
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tr" and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value not in merged:
                missing.append(arg.value)
    assert missing == []
    for chinese, english in catalogue.items():
        assert set(re.findall(r"\{\w+", chinese)) == set(re.findall(r"\{\w+", english)), chinese
        assert not re.search(r"[\u3000-\u303f\uff00-\uffef]", english), english  # ASCII punctuation
