"""Issue 17 in the window: a read-only novel is shown, never written; a non-WAL journal is said; exports
replace only what the save dialog asked about and never the novel; failures name the file; text from the
novel is plain text everywhere."""

from __future__ import annotations

import asyncio
import gc
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QLabel
from pytestqt.qtbot import QtBot

from novel_desktop.config import AppSettings
from novel_desktop.storage.book_export import ChapterProblem, ExportResult
from novel_desktop.storage.engine import JournalChoice
from novel_desktop.storage.folder import import_folder
from novel_desktop.storage.store import NovelStore
from novel_desktop.ui.main_window import MainWindow
from novel_desktop.ui.quality_panel import QualityPanel
from tests.conftest import FIXTURES
from tests.fakes.alerts import RecordingAlerts

pytestmark = pytest.mark.usefixtures("gui_thread_gc")

MARKUP = "<b>粗</b><script>x</script>"


@pytest.fixture
def window(qtbot: QtBot, qloop: qasync.QEventLoop) -> MainWindow:
    win = MainWindow(settings=AppSettings())
    qtbot.addWidget(win)
    win.resize(1366, 768)
    win.show()
    return win


def act(qloop: qasync.QEventLoop, window: MainWindow, action: Callable[[], object]) -> None:
    """Do ``action`` inside the running loop, as a click would, and wait until no job runs."""

    async def main() -> None:
        action()
        await asyncio.sleep(0)
        await window.jobs.idle()

    qloop.run_until_complete(asyncio.wait_for(main(), 60))
    gc.collect()


