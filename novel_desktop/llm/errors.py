"""Typed errors of the LLM layer.

Every error carries a Chinese message that tells the author what to do next; the GUI shows ``str(error)``
as is. Messages never contain the API key: the client redacts it before building one.
"""

from __future__ import annotations

from typing import Any

from novel_desktop.domain.phrase import Phrase, phrase_text


class LLMError(Exception):
    """Base of every error the LLM client raises.

    ``provider_message`` is the provider's own text (English, kept for the log and the details pane);
    ``status_code`` is the HTTP status when there was one (200 for an error inside a stream). ``message``
    may be a template of ``values`` (``message_phrase``), so that the window says it in its language.
    """

    default_message = "模型调用失败。"
    #: What went wrong in a few words, for the line that says a call is being retried.
    brief = "出错"

    def __init__(
        self,
        message: str | None = None,
        *,
        provider_message: str | None = None,
        status_code: int | None = None,
        attempts: int = 1,
        values: dict[str, Any] | None = None,
    ) -> None:
        self.message_phrase: Phrase = (message or self.default_message, dict(values or {}))
        self.message = phrase_text(self.message_phrase)
        self.provider_message = provider_message
        self.status_code = status_code
        self.attempts = attempts
        super().__init__(self.message)

    @property
    def phrase(self) -> Phrase:
        """``str(self)`` as a phrase (the message, then what the provider said)."""
        if self.provider_message:
            said = self.provider_message
            return "{message}（服务商返回：{said}）", {"message": self.message_phrase, "said": said}
        return self.message_phrase

    def __str__(self) -> str:
        return phrase_text(self.phrase)


class LLMConfigError(LLMError):
    """The client cannot be set up: no API key, an unknown provider, a bad base URL."""

    default_message = "模型服务未配置：请在“设置 → 模型服务”中选择服务商并填写 API Key。"


class LLMAuthError(LLMError):
    """401/403: the key is wrong, expired or lacks permission."""

    default_message = (
        "API Key 无效或没有权限（401/403）：请检查 API Key 是否正确、是否属于当前服务商，然后重试。"
    )


class LLMQuotaError(LLMError):
    """429 after every retry, or an exhausted balance/quota (402, or a 400 that says so)."""

    brief = "请求过于频繁（429）"

    default_message = "请求过于频繁或额度不足（429）：请稍后再试，或检查账户余额与速率限制。"


class LLMOverloaded(LLMError):
    """529 / overloaded_error after every retry."""

    brief = "服务繁忙（529）"

    default_message = "模型服务繁忙（529 过载），多次重试仍失败：请稍后再试，或在设置中换用其他模型。"


class LLMServerError(LLMError):
    """A 5xx other than 529 after every retry."""

    brief = "服务内部错误"

    default_message = "模型服务内部错误（5xx），多次重试仍失败：请稍后再试。"


class LLMConnectionError(LLMError):
    """The network failed (connect, read, a dropped stream) after every retry."""

    brief = "连接中断"

    default_message = (
        "无法连接模型服务，或连接中途断开，多次重试仍失败：请检查网络、代理和服务地址（Base URL）。"
    )


class LLMBadRequest(LLMError):
    """400/404/413/422: the request itself is wrong; retrying would not help."""

    default_message = "请求被模型服务拒绝（参数错误）：请检查模型名称与设置；详情见服务商返回的信息。"


class LLMEmptyResponse(LLMError):
    """The model answered with no text, even after retries."""

    brief = "返回了空内容"

    default_message = "模型返回了空内容，多次重试仍为空：请稍后再试，或换用其他模型。"


class LLMTruncated(LLMError):
    """The reply stopped at max_tokens where the caller needs the whole output.

    The client itself does not raise this: it sets ``LLMResponse.truncated``; a caller that cannot continue
    from a partial reply calls ``LLMResponse.raise_if_truncated()``.
    """

    default_message = (
        "模型输出达到长度上限被截断：请在设置中调大该角色的最大输出长度（max_tokens），或缩短要求。"
    )


class LLMTimeout(LLMError):
    """The stage did not finish within its timeout (settings, per role)."""

    brief = "超时"

    default_message = "模型调用超时：本阶段在规定时间内没有完成。请检查网络，或在设置中调大该阶段的超时时间。"
