"""The drop matrix in the real window: each kind of file (and text, links, pictures, folders) dropped on the
window, the project tree, a chapter editor and the style page does what controllers/drops.py says; a file on
the editor is never inserted as its URL, the editor asks instead (answered through the recording alerts)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QLineEdit, QPlainTextEdit, QWidget

from novel_desktop.ui.chapter_editor import ChapterEditor
from novel_desktop.ui.contract_form import ContractForm
from novel_desktop.ui.import_dialog import ImportPreviewDialog
from novel_desktop.ui.main_window import MainWindow
from novel_desktop.ui.style_drop import StylePage, StyleProfileDialog
from tests.fakes.alerts import RecordingAlerts

pytestmark = pytest.mark.usefixtures("gui_thread_gc")

PROSE = "　　山路弯弯，林枫背着药篓往上走，雾气在松林间慢慢散开。“师父，”他说，“玉又亮了。”\n\n"
SAMPLE_TEXT = PROSE * 30  # about 1,300 字: a sample chapter


@pytest.fixture
def files(tmp_path: Path) -> dict[str, list[Path]]:
    """Every kind of drop, by name: lists of paths."""
    book = tmp_path / "山河志.txt"
    book.write_text(
        "".join(f"第{n}章 山中第{n}日\n\n" + PROSE * 150 for n in "一二三四五六七八九十"), encoding="utf-8"
    )
    samples = [tmp_path / "样本一.txt", tmp_path / "样本二.md"]
    for p in samples:
        p.write_text(SAMPLE_TEXT, encoding="utf-8")
    picture = tmp_path / "封面.png"
    picture.write_bytes(b"\x89PNG\r\n")
    folder = tmp_path / "资料"
    folder.mkdir()
    many = [tmp_path / f"第{n}章.txt" for n in range(5)]
    for p in many:
        p.write_text(PROSE, encoding="utf-8")
    return {
        "manuscript": [book],
        "sample": samples[:1],
        "samples": samples,
        "image": [picture],
        "folder": [folder],
        "too_many": many,
    }


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[str]]]:
    """What the window was asked to do: import a manuscript, or show the style profile for samples."""
    made: list[tuple[str, list[str]]] = []
    monkeypatch.setattr(MainWindow, "import_manuscript", lambda self, p: made.append(("import", [str(p)])))
    monkeypatch.setattr(
        MainWindow, "show_style", lambda self, paths=None: made.append(("style", list(paths or [])))
    )
    return made


def act(qloop: qasync.QEventLoop, window: MainWindow, action: Callable[[], object]) -> None:
    """Do ``action`` inside the running loop, as the app would, and wait until no job runs."""

    async def main() -> None:
        action()
        await asyncio.sleep(0)
        await window.jobs.idle()

    qloop.run_until_complete(asyncio.wait_for(main(), 60))
    gc.collect()


def mime_of(paths: list[Path] = (), *, text: str = "", links: list[str] = ()) -> QMimeData:  # type: ignore[assignment]
    mime = QMimeData()
    urls = [QUrl.fromLocalFile(str(p)) for p in paths] + [QUrl(link) for link in links]
    if urls:
        mime.setUrls(urls)
    if text:
        mime.setText(text)
    return mime


def drag_enter(widget: QWidget, mime: QMimeData) -> bool:
    event = QDragEnterEvent(
        QPoint(30, 30),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    event.ignore()
    widget.dragEnterEvent(event)  # type: ignore[attr-defined]
    return event.isAccepted()


def drop_on(widget: QWidget, mime: QMimeData, at: QPointF = QPointF(30, 30)) -> None:
    """A drop as Qt delivers it after an accepted drag (QApplication.sendEvent delivers none outside a real
    drag): the handler a drop calls."""
    event = QDropEvent(
        at, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    widget.dropEvent(event)  # type: ignore[attr-defined]


def editor_of(window: MainWindow, number: int = 1) -> ChapterEditor:
    tab = window.open_chapter(number)
    assert tab is not None
    return tab.editor


#: file kind → what a drop on the window does (the tree passes its drops to the window: same row).
WINDOW_ROW = {
    "manuscript": [("import", ["山河志.txt"])],
    "sample": "choose",
    "samples": [("style", ["样本一.txt", "样本二.md"])],
    "image": "refused",
    "folder": "refused",
    "too_many": "refused",
}


@pytest.mark.parametrize("kind", list(WINDOW_ROW))
def test_drops_on_the_window(
    window: MainWindow,
    qloop: qasync.QEventLoop,
    files: dict[str, list[Path]],
    calls: list[tuple[str, list[str]]],
    alerts: RecordingAlerts,
    kind: str,
) -> None:
    mime = mime_of(files[kind])
    assert drag_enter(window, mime)
    act(qloop, window, lambda: drop_on(window, mime))
    expected = WINDOW_ROW[kind]
    if expected == "choose":  # one short file: a book or a sample, only the author knows
        assert alerts.offered == [["import", "style"]] and calls == []
        assert alerts.shown[0][0] == "choose" and "样本一.txt" in alerts.shown[0][2]
    elif expected == "refused":
        [(alert, title, _text)] = alerts.shown
        assert (alert, title) == ("info", "无法使用这些文件") and calls == []
    else:
        assert alerts.shown == []
        assert [(what, [Path(p).name for p in paths]) for what, paths in calls] == expected


def test_the_start_page_and_the_tree_pass_drops_to_the_window(
    window: MainWindow,
    qloop: qasync.QEventLoop,
    files: dict[str, list[Path]],
    calls: list[tuple[str, list[str]]],
) -> None:
    # Neither takes drops itself, so Qt hands a drag over them to the window (the table's WINDOW/TREE row).
    for page in (window.tree, window.start_page):
        assert [w for w in [page, *page.findChildren(QWidget)] if w.acceptDrops()] == []
    window.show_start_page()
    act(qloop, window, lambda: drop_on(window, mime_of(files["manuscript"])))
    assert calls == [("import", [str(files["manuscript"][0])])]


def test_text_and_links_on_the_window(
    window: MainWindow, qloop: qasync.QEventLoop, calls: list[tuple[str, list[str]]], alerts: RecordingAlerts
) -> None:
    assert not drag_enter(window, mime_of(text="一段文字"))  # text has no use on the window: not taken
    link = mime_of(links=["https://example.com/book.txt"], text="https://example.com/book.txt")
    assert drag_enter(window, link)
    act(qloop, window, lambda: drop_on(window, link))
    [(alert, _title, text)] = alerts.shown
    assert alert == "info" and "网页链接" in text and calls == []


def test_a_file_on_the_editor_is_never_inserted_as_a_url(
    window: MainWindow,
    qloop: qasync.QEventLoop,
    files: dict[str, list[Path]],
    calls: list[tuple[str, list[str]]],
    alerts: RecordingAlerts,
) -> None:
    editor = editor_of(window)
    before = editor.toPlainText()
    offered = {
        "manuscript": ["import", "insert"],
        "sample": ["import", "style", "insert"],
        "samples": ["style"],
    }
    for kind, paths in files.items():
        alerts.shown.clear()
        alerts.offered.clear()
        mime = mime_of(paths)
        assert drag_enter(editor, mime), kind
        act(qloop, window, lambda m=mime: drop_on(editor, m))  # answered 取消 (alerts.choice is None)
        assert "file://" not in editor.toPlainText()
        assert editor.toPlainText() == before and not editor.is_modified, kind
        if kind in offered:
            assert alerts.offered == [offered[kind]], kind
            assert alerts.shown[0][:2] == ("choose", "拖入的文件")
        else:
            [(alert, title, _text)] = alerts.shown
            assert (alert, title) == ("info", "无法使用这些文件"), kind
    # A link, too, is explained, not inserted.
    alerts.shown.clear()
    act(
        qloop,
        window,
        lambda: drop_on(editor, mime_of(links=["https://example.com/"], text="https://example.com/")),
    )
    assert "网页链接" in alerts.shown[-1][2] and editor.toPlainText() == before
    assert calls == []
    assert not window.project.status().stale_chapters  # nothing flagged for rebuild


def test_the_editor_inserts_a_files_text_when_asked_to(
    window: MainWindow, qloop: qasync.QEventLoop, files: dict[str, list[Path]], alerts: RecordingAlerts
) -> None:
    editor = editor_of(window)
    before = editor.toPlainText()
    alerts.choice = "insert"
    act(qloop, window, lambda: drop_on(editor, mime_of(files["sample"]), QPointF(0, 0)))
    text = editor.toPlainText()
    assert "file://" not in text and text.count("林枫背着药篓") == before.count("林枫背着药篓") + 30
    assert editor.is_modified  # an edit like any other: saved, and the later chapters flagged, by autosave
    editor.undo()  # one undoable step
    assert editor.toPlainText() == before


def test_the_editor_hands_a_book_or_a_sample_on_when_asked_to(
    window: MainWindow,
    qloop: qasync.QEventLoop,
    files: dict[str, list[Path]],
    calls: list[tuple[str, list[str]]],
    alerts: RecordingAlerts,
) -> None:
    editor = editor_of(window)
    alerts.choice = "import"
    act(qloop, window, lambda: drop_on(editor, mime_of(files["manuscript"])))
    alerts.choice = "style"
    act(qloop, window, lambda: drop_on(editor, mime_of(files["sample"])))
    assert calls == [("import", [str(files["manuscript"][0])]), ("style", [str(files["sample"][0])])]


def test_text_dropped_on_the_editor_is_inserted_as_text(window: MainWindow, alerts: RecordingAlerts) -> None:
    editor = editor_of(window)
    mime = mime_of(text="雨停了。")
    assert drag_enter(editor, mime)
    drop_on(editor, mime, QPointF(0, 0))
    assert "雨停了。" in editor.toPlainText() and alerts.shown == []


def test_a_file_pasted_into_the_editor_is_asked_about_too(
    window: MainWindow, qloop: qasync.QEventLoop, files: dict[str, list[Path]], alerts: RecordingAlerts
) -> None:
    from PySide6.QtWidgets import QApplication

    editor = editor_of(window)
    before = editor.toPlainText()
    clipboard = QApplication.clipboard()
    clipboard.setMimeData(mime_of(files["sample"]))  # as a file manager's 复制 leaves it
    try:
        act(qloop, window, editor.paste)
    finally:
        clipboard.clear()  # the clipboard owns the data: cleared here, not at exit
    assert alerts.offered == [["import", "style", "insert"]] and editor.toPlainText() == before


def test_the_style_page_measures_samples_and_dragged_text(
    window: MainWindow, qloop: qasync.QEventLoop, files: dict[str, list[Path]], alerts: RecordingAlerts
) -> None:
    dialog = window.show_style()
    assert isinstance(dialog, StyleProfileDialog)
    page: StylePage = dialog.page
    assert page.drop_area.isVisible() and page.drop_area.acceptDrops()
    for kind in ("sample", "samples"):
        with_profile = []
        page.profile_analyzed.connect(with_profile.append)
        act(qloop, window, lambda k=kind: drop_on(page.drop_area, mime_of(files[k])))
        assert with_profile, kind
        assert files[kind][0].name in page.status_label.text()
    text = mime_of(text=SAMPLE_TEXT)
    assert drag_enter(page.drop_area, text)
    act(qloop, window, lambda: drop_on(page.drop_area, text))
    assert "拖入的文字" in page.status_label.text()
    saved = window.project.document("style-profile.json")
    for kind in ("image", "folder", "too_many"):
        act(qloop, window, lambda k=kind: drop_on(page, mime_of(files[k])))
        assert "3 万字" in page.status_label.text(), kind
    assert window.project.document("style-profile.json") == saved  # measured, shown, not saved unasked
    assert alerts.shown == []
    dialog.reject()


def test_a_book_dropped_on_the_style_page_goes_to_the_import_preview(
    window: MainWindow, qloop: qasync.QEventLoop, files: dict[str, list[Path]]
) -> None:
    dialog = window.show_style()
    assert isinstance(dialog, StyleProfileDialog)
    act(qloop, window, lambda: drop_on(dialog.page.drop_area, mime_of(files["manuscript"])))
    assert not [d for d in window.findChildren(StyleProfileDialog) if d.isVisible()]  # closed for it
    [preview] = [d for d in window.findChildren(ImportPreviewDialog) if d.isVisible()]
    assert len(preview.chapter_rows()) == 10
    preview.cancel_button.click()


def test_a_read_only_editor_leaves_file_drops_to_the_window(
    window: MainWindow, files: dict[str, list[Path]]
) -> None:
    editor = editor_of(window)
    editor.setReadOnly(True)  # as for a novel opened read-only
    assert not drag_enter(editor, mime_of(files["manuscript"]))  # so Qt offers the drag to the window
    assert drag_enter(window, mime_of(files["manuscript"]))
    editor.insert_text_at(0, "不会写入")
    assert "不会写入" not in editor.toPlainText()


# --- every other text field of the window (ui/field_drops.py: one filter on the application) ---------------
def send_drop(receiver: QWidget, mime: QMimeData, at: QPointF = QPointF(4, 4)) -> bool:
    """A drag onto ``receiver`` and its drop, through the application (its event filters see them, as in a
    real drag). Returns whether the drag was accepted."""
    enter = QDragEnterEvent(
        at.toPoint(),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(receiver, enter)
    drop = QDropEvent(
        at, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(receiver, drop)
    return enter.isAccepted()


def outline_fields(window: MainWindow) -> tuple[QPlainTextEdit, QLineEdit]:
    """The outline view's text editor and the contract form's 故事线 field."""
    view = window.open_view("outline")
    assert view is not None
    editor = next(
        e
        for e in view.findChildren(QPlainTextEdit)
        if not e.isReadOnly() and not isinstance(e, ChapterEditor)
    )
    form = view.findChild(ContractForm)
    assert form is not None
    return editor, form.storyline_edit


def test_a_file_on_the_outline_editor_or_a_contract_field_is_asked_about_never_inserted_as_a_url(
    window: MainWindow,
    qloop: qasync.QEventLoop,
    files: dict[str, list[Path]],
    calls: list[tuple[str, list[str]]],
    alerts: RecordingAlerts,
) -> None:
    outline, storyline = outline_fields(window)
    for field, receiver, text in (
        (outline, outline.viewport(), outline.toPlainText),
        (storyline, storyline, storyline.text),
    ):
        before = text()
        for kind, offered in (
            ("manuscript", ["import", "insert"]),
            ("sample", ["import", "style", "insert"]),
        ):
            alerts.shown.clear()
            alerts.offered.clear()
            accepted: list[bool] = []
            act(
                qloop,
                window,
                lambda r=receiver, k=kind, a=accepted: a.append(send_drop(r, mime_of(files[k]))),
            )
            assert accepted == [True], (field, kind)
            assert alerts.offered == [offered], (field, kind)  # answered 取消: nothing changes
            assert text() == before and "file://" not in text(), (field, kind)
        alerts.shown.clear()
        act(qloop, window, lambda r=receiver: send_drop(r, mime_of(files["image"])))
        [(alert, title, _message)] = alerts.shown
        assert (alert, title) == ("info", "无法使用这些文件") and text() == before
    assert calls == []


def test_the_outline_editor_inserts_a_files_text_and_a_contract_field_hands_a_book_on(
    window: MainWindow,
    qloop: qasync.QEventLoop,
    files: dict[str, list[Path]],
    calls: list[tuple[str, list[str]]],
    alerts: RecordingAlerts,
) -> None:
    outline, storyline = outline_fields(window)
    before = outline.toPlainText()
    alerts.choice = "insert"
    act(qloop, window, lambda: send_drop(outline.viewport(), mime_of(files["sample"]), QPointF(0, 0)))
    after = outline.toPlainText()
    assert "file://" not in after and after.count("林枫背着药篓") == before.count("林枫背着药篓") + 30
    outline.undo()  # one undoable step
    assert outline.toPlainText() == before
    alerts.choice = "import"
    act(qloop, window, lambda: send_drop(storyline, mime_of(files["manuscript"])))
    assert calls == [("import", [str(files["manuscript"][0])])] and "file://" not in storyline.text()


def test_a_field_on_the_style_page_takes_samples_as_its_drop_zone_and_a_dialogs_field_refuses_files(
    window: MainWindow, qloop: qasync.QEventLoop, files: dict[str, list[Path]], alerts: RecordingAlerts
) -> None:
    from PySide6.QtWidgets import QDialog, QVBoxLayout

    dialog = window.show_style()
    assert isinstance(dialog, StyleProfileDialog)
    field = dialog.page.directives_edit
    before = field.toPlainText()
    act(qloop, window, lambda: send_drop(field.viewport(), mime_of(files["samples"])))
    # Measured, as the page's drop zone does: the form now holds the samples' directives, not a URL.
    after = field.toPlainText()
    assert after != before and "file://" not in after and "平均句长" in after
    dialog.reject()

    other = QDialog(window)
    line = QLineEdit(other)
    QVBoxLayout(other).addWidget(line)
    other.show()
    assert not send_drop(line, mime_of(files["sample"]))
    assert line.text() == "" and alerts.shown == []
    other.deleteLater()


def test_a_field_is_covered_again_once_a_build_that_paused_the_filter_ends_even_by_an_error(
    window: MainWindow, qloop: qasync.QEventLoop, files: dict[str, list[Path]], alerts: RecordingAlerts
) -> None:
    from PySide6.QtWidgets import QDialog, QVBoxLayout

    from novel_desktop.ui.field_drops import field_drops_paused

    other = QDialog(window)
    line = QLineEdit(other)
    QVBoxLayout(other).addWidget(line)
    other.show()
    with field_drops_paused():  # while widgets are built nothing filters (no drag comes in meanwhile)
        with field_drops_paused():
            pass
        send_drop(line, mime_of(files["sample"], text="样本"))  # the plain field's own handling
        assert line.text() == "样本"
    line.clear()
    with pytest.raises(RuntimeError), field_drops_paused():
        raise RuntimeError("a build that failed")
    window.open_chapter(1)  # builds under a pause too
    assert not send_drop(
        line, mime_of(files["sample"], text="样本")
    )  # refused again, the file never inserted
    assert line.text() == "" and alerts.shown == []
    other.deleteLater()


def test_the_first_window_built_while_the_filter_is_paused_still_covers_its_fields(
    window: MainWindow, qloop: qasync.QEventLoop, files: dict[str, list[Path]], alerts: RecordingAlerts
) -> None:
    """The window's construction runs under a pause, and the application's first window is what makes the
    filter: it is put on when that construction ends."""
    from PySide6.QtWidgets import QApplication, QDialog, QVBoxLayout

    from novel_desktop.ui import field_drops

    app = QApplication.instance()
    old = app.findChild(field_drops._FieldDropFilter, "fieldDropFilter")
    assert old is not None
    app.removeEventFilter(old)
    old.setParent(None)  # as in a fresh process: no filter yet
    field_drops._filter.clear()
    first = MainWindow()
    other = QDialog(first)
    line = QLineEdit(other)
    QVBoxLayout(other).addWidget(line)
    other.show()
    assert not send_drop(line, mime_of(files["sample"]))  # refused, not inserted as a URL
    assert line.text() == "" and alerts.shown == []
    other.deleteLater()
    first.close()
    first.deleteLater()
