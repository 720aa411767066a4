"""Structured outputs: find the JSON in a reply, validate it with a domain model, repair once, then fall back.

Agents ask for JSON in the prompt (several Anthropic-compatible providers ignore schema parameters, and
newer Claude models reject prefill). A reply may wrap the JSON in prose or a ```json fence; both are
tolerated. A reply that still does not validate gets ONE repair call quoting the validation error; if that
fails too the step is skipped with a warning (001 §10.6): a bad JSON never crashes the pipeline. A reply cut
at max_tokens is never parsed at all (issue 16: a truncated JSON is never half-used); its repair call asks
for a shorter complete JSON.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from novel_desktop.llm.errors import LLMEmptyResponse
from novel_desktop.llm.roles import AgentRole

if TYPE_CHECKING:
    from novel_desktop.llm.client import LLMClient, LLMResponse, PromptBlock

M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|json5)?[ \t]*\r?\n(.*?)```", re.DOTALL)
_JSON_START = re.compile(r"[\[{]")
#: How much of a validation error the repair message quotes; a long error list only burns tokens.
_MAX_ERROR_CHARS = 1500


class StructuredOutputError(ValueError):
    """The reply holds no JSON, or JSON the model rejects. ``detail`` is the message a repair call quotes."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def _candidates(text: str) -> list[str]:
    """Places JSON may be, best first: each fenced block, then the whole text."""
    found = [m.group(1) for m in _FENCE.finditer(text)]
    found.append(text)
    return found


def _json_values(text: str) -> tuple[list[Any], json.JSONDecodeError | None]:
    """Every top-level JSON object or array in ``text``, ignoring the prose around them, and the first
    decode error met (for the repair message when nothing decodes)."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    error: json.JSONDecodeError | None = None
    pos = 0
    while True:
        match = _JSON_START.search(text, pos)
        if match is None:
            return values, error
        try:
            value, end = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError as exc:
            error = error or exc
            pos = match.start() + 1
            continue
        values.append(value)
        pos = end  # skip what it contains: an inner object is not an answer of its own


def _describe(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors()[:20]:
        where = ".".join(str(p) for p in err["loc"]) or "(根)"
        lines.append(f"- {where}：{err['msg']}")
    more = len(exc.errors()) - 20
    if more > 0:
        lines.append(f"- ……另有 {more} 处错误")
    return "JSON 字段校验失败：\n" + "\n".join(lines)


def parse_json_output(text: str, model: type[M]) -> M:
    """Parse and validate the JSON in a reply; raises ``StructuredOutputError`` with a Chinese detail.

    Tolerates prose before and after the JSON and ```json fences. When several JSON values are present,
    the first that validates wins, so an example echoed before the answer does not hide it.
    """
    invalid: StructuredOutputError | None = None
    syntax: json.JSONDecodeError | None = None
    for chunk in _candidates(text):
        values, error = _json_values(chunk)
        syntax = syntax or error
        for value in values:
            try:
                return model.model_validate(value)
            except ValidationError as exc:
                invalid = invalid or StructuredOutputError(_describe(exc))
    if invalid is not None:
        raise invalid
    if syntax is not None:
        raise StructuredOutputError(
            f"JSON 格式错误：{syntax.msg}（第 {syntax.lineno} 行第 {syntax.colno} 列）。"
        )
    raise StructuredOutputError("回复中没有找到 JSON（缺少 { 或 [）。")


@dataclass
class StructuredResult(Generic[M]):
    """A structured call's outcome: ``value`` is None when the step was skipped (see ``warnings``)."""

    value: M | None
    warnings: list[str] = field(default_factory=list)
    responses: list[LLMResponse] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.value is not None


def repair_message(error: str, *, truncated: bool) -> str:
    """The user turn of the repair call: quotes the error and asks for the corrected JSON only."""
    if len(error) > _MAX_ERROR_CHARS:
        error = error[:_MAX_ERROR_CHARS] + "……"
    cut = "上一次输出因长度上限被截断。请输出更精简但完整的 JSON。\n" if truncated else ""
    return (
        f"{cut}你上一次的输出无法通过校验，错误如下：\n{error}\n\n"
        "请修正后重新输出完整的 JSON：只输出 JSON 本身（可放在 ```json 代码块中），"
        "不要输出解释，不要省略字段。"
    )


async def call_structured(
    client: LLMClient,
    role: AgentRole,
    system: Sequence[PromptBlock],
    messages: Sequence[Mapping[str, Any]],
    model: type[M],
    *,
    max_tokens: int | None = None,
    on_text: Callable[[str], None] | None = None,
    on_restart: Callable[[], None] | None = None,
    cancel: asyncio.Event | None = None,
    what: str | None = None,
) -> StructuredResult[M]:
    """Call ``role`` and parse its reply into ``model``; one repair retry; then skip with a warning.

    Only bad output is absorbed here (malformed, invalid, truncated or empty JSON). Errors a retry cannot
    fix — no key, no network, a timeout, cancellation — still raise, because the author must act on them.
    ``what`` names the output in the warning (default: the model's class name).
    """
    label = what or model.__name__
    result: StructuredResult[M] = StructuredResult(None)
    convo: list[Mapping[str, Any]] = list(messages)
    problem = ""
    for attempt in (1, 2):
        try:
            response = await client.stream(
                role,
                system=system,
                messages=convo,
                max_tokens=max_tokens,
                on_text=on_text,
                on_restart=on_restart,
                cancel=cancel,
            )
        except LLMEmptyResponse:
            problem = "模型返回了空内容。"
            text, truncated = "", False
        else:
            result.responses.append(response)
            text, truncated = response.text, response.truncated
            try:
                if truncated:
                    # Never half-used: a cut-off reply may still hold a complete inner object that validates.
                    raise StructuredOutputError("输出达到长度上限被截断，JSON 不完整。")
                result.value = parse_json_output(text, model)
                if attempt == 2:
                    result.warnings.append(f"{role.label}：{label}首次输出无效，修复重试后成功。")
                return result
            except StructuredOutputError as exc:
                problem = exc.detail
        if attempt == 1:
            repair = repair_message(problem, truncated=truncated)
            last = convo[-1] if convo else None
            if text.strip():
                convo = [*convo, {"role": "assistant", "content": text}, {"role": "user", "content": repair}]
            elif last is not None and last.get("role") == "user" and isinstance(last.get("content"), str):
                # No assistant turn to answer (an empty reply): extend the user turn, since some
                # Anthropic-compatible providers reject two user turns in a row.
                convo = [*convo[:-1], {"role": "user", "content": f"{last['content']}\n\n{repair}"}]
            elif last is not None and last.get("role") == "user" and isinstance(last.get("content"), list):
                # The same for a user turn of text blocks (a cached chapter block): one more block.
                extra = {"type": "text", "text": f"\n\n{repair}"}
                convo = [*convo[:-1], {"role": "user", "content": [*last["content"], extra]}]
            else:
                convo = [*convo, {"role": "user", "content": repair}]
    result.warnings.append(f"{role.label}：{label}输出两次都无法通过校验，已跳过这一步：{problem}")
    return result
