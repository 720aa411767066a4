"""The project tree: volumes → chapters with 字数 and status icons, then characters, storylines, rules, foreshadowing."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.ui.project_tree import CHAPTER, CHARACTER, FORESHADOW, RULE, STORYLINE, ProjectTree


def _tree(qtbot: QtBot, project: ProjectController) -> ProjectTree:
    tree = ProjectTree(project)
    qtbot.addWidget(tree)
    tree.reload()
    return tree


def test_chapters_show_number_title_and_chars(qtbot: QtBot, project: ProjectController) -> None:
    tree = _tree(qtbot, project)
    assert tree.model.chapter_rows() == [("第1章 药篓里的残玉", "628字"), ("第2章 夜半灵光", "605字")]
    volume = tree.model.index(0, 0)
    assert tree.model.data(volume) == "第1卷"
    assert tree.model.data(tree.model.index(0, 1)) == "1,233字"
    assert tree.view.isExpanded(volume)  # the current volume is open at first


def test_status_icon_follows_a_manual_edit(qtbot: QtBot, project: ProjectController) -> None:
    tree = _tree(qtbot, project)
    assert tree.model.node(tree.model.chapter_index(2)).status == "committed"
    project.save_chapter(2, project.chapter_text(2) + "\n\n新加的一段。")
    tree.reload()
    node = tree.model.node(tree.model.chapter_index(2))
    assert node.status == "needs_rebuild"
    assert "重建" in node.tooltip
    assert tree.model.node(tree.model.chapter_index(1)).status == "committed"


def test_sections_list_characters_storylines_rules_and_foreshadowing(
    qtbot: QtBot, project: ProjectController
) -> None:
    tree = _tree(qtbot, project)
    sections = {kind: tree.model.section(kind) for kind in (CHARACTER, STORYLINE)}
    names = {kind: [c.label for c in node.children] for kind, node in sections.items() if node is not None}
    assert sorted(names[CHARACTER]) == ["林枫", "陈老"]
    assert names[STORYLINE] == ["林枫问道"]
    rules = tree.model.section(RULE)
    assert rules is not None and rules.children and rules.children[0].detail == "硬"
    foreshadow = tree.model.section(FORESHADOW)
    assert foreshadow is not None and any("残玉" in c.label for c in foreshadow.children)


def test_activating_nodes_requests_chapters_and_views(qtbot: QtBot, project: ProjectController) -> None:
    tree = _tree(qtbot, project)
    with qtbot.waitSignal(tree.chapter_requested) as chapter:
        tree.view.activated.emit(tree.model.chapter_index(2))
    assert chapter.args == [2]
    with qtbot.waitSignal(tree.view_requested) as view:
        tree.open_index(tree.model.index(0, 0))
    assert view.args == ["outline", 1]
    section = tree.model.section(STORYLINE)
    assert section is not None
    with qtbot.waitSignal(tree.view_requested) as view:
        tree.open_index(tree.model.createIndex(section.row(), 0, section))
    assert view.args == ["storylines", 0]


def test_chapter_node_kinds(qtbot: QtBot, project: ProjectController) -> None:
    tree = _tree(qtbot, project)
    assert tree.model.node(tree.model.chapter_index(1)).kind == CHAPTER
    assert not tree.model.chapter_index(99).isValid()
