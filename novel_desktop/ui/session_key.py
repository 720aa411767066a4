"""No OS keyring (a bare Linux desktop, a locked wallet): the key can still be used, for this run only."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QWidget

from novel_desktop.i18n import tr
from novel_desktop.ui import alerts

ENV_API_KEY = "ANTHROPIC_API_KEY"


def offer_session_key(parent: QWidget, keep: Callable[[], None]) -> None:
    """Ask whether to keep the key in memory for this run only; ``keep()`` runs when the author agrees."""
    text = tr(
        "系统钥匙串不可用，密钥无法长期保存。\n\n可以只在本次运行中使用这个密钥（不写入任何文件，"
        "关闭程序后需要重新填写）；也可以设置环境变量 {env}，以后每次启动都会读取它。"
    ).format(env=ENV_API_KEY)
    alerts.confirm(
        parent,
        tr("钥匙串不可用"),
        text,
        lambda yes: keep() if yes else None,
        labels=(tr("仅本次使用"), tr("取消")),
    )


def session_key_note(env: str) -> str:
    """The settings dialog's note for a key kept for this run only."""
    return tr(
        "系统钥匙串不可用：密钥只保存在本次运行的内存中，关闭程序后需要重新填写；也可以设置环境变量 {env}。"
    ).format(env=env)
