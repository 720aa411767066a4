"""Importing a manuscript from the window (a preview of the split before anything is written) and dropping
files on the window (samples → the style profile, a manuscript → the import offer), through the real
MainWindow: every step is a job on the qasync loop and every dialog opens with open(), so 续写 still works
after each of them."""

from __future__ import annotations

import asyncio
import gc
import json
from collections.abc import Callable
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from novel_desktop.analysis.manuscript import read_manuscript, split_manuscript
from novel_desktop.config import AppSettings
from novel_desktop.storage.store import NovelStore
from novel_desktop.ui.import_dialog import ImportPreviewDialog
from novel_desktop.ui.main_window import MainWindow
from novel_desktop.ui.style_drop import StyleProfileDialog
from tests.conftest import CORPUS
from tests.fakes.alerts import RecordingAlerts
from tests.fakes.anthropic_server import FakeAnthropicServer

AQ = CORPUS / "aq_zhengzhuan_pg25332_excerpt.txt"
ERSHINIAN = CORPUS / "ershinian_pg24099_ch01-10.txt"
SAMPLE = "　　雨下了一夜。林枫推开药铺的门，街上没有人。\n\n　　“师父，”他说，“玉又亮了。”\n" * 20

pytestmark = pytest.mark.usefixtures("gui_thread_gc")

#: Chinese numerals for the generated book's chapter headings.
_NUMERALS = "一二三四五六七八九十"


@pytest.fixture
def book(tmp_path: Path) -> Path:
    """A generated manuscript too long to be a style sample: a front note, then 12 chapters of ~3,000 字."""
    path = tmp_path / "山河志.txt"
    paragraph = "　　山路弯弯，林枫背着药篓往上走，雾气在松林间慢慢散开。\n\n"
    chapters = [
        f"第{_NUMERALS[n - 1] if n <= 10 else '十' + _NUMERALS[n - 11]}章 山中第{n}日\n\n" + paragraph * 110
        for n in range(1, 13)
    ]
    path.write_text("本书为测试而写。\n\n" + "".join(chapters), encoding="utf-8")
    return path


@pytest.fixture
def window(qtbot: QtBot, qloop: qasync.QEventLoop) -> MainWindow:
    win = MainWindow(settings=AppSettings())
    qtbot.addWidget(win)
    win.show()
    return win


def act(
    qloop: qasync.QEventLoop, window: MainWindow, action: Callable[[], object], timeout: float = 60
) -> None:
    """Do ``action`` inside the running loop, as a click in the app would, and wait until no job runs."""

    async def main() -> None:
        action()
        await asyncio.sleep(0)
        await window.jobs.idle()

    qloop.run_until_complete(asyncio.wait_for(main(), timeout))
    # What the step left in reference cycles (drop events, closures over dialogs) goes here, in the GUI
    # thread, not in a worker thread of the next run (see gui_thread_gc).
    gc.collect()


