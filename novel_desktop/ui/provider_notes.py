"""The provider part of the settings dialog: the line under the address and under the key, and whether the
key row is shown at all (a local model server, Ollama or llama.cpp, needs no key: the row is hidden and the
address note says where the models come from)."""

from __future__ import annotations

import os

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from novel_desktop.controllers.settings_controller import ENV_API_KEY, ENV_BASE_URL, get_preset, key_source
from novel_desktop.i18n import tr
from novel_desktop.ui.session_key import session_key_note


def with_note(field: QWidget, note: QLabel) -> QWidget:
    """A field with a small explanatory line under it, as one form cell."""
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    layout.addWidget(field)
    layout.addWidget(note)
    return box


def needs_key(provider: str) -> bool:
    """Whether the provider's key row is shown (False for a local model server)."""
    return get_preset(provider).requires_key


def base_url_note(provider: str) -> str:
    """The line under the address: an overriding environment variable, else the preset's address (and, for
    a local server, that no key is needed and the models are named per agent)."""
    preset = get_preset(provider)
    if os.environ.get(ENV_BASE_URL):
        return tr("注意：环境变量 {env} 已设置为 {url}，写作时以它为准。").format(
            env=ENV_BASE_URL, url=os.environ[ENV_BASE_URL]
        )
    note = tr("预设地址：{url}").format(url=preset.base_url)
    if preset.local:
        note += "\n" + tr(
            "本地模型不需要 API Key。先启动服务（{start}），再在“模型”页为每个角色填写已下载的模型名称。"
        ).format(start=preset.start_hint)
    return note


def key_note(provider: str) -> str:
    """The line under the key: where the key in use comes from, or how to get one ("" for a local server,
    whose keyring entry is never read)."""
    if not needs_key(provider):
        return ""
    source = key_source(provider)
    if source == "env":
        return tr(
            "当前使用环境变量 {env} 中的密钥（优先于系统钥匙串）。在此填写的密钥会存入钥匙串，"
            "但在取消该环境变量之前不会被使用。"
        ).format(env=ENV_API_KEY)
    if source == "keyring":
        return tr("密钥保存在系统钥匙串中，不会写入任何设置文件。清空后按“确定”即删除。")
    if source == "session":
        return session_key_note(ENV_API_KEY)
    return tr("尚未保存密钥。{help}；按“确定”后存入系统钥匙串，不会写入任何设置文件。").format(
        help=tr(get_preset(provider).key_help)
    )
