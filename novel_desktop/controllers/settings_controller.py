"""What the settings dialog needs besides widgets: input checks and "测试连接".

``check_connection`` (the "测试连接" button; not named ``test_*``, which pytest would collect) makes one
tiny real call (``max_tokens`` 16) through :class:`LLMClient` to the provider, base URL, key and model the
author is looking at, and turns whatever happens into one Chinese sentence that names the problem and the
fix. A network failure is diagnosed further (DNS, refused port, timeout) because "无法连接" alone does not
tell the author whether the address, the network or a proxy is at fault.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import socket
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from novel_desktop.config import AppSettings, load_app_settings, save_app_settings
from novel_desktop.i18n import tr
from novel_desktop.llm.errors import (
    LLMAuthError,
    LLMBadRequest,
    LLMConfigError,
    LLMConnectionError,
    LLMEmptyResponse,
    LLMError,
    LLMOverloaded,
    LLMQuotaError,
    LLMServerError,
    LLMTimeout,
)
from novel_desktop.llm.providers import (
    LOCAL_PLACEHOLDER_KEY,
    PRESETS,
    ModelPrice,
    ProviderPreset,
    get_preset,
)
from novel_desktop.llm.roles import AgentRole
from novel_desktop.llm.secrets import (
    ENV_API_KEY,
    ENV_BASE_URL,
    KeyringUnavailable,
    delete_api_key,
    get_api_key,
    keep_for_session,
    key_source,
    set_api_key,
)
from novel_desktop.llm.settings import (
    LLMSettings,
    default_models,
    load_settings,
    local_timeouts,
    save_settings,
)
from novel_desktop.session import probe_connection

#: What the settings dialog and the window use of the settings layer, through this controller.
__all__ = [
    "ENV_API_KEY",
    "ENV_BASE_URL",
    "PRESETS",
    "AgentRole",
    "AppSettings",
    "ConnectionResult",
    "KeyringUnavailable",
    "LLMError",
    "LLMSettings",
    "ModelPrice",
    "base_url_problem",
    "check_connection",
    "default_models",
    "get_preset",
    "key_source",
    "load_app_settings",
    "load_settings",
    "local_timeouts",
    "parse_price_rows",
    "save_app_settings",
    "save_keys",
    "save_settings_and_language",
    "stored_key",
]

log = logging.getLogger(__name__)


def _t(template: str, **values: object) -> str:
    """``template`` in the UI language with ``values`` filled in (the catalogue holds the templates)."""
    return tr(template).format(**values)


#: The role the test call is made for: a cheap one, and any scripted fake server answers it by default.
TEST_ROLE = AgentRole.summarizer
TEST_MAX_TOKENS = 16
#: The whole test (retries included) must not keep the author waiting longer than this.
TEST_TIMEOUT_S = 45.0
#: A local server loads the model on its first request: give it longer.
LOCAL_TEST_TIMEOUT_S = 180.0
#: Seconds for each step of the network diagnosis (name lookup, TCP connect).
DIAGNOSE_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class ConnectionResult:
    """The outcome of a connection test.

    ``kind`` is a stable code for tests and callers ("ok", "no_key", "bad_url", "auth", "quota",
    "rate_limit", "overloaded", "unknown_model", "not_anthropic", "dns", "refused", "timeout", "network",
    "server", "bad_request", "empty", "error"); ``message`` is what the author reads.
    """

    ok: bool
    kind: str
    message: str
    model: str = ""
    latency_ms: int | None = None
    provider_message: str | None = None


def base_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a Messages API base URL (Chinese), or None when it looks right."""
    text = url.strip()
    if not text:
        return _t("服务地址（Base URL）不能为空。")
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https"):
        return _t(
            "服务地址“{url}”格式不对：应以 https:// 或 http:// 开头，例如 https://api.anthropic.com。",
            url=text,
        )
    if not parts.hostname:
        return _t("服务地址“{url}”缺少主机名，例如 https://api.anthropic.com。", url=text)
    try:
        _ = parts.port
    except ValueError:
        return _t("服务地址“{url}”中的端口号无效。", url=text)
    if any(ch.isspace() for ch in text):
        return _t("服务地址“{url}”中不能有空格。", url=text)
    if parts.query or parts.fragment:
        return _t("服务地址“{url}”不应带 ? 或 # 后的部分，只填到路径为止。", url=text)
    return None


