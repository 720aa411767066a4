"""Structured outputs: JSON found in prose or fences, one repair retry quoting the error, then a warning."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from novel_desktop.llm import (
    AgentRole,
    LLMClient,
    LLMSettings,
    PromptBlock,
    StructuredResult,
    call_structured,
)
from novel_desktop.llm.errors import LLMAuthError
from novel_desktop.llm.structured import StructuredOutputError, parse_json_output
from tests.fakes.anthropic_server import TEST_KEY, FakeAnthropicServer, Reply


class Verdict(BaseModel):
    chapter: int
    overall: float = Field(ge=0, le=5)
    issues: list[str] = []


GOOD = '{"chapter": 3, "overall": 3.8, "issues": ["节奏偏慢"]}'


def test_plain_json() -> None:
    assert parse_json_output(GOOD, Verdict) == Verdict(chapter=3, overall=3.8, issues=["节奏偏慢"])


def test_fenced_json_with_prose_around() -> None:
    text = f"好的，这是评估结果：\n\n```json\n{GOOD}\n```\n\n如需调整请告诉我。"
    assert parse_json_output(text, Verdict).chapter == 3


def test_bare_json_inside_prose() -> None:
    text = f"评估如下 {GOOD} 以上。"
    assert parse_json_output(text, Verdict).overall == 3.8


def test_example_before_the_answer_does_not_hide_it() -> None:
    text = '格式示例：{"chapter": "N"}。\n实际结果：' + GOOD
    assert parse_json_output(text, Verdict).chapter == 3


def test_invalid_field_is_named_in_the_error() -> None:
    with pytest.raises(StructuredOutputError, match="overall"):
        parse_json_output('{"chapter": 3, "overall": 9}', Verdict)


def test_no_json_at_all() -> None:
    with pytest.raises(StructuredOutputError, match="没有找到 JSON"):
        parse_json_output("抱歉，我无法完成。", Verdict)


@given(st.text())
def test_any_text_either_parses_or_raises_the_typed_error(text: str) -> None:
    with contextlib.suppress(StructuredOutputError):
        parse_json_output(text, Verdict)


def structured(
    server: FakeAnthropicServer, settings: LLMSettings, model: type[BaseModel] = Verdict
) -> StructuredResult[Any]:
    async def main() -> StructuredResult[Any]:
        async with LLMClient(settings, api_key=TEST_KEY, base_url=server.base_url) as client:
            return await call_structured(
                client,
                AgentRole.quality_judge,
                [PromptBlock("你是质量评审。", cache=True)],
                [{"role": "user", "content": "评估第 3 章，只输出 JSON。"}],
                model,
            )

    return asyncio.run(main())


def test_good_reply_needs_one_call(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    server.script("quality_judge", f"```json\n{GOOD}\n```")
    result = structured(server, settings)
    assert result.ok
    assert result.value == Verdict(chapter=3, overall=3.8, issues=["节奏偏慢"])
    assert result.warnings == []
    assert len(result.responses) == 1


def test_repair_retry_quotes_the_validation_error(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    server.script("quality_judge", '{"chapter": 3, "overall": 42}', GOOD)

    result = structured(server, settings)

    assert result.value is not None and result.value.overall == 3.8
    assert len(server.requests) == 2
    repair = server.requests[1].body["messages"]
    assert [m["role"] for m in repair] == ["user", "assistant", "user"]
    assert repair[1]["content"] == '{"chapter": 3, "overall": 42}'
    assert "overall" in repair[2]["content"]
    assert "校验" in repair[2]["content"]
    assert any("修复" in w for w in result.warnings)


def test_malformed_json_twice_falls_back_with_a_warning(
    server: FakeAnthropicServer, settings: LLMSettings
) -> None:
    server.script("quality_judge", Reply.malformed_json(), Reply.malformed_json())

    result = structured(server, settings)

    assert result.value is None
    assert not result.ok
    assert len(result.responses) == 2
    assert len(server.requests) == 2  # one repair, not more
    assert "跳过" in result.warnings[-1]
    assert result.warnings[-1].startswith("质量评审：")  # the agent by the name the author knows


def test_truncated_json_asks_for_a_shorter_complete_one(
    server: FakeAnthropicServer, settings: LLMSettings
) -> None:
    server.script("quality_judge", Reply.truncated('{"chapter": 3, "overall": 3.8, "issues": ["节奏'), GOOD)
    result = structured(server, settings)
    assert result.ok
    assert "截断" in server.requests[1].body["messages"][-1]["content"]


class Inner(BaseModel):
    chapter: int = 0
    overall: float = 0


def test_a_truncated_reply_is_never_half_used(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    # The cut-off reply holds a complete inner object that would validate; it must not be taken.
    cut = '{"verdict": {"chapter": 3, "overall": 3.8}, "issues": ["节奏'
    assert parse_json_output(cut, Inner) == Inner(chapter=3, overall=3.8)  # what the scan alone would take
    server.script("quality_judge", Reply.truncated(cut), Reply.truncated(GOOD))
    result = structured(server, settings, model=Inner)
    assert result.value is None  # a truncated repair (even of complete-looking JSON) is not used either
    assert "截断" in server.requests[1].body["messages"][-1]["content"]
    assert "更精简但完整" in server.requests[1].body["messages"][-1]["content"]
    assert "截断" in result.warnings[-1]


def test_empty_replies_fall_back_instead_of_raising(
    server: FakeAnthropicServer, settings: LLMSettings
) -> None:
    server.set_default("quality_judge", Reply.empty_reply())
    result = structured(server, settings)
    assert result.value is None
    assert "空内容" in result.warnings[-1]
    # The repair went into the one user turn: no two user turns in a row.
    roles = [m["role"] for m in server.requests[-1].body["messages"]]
    assert roles == ["user"]


def test_errors_the_author_must_fix_still_raise(server: FakeAnthropicServer, settings: LLMSettings) -> None:
    server.script("quality_judge", Reply.http_error(401))
    with pytest.raises(LLMAuthError):
        structured(server, settings)


def test_repair_message_is_json_serialisable_chinese(
    server: FakeAnthropicServer, settings: LLMSettings
) -> None:
    server.script("quality_judge", "不是 JSON", GOOD)
    structured(server, settings)
    content = server.requests[1].body["messages"][-1]["content"]
    assert "没有找到 JSON" in content
    json.dumps(content, ensure_ascii=False)