def drop(window: MainWindow, paths: list[Path]) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    event = QDropEvent(
        QPointF(200, 200),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dropEvent(event)
    assert event.isAccepted()


def preview_of(window: MainWindow) -> ImportPreviewDialog:
    [dialog] = [d for d in window.findChildren(ImportPreviewDialog) if d.isVisible()]
    assert dialog.isModal()  # window-modal through open(): nothing waits in a nested loop
    return dialog


def continue_commits_a_chapter(qloop: qasync.QEventLoop, window: MainWindow) -> None:
    """续写 (the toolbar action) writes and commits the next chapter of the open seed novel."""
    before = len(window.project.chapters())
    act(qloop, window, window.continue_action.trigger)
    assert not window.pipeline.running
    assert len(window.project.chapters()) == before + 1


def test_the_preview_lists_every_chapter_with_its_size_and_what_was_kept_aside(qtbot: QtBot) -> None:
    manuscript = read_manuscript(AQ)
    split = split_manuscript(manuscript.text)
    dialog = ImportPreviewDialog(AQ, manuscript, split)
    qtbot.addWidget(dialog)
    rows = dialog.chapter_rows()
    assert len(rows) == 9
    assert rows[0][0] == "第一章 序" and rows[-1][0] == "第九章 大團圓"
    assert rows[0][1] == f"{split.chapters[0].chars:,}"
    assert (
        "识别到 9 章（没有分卷标题" in dialog.summary_label.text() and "utf-8" in dialog.summary_label.text()
    )
    assert "单独保存" in dialog.aside_label.text()  # the Gutenberg header before 第一章
    assert dialog.title_edit.text() == AQ.stem
    # A title is required.
    dialog.title_edit.setText("  ")
    assert not dialog.import_button.isEnabled()
    dialog.title_edit.setText("阿Q正传")
    assert dialog.import_button.isEnabled()


def test_a_file_without_chapter_headings_cannot_be_imported(qtbot: QtBot, tmp_path: Path) -> None:
    plain = tmp_path / "随笔.txt"
    plain.write_text("今天下雨。\n明天也许晴。\n", encoding="utf-8")
    manuscript = read_manuscript(plain)
    dialog = ImportPreviewDialog(plain, manuscript, split_manuscript(manuscript.text))
    qtbot.addWidget(dialog)
    assert not dialog.import_button.isEnabled()
    assert "没有识别到章节标题" in dialog.summary_label.text()


def test_import_shows_the_preview_then_writes_and_opens_the_novel(
    window: MainWindow,
    qloop: qasync.QEventLoop,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    alerts: RecordingAlerts,
    book: Path,
) -> None:
    target = tmp_path / "山河志.novel"
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(book), "")))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    act(qloop, window, window.import_action.trigger)
    dialog = preview_of(window)
    assert len(dialog.chapter_rows()) == 12
    dialog.title_edit.setText("山河志")
    act(qloop, window, dialog.import_button.click)
    assert alerts.shown[-1][1] == "导入完成" and "12 章" in alerts.shown[-1][2]
    assert window.project.is_open and window.project.title() == "山河志"
    assert len(window.project.chapters()) == 12


def test_cancelling_the_preview_writes_nothing(
    window: MainWindow,
    qloop: qasync.QEventLoop,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    book: Path,
) -> None:
    asked_where: list[str] = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(book), "")))
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: asked_where.append("x") or ("", ""))
    )
    act(qloop, window, window.import_action.trigger)
    act(qloop, window, preview_of(window).cancel_button.click)
    assert asked_where == []
    assert not window.project.is_open
    assert list(tmp_path.glob("*.novel")) == []
    assert not [d for d in window.findChildren(ImportPreviewDialog) if d.isVisible()]


def test_a_dropped_manuscript_previewed_and_cancelled_leaves_the_open_novel_writable(
    window: MainWindow,
    qloop: qasync.QEventLoop,
    seed_novel: Path,
    fake: FakeAnthropicServer,
    alerts: RecordingAlerts,
    tmp_path: Path,
    book: Path,
) -> None:
    assert window.open_novel(seed_novel, remember=False)
    act(qloop, window, lambda: drop(window, [book]))
    assert alerts.shown == []  # a whole book: the preview opens at once (it is the question)
    dialog = preview_of(window)
    assert dialog.chapter_rows()
    act(qloop, window, dialog.cancel_button.click)
    assert sorted(tmp_path.glob("*.novel")) == [seed_novel]
    assert window.project.path == seed_novel
    continue_commits_a_chapter(qloop, window)


def test_import_never_overwrites_an_existing_novel(
    window: MainWindow,
    qloop: qasync.QEventLoop,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    alerts: RecordingAlerts,
    book: Path,
) -> None:
    existing = tmp_path / "旧书.novel"
    NovelStore.create(existing, title="旧书").close()
    before = existing.read_bytes()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(existing), "")))
    monkeypatch.setattr(
        ImportPreviewDialog,
        "preview",
        classmethod(lambda cls, parent, src, manuscript, split, on_import: on_import("阿Q正传")),
    )
    act(qloop, window, lambda: window.import_manuscript(book))
    assert alerts.shown[-1][0] == "warning" and "不会覆盖" in alerts.shown[-1][2]
    assert existing.read_bytes() == before