def _test_settings(base: LLMSettings, provider: str, model: str) -> LLMSettings:
    # A copy so the test never changes what the pipeline uses; only the tested role's model matters.
    data: dict[str, Any] = base.model_dump()
    data["provider"] = provider
    data["models"] = {**data["models"], TEST_ROLE.value: model}
    if get_preset(provider).local:
        data = local_timeouts(data)
    # The author is waiting: a few quick retries tell a passing hiccup from a real fault.
    retry = data["retry"]
    retry["max_attempts"] = min(int(retry["max_attempts"]), 3)
    retry["max_backoff_s"] = min(float(retry["max_backoff_s"]), 4.0)
    retry["base_backoff_s"] = min(float(retry["base_backoff_s"]), retry["max_backoff_s"])
    return LLMSettings.model_validate(data)


async def check_connection(
    settings: LLMSettings,
    *,
    provider: str,
    base_url: str,
    api_key: str | None,
    model: str,
    timeout: float = TEST_TIMEOUT_S,
) -> ConnectionResult:
    """Call ``model`` at ``base_url`` once with a 16-token limit and explain the outcome.

    ``api_key`` is what the author typed; when it is empty the stored key (environment or keyring) is
    used. Never raises except ``asyncio.CancelledError``; the key never appears in the result.
    """
    name = tr(get_preset(provider).display_name)
    model = model.strip()
    if not model:
        return ConnectionResult(
            False, "bad_request", _t("模型名称为空：请先在“模型”页为各角色填写模型名称。")
        )
    problem = base_url_problem(base_url)
    if problem:
        return ConnectionResult(False, "bad_url", problem, model)
    preset = get_preset(provider)
    if preset.local and timeout == TEST_TIMEOUT_S:
        timeout = LOCAL_TEST_TIMEOUT_S
    # A local server (Ollama, llama.cpp) checks no key: never the keyring's or the environment's for it.
    key = (api_key or "").strip() or (get_api_key(provider) if preset.requires_key else LOCAL_PLACEHOLDER_KEY)
    if not key:
        return ConnectionResult(
            False,
            "no_key",
            _t(
                "还没有 {name} 的 API Key：请在上方“API Key”中填写（{key_help}）"
                "，或设置环境变量 ANTHROPIC_API_KEY。",
                name=name,
                key_help=tr(get_preset(provider).key_help),
            ),
            model,
        )
    url = base_url.strip().rstrip("/")
    # The SDK's first import takes over a second; it is not the provider's latency, and must not block the UI.
    await asyncio.to_thread(importlib.import_module, "anthropic")
    started = time.monotonic()
    try:
        response = await probe_connection(
            _test_settings(settings, provider, model),
            TEST_ROLE,
            api_key=key,
            base_url=url,
            max_tokens=TEST_MAX_TOKENS,
            timeout=timeout,
        )
    except LLMError as error:
        explained = await _explain(error, name=name, url=url, model=model)
        return _explain_local(explained, preset, url) if preset.local else explained
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        # The SDK could not read the reply as a Messages API response (an HTML page, another API's JSON).
        log.info("connection test: unreadable reply from %s: %s", url, exc.__class__.__name__)
        return ConnectionResult(
            False,
            "not_anthropic",
            _t(
                "{url} 有响应，但返回的不是 Anthropic Messages API 格式："
                "这个地址可能不是 Anthropic 兼容接口（例如填成了 OpenAI 兼容地址）"
                "。请核对服务商文档中的 Anthropic 兼容 Base URL。",
                url=url,
            ),
            model,
        )
    latency = int((time.monotonic() - started) * 1000)
    return ConnectionResult(
        True,
        "ok",
        _t(
            "连接成功：{name} 的模型 {model} 已回复，用时 {latency} 毫秒。",
            name=name,
            model=response.model,
            latency=latency,
        ),
        response.model,
        latency,
    )


def _explain_local(result: ConnectionResult, preset: ProviderPreset, url: str) -> ConnectionResult:
    """A local server's failure in its own words: "not running" (nothing listens at the address) and "model
    not pulled" (the server runs but has no such model) are what goes wrong there, not keys or networks.

    Ollama's Anthropic-compatible endpoint answers a model it does not have with 404 ``not_found_error``
    "model '<name>' not found"; llama.cpp's server with a 404/400 that names the model."""
    said = (result.provider_message or "").lower()
    if result.kind == "refused":
        return ConnectionResult(
            False,
            "not_running",
            _t(
                "本地模型服务未运行（{url}）：请先启动它（{start}），或核对服务地址与端口。",
                url=url,
                start=preset.start_hint,
            ),
            result.model,
        )
    if result.kind in ("unknown_model", "not_anthropic", "bad_request") and "model" in said:
        return ConnectionResult(
            False,
            "model_not_pulled",
            _t(
                "模型未下载：{hint}（本地服务 {url} 在运行，但没有模型“{model}”；"
                "下载后再测试，或在“模型”页改成已有的模型名称）",
                hint=preset.pull_hint.format(model=result.model),
                url=url,
                model=result.model,
            ),
            result.model,
            provider_message=result.provider_message,
        )
    if result.kind == "not_anthropic":
        return ConnectionResult(
            False,
            "not_anthropic",
            _t(
                "本地服务在 {url} 运行，但没有 Anthropic 兼容接口（/v1/messages）："
                "Ollama 需要 0.14 或更新的版本，llama.cpp 需要较新的 llama-server。",
                url=url,
            ),
            result.model,
            provider_message=result.provider_message,
        )
    return result


