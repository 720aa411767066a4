"""The settings dialog: what OK saves (and where the key goes), what Cancel and bad input do not save, and
测试连接 against the fake Messages API server."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import keyring
import pytest
import qasync
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialog, QDialogButtonBox, QLineEdit
from pytestqt.qtbot import QtBot

from novel_desktop.config import load_app_settings
from novel_desktop.controllers.jobs import Job
from novel_desktop.llm import secrets
from novel_desktop.llm.providers import PRESETS
from novel_desktop.llm.roles import AgentRole
from novel_desktop.llm.secrets import KEYRING_SERVICE
from novel_desktop.llm.settings import LLMSettings, load_settings, save_settings
from novel_desktop.paths import user_config_dir
from novel_desktop.ui.settings_dialog import SettingsDialog
from tests.fakes.alerts import RecordingAlerts
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.fakes.memory_keyring import MemoryKeyring

# Their jobs run work in threads: Qt objects left in cycles are collected in the GUI thread. No test touches the
# real OS keyring.
pytestmark = pytest.mark.usefixtures("gui_thread_gc", "memory_keyring")

KEY = "sk-ant-secret-0123456789abcdef"


@pytest.fixture
def open_dialog(qtbot: QtBot) -> Callable[[], SettingsDialog]:
    def make() -> SettingsDialog:
        dialog = SettingsDialog()
        qtbot.addWidget(dialog)
        dialog.show()
        return dialog

    return make


def _press(qtbot: QtBot, dialog: SettingsDialog, which: QDialogButtonBox.StandardButton) -> None:
    qtbot.mouseClick(dialog.buttons.button(which), Qt.MouseButton.LeftButton)


def _config_files() -> dict[Path, str]:
    root = user_config_dir()
    if not root.exists():
        return {}
    return {p: p.read_text(encoding="utf-8", errors="replace") for p in root.rglob("*") if p.is_file()}


def _price_row(dialog: SettingsDialog, model: str) -> int:
    for row in range(dialog.prices_table.rowCount()):
        item = dialog.prices_table.item(row, 0)
        if item is not None and item.text() == model:
            return row
    raise AssertionError(f"no price row for {model}")


def _set_cell(dialog: SettingsDialog, row: int, column: int, text: str) -> None:
    item = dialog.prices_table.item(row, column)
    assert item is not None
    item.setText(text)


# ---------------------------------------------------------------------------------------------- saving
def test_ok_saves_models_prices_and_language_and_the_key_only_to_the_keyring(
    qtbot: QtBot, open_dialog: Callable[[], SettingsDialog], memory_keyring: MemoryKeyring
) -> None:
    dialog = open_dialog()
    dialog.set_model(AgentRole.chapter_writer, "claude-haiku-4-5")
    _set_cell(dialog, _price_row(dialog, "claude-haiku-4-5"), 2, "4.5")
    row = dialog._add_price_row("my-local-model", None)
    _set_cell(dialog, row, 1, "0.5")
    dialog.language_combo.setCurrentIndex(dialog.language_combo.findData("en"))
    dialog.key_edit.clear()
    qtbot.keyClicks(dialog.key_edit, KEY)

    _press(qtbot, dialog, QDialogButtonBox.StandardButton.Ok)

    assert dialog.result() == QDialog.DialogCode.Accepted
    saved, problem = load_settings()
    assert problem is None
    assert saved.model_for(AgentRole.chapter_writer) == "claude-haiku-4-5"
    assert saved.model_for(AgentRole.reviser) == "claude-opus-4-6"
    assert saved.prices["claude-haiku-4-5"].output == 4.5
    assert saved.prices["my-local-model"].input == 0.5
    assert saved.prices["my-local-model"].output == 0
    assert load_app_settings().language == "en"
    assert memory_keyring.store[(KEYRING_SERVICE, "anthropic")] == KEY
    files = _config_files()
    assert files, "OK wrote the settings files"
    for path, content in files.items():
        assert KEY not in content, f"the API key leaked into {path}"


def test_the_key_is_masked_until_the_author_asks_to_see_it(
    qtbot: QtBot, open_dialog: Callable[[], SettingsDialog], memory_keyring: MemoryKeyring
) -> None:
    memory_keyring.store[(KEYRING_SERVICE, "anthropic")] = KEY
    dialog = open_dialog()
    assert dialog.key_edit.echoMode() == QLineEdit.EchoMode.Password
    assert dialog.key_edit.displayText() != KEY
    assert "钥匙串" in dialog.key_note.text()
    qtbot.mouseClick(dialog.show_key_button, Qt.MouseButton.LeftButton)
    assert dialog.key_edit.displayText() == KEY
    qtbot.mouseClick(dialog.show_key_button, Qt.MouseButton.LeftButton)
    assert dialog.key_edit.echoMode() == QLineEdit.EchoMode.Password


def test_a_key_from_the_environment_is_named_and_not_shown(
    open_dialog: Callable[[], SettingsDialog], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    dialog = open_dialog()
    assert "ANTHROPIC_API_KEY" in dialog.key_note.text()
    assert dialog.key_edit.text() == ""


def test_clearing_a_saved_key_deletes_it_from_the_keyring(
    qtbot: QtBot, open_dialog: Callable[[], SettingsDialog], memory_keyring: MemoryKeyring
) -> None:
    memory_keyring.store[(KEYRING_SERVICE, "anthropic")] = KEY
    dialog = open_dialog()
    dialog.key_edit.clear()
    _press(qtbot, dialog, QDialogButtonBox.StandardButton.Ok)
    assert (KEYRING_SERVICE, "anthropic") not in memory_keyring.store


def test_cancel_changes_nothing(
    qtbot: QtBot, open_dialog: Callable[[], SettingsDialog], memory_keyring: MemoryKeyring
) -> None:
    dialog = open_dialog()
    dialog.set_model(AgentRole.chapter_writer, "something-else")
    dialog.language_combo.setCurrentIndex(dialog.language_combo.findData("en"))
    qtbot.keyClicks(dialog.key_edit, KEY)
    _press(qtbot, dialog, QDialogButtonBox.StandardButton.Cancel)
    assert dialog.result() == QDialog.DialogCode.Rejected
    assert _config_files() == {}
    assert memory_keyring.store == {}


def test_switching_the_provider_brings_its_address_models_and_key(
    open_dialog: Callable[[], SettingsDialog], memory_keyring: MemoryKeyring
) -> None:
    memory_keyring.store[(KEYRING_SERVICE, "deepseek")] = "sk-deepseek"
    dialog = open_dialog()
    dialog.provider_combo.setCurrentIndex(dialog.provider_combo.findData("deepseek"))
    assert dialog.base_url_edit.text() == PRESETS["deepseek"].base_url
    assert dialog.models()[AgentRole.chapter_writer] == "deepseek-chat"
    assert dialog.models()[AgentRole.reviser] == "deepseek-reasoner"
    assert dialog.key_edit.text() == "sk-deepseek"
    assert "deepseek-chat" in dialog.test_model_label.text()


def test_a_typed_address_survives_a_provider_switch_and_is_saved(
    qtbot: QtBot, open_dialog: Callable[[], SettingsDialog]
) -> None:
    dialog = open_dialog()
    dialog.base_url_edit.setText("http://127.0.0.1:9000/anthropic")
    dialog.provider_combo.setCurrentIndex(dialog.provider_combo.findData("custom"))
    assert dialog.base_url_edit.text() == "http://127.0.0.1:9000/anthropic"
    _press(qtbot, dialog, QDialogButtonBox.StandardButton.Ok)
    saved = load_settings().settings
    assert saved.provider == "custom"
    assert saved.base_url == "http://127.0.0.1:9000/anthropic"


@pytest.mark.parametrize(
    ("change", "tab", "words"),
    [
        (lambda d: d.set_model(AgentRole.summarizer, "  "), 1, ["摘要", "不能为空"]),
        (lambda d: _set_cell(d, _price_row(d, "glm-4.6"), 1, "-1"), 2, ["glm-4.6", "输入", "负数"]),
        (lambda d: _set_cell(d, _price_row(d, "glm-4.6"), 3, "abc"), 2, ["glm-4.6", "缓存写入", "不是数字"]),
        (lambda d: d.base_url_edit.setText("api.anthropic.com"), 0, ["https://", "格式不对"]),
        (lambda d: d.base_url_edit.setText("https://"), 0, ["缺少主机名"]),
    ],
    ids=["empty-model", "negative-price", "price-not-a-number", "url-without-scheme", "url-without-host"],
)
def test_bad_input_is_explained_and_nothing_is_saved(
    qtbot: QtBot,
    open_dialog: Callable[[], SettingsDialog],
    memory_keyring: MemoryKeyring,
    change: Callable[[SettingsDialog], None],
    tab: int,
    words: list[str],
) -> None:
    dialog = open_dialog()
    qtbot.keyClicks(dialog.key_edit, KEY)
    change(dialog)
    _press(qtbot, dialog, QDialogButtonBox.StandardButton.Ok)
    assert dialog.isVisible(), "the dialog stays open so the author can fix it"
    assert dialog.error_label.isVisible()
    for word in words:
        assert word in dialog.error_label.text()
    assert dialog.tabs.currentIndex() == tab
    assert _config_files() == {}
    assert memory_keyring.store == {}


@pytest.fixture
def no_keyring(memory_keyring: MemoryKeyring) -> Iterator[None]:
    from keyring.backends.fail import Keyring as FailKeyring

    keyring.set_keyring(FailKeyring())  # the autouse fixture restores the previous backend
    yield
    secrets._session_keys.clear()  # a key kept "for this run" must not outlive the test


@pytest.mark.usefixtures("no_keyring")
def test_no_keyring_says_so_and_cancelling_the_offer_saves_nothing(
    qtbot: QtBot, open_dialog: Callable[[], SettingsDialog], alerts: RecordingAlerts
) -> None:
    alerts.answer = False
    dialog = open_dialog()
    qtbot.keyClicks(dialog.key_edit, KEY)
    _press(qtbot, dialog, QDialogButtonBox.StandardButton.Ok)
    assert dialog.isVisible()
    assert "钥匙串" in dialog.error_label.text()
    assert "ANTHROPIC_API_KEY" in dialog.error_label.text()
    assert KEY not in dialog.error_label.text()
    assert alerts.labels == [("仅本次使用", "取消")]
    assert _config_files() == {}
    assert secrets.get_api_key("anthropic") is None


@pytest.mark.usefixtures("no_keyring")
def test_no_keyring_the_key_can_be_kept_for_this_run_only(
    qtbot: QtBot, open_dialog: Callable[[], SettingsDialog], alerts: RecordingAlerts
) -> None:
    dialog = open_dialog()
    qtbot.keyClicks(dialog.key_edit, KEY)
    _press(qtbot, dialog, QDialogButtonBox.StandardButton.Ok)
    assert "本次运行" in alerts.texts[0] and "ANTHROPIC_API_KEY" in alerts.texts[0]
    assert not dialog.isVisible(), "仅本次使用 saves the rest and closes the dialog"
    assert secrets.key_source("anthropic") == "session"
    assert secrets.get_api_key("anthropic") == KEY  # the pipeline's client finds it
    files = _config_files()
    assert files and not any(KEY in text for text in files.values())  # never written to a file
    again = open_dialog()
    assert again.key_edit.text() == KEY
    assert "本次运行的内存" in again.key_note.text()


def test_edit_opens_without_a_nested_loop_and_says_whether_the_author_saved(qtbot: QtBot) -> None:
    answers: list[bool] = []
    dialog = SettingsDialog.edit(None, answers.append)
    assert dialog.isVisible() and dialog.isModal()  # open(), not exec(): this line runs while it shows
    dialog.reject()
    dialog = SettingsDialog.edit(None, answers.append)
    _press(qtbot, dialog, QDialogButtonBox.StandardButton.Ok)
    assert answers == [False, True]


# ---------------------------------------------------------------------------------------------- 测试连接
@pytest.fixture
def fast_retries(settings: LLMSettings) -> None:
    """The shared settings with millisecond backoff, saved, so the 529 test retries quickly."""
    save_settings(settings)


@pytest.fixture
def server(server: FakeAnthropicServer) -> FakeAnthropicServer:
    """The shared bare fake server, accepting only the key the author types (any other gets a 401)."""
    server.api_key = KEY
    return server


def _run_test(qloop: qasync.QEventLoop, qtbot: QtBot, dialog: SettingsDialog) -> str:
    async def click_and_wait() -> None:  # clicked while the loop runs, as in the app
        qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
        assert dialog.connection_job is not None
        await dialog.connection_job.wait()

    qloop.run_until_complete(click_and_wait())
    assert dialog.result_label.isVisible()
    return dialog.result_label.text()


def _point_at(dialog: SettingsDialog, url: str, key: str = KEY) -> None:
    dialog.provider_combo.setCurrentIndex(dialog.provider_combo.findData("custom"))
    dialog.base_url_edit.setText(url)
    dialog.key_edit.setText(key)


@pytest.mark.usefixtures("fast_retries")
def test_connection_success_names_the_model_and_the_time(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    open_dialog: Callable[[], SettingsDialog],
    server: FakeAnthropicServer,
    memory_keyring: MemoryKeyring,
) -> None:
    dialog = open_dialog()
    _point_at(dialog, server.base_url)
    dialog.set_model(AgentRole.chapter_writer, "claude-sonnet-4-6")
    text = _run_test(qloop, qtbot, dialog)
    assert "连接成功" in text
    assert "claude-sonnet-4-6" in text
    assert "毫秒" in text
    request = server.requests[-1]
    assert request.body["model"] == "claude-sonnet-4-6"
    assert request.body["max_tokens"] <= 16
    assert dialog.test_button.isEnabled()
    # Testing is not saving: the key stays out of the keyring until OK.
    assert memory_keyring.store == {}


@pytest.mark.usefixtures("fast_retries")
def test_connection_with_a_wrong_key_says_the_key_was_refused(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    open_dialog: Callable[[], SettingsDialog],
    server: FakeAnthropicServer,
) -> None:
    dialog = open_dialog()
    _point_at(dialog, server.base_url, key="sk-wrong")
    text = _run_test(qloop, qtbot, dialog)
    assert "API Key 被拒绝" in text
    assert "401" in text
    assert "sk-wrong" not in text


@pytest.mark.usefixtures("fast_retries")
def test_connection_when_overloaded_says_529_after_the_retries(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    open_dialog: Callable[[], SettingsDialog],
    server: FakeAnthropicServer,
) -> None:
    server.script("*", Reply.overloaded(), Reply.overloaded(), Reply.overloaded())
    dialog = open_dialog()
    _point_at(dialog, server.base_url)
    text = _run_test(qloop, qtbot, dialog)
    assert "529" in text
    assert "繁忙" in text
    assert "共尝试 3 次" in text
    assert len(server.requests) == 3


@pytest.mark.usefixtures("fast_retries")
def test_connection_to_a_closed_port_says_nothing_listens_there(
    qloop: qasync.QEventLoop, qtbot: QtBot, open_dialog: Callable[[], SettingsDialog]
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dialog = open_dialog()
    _point_at(dialog, f"http://127.0.0.1:{port}")
    text = _run_test(qloop, qtbot, dialog)
    assert f"127.0.0.1:{port}" in text
    assert "拒绝连接" in text


@pytest.mark.usefixtures("fast_retries")
def test_connection_to_an_address_that_is_not_a_messages_api_says_so(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    open_dialog: Callable[[], SettingsDialog],
    server: FakeAnthropicServer,
) -> None:
    dialog = open_dialog()
    _point_at(dialog, server.base_url + "/openai")
    text = _run_test(qloop, qtbot, dialog)
    assert "不是 Anthropic 兼容接口" in text


@pytest.mark.usefixtures("fast_retries")
def test_connection_with_an_unknown_model_names_the_model(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    open_dialog: Callable[[], SettingsDialog],
    server: FakeAnthropicServer,
) -> None:
    server.script("*", Reply.http_error(404, message="model: claude-nonexistent"))
    dialog = open_dialog()
    _point_at(dialog, server.base_url)
    dialog.set_model(AgentRole.chapter_writer, "claude-nonexistent")
    text = _run_test(qloop, qtbot, dialog)
    assert "模型“claude-nonexistent”不可用" in text


def test_connection_without_a_key_says_where_to_put_one(
    qloop: qasync.QEventLoop, qtbot: QtBot, open_dialog: Callable[[], SettingsDialog]
) -> None:
    dialog = open_dialog()
    dialog.key_edit.clear()
    text = _run_test(qloop, qtbot, dialog)
    assert "还没有" in text
    assert "API Key" in text


@pytest.mark.usefixtures("fast_retries")
def test_the_dialog_stays_responsive_and_shows_it_is_busy_while_testing(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    open_dialog: Callable[[], SettingsDialog],
    server: FakeAnthropicServer,
) -> None:
    server.script("*", Reply("好" * 40, chunk_size=1, delay=0.05))
    dialog = open_dialog()
    _point_at(dialog, server.base_url)

    # All of it inside the running loop: a job's task must never be stepped while the loop is stopped.
    async def main() -> None:
        qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
        job = dialog.connection_job
        assert job is not None
        while not server.requests:
            await asyncio.sleep(0.01)
        assert not dialog.test_button.isEnabled()
        assert "正在连接" in dialog.result_label.text()
        # The dialog still handles input while the call is in flight.
        dialog.language_combo.setCurrentIndex(1)
        assert dialog.language_combo.currentData() == "en"
        await job.wait()

    qloop.run_until_complete(main())
    assert dialog.test_button.isEnabled()
    assert "连接成功" in dialog.result_label.text()


def test_closing_the_dialog_cancels_a_running_test(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    open_dialog: Callable[[], SettingsDialog],
    server: FakeAnthropicServer,
) -> None:
    server.script("*", Reply("好" * 200, chunk_size=1, delay=0.05))
    dialog = open_dialog()
    _point_at(dialog, server.base_url)

    async def main() -> Job:
        qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
        job = dialog.connection_job
        assert job is not None
        while not server.requests:
            await asyncio.sleep(0.01)
        dialog.reject()
        await job.wait()
        return job

    # Closing the only window would otherwise quit the app's loop under the test.
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    try:
        job = qloop.run_until_complete(main())
    finally:
        app.setQuitOnLastWindowClosed(True)
    assert job.was_cancelled
    assert json.dumps(_config_files(), default=str).find(KEY) == -1