def test_an_unreadable_manuscript_is_explained(
    window: MainWindow, qloop: qasync.QEventLoop, tmp_path: Path, alerts: RecordingAlerts
) -> None:
    broken = tmp_path / "坏的.docx"
    broken.write_bytes(b"not a zip file")
    act(qloop, window, lambda: window.import_manuscript(broken))
    [(kind, title, _text)] = alerts.shown
    assert (kind, title) == ("error", "无法读取书稿")


def test_dropped_samples_update_the_style_profile_and_continue_still_commits(
    window: MainWindow,
    qloop: qasync.QEventLoop,
    tmp_path: Path,
    seed_novel: Path,
    fake: FakeAnthropicServer,
) -> None:
    samples = [tmp_path / "样本一.txt", tmp_path / "样本二.md"]
    for p in samples:
        p.write_text(SAMPLE, encoding="utf-8")
    assert window.open_novel(seed_novel, remember=False)
    before = window.project.document_json("style-profile.json")
    act(qloop, window, lambda: drop(window, samples))  # classify, open the profile, measure: all jobs
    [dialog] = [d for d in window.findChildren(StyleProfileDialog) if d.isVisible()]
    assert dialog.isModal()
    assert "样本一.txt" in dialog.page.status_label.text()  # measured
    act(qloop, window, dialog.page.save_button.click)
    assert not [d for d in window.findChildren(StyleProfileDialog) if d.isVisible()]  # saved and closed
    saved = window.project.document_json("style-profile.json")
    assert saved != before and saved["metrics"]  # measured from the samples
    assert json.dumps(saved, ensure_ascii=False).find("avg_sentence_length") >= 0
    continue_commits_a_chapter(qloop, window)


def test_dropping_samples_without_an_open_novel_says_to_open_one(
    window: MainWindow, qloop: qasync.QEventLoop, tmp_path: Path, alerts: RecordingAlerts
) -> None:
    samples = [tmp_path / "样本.txt", tmp_path / "样本二.txt"]
    for p in samples:
        p.write_text(SAMPLE, encoding="utf-8")
    act(qloop, window, lambda: drop(window, samples))
    assert alerts.shown == [("info", "文风档案", "先打开或新建一部小说，再设置它的文风。")]
    alerts.shown.clear()
    alerts.choice = "style"  # one short file: asked whether it is a book or a sample
    act(qloop, window, lambda: drop(window, samples[:1]))
    assert [kind for kind, _t, _x in alerts.shown] == ["choose", "info"]
    assert alerts.offered == [["import", "style"]]


def test_dropping_a_manuscript_opens_the_import(
    window: MainWindow,
    qloop: qasync.QEventLoop,
    monkeypatch: pytest.MonkeyPatch,
    alerts: RecordingAlerts,
    book: Path,
) -> None:
    imported: list[Path] = []
    monkeypatch.setattr(MainWindow, "import_manuscript", lambda self, p: imported.append(Path(p)))
    act(qloop, window, lambda: drop(window, [book]))
    assert alerts.shown == []  # never taken for style samples, never asked twice: the preview asks
    assert imported == [book]


def test_dropping_files_that_are_neither_is_explained(
    window: MainWindow, qloop: qasync.QEventLoop, tmp_path: Path, alerts: RecordingAlerts
) -> None:
    picture = tmp_path / "封面.png"
    picture.write_bytes(b"\x89PNG")
    act(qloop, window, lambda: drop(window, [picture]))
    [(kind, title, text)] = alerts.shown
    assert (kind, title) == ("info", "无法使用这些文件") and "图片" in text and "epub" in text


def test_the_window_accepts_a_drag_of_files_only(window: MainWindow, tmp_path: Path) -> None:
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QDragEnterEvent

    def drag(mime: QMimeData) -> bool:
        event = QDragEnterEvent(
            QPoint(200, 200),
            Qt.DropAction.CopyAction,
            mime,
            Qt.MouseButton.LeftButton,
            Qt.KeyboardModifier.NoModifier,
        )
        event.ignore()
        window.dragEnterEvent(event)
        return event.isAccepted()

    files = QMimeData()
    files.setUrls([QUrl.fromLocalFile(str(tmp_path / "样本.txt"))])
    text = QMimeData()
    text.setText("一段文字")
    assert drag(files)
    assert not drag(text)
