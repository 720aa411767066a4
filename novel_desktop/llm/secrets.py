"""The API key and base URL: from the environment, the OS keyring or (when there is no keyring) this run's
memory — never from a settings or novel file.

``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL`` are honoured first, so any Anthropic-compatible server (a
local one included) works without touching the settings. Nothing here logs a key.
"""

from __future__ import annotations

import logging
import os

from novel_desktop.llm.errors import LLMConfigError
from novel_desktop.llm.providers import get_preset
from novel_desktop.llm.settings import LLMSettings

log = logging.getLogger(__name__)

KEYRING_SERVICE = "novel-desktop"
ENV_API_KEY = "ANTHROPIC_API_KEY"
ENV_BASE_URL = "ANTHROPIC_BASE_URL"

_NO_KEYRING = (
    "系统钥匙串不可用（没有可用的 keyring 后端），无法保存或读取 API Key。"
    "可改用环境变量 ANTHROPIC_API_KEY，或安装系统钥匙串服务（如 GNOME Keyring、KWallet）后重试。"
)


class KeyringUnavailable(LLMConfigError):
    """The OS keyring cannot be used (no backend, locked, denied)."""

    default_message = _NO_KEYRING


#: Keys kept for this run only (the author chose it when the keyring could not be used); gone at exit.
_session_keys: dict[str, str] = {}


def keep_for_session(provider: str, key: str) -> None:
    """Keep ``key`` in memory for this run only (an empty key forgets it); nothing is written anywhere."""
    key = key.strip()
    if key:
        _session_keys[provider] = key
    else:
        _session_keys.pop(provider, None)


def get_api_key(provider: str) -> str | None:
    """The key for a provider: ``ANTHROPIC_API_KEY`` if set, else one kept for this run, else the keyring;
    None when there is none.

    A broken keyring counts as "no key" here (the caller then says the key is missing); ``set_api_key``
    is where a missing keyring is reported.
    """
    env = os.environ.get(ENV_API_KEY)
    if env:
        return env
    if provider in _session_keys:
        return _session_keys[provider]
    try:
        import keyring
        from keyring.errors import KeyringError

        try:
            value = keyring.get_password(KEYRING_SERVICE, provider)
        except KeyringError as exc:
            log.info("keyring unavailable while reading the key for %s: %s", provider, exc.__class__.__name__)
            return None
    except Exception as exc:  # a keyring backend may raise anything (D-Bus errors, ...)
        log.info("keyring failed while reading the key for %s: %s", provider, exc.__class__.__name__)
        return None
    return value or None


def key_source(provider: str) -> str | None:
    """Where the key comes from, for the settings dialog: "env", "session" (this run only), "keyring" or
    None."""
    if os.environ.get(ENV_API_KEY):
        return "env"
    if provider in _session_keys:
        return "session"
    return "keyring" if get_api_key(provider) else None


def set_api_key(provider: str, key: str) -> None:
    """Store the key in the OS keyring; raises ``KeyringUnavailable`` with a Chinese message on failure."""
    key = key.strip()
    if not key:
        raise LLMConfigError("API Key 不能为空。")
    try:
        import keyring

        keyring.set_password(KEYRING_SERVICE, provider, key)
    except Exception as exc:
        # The exception text of some backends echoes arguments; keep only the class name.
        raise KeyringUnavailable(provider_message=exc.__class__.__name__) from None
    log.info("API key for %s stored in the keyring", provider)


def delete_api_key(provider: str) -> None:
    """Remove the key from the keyring (and this run's memory); a key that is not there is not an error."""
    if _session_keys.pop(provider, None) is not None:
        return
    try:
        import keyring
        from keyring.errors import PasswordDeleteError

        try:
            keyring.delete_password(KEYRING_SERVICE, provider)
        except PasswordDeleteError:
            return
    except Exception as exc:
        raise KeyringUnavailable(provider_message=exc.__class__.__name__) from None


def resolve_base_url(settings: LLMSettings) -> str:
    """``ANTHROPIC_BASE_URL`` if set, else the settings' override, else the preset's URL."""
    env = os.environ.get(ENV_BASE_URL)
    if env:
        return env
    if settings.base_url:
        return settings.base_url
    return get_preset(settings.provider).base_url