def _mentions_model(text: str) -> bool:
    lowered = text.lower()
    return "model" in lowered or "模型" in lowered


async def _explain(error: LLMError, *, name: str, url: str, model: str) -> ConnectionResult:
    said = error.provider_message
    quoted = _t("（服务商返回：{said}）", said=said) if said else ""
    status = error.status_code

    def result(kind: str, message: str) -> ConnectionResult:
        return ConnectionResult(False, kind, message, model, provider_message=said)

    if isinstance(error, LLMAuthError):
        return result(
            "auth",
            _t(
                "API Key 被拒绝（{status}）：密钥错误、已过期、已被删除，"
                "或不是 {name} 的密钥。请到服务商控制台复制正确的密钥后重试。{quoted}",
                status=status or 401,
                name=name,
                quoted=quoted,
            ),
        )
    if isinstance(error, LLMQuotaError):
        if status == 402 or "额度" in error.message or "余额" in error.message:
            return result(
                "quota",
                _t(
                    "账户余额或额度不足（{status}）：请到 {name} 控制台充值或提高额度后重试。{quoted}",
                    status=status,
                    name=name,
                    quoted=quoted,
                ),
            )
        return result(
            "rate_limit",
            _t(
                "请求过于频繁（429），共尝试 {attempts} 次仍被限流："
                "请稍等一分钟再测，或到服务商控制台查看速率限制与余额。{quoted}",
                attempts=error.attempts,
                quoted=quoted,
            ),
        )
    if isinstance(error, LLMOverloaded):
        return result(
            "overloaded",
            _t(
                "{name} 的服务繁忙（529 过载），共尝试 {attempts} 次仍失败："
                "密钥和地址没有问题，请稍后再试，或换用其他模型。{quoted}",
                name=name,
                attempts=error.attempts,
                quoted=quoted,
            ),
        )
    if isinstance(error, LLMBadRequest):
        if status in (400, 404) and said and _mentions_model(said):
            return result(
                "unknown_model",
                _t(
                    "模型“{model}”不可用（{status}）：{name} 不认识这个模型名称，"
                    "或你的账户无权使用它。请在“模型”页改成服务商文档中的模型名称。{quoted}",
                    model=model,
                    status=status,
                    name=name,
                    quoted=quoted,
                ),
            )
        if status in (404, 405):
            return result(
                "not_anthropic",
                _t(
                    "服务地址不对（{status}）：{url}/v1/messages 不存在，这个地址不是 Anthropic 兼容接口。"
                    "请核对 Base URL（例如 {name} 的预设地址）。{quoted}",
                    status=status,
                    url=url,
                    name=name,
                    quoted=quoted,
                ),
            )
        return result(
            "bad_request",
            _t(
                "请求被拒绝（{status}）：请检查模型名称“{model}”与服务地址。{quoted}",
                status=status,
                model=model,
                quoted=quoted,
            ),
        )
    if isinstance(error, LLMServerError):
        return result(
            "server",
            _t(
                "{name} 的服务内部出错（{status}），共尝试 {attempts} 次仍失败：请稍后再试。{quoted}",
                name=name,
                status=status,
                attempts=error.attempts,
                quoted=quoted,
            ),
        )
    if isinstance(error, LLMTimeout):
        return result(
            "timeout",
            _t("{url} 在规定时间内没有完成回复：网络太慢或服务没有响应。请检查网络与代理后重试。", url=url),
        )
    if isinstance(error, LLMEmptyResponse):
        # The key, address and model all work; only the content was empty, which a test does not need.
        return ConnectionResult(
            True,
            "empty",
            _t(
                "连接成功，但模型“{model}”返回了空内容：密钥和地址可用，若写作时仍为空请换用其他模型。",
                model=model,
            ),
            model,
        )
    if isinstance(error, LLMConnectionError):
        return await _diagnose_network(url, model)
    if isinstance(error, LLMConfigError):
        return result("no_key", error.message)
    return result("error", str(error))


