"""Importing a manuscript from the window (a preview of the split before anything is written) and dropping
files on the window (samples → the style profile, a manuscript → the import offer)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QTimer, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QFileDialog, QMessageBox
from pytestqt.qtbot import QtBot

from novel_desktop.analysis.manuscript import read_manuscript, split_manuscript
from novel_desktop.config import AppSettings
from novel_desktop.storage.store import NovelStore
from novel_desktop.ui.import_dialog import ImportPreviewDialog
from novel_desktop.ui.main_window import MainWindow
from novel_desktop.ui.style_drop import StyleProfileDialog
from tests.conftest import CORPUS

AQ = CORPUS / "aq_zhengzhuan_pg25332_excerpt.txt"
ERSHINIAN = CORPUS / "ershinian_pg24099_ch01-10.txt"
SAMPLE = "　　雨下了一夜。林枫推开药铺的门，街上没有人。\n\n　　“师父，”他说，“玉又亮了。”\n" * 20


@pytest.fixture
def window(qtbot: QtBot) -> MainWindow:
    win = MainWindow(settings=AppSettings())
    qtbot.addWidget(win)
    win.show()
    return win


class Messages:
    def __init__(self, monkeypatch: pytest.MonkeyPatch, answer: Any = QMessageBox.StandardButton.Yes) -> None:
        self.shown: list[tuple[str, str, str]] = []
        self.answer = answer
        for kind in ("information", "warning", "critical", "question"):
            monkeypatch.setattr(QMessageBox, kind, staticmethod(self._record(kind)))

    def _record(self, kind: str) -> Any:
        def record(_parent: Any, title: str, text: str, *_a: Any) -> Any:
            self.shown.append((kind, title, text))
            return self.answer if kind == "question" else QMessageBox.StandardButton.Ok

        return record


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
    window: MainWindow, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    messages = Messages(monkeypatch)
    target = tmp_path / "阿Q正传.novel"
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(AQ), "")))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    seen: list[int] = []

    def confirm() -> None:
        dialog = next(d for d in window.findChildren(ImportPreviewDialog) if d.isVisible())
        seen.append(len(dialog.chapter_rows()))
        dialog.title_edit.setText("阿Q正传")
        dialog.import_button.click()

    QTimer.singleShot(50, confirm)
    window.import_action.trigger()
    assert seen == [9]
    assert messages.shown[-1][1] == "导入完成" and "9 章" in messages.shown[-1][2]
    assert window.project.is_open and window.project.title() == "阿Q正传"
    assert len(window.project.chapters()) == 9


def test_cancelling_the_preview_writes_nothing(
    window: MainWindow, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    asked_where: list[str] = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(AQ), "")))
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: asked_where.append("x") or ("", ""))
    )

    def cancel() -> None:
        next(d for d in window.findChildren(ImportPreviewDialog) if d.isVisible()).cancel_button.click()

    QTimer.singleShot(50, cancel)
    window.import_action.trigger()
    assert asked_where == []
    assert not window.project.is_open
    assert list(tmp_path.glob("*.novel")) == []


def test_import_never_overwrites_an_existing_novel(
    window: MainWindow, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    messages = Messages(monkeypatch)
    existing = tmp_path / "旧书.novel"
    NovelStore.create(existing, title="旧书").close()
    before = existing.read_bytes()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(existing), "")))
    monkeypatch.setattr(ImportPreviewDialog, "confirm", classmethod(lambda cls, *a: "阿Q正传"))
    window.import_manuscript(AQ)
    assert messages.shown[-1][0] == "warning" and "不会覆盖" in messages.shown[-1][2]
    assert existing.read_bytes() == before


def test_an_unreadable_manuscript_is_explained(
    window: MainWindow, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    messages = Messages(monkeypatch)
    broken = tmp_path / "坏的.docx"
    broken.write_bytes(b"not a zip file")
    window.import_manuscript(broken)
    [(kind, title, _text)] = messages.shown
    assert (kind, title) == ("critical", "无法读取书稿")


def test_dropping_samples_opens_the_style_profile_for_the_open_novel(
    window: MainWindow, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, seed_novel: Path
) -> None:
    opened: list[list[str]] = []
    monkeypatch.setattr(
        StyleProfileDialog,
        "show_for",
        classmethod(lambda cls, parent, project, paths: opened.append(list(paths))),
    )
    samples = [tmp_path / "样本一.txt", tmp_path / "样本二.md"]
    for p in samples:
        p.write_text(SAMPLE, encoding="utf-8")
    assert window.open_novel(seed_novel, remember=False)
    drop(window, samples)
    assert opened == [[str(p) for p in samples]]


def test_dropping_samples_without_an_open_novel_says_to_open_one(
    window: MainWindow, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    messages = Messages(monkeypatch)
    sample = tmp_path / "样本.txt"
    sample.write_text(SAMPLE, encoding="utf-8")
    drop(window, [sample])
    assert messages.shown == [("information", "文风档案", "先打开或新建一部小说，再设置它的文风。")]


def test_dropping_a_manuscript_offers_the_import(window: MainWindow, monkeypatch: pytest.MonkeyPatch) -> None:
    messages = Messages(monkeypatch, answer=QMessageBox.StandardButton.No)
    imported: list[Path] = []
    monkeypatch.setattr(MainWindow, "import_manuscript", lambda self, p: imported.append(Path(p)))
    drop(window, [ERSHINIAN])
    [(kind, title, text)] = messages.shown
    assert (kind, title) == ("question", "导入书稿") and ERSHINIAN.name in text
    assert imported == []  # declined
    messages.answer = QMessageBox.StandardButton.Yes
    drop(window, [ERSHINIAN])
    assert imported == [ERSHINIAN]


def test_dropping_files_that_are_neither_is_explained(
    window: MainWindow, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    messages = Messages(monkeypatch)
    picture = tmp_path / "封面.png"
    picture.write_bytes(b"\x89PNG")
    drop(window, [picture])
    [(kind, title, text)] = messages.shown
    assert (kind, title) == ("information", "无法使用这些文件") and "1-3 个样本" in text


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