def _unwritable(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if the file were read-only (root writes anything, so chmod would not stop it)."""
    monkeypatch.setattr("novel_desktop.storage.store.can_write", lambda _p: False)
    monkeypatch.setattr("novel_desktop.storage.engine.can_write", lambda _p: False)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


# ---------------------------------------------------------------------------- read-only novels
def test_a_read_only_novel_opens_read_only_with_a_banner_and_nothing_written(
    window: MainWindow, seed_novel: Path, monkeypatch: pytest.MonkeyPatch, alerts: RecordingAlerts
) -> None:
    before = _snapshot(seed_novel.parent)
    _unwritable(monkeypatch)
    assert window.open_novel(seed_novel, remember=False)
    assert window.project.readonly
    assert window.banner.isVisible()
    assert "只读" in window.banner.text() and str(seed_novel) in window.banner.text()
    assert "导出" in window.banner.text()
    assert "只读" in window.windowTitle()
    for action in (
        window.save_action,
        window.continue_action,
        window.continue_n_action,
        window.rebuild_action,
        window.plan_action,
        window.quick_start_action,
        window.style_action,
    ):
        assert not action.isEnabled(), action.text()
    assert window.export_action.isEnabled()  # a copy is how the author works on it
    assert not window.pipeline_dock.continue_button.isEnabled()
    editor = window.current_editor()
    assert editor is not None and editor.isReadOnly()
    assert not window.indent_action.isEnabled()
    editor.indent_paragraphs()
    assert not editor.is_modified
    window.pipeline.continue_chapters(1)
    assert not window.pipeline.running
    # The start page's recommended step and a rebuild request are refused, with the way out.
    window.runs.run_recommended("continue")
    window.runs.request_rebuild(1)
    assert [kind for kind, _t, _x in alerts.shown] == ["info", "info"]
    assert "导出" in alerts.texts[-1]
    with pytest.raises(Exception, match="只读"):
        window.project.save_chapter(1, "改过的正文")
    window.save_all()
    window.close_novel()
    assert _snapshot(seed_novel.parent) == before  # no -wal, no -shm, no lock, no byte changed


def test_a_writable_novel_has_no_banner(window: MainWindow, seed_novel: Path) -> None:
    assert window.open_novel(seed_novel, remember=False)
    assert not window.project.readonly and not window.banner.isVisible()
    assert window.continue_action.isEnabled()
    editor = window.current_editor()
    assert editor is not None and not editor.isReadOnly()


def test_a_journal_other_than_wal_is_said_once(
    window: MainWindow, seed_novel: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reason = "网络文件系统（nfs）上不能安全使用 WAL，已改用回滚日志"
    monkeypatch.setattr(
        "novel_desktop.storage.store.choose_journal", lambda _p: JournalChoice("DELETE", reason, "nfs")
    )
    assert window.open_novel(seed_novel, remember=False)
    assert window.project.journal_note() == reason
    assert reason in window.statusBar().currentMessage()


def test_wal_is_not_mentioned(window: MainWindow, seed_novel: Path) -> None:
    assert window.open_novel(seed_novel, remember=False)
    assert window.project.journal_note() is None
    assert "日志模式" not in window.statusBar().currentMessage()


# ---------------------------------------------------------------------------- export
def _export_to(monkeypatch: pytest.MonkeyPatch, target: Path) -> None:
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))


def test_export_replaces_a_file_the_dialog_asked_about(
    window: MainWindow,
    qloop: qasync.QEventLoop,
    seed_novel: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    alerts: RecordingAlerts,
) -> None:
    target = tmp_path / "书.txt"
    target.write_text("旧的导出", encoding="utf-8")
    assert window.open_novel(seed_novel, remember=False)
    _export_to(monkeypatch, target)
    act(qloop, window, window.export_action.trigger)
    assert alerts.shown == []
    assert "药篓里的残玉" in target.read_text(encoding="utf-8")


def test_export_refuses_the_novel_itself(
    window: MainWindow,
    qloop: qasync.QEventLoop,
    seed_novel: Path,
    monkeypatch: pytest.MonkeyPatch,
    alerts: RecordingAlerts,
) -> None:
    assert window.open_novel(seed_novel, remember=False)
    window.close_novel()
    before = seed_novel.read_bytes()
    assert window.open_novel(seed_novel, remember=False)
    _export_to(monkeypatch, seed_novel)
    act(qloop, window, window.export_action.trigger)
    kind, title, text = alerts.shown[-1]
    assert (kind, title) == ("error", "导出失败")
    assert str(seed_novel) in text or seed_novel.name in text
    assert "Error" not in text
    window.close_novel()
    assert seed_novel.read_bytes() == before


def test_export_refuses_a_read_only_file(
    window: MainWindow,
    qloop: qasync.QEventLoop,
    seed_novel: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    alerts: RecordingAlerts,
) -> None:
    target = tmp_path / "只读.txt"
    target.write_text("别动", encoding="utf-8")
    target.chmod(0o444)
    assert window.open_novel(seed_novel, remember=False)
    _export_to(monkeypatch, target)
    act(qloop, window, window.export_action.trigger)
    kind, _title, text = alerts.shown[-1]
    assert kind == "error" and str(target) in text and "只读" in text
    assert target.read_text(encoding="utf-8") == "别动"


def test_export_lists_the_chapters_it_repaired(
    window: MainWindow,
    qloop: qasync.QEventLoop,
    seed_novel: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    alerts: RecordingAlerts,
) -> None:
    target = tmp_path / "书.txt"
    problem = ChapterProblem(2, "雨夜", "含无效字节，已替换为 �")
    monkeypatch.setattr(
        "novel_desktop.controllers.project_controller.ProjectController.export_book",
        lambda self, out, fmt, *, force=False: ExportResult(Path(out), 2, 100, (problem,)),
    )
    assert window.open_novel(seed_novel, remember=False)
    _export_to(monkeypatch, target)
    act(qloop, window, window.export_action.trigger)
    kind, _title, text = alerts.shown[-1]
    assert kind == "warning" and "第2章《雨夜》" in text and "无效字节" in text


# ---------------------------------------------------------------------------- failures
@pytest.mark.parametrize("content", [b"", b"not a novel", b"SQLite format 3\x00" + b"\xff" * 300])
def test_a_corrupt_novel_is_an_alert_naming_the_file(
    window: MainWindow, tmp_path: Path, alerts: RecordingAlerts, content: bytes
) -> None:
    bad = tmp_path / "坏.novel"
    bad.write_bytes(content)
    assert not window.open_novel(bad, remember=False)
    kind, _title, text = alerts.shown[-1]
    assert kind == "error" and str(bad) in text
    assert "Traceback" not in text and "sqlalchemy" not in text.lower() and "内部错误" not in text
    assert not window.project.is_open


def test_a_failed_save_is_told_once_naming_the_file(
    window: MainWindow, seed_novel: Path, monkeypatch: pytest.MonkeyPatch, alerts: RecordingAlerts
) -> None:
    from novel_desktop.storage import errors

    assert window.open_novel(seed_novel, remember=False)

    def full(*_a: object, **_k: object) -> None:
        raise errors.disk_full(seed_novel)

    monkeypatch.setattr(window.project.store, "save_manual_edit", full)
    editor = window.current_editor()
    assert editor is not None
    for _ in range(2):
        editor.insertPlainText("新的一句。")
        editor.save()
    errors_shown = [text for kind, _t, text in alerts.shown if kind == "error"]
    assert len(errors_shown) == 1 and str(seed_novel) in errors_shown[0]
    assert "新的一句。" in editor.toPlainText()


# ---------------------------------------------------------------------------- plain text
@pytest.fixture
def markup_novel(tmp_path: Path) -> Path:
    """The seed novel with a title and a chapter title made of HTML."""
    folder = tmp_path / "seed"
    shutil.copytree(FIXTURES / "seed_project", folder)
    first = sorted((folder / "chapters").iterdir())[0]
    text = first.read_text(encoding="utf-8").split("\n", 1)[1]
    first.write_text(f"# 第一章 {MARKUP}\n{text}", encoding="utf-8")
    path = tmp_path / "markup.novel"
    import_folder(folder, path)
    store = NovelStore.open(path)
    store.set_meta("title", MARKUP)
    store.close()
    return path


def _shows_literally(root: object, fragment: str) -> list[QLabel]:
    assert hasattr(root, "findChildren")
    labels = [label for label in root.findChildren(QLabel) if fragment in label.text()]
    for label in labels:
        assert label.textFormat() == Qt.TextFormat.PlainText, label.objectName()
    return labels


def test_markup_in_titles_is_shown_literally(window: MainWindow, markup_novel: Path) -> None:
    assert window.open_novel(markup_novel, remember=False)
    assert MARKUP in window.windowTitle()
    window.show_start_page()
    assert _shows_literally(window.start_page, MARKUP)
    window.open_chapter(1)
    panel = window.quality_panel
    assert isinstance(panel, QualityPanel)
    panel.show_chapter(1)
    assert _shows_literally(panel, MARKUP)
