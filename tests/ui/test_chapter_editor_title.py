"""The chapter's title is a field above its text (issue 19 point 6): "第一章" fixed beside the editable title,
the text without its "#" line; saving joins them back into the stored "# 第一章 标题" form."""

from __future__ import annotations

from PySide6.QtGui import QTextCursor
from pytestqt.qtbot import QtBot

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.ui.chapter_editor import ChapterTab
from novel_desktop.ui.main_window import MainWindow
from novel_desktop.ui.pipeline_dock import LiveDraftView
from tests.ui.test_chapter_editor import type_text

HEADING = "# 第一章 药篓里的残玉"


def _tab(qtbot: QtBot, project: ProjectController) -> ChapterTab:
    tab = ChapterTab(project, 1)
    qtbot.addWidget(tab)
    tab.resize(900, 600)
    tab.show()
    return tab


def _retitle(tab: ChapterTab, title: str) -> None:
    edit = tab.editor.title_bar.edit
    edit.setFocus()
    edit.selectAll()
    type_text(edit, title)


def test_the_tab_shows_a_title_field_and_no_heading_line(qtbot: QtBot, project: ProjectController) -> None:
    tab = _tab(qtbot, project)
    bar = tab.editor.title_bar
    assert bar.isVisible() and bar.label.text() == "第一章" and bar.edit.text() == "药篓里的残玉"
    assert not tab.editor.toPlainText().lstrip().startswith("#")
    assert tab.editor.toPlainText().startswith("入秋以后")
    assert bar.geometry().bottom() <= tab.editor.geometry().top()  # the field sits above the text


def test_renaming_saves_a_revision_with_the_new_heading_and_marks_nothing_stale(
    qtbot: QtBot, project: ProjectController
) -> None:
    before = project.chapter_text(1)
    assert project.status().stale_chapters == []
    tab = _tab(qtbot, project)
    _retitle(tab, "雨夜残玉")
    assert tab.editor.is_modified
    with qtbot.waitSignal(tab.editor.chapter_saved, timeout=6000) as saved:  # autosave, as typing
        pass
    assert saved.args == [1, []]  # nothing marked for a rebuild
    stored = project.chapter_text(1)
    assert stored.splitlines()[0] == "# 第一章 雨夜残玉"
    assert stored.removeprefix("# 第一章 雨夜残玉") == before.removeprefix(HEADING)  # the body as it was
    assert [r.kind for r in project.revisions(1)] == ["imported", "manual"]
    assert project.status().stale_chapters == []
    assert project.chapters()[0].title == "第一章 雨夜残玉"
    assert not tab.editor.is_modified


def test_editing_the_body_still_marks_the_chapter_stale(qtbot: QtBot, project: ProjectController) -> None:
    tab = _tab(qtbot, project)
    _retitle(tab, "雨夜残玉")
    tab.editor.moveCursor(QTextCursor.MoveOperation.End)
    tab.editor.setFocus()
    type_text(tab.editor, "又一阵雨")
    assert tab.editor.save() == [1, 2]
    stored = project.chapter_text(1)
    assert stored.startswith("# 第一章 雨夜残玉\n\n入秋以后") and stored.endswith("又一阵雨")
    assert project.status().stale_chapters == [1, 2]


def test_a_find_hit_in_the_heading_selects_the_title_in_the_field(window: MainWindow) -> None:
    window.show_hit(1, HEADING.index("残玉"), HEADING.index("残玉") + 2)
    editor = window.current_editor()
    assert editor is not None and editor.title_bar.edit.selectedText() == "残玉"
    text = window.project.chapter_text(1)
    start = text.index("青石镇")
    window.show_hit(1, start, start + 3)
    assert editor.textCursor().selectedText() == "青石镇"


def test_the_live_stream_shows_its_title_in_the_field_once_known(qtbot: QtBot, window: MainWindow) -> None:
    live = LiveDraftView(window.pipeline)
    qtbot.addWidget(live)
    live.resize(800, 500)
    live.show()
    live.start(3)
    assert live.title_bar.label.text() == "第3章" and live.title_bar.title() == ""
    for chunk in ("# 第3", "章 开", "山\n", "\n山门前的", "石阶。"):
        live._on_pipeline_text_delta(3, chunk)
        live.flush()
        if chunk == "章 开":
            assert live.toPlainText() == ""  # the heading line is held back until it ends
    assert live.title_bar.title() == "开山" and live.title_bar.label.text() == "第3章"
    assert live.toPlainText() == "山门前的石阶。"
    assert live.title_bar.edit.isReadOnly()
    # A text that does not start with a heading streams as it comes.
    live.start(4, "雨停了。")
    assert live.toPlainText() == "雨停了。" and live.title_bar.title() == ""


def test_the_tab_label_follows_a_renamed_title_once_it_is_saved(window: MainWindow) -> None:
    tab = window.open_chapter(1)
    assert tab is not None
    index = window.tabs.indexOf(tab)
    assert window.tabs.tabText(index) == "第1章 药篓里的残玉"
    _retitle(tab, "雨夜残玉")
    tab.editor.title_bar.edit.editingFinished.emit()  # leaving the field (Enter, Tab, a click elsewhere)
    assert window.project.chapters()[0].title == "第一章 雨夜残玉"
    assert window.tabs.tabText(index) == "第1章 雨夜残玉"
    assert window.tabs.tabToolTip(index) == "第1章 雨夜残玉"
    _retitle(tab, "一个很长很长很长很长的新标题")
    assert tab.editor.save() == []
    assert window.tabs.tabText(index) == "第1章 一个很长很长很长很…"  # shortened, the whole in its tooltip
    assert window.tabs.tabToolTip(index) == "第1章 一个很长很长很长很长的新标题"
