"""The guards every test runs under: a dialog left open fails the test that left it (and is closed), and a
test that hangs is killed by pytest-timeout's thread method with its stack."""

from __future__ import annotations

import asyncio
import tomllib

import pytest
import qasync
from PySide6.QtWidgets import QDialog, QFileDialog, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from tests.conftest import REPO, close_modal_dialogs, open_modal_dialogs

pytest_plugins = ["pytester"]


def test_a_message_box_left_open_is_named_and_closed(qtbot: QtBot) -> None:
    box = QMessageBox(QMessageBox.Icon.Critical, "导入失败", "文件不存在")
    box.open()
    assert open_modal_dialogs() == [box]
    assert close_modal_dialogs() == ["QMessageBox '导入失败': '文件不存在'"]
    assert not box.isVisible()
    assert open_modal_dialogs() == []


def test_modal_and_file_dialogs_count_but_a_plain_window_does_not(qtbot: QtBot) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    window.show()
    modeless = QDialog(window)
    modeless.setWindowTitle("查找")
    modeless.show()
    modal = QDialog(window)
    modal.setWindowTitle("导入预览")
    modal.open()
    files = QFileDialog(window, "选择书稿")
    files.setOption(QFileDialog.Option.DontUseNativeDialog)
    files.show()  # not modal, but it still waits for a choice
    assert set(open_modal_dialogs()) == {modal, files}
    assert sorted(close_modal_dialogs()) == ["QDialog '导入预览'", "QFileDialog '选择书稿'"]
    assert modeless.isVisible()  # a tool window may stay open
    modeless.close()


@pytest.fixture
def child(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A pytest run in a subprocess that can import this repository's tests package."""
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    return pytester


def test_a_test_that_leaves_a_dialog_open_fails_and_the_next_one_is_clean(child: pytest.Pytester) -> None:
    pytester = child
    pytester.makeconftest("from tests.conftest import _no_modal_dialog_left_open  # noqa: F401\n")
    pytester.makepyfile(
        """
        from PySide6.QtWidgets import QMessageBox

        KEPT = []  # as a window keeps its dialogs

        def test_leaves_a_box_open(qtbot):
            box = QMessageBox(QMessageBox.Icon.Warning, "保存失败", "磁盘已满")
            KEPT.append(box)
            box.open()

        def test_after_it(qtbot):
            from tests.conftest import open_modal_dialogs
            assert open_modal_dialogs() == []
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--rootdir={pytester.path}")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        ["*the test left a dialog open (closed now): QMessageBox '保存失败': '磁盘已满'*"]
    )


def test_a_test_hung_in_a_dialog_is_killed_and_its_stack_reported(child: pytest.Pytester) -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    options = pyproject["tool"]["pytest"]["ini_options"]
    assert 0 < options["timeout"] <= 300
    child.makepyfile(
        """
        from PySide6.QtWidgets import QMessageBox

        def test_waits_for_a_click(qtbot):
            QMessageBox.critical(None, "导入失败", "文件不存在")  # exec(): no one will click
        """
    )
    result = child.runpytest_subprocess(
        "-p", "no:cacheprovider", "-o", "timeout=2", "-o", f"timeout_method={options['timeout_method']}"
    )
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*Timeout*"])
    result.stdout.fnmatch_lines(["*test_waits_for_a_click*"])  # the stack names the hung test


def test_a_message_box_inside_a_coroutine_is_refused_and_fails_the_test(child: pytest.Pytester) -> None:
    """The hang issue 13 found (a dialog's exec() inside an asyncio task on the qasync loop) fails the test
    that does it, at once and with a reason, instead of hanging the suite; outside a task the box opens."""
    child.makeconftest("from tests.conftest import _no_nested_loop_in_a_task, qloop  # noqa: F401\n")
    child.makepyfile(
        """
        import asyncio
        from PySide6.QtCore import QTimer
        from PySide6.QtWidgets import QApplication, QMessageBox

        def test_box_in_a_task(qtbot, qloop):
            async def flow():
                QMessageBox.warning(None, "导入失败", "文件不存在")

            qloop.run_until_complete(flow())

        def test_box_in_a_plain_slot(qtbot):
            QTimer.singleShot(50, lambda: QApplication.activeModalWidget().close())
            QMessageBox.information(None, "完成", "已导出")
        """
    )
    result = child.runpytest_subprocess("-p", "no:cacheprovider", "-o", "timeout=20")
    result.assert_outcomes(passed=2, errors=1)  # the box in the task: refused, then failed at teardown
    result.stdout.fnmatch_lines(["*a nested event loop inside a coroutine: QMessageBox.warning() inside*"])


def test_only_the_benchmarks_read_the_full_corpus_beside_the_repository() -> None:
    """A bare clone has no ../shared: tests read the excerpts in tests/fixtures/corpus instead."""
    readers = [
        path.relative_to(REPO).as_posix()
        for path in (REPO / "tests").rglob("*.py")
        if "benchmarks" not in path.parts
        and path.name != "test_guards.py"
        and any(
            mark in path.read_text(encoding="utf-8") for mark in ('/ "shared"', "../shared/corpus", "SHARED")
        )
    ]
    assert readers == []


def test_each_corpus_excerpt_is_small_and_its_source_is_named() -> None:
    readme = (REPO / "tests" / "fixtures" / "README.md").read_text(encoding="utf-8")
    excerpts = sorted((REPO / "tests" / "fixtures" / "corpus").glob("*.txt"))
    assert len(excerpts) == 3
    for excerpt in excerpts:
        assert excerpt.stat().st_size < 300_000, excerpt.name
        assert f"`{excerpt.name}`" in readme
    assert "PUBLIC DOMAIN" in readme


def test_a_task_woken_as_the_loop_stops_runs_with_the_loop_running(qloop: qasync.QEventLoop) -> None:
    """qasync's run_until_complete dispatches Qt events once more after the loop stopped; a run's task woken
    just then (its HTTP reply or worker thread arriving) must still see the loop running, or asyncio.sleep,
    to_thread and httpx fail with "no running event loop" — the adoption window test's intermittent failure."""
    seen: list[object] = []

    async def run(gate: asyncio.Future[None]) -> None:
        await gate
        seen.append(asyncio._get_running_loop())
        await asyncio.to_thread(lambda: None)  # what the pipeline's store and call hooks do
        seen.append(asyncio._get_running_loop())

    async def start() -> asyncio.Task[None]:
        loop = asyncio.get_running_loop()
        gate = loop.create_future()
        task = loop.create_task(run(gate))
        await asyncio.sleep(0)
        loop.call_soon(gate.set_result, None)  # the wake-up lands after run_until_complete's stop
        return task

    task = qloop.run_until_complete(start())
    assert seen[:1] == [qloop]  # stepped in the last dispatch, with the loop as the running loop
    qloop.run_until_complete(asyncio.wait_for(task, 5))
    assert seen == [qloop, qloop]
