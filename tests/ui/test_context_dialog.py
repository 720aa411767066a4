"""The context inspector in the window (issue 16 point 7): the chapter tree's 查看上下文… opens, for a chapter
written against the fake Messages API, each agent's prompt with its sections, tokens and why; a chapter of
the demo (written before the records existed) says it has none."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from novel_desktop.cli import main
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.ui.context_dialog import ContextDialog
from novel_desktop.ui.main_window import MainWindow
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.ui.shots import save_shot

OUTLINE = "# 第一卷 入山\n\n## 第1章 雨夜\n\n林枫在雨夜里埋葬了爷爷，发现爷爷留下的残玉。\n"


@pytest.fixture
def project(
    novel_path: Path, tmp_path: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> Iterator[ProjectController]:
    outline = tmp_path / "outline.md"
    outline.write_text(OUTLINE, encoding="utf-8")
    assert main(["init", str(novel_path), "--title", "青石问道", "--genre", "玄幻"]) == 0
    assert main(["outline", "set", str(novel_path), "--volume", "1", str(outline)]) == 0
    assert main(["continue", str(novel_path), "-n", "1", "--non-interactive"]) == 0
    capsys.readouterr()
    controller = ProjectController()
    controller.open(novel_path)
    yield controller
    controller.close()


def _open_from_tree(window: MainWindow, number: int) -> ContextDialog:
    menu = window.tree.context_menu(window.tree.model.chapter_index(number))
    assert menu is not None
    next(a for a in menu.actions() if a.text() == "查看上下文…").trigger()
    dialog = window.context_flows.dialog
    assert dialog is not None and dialog.isVisible()
    return dialog


def test_the_tree_opens_the_chapter_context_with_each_agents_sections(
    window: MainWindow, qtbot: QtBot
) -> None:
    dialog = _open_from_tree(window, 1)
    tree = dialog.tree
    agents = [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())]
    # The summarizer runs as two parts and the ordinary judge as three panels at once, each its own prompt:
    # an entry per call sent.
    assert agents == [
        "写作 writer",
        "摘要 summarizer · 摘要组 S",
        "摘要 summarizer · 摘要组 M",
        "润色 refiner",
        "评审 judge · 评审组 A",
        "评审 judge · 评审组 B",
        "评审 judge · 评审组 C",
        "复审 judge2",
    ]
    writer = tree.topLevelItem(0)
    assert writer.isExpanded()
    assert "/ 预算 25,000" in writer.text(1)
    rows = {writer.child(i).text(0): writer.child(i) for i in range(writer.childCount())}
    assert rows["本章大纲"].text(2) == "本章大纲，始终保留"
    assert int(rows["本章大纲"].text(1).replace(",", "")) > 0
    assert "当前线记忆" in rows
    total = int(writer.text(1).split(" / ")[0].replace(",", ""))
    assert sum(int(r.text(1).replace(",", "")) for r in rows.values()) == total
    assert dialog.note.isHidden()
    dialog.resize(1000, 640)
    save_shot(dialog, "context_dialog")


def test_a_chapter_without_records_says_why(window: MainWindow, qtbot: QtBot, tmp_path: Path) -> None:
    from novel_desktop.controllers.context_controller import ContextController
    from novel_desktop.demo import build_demo

    demo = ProjectController()
    demo.open(build_demo(tmp_path / "demo.novel"))
    try:
        dialog = ContextDialog(ContextController(demo), 2)
        qtbot.addWidget(dialog)
        assert dialog.tree.topLevelItemCount() == 0
        assert "写于本版本之前" in dialog.note.text()
        dialog.chapter_box.setValue(3)
        assert "写于本版本之前" in dialog.note.text()
    finally:
        demo.close()
