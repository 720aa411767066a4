"""The style page: dropped samples become an editable style profile; a dropped book is offered for import."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from pytestqt.qtbot import QtBot

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.ui.style_drop import StylePage, StyleProfileDialog
from tests.conftest import CORPUS as CORPUS_DIR

CORPUS = CORPUS_DIR / "ershinian_pg24099_ch01-10.txt"


@pytest.fixture(scope="module")
def corpus_text() -> str:
    return CORPUS.read_text(encoding="utf-8")


pytestmark = pytest.mark.usefixtures("gui_thread_gc")


@pytest.fixture
def sample(tmp_path: Path, corpus_text: str) -> Path:
    """One chapter-sized sample of a real novel (about 7,000 字)."""
    path = tmp_path / "样本一.txt"
    path.write_text(corpus_text[5000:12000], encoding="utf-8")
    return path


def _mime(*paths: Path) -> QMimeData:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    return mime


def _drop(widget: StylePage, *paths: Path) -> None:
    mime = _mime(*paths)
    event = QDropEvent(
        QPointF(20, 20),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    # QApplication.sendEvent does not deliver a drop outside a real drag; the handler is what a drop calls.
    widget.dropEvent(event)


def _page(qtbot: QtBot, project: ProjectController) -> StylePage:
    page = StylePage(project)
    qtbot.addWidget(page)
    page.resize(1200, 800)
    page.show()
    return page


def test_dropping_a_sample_shows_an_editable_profile_and_saves_it(
    qtbot: QtBot, qloop: qasync.QEventLoop, project: ProjectController, sample: Path
) -> None:
    page = _page(qtbot, project)
    before = page.profile()
    assert "已保存" in page.status_label.text()  # the seed novel has a profile; it is shown first
    page.speech_edit.setPlainText("林枫：直来直去，爱追问")

    async def drop_and_wait() -> None:
        done = asyncio.get_running_loop().create_future()
        page.profile_analyzed.connect(lambda p: done.done() or done.set_result(p))
        _drop(page, sample)
        await asyncio.wait_for(done, 60)

    qloop.run_until_complete(drop_and_wait())

    profile = page.profile()
    assert profile.avg_sentence_length != before.avg_sentence_length
    assert 5 < profile.avg_sentence_length < 60
    assert page.sentence_box.value() == pytest.approx(profile.avg_sentence_length)
    assert profile.writing_directives and profile.forbidden_words
    assert page.metric_labels["avg_paragraph_length"].text().endswith("字")
    assert "样本一.txt" in page.status_label.text()
    # What the author wrote about voices is not something samples can measure: it is kept.
    assert profile.character_speech_patterns == {"林枫": "直来直去，爱追问"}

    # The author edits the measured profile before saving.
    page.forbidden_edit.setPlainText("莫名的\n不禁\n")
    page.dialogue_box.setValue(40)
    with qtbot.waitSignal(page.profile_saved):
        qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    saved = project.document_json("style-profile.json")
    assert saved["forbidden_words"] == ["莫名的", "不禁"]
    assert saved["dialogue_ratio"] == 0.4
    assert saved["avg_sentence_length"] == profile.avg_sentence_length
    assert saved["character_speech_patterns"] == {"林枫": "直来直去，爱追问"}
    assert "avg_paragraph_length" in saved["metrics"]  # the measurements stay for drift checks
    assert "已保存" in page.status_label.text()


def test_dropping_a_whole_book_offers_import(
    qtbot: QtBot, project: ProjectController, tmp_path: Path, corpus_text: str
) -> None:
    page = _page(qtbot, project)
    book = tmp_path / "二十年目睹之怪现状.txt"
    book.write_text(corpus_text, encoding="utf-8")
    before = project.document("style-profile.json")
    with qtbot.waitSignal(page.manuscript_dropped) as blocker:
        _drop(page, book)
    assert blocker.args == [str(book)]
    assert "书稿" in page.status_label.text()
    assert project.document("style-profile.json") == before


def test_unusable_drops_explain_what_is_accepted(
    qtbot: QtBot, project: ProjectController, tmp_path: Path, sample: Path
) -> None:
    page = _page(qtbot, project)
    text_mime = _mime(sample)
    text_enter = QDragEnterEvent(
        QPoint(10, 10),
        Qt.DropAction.CopyAction,
        text_mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    page.drop_area.dragEnterEvent(text_enter)
    assert text_enter.isAccepted()

    png = tmp_path / "封面.png"
    png.write_bytes(b"\x89PNG")
    mime = _mime(png)  # kept alive: the event holds only a pointer to it
    enter = QDragEnterEvent(
        QPoint(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    page.drop_area.dragEnterEvent(enter)
    assert enter.isAccepted()  # taken, so that the drop can say why it cannot be used
    before = project.document("style-profile.json")
    shown = page.profile()
    _drop(page, png)
    assert "图片" in page.status_label.text()
    assert ".txt" in page.status_label.text() and "3 万字" in page.status_label.text()
    assert project.document("style-profile.json") == before and page.profile() == shown


def test_analysis_without_a_running_loop_and_the_dialog(
    qtbot: QtBot, project: ProjectController, sample: Path
) -> None:
    dialog = StyleProfileDialog(project, [str(sample)])
    qtbot.addWidget(dialog)
    assert "样本一.txt" in dialog.page.status_label.text()
    with qtbot.waitSignal(dialog.accepted):
        dialog.page.save_button.click()
    saved = json.loads(project.document("style-profile.json") or "{}")
    assert saved["source_type"] == "original" and "metrics" in saved


def test_an_impossible_value_is_not_saved(qtbot: QtBot, project: ProjectController) -> None:
    page = _page(qtbot, project)
    before = project.document("style-profile.json")
    page.source_box.setItemData(0, "nonsense")
    page.source_box.setCurrentIndex(0)
    assert not page.save()
    assert "有误" in page.status_label.text()
    assert project.document("style-profile.json") == before
