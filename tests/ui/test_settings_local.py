"""The settings dialog with a local model (issue 19 point 3): choosing Ollama or llama.cpp hides the key
field, fills the local address and model names the author can change per agent, saves with no key anywhere,
and 测试连接 tells a server that is not running from a model that was not pulled (the fake server in its
local mode: no key checked, only the pulled models known)."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator

import pytest
import qasync
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox
from pytestqt.qtbot import QtBot

from novel_desktop.llm.providers import PRESETS
from novel_desktop.llm.roles import AgentRole
from novel_desktop.llm.settings import (
    LOCAL_READ_TIMEOUT_S,
    LOCAL_STAGE_TIMEOUT_S,
    LLMSettings,
    load_settings,
    save_settings,
)
from novel_desktop.ui.settings_dialog import SettingsDialog
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.memory_keyring import MemoryKeyring
from tests.ui.shots import save_shot

pytestmark = pytest.mark.usefixtures("gui_thread_gc", "memory_keyring")


@pytest.fixture
def open_dialog(
    qtbot: QtBot, settings: LLMSettings, monkeypatch: pytest.MonkeyPatch
) -> Callable[[], SettingsDialog]:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    save_settings(settings)  # millisecond backoff for the connection tests

    def make() -> SettingsDialog:
        dialog = SettingsDialog()
        qtbot.addWidget(dialog)
        dialog.show()
        return dialog

    return make


@pytest.fixture
def ollama() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer(require_key=False, models={"qwen3:8b", "qwen3:14b"}) as server:
        yield server


def _choose(dialog: SettingsDialog, provider: str, url: str | None = None) -> None:
    dialog.provider_combo.setCurrentIndex(dialog.provider_combo.findData(provider))
    if url is not None:
        dialog.base_url_edit.setText(url)


def _run_test(qloop: qasync.QEventLoop, qtbot: QtBot, dialog: SettingsDialog) -> str:
    async def click_and_wait() -> None:
        qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
        assert dialog.connection_job is not None
        await dialog.connection_job.wait()

    qloop.run_until_complete(click_and_wait())
    return dialog.result_label.text()


@pytest.mark.parametrize("provider", ["ollama", "llamacpp"])
def test_a_local_preset_hides_the_key_and_fills_address_and_models(
    open_dialog: Callable[[], SettingsDialog], provider: str
) -> None:
    dialog = open_dialog()
    assert dialog.key_field.isVisible()
    _choose(dialog, provider)
    save_shot(dialog, f"settings_{provider}")
    assert not dialog.key_field.isVisible() and not dialog.key_edit.isVisible()
    assert dialog.base_url_edit.text() == PRESETS[provider].base_url
    assert "不需要 API Key" in dialog.base_url_note.text()
    assert dialog.models()[AgentRole.chapter_writer] == PRESETS[provider].cheap_model
    # Back to a provider with keys: the field comes back.
    _choose(dialog, "deepseek")
    assert dialog.key_field.isVisible()


def test_per_agent_local_models_are_saved_with_no_key_anywhere(
    qtbot: QtBot, open_dialog: Callable[[], SettingsDialog], memory_keyring: MemoryKeyring
) -> None:
    dialog = open_dialog()
    _choose(dialog, "ollama")
    dialog.set_model(AgentRole.chapter_writer, "qwen3:14b")
    dialog.set_model(AgentRole.quality_judge, "deepseek-r1:14b")
    qtbot.mouseClick(dialog.buttons.button(QDialogButtonBox.StandardButton.Ok), Qt.MouseButton.LeftButton)
    assert dialog.result() == QDialog.DialogCode.Accepted
    saved, problem = load_settings()
    assert problem is None
    assert saved.provider == "ollama"
    assert saved.model_for(AgentRole.chapter_writer) == "qwen3:14b"
    assert saved.model_for(AgentRole.quality_judge) == "deepseek-r1:14b"
    assert saved.model_for(AgentRole.summarizer) == "qwen3:8b"
    assert memory_keyring.store == {}


def test_the_connection_test_names_a_model_that_was_not_pulled_then_succeeds(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    open_dialog: Callable[[], SettingsDialog],
    ollama: FakeAnthropicServer,
) -> None:
    dialog = open_dialog()
    _choose(dialog, "ollama", ollama.base_url)
    dialog.set_model(AgentRole.chapter_writer, "qwen3:32b")
    text = _run_test(qloop, qtbot, dialog)
    save_shot(dialog, "settings_ollama_not_pulled")
    assert text.startswith("✗ 模型未下载：ollama pull qwen3:32b")
    dialog.set_model(AgentRole.chapter_writer, "qwen3:14b")
    assert "连接成功" in _run_test(qloop, qtbot, dialog)
    assert [r.body["model"] for r in ollama.requests] == ["qwen3:32b", "qwen3:14b"]


def test_the_connection_test_says_the_local_server_is_not_running(
    qloop: qasync.QEventLoop, qtbot: QtBot, open_dialog: Callable[[], SettingsDialog]
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dialog = open_dialog()
    _choose(dialog, "ollama", f"http://127.0.0.1:{port}")
    text = _run_test(qloop, qtbot, dialog)
    assert text.startswith(f"✗ 本地模型服务未运行（http://127.0.0.1:{port}）")
    assert "ollama serve" in text


def test_a_new_local_preset_gets_the_long_timeouts_a_local_model_needs(
    qtbot: QtBot, open_dialog: Callable[[], SettingsDialog]
) -> None:
    dialog = open_dialog()
    _choose(dialog, "llamacpp")
    dialog.set_model(AgentRole.chapter_writer, "my-own-gguf")
    assert dialog.missing_price_label.isHidden()  # a local model costs nothing
    qtbot.mouseClick(dialog.buttons.button(QDialogButtonBox.StandardButton.Ok), Qt.MouseButton.LeftButton)
    saved, _ = load_settings()
    assert saved.provider == "llamacpp"
    assert saved.read_timeout_s == LOCAL_READ_TIMEOUT_S
    assert saved.timeout_for(AgentRole.chapter_writer) == LOCAL_STAGE_TIMEOUT_S
