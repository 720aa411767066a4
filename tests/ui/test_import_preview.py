"""The import preview marks every place the split was unsure of (issue 19 point 2): the chapter's row says
what to check, the list below names each place and finds its chapter, and a corrected title is what the real
window's import writes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from novel_desktop.analysis.manuscript import read_manuscript, split_for_import
from novel_desktop.domain.manuscript import Manuscript
from novel_desktop.ui.import_dialog import ImportPreviewDialog
from novel_desktop.ui.main_window import MainWindow
from tests.conftest import FIXTURES
from tests.fakes.alerts import RecordingAlerts
from tests.ui.shots import save_shot
from tests.ui.test_import_and_drop import act, preview_of, window  # noqa: F401  (the window fixture)

HEADINGS = FIXTURES / "manuscripts" / "headings"

pytestmark = pytest.mark.usefixtures("gui_thread_gc")


def dialog_for(qtbot: QtBot, path: Path) -> ImportPreviewDialog:
    manuscript = read_manuscript(path)
    dialog = ImportPreviewDialog(path, manuscript, split_for_import(manuscript))
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def test_every_unsure_chapter_is_marked_and_its_place_listed(qtbot: QtBot) -> None:
    dialog = dialog_for(qtbot, HEADINGS / "traditional.big5.txt")
    save_shot(dialog, "import_preview_notes")
    assert dialog.chapter_rows() == [
        (title, f"{c.chars:,}")
        for title, c in zip(
            ["第一章 燈下", "第二章 夜客", "第三章 舊信", "第四章 歸途", "第五章 渡口"],
            dialog.split.chapters,
            strict=True,
        )
    ]
    assert dialog.noted_rows() == {
        "第一章 燈下": "⚠ 重复标题已合并",
        "第二章 夜客": "⚠ 两行标题已合并",
        "第三章 舊信": "⚠ 重复标题已合并",
        "第四章 歸途": "⚠ 两行标题已合并",
        "第五章 渡口": "⚠ 重复标题已合并",
    }
    assert "big5" in dialog.summary_label.text()
    assert dialog.notes_list.count() == 5
    assert "有 5 处需要确认" in dialog.notes_label.text()
    # Choosing a place selects its chapter.
    dialog.notes_list.setCurrentRow(1)
    assert dialog.notes_list.currentItem().text().startswith("⚠ 第 2 章 · 两行标题已合并")
    assert dialog.tree.currentItem().text(0) == "第二章 夜客"


def test_a_clean_split_shows_no_notes(qtbot: QtBot, tmp_path: Path) -> None:
    path = tmp_path / "clean.txt"
    path.write_text("第一章 甲\n\n　　正文一段。\n\n第二章 乙\n\n　　正文两段。\n", encoding="utf-8")
    dialog = dialog_for(qtbot, path)
    assert dialog.noted_rows() == {}
    assert dialog.notes_list.isHidden() and dialog.notes_label.isHidden()


def test_a_guessed_encoding_is_a_note_for_the_whole_file(qtbot: QtBot, tmp_path: Path) -> None:
    path = tmp_path / "short.txt"
    path.write_bytes("第一章 开".encode("gb18030"))
    manuscript = read_manuscript(path)
    assert manuscript.encoding == "gb18030" and manuscript.encoding_confidence < 0.8
    dialog = ImportPreviewDialog(path, manuscript, split_for_import(manuscript))
    qtbot.addWidget(dialog)
    [note] = [dialog.notes_list.item(i).text() for i in range(dialog.notes_list.count())]
    assert note.startswith("⚠ 整个文件 · 编码为推测") and "UTF-8" in note


def test_a_title_corrected_in_the_preview_is_the_one_stored(qtbot: QtBot) -> None:
    dialog = dialog_for(qtbot, HEADINGS / "simplified.txt")
    row = dialog.tree.topLevelItem(1)
    row.setText(0, "第二章  夜里来客")
    assert dialog.split.chapters[1].title == "第二章 夜里来客"
    assert row.text(1) == f"{dialog.split.chapters[1].chars:,}"
    row.setText(0, "  ")  # an emptied title goes back
    assert row.text(0) == "第二章 夜里来客"
    assert dialog.split.chapters[1].stored_text().startswith("# 第二章 夜里来客\n\n　　三更时分")


def test_the_window_imports_the_both_shapes_manuscript_with_the_corrected_title(
    window: MainWindow,  # noqa: F811
    qloop: qasync.QEventLoop,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    alerts: RecordingAlerts,
) -> None:
    source = tmp_path / "雨夜灯.txt"
    shutil.copyfile(HEADINGS / "simplified.gb18030.txt", source)
    target = tmp_path / "雨夜灯.novel"
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(source), "")))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    act(qloop, window, window.import_action.trigger)
    dialog = preview_of(window)
    assert len(dialog.noted_rows()) == 5
    dialog.tree.topLevelItem(3).setText(0, "第四章 回城")
    act(qloop, window, dialog.import_button.click)
    assert alerts.shown[-1][1] == "导入完成" and "5 章" in alerts.shown[-1][2]
    assert [c.title for c in window.project.chapters()] == [
        "第一章 灯下",
        "第二章 夜客",
        "第三章 旧信",
        "第四章 回城",
        "第五章 渡口",
    ]
    assert window.project.chapter_text(3).startswith("# 第三章 旧信\n\n　　斗笠客走后")


def test_manuscript_is_frozen_with_a_default_confidence() -> None:
    assert Manuscript("x", "utf-8", "txt").encoding_confidence == 1.0


def test_a_wrongly_joined_heading_can_be_split_back(qtbot: QtBot) -> None:
    dialog = dialog_for(qtbot, HEADINGS / "simplified.txt")
    assert dialog.unjoin_button.isVisible() and not dialog.unjoin_button.isEnabled()
    dialog.notes_list.setCurrentRow(0)  # chapter 1: a merged heading, nothing to split back
    assert not dialog.unjoin_button.isEnabled()
    dialog.notes_list.setCurrentRow(1)  # chapter 2: 第二章 / 夜客
    assert dialog.unjoin_button.isEnabled()
    dialog.unjoin_button.click()
    save_shot(dialog, "import_preview_unjoined")
    chapter = dialog.split.chapters[1]
    assert (chapter.title, chapter.heading) == ("第二章", "第二章")
    assert chapter.text.startswith("夜客\n\n　　三更时分")
    assert [c.title for c in dialog.split.chapters] == [
        "第一章 灯下",
        "第二章",
        "第三章 旧信",
        "第四章 归途",
        "第五章 渡口",
    ]
    assert not any(n.chapter == 2 for n in dialog.split.notes)
    assert "第二章" not in dialog.noted_rows()
    assert dialog.notes_list.currentItem().text().startswith("✓ 已拆回两行")
    assert not dialog.unjoin_button.isEnabled()
    text = (HEADINGS / "simplified.txt").read_text(encoding="utf-8")
    assert "".join("".join(p.split()) for p in dialog.split.pieces()) == "".join(text.split())


def test_a_manuscript_without_joined_headings_has_no_split_back_button(qtbot: QtBot, tmp_path: Path) -> None:
    path = tmp_path / "clean.txt"
    path.write_text("第一章 甲\n\n　　正文一段。\n\n第二章 乙\n\n　　正文两段。\n", encoding="utf-8")
    assert dialog_for(qtbot, path).unjoin_button.isHidden()


def test_the_places_to_check_speak_english_in_the_english_window(qtbot: QtBot) -> None:
    from novel_desktop import i18n

    i18n.set_language("en")
    try:
        dialog = dialog_for(qtbot, HEADINGS / "simplified.txt")
        first = dialog.notes_list.item(0)
        assert first.text() == "⚠ Chapter 1 · repeated heading merged: a repeated heading is one chapter"
        assert "第一章 灯下" in first.toolTip()  # the whole message, with the heading it is about
        assert dialog.noted_rows()["第二章 夜客"] == "⚠ two-line heading joined"
    finally:
        i18n.set_language("zh")


def test_a_heading_like_line_the_author_confirms_is_split_at(qtbot: QtBot, tmp_path: Path) -> None:
    body = "　　林枫推开门，院里的雪已经没过脚踝，远处传来几声狗叫。\n\n" * 3
    path = tmp_path / "待确认.txt"
    text = f"第一章 灯下\n\n{body}第二回里\n\n{body}第三章 渡口\n\n{body}"
    path.write_bytes(text.encode("gb18030"))
    dialog = dialog_for(qtbot, path)
    assert dialog.split_here_button.isVisible() and not dialog.split_here_button.isEnabled()
    assert [title for title, _chars in dialog.chapter_rows()] == ["第一章 灯下", "第三章 渡口"]
    assert dialog.summary_label.text().startswith("识别到 2 章")
    [row] = [i for i in range(dialog.notes_list.count()) if "第二回里" in dialog.notes_list.item(i).text()]
    dialog.notes_list.setCurrentRow(row)
    assert dialog.split_here_button.isEnabled() and not dialog.unjoin_button.isEnabled()
    dialog.split_here_button.click()
    assert [title for title, _chars in dialog.chapter_rows()] == ["第一章 灯下", "第二回里", "第三章 渡口"]
    total = sum(c.chars for c in dialog.split.chapters)
    assert dialog.summary_label.text().startswith(
        f"识别到 3 章（没有分卷标题，全部归入第 1 卷），共 {total:,} 字"
    )
    assert [c.number for c in dialog.split.chapters] == [1, 2, 3]  # what 导入… writes
    assert not any(n.kind == "unsplit_heading" for n in dialog.split.notes)
    assert not dialog.split_here_button.isEnabled()
    assert "".join("".join(p.split()) for p in dialog.split.pieces()) == "".join(text.split())
