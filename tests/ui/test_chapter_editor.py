"""The chapter editor: text, live 字数, autosave with the rebuild offer, AI-phrase underlines, history and diff."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.text import count_chars
from novel_desktop.ui.chapter_editor import INDENT, ChapterEditor, ChapterTab, indent_paragraphs
from novel_desktop.ui.revision_dialog import RevisionDialog, diff_html, diff_stats


def _tab(qtbot: QtBot, project: ProjectController, number: int = 1) -> ChapterTab:
    tab = ChapterTab(project, number)
    qtbot.addWidget(tab)
    tab.resize(900, 600)
    tab.show()
    return tab


def type_text(editor: QWidget, text: str) -> None:
    """Type Chinese as an input method delivers it: key events carrying the text (QTest only knows ASCII)."""
    for ch in text:
        for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            QApplication.sendEvent(editor, QKeyEvent(kind, 0, Qt.KeyboardModifier.NoModifier, ch))


def _type_at_end(qtbot: QtBot, editor: ChapterEditor, text: str) -> None:
    editor.moveCursor(QTextCursor.MoveOperation.End)
    editor.setFocus()
    type_text(editor, text)


def test_editor_shows_the_chapter_and_counts_its_chars(qtbot: QtBot, project: ProjectController) -> None:
    tab = _tab(qtbot, project)
    editor = tab.editor
    stored = project.chapter_text(1)
    assert stored.startswith("# 第一章 药篓里的残玉\n\n")
    # The title is a field beside the fixed "第一章"; the text shows the body, no "#" line.
    assert editor.title_bar.label.text() == "第一章" and editor.title() == "药篓里的残玉"
    assert editor.toPlainText() == stored.removeprefix("# 第一章 药篓里的残玉\n\n")
    assert not any(line.startswith("#") for line in editor.toPlainText().splitlines())
    assert editor.stored_text() == stored and not editor.is_modified
    # 字数 counts the chapter as the project tree and `novel status` do: the stored text, heading included.
    assert editor.chars == count_chars(stored) == 628
    with qtbot.waitSignal(editor.counts_changed) as sig:
        _type_at_end(qtbot, editor, "雨停了")
    assert editor.chars == 631
    assert sig.args[0] in (629, 630, 631)


def test_selection_count(qtbot: QtBot, project: ProjectController) -> None:
    tab = _tab(qtbot, project)
    editor = tab.editor
    cursor = editor.textCursor()
    cursor.setPosition(0)
    cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
    editor.setTextCursor(cursor)
    assert editor.selected_chars == count_chars("入秋以后，青石镇的雨就没停过。")


def test_line_height_is_airy(qtbot: QtBot, project: ProjectController) -> None:
    tab = _tab(qtbot, project)
    editor = tab.editor
    fmt = editor.document().lastBlock().blockFormat()
    assert 160 <= fmt.lineHeight() <= 180
    assert any(f in editor.font().families() for f in ("WenQuanYi Micro Hei", "Noto Sans CJK SC"))


def test_autosave_keeps_a_manual_revision_and_marks_the_chapters_stale(
    qtbot: QtBot, project: ProjectController
) -> None:
    tab = _tab(qtbot, project)
    editor = tab.editor
    with qtbot.waitSignal(editor.chapter_saved, timeout=6000) as saved:
        _type_at_end(qtbot, editor, "又一阵雨")
    assert saved.args == [1, [1, 2]]
    assert [r.kind for r in project.revisions(1)] == ["imported", "manual"]
    assert project.chapter_text(1).endswith("又一阵雨")
    assert project.status().stale_chapters == [1, 2]
    # The rebuild it calls for is offered by the window's 重建 bar (tests/ui/test_stale_window.py).


def test_unchanged_text_saves_nothing(qtbot: QtBot, project: ProjectController) -> None:
    tab = _tab(qtbot, project)
    editor = tab.editor
    assert editor.save() is None
    assert len(project.revisions(1)) == 1


def test_undo_still_works_after_a_save(qtbot: QtBot, project: ProjectController) -> None:
    tab = _tab(qtbot, project)
    editor = tab.editor
    _type_at_end(qtbot, editor, "甲")
    editor.save()
    editor.undo()
    assert not editor.toPlainText().endswith("甲")


def test_ai_phrase_is_underlined_and_the_hover_hint_names_the_suggestion(
    qtbot: QtBot, project: ProjectController
) -> None:
    tab = _tab(qtbot, project)
    editor = tab.editor
    editor.load("# 标题\n\n他不禁笑了，眼中闪过一丝光。")
    block = editor.document().findBlockByNumber(0)  # the heading is the title field, not a block
    formats = block.layout().formats()
    wavy = [f for f in formats if f.format.underlineStyle() == QTextCharFormat.UnderlineStyle.WaveUnderline]
    starts = {block.text()[f.start : f.start + f.length] for f in wavy}
    assert "不禁" in starts
    assert any(s.startswith("眼中闪过一丝") for s in starts)
    assert "他" not in "".join(starts)
    hint = editor.hint_at_position(block.position() + block.text().index("不禁") + 1)
    assert "不禁" in hint and "建议" in hint
    assert editor.hint_at_position(block.position()) == ""
    # The hover path: the point under the phrase gives the same hint.
    cursor = QTextCursor(block)
    cursor.setPosition(block.position() + block.text().index("不禁") + 1)
    rect = editor.cursorRect(cursor)
    assert "不禁" in editor.hint_at(rect.center())


def _wavy(editor: ChapterEditor) -> list[list[str]]:
    """The underlined stretches of each paragraph."""
    out = []
    block = editor.document().begin()
    while block.isValid():
        formats = block.layout().formats()
        wavy = [
            f for f in formats if f.format.underlineStyle() == QTextCharFormat.UnderlineStyle.WaveUnderline
        ]
        out.append([block.text()[f.start : f.start + f.length] for f in wavy])
        block = block.next()
    return out


def test_a_loaded_chapter_is_underlined_as_a_full_pass_would_and_new_phrases_still_are(
    qtbot: QtBot, project: ProjectController
) -> None:
    # Loading underlines with only the phrases the chapter contains (one scan instead of one per
    # paragraph): the marks must be what the whole list gives, and a phrase typed afterwards that the
    # loaded text did not contain is still underlined.
    tab = _tab(qtbot, project)
    editor = tab.editor
    editor.load("# 标题\n\n他不禁笑了，眼中闪过一丝光。\n\n平常的一句。\n\n她嘴角微微上扬。")
    loaded = _wavy(editor)
    assert any(loaded)
    editor.highlighter.rehighlight()  # the whole list, paragraph by paragraph
    assert _wavy(editor) == loaded
    _type_at_end(qtbot, editor, "\n他倒吸一口凉气。")
    assert any("倒吸一口凉气" in s for s in _wavy(editor)[-1])


def test_indent_paragraphs_uses_full_width_spaces() -> None:
    text = "# 第一章\n\n入秋以后。\n  他说。\n\u3000\u3000已缩进。"
    assert indent_paragraphs(text) == f"# 第一章\n\n{INDENT}入秋以后。\n{INDENT}他说。\n{INDENT}已缩进。"


def test_indent_action_is_one_undoable_edit(qtbot: QtBot, project: ProjectController) -> None:
    tab = _tab(qtbot, project)
    editor = tab.editor
    original = editor.toPlainText()
    editor.indent_paragraphs()
    assert editor.toPlainText() == indent_paragraphs(original)
    editor.undo()
    assert editor.toPlainText() == original


def test_diff_marks_what_changed_by_character() -> None:
    old = "第一段。\n\n他走了。"
    new = "第一段。\n\n他慢慢走了。"
    html = diff_html(old, new)
    assert "慢慢" in html and "line-through" not in html
    assert diff_stats(old, new) == (2, 0)
    assert "line-through" in diff_html(new, old)


def test_history_lists_revisions_and_restores_one(qtbot: QtBot, project: ProjectController) -> None:
    original = project.chapter_text(1)
    project.save_chapter(1, original + "\n\n改过的结尾。")
    dialog = RevisionDialog(project, 1)
    qtbot.addWidget(dialog)
    assert dialog.list.topLevelItemCount() == 2
    top = dialog.list.topLevelItem(0)
    assert top is not None and top.text(1) == "手动修改"
    assert "改过的结尾" in dialog.view.toPlainText()
    assert "+" in dialog.stats.text()
    imported = dialog.revisions[0]
    dialog.select_revision(imported.id)
    dialog.compare.setCurrentIndex(RevisionDialog.COMPARE_CURRENT)
    assert "改过的结尾" in dialog.view.toPlainText()
    with qtbot.waitSignal(dialog.revision_restored) as sig:
        dialog.restore_button.click()
    assert sig.args[0] == 1
    assert project.chapter_text(1) == original
    assert [r.kind for r in project.revisions(1)] == ["imported", "manual", "manual"]
    assert dialog.list.topLevelItemCount() == 3
    assert "已把" in dialog.notice.text()