async def _diagnose_network(url: str, model: str) -> ConnectionResult:
    """Which step of reaching ``url`` fails: the name lookup, the TCP connect, or what comes after."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    where = f"{host}:{port}"
    loop = asyncio.get_running_loop()
    try:
        await asyncio.wait_for(loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), DIAGNOSE_TIMEOUT_S)
    except (socket.gaierror, UnicodeError):
        return ConnectionResult(
            False,
            "dns",
            _t(
                "找不到服务器“{host}”（域名解析失败）：请检查 Base URL 是否拼写正确，以及网络是否可用。",
                host=host,
            ),
            model,
        )
    except TimeoutError:
        return ConnectionResult(
            False, "dns", _t("解析域名“{host}”超时：请检查网络连接或 DNS 设置。", host=host), model
        )
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), DIAGNOSE_TIMEOUT_S)
    except ConnectionRefusedError:
        return ConnectionResult(
            False,
            "refused",
            _t(
                "{where} 拒绝连接：这个地址和端口上没有运行服务。"
                "请检查 Base URL 的端口，或确认本地服务已经启动。",
                where=where,
            ),
            model,
        )
    except TimeoutError:
        return ConnectionResult(
            False,
            "timeout",
            _t("连接 {where} 超时：网络不通、被防火墙拦截，或需要设置代理。", where=where),
            model,
        )
    except OSError as exc:
        return ConnectionResult(
            False,
            "network",
            _t(
                "无法连接 {where}（{strerror}）：请检查网络、代理和 Base URL。",
                where=where,
                strerror=exc.strerror or exc.__class__.__name__,
            ),
            model,
        )
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    scheme_hint = _t("（https 地址是否误写成了 http，或反过来？）")
    return ConnectionResult(
        False,
        "network",
        _t(
            "能连上 {where}，但请求在中途失败{scheme_hint}："
            "可能是代理或 TLS 证书问题，或这个地址不是 Anthropic 兼容接口。",
            where=where,
            scheme_hint=scheme_hint,
        ),
        model,
    )


# ---------------------------------------------------------------------------------------------- saving
def stored_key(provider: str) -> str:
    """The key the OS keyring (or this run's memory) holds for ``provider`` ("" when none, or when it comes
    from the environment)."""
    return (get_api_key(provider) if key_source(provider) in ("keyring", "session") else None) or ""


def save_keys(keys: dict[str, str], stored: dict[str, str], *, session_only: bool = False) -> None:
    """Write each provider's key that differs from ``stored`` to the OS keyring (an empty one deletes it),
    updating ``stored`` as it goes. Raises KeyringUnavailable (an LLMError) when the keyring refuses (nothing
    further is written). ``session_only``: keep the keys in memory for this run instead (no keyring)."""
    for provider, key in keys.items():
        if key == stored.get(provider, ""):
            continue
        if session_only:
            keep_for_session(provider, key)
        elif key:
            set_api_key(provider, key)
        else:
            delete_api_key(provider)
        stored[provider] = key


def save_settings_and_language(settings: LLMSettings, language: str) -> None:
    """Save ``llm.json`` and the UI language in ``app.json``. Raises OSError."""
    save_settings(settings)
    app = load_app_settings()
    app.language = "en" if language == "en" else "zh"
    save_app_settings(app)


def parse_price_rows(
    rows: list[list[str]], fields: tuple[tuple[str, str], ...]
) -> tuple[dict[str, ModelPrice], str | None, int]:
    """The price table (each row: the model, then one text per ModelPrice ``field``, labelled ``label``)
    parsed, or the first problem in it (in the UI language) and its row."""
    prices: dict[str, ModelPrice] = {}
    for row, (model, *values) in enumerate(rows):
        if not model:
            if not any(values):
                continue  # an added row left empty is ignored, not an error
            return {}, tr("价格表第 {row} 行缺少模型名称。").format(row=row + 1), row
        if model in prices:
            return {}, tr("价格表中模型“{model}”出现了两次。").format(model=model), row
        numbers: dict[str, float] = {}
        for (field, label), text in zip(fields, values, strict=True):
            try:
                number = float(text) if text else 0.0
            except ValueError:
                return (
                    {},
                    tr("价格表中“{model}”的{column}价格“{value}”不是数字。").format(
                        model=model, column=tr(label), value=text
                    ),
                    row,
                )
            if number < 0 or number != number:
                return (
                    {},
                    tr("价格表中“{model}”的{column}价格不能为负数（现为 {value}）。").format(
                        model=model, column=tr(label), value=text
                    ),
                    row,
                )
            numbers[field] = number
        prices[model] = ModelPrice(**numbers)
    return prices, None, -1
