"""The fake server itself: auth header styles, JSON mode, the SSE event sequence, scripting per role."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

from tests.fakes.anthropic_server import ANY_ROLE, FakeAnthropicServer, Reply, min_cacheable_tokens


def post(server: FakeAnthropicServer, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, str]:
    host, port = server.base_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request(
            "POST", "/v1/messages", json.dumps(body), {"content-type": "application/json", **headers}
        )
        resp = conn.getresponse()
        return resp.status, resp.read().decode()
    finally:
        conn.close()


BODY = {"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "你好"}]}


def sse_events(raw: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in raw.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_missing_key_is_rejected_with_401(server: FakeAnthropicServer) -> None:
    status, text = post(server, BODY, {})
    assert status == 401
    assert json.loads(text)["error"]["type"] == "authentication_error"


@pytest.mark.parametrize("header", [{"x-api-key": "k"}, {"authorization": "Bearer k"}])
def test_both_key_header_styles_are_accepted(server: FakeAnthropicServer, header: dict[str, str]) -> None:
    status, text = post(server, BODY, {**header, "x-novel-agent": "summarizer"})
    assert status == 200
    message = json.loads(text)
    assert message["type"] == "message"
    assert message["content"] == [{"type": "text", "text": "好的。"}]
    assert set(message["usage"]) >= {"input_tokens", "output_tokens", "cache_read_input_tokens"}


def test_sse_has_the_real_event_sequence(server: FakeAnthropicServer) -> None:
    server.script("chapter_writer", Reply("一二三四五六", chunk_size=2))
    status, raw = post(
        server, {**BODY, "stream": True}, {"x-api-key": "k", "x-novel-agent": "chapter_writer"}
    )
    assert status == 200
    names = [name for name, _ in sse_events(raw)]
    assert names == [
        "message_start",
        "content_block_start",
        "ping",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    events = dict(sse_events(raw)[:1])
    assert "cache_creation_input_tokens" in events["message_start"]["message"]["usage"]


def test_mid_stream_error_event_follows_http_200(server: FakeAnthropicServer) -> None:
    server.script(ANY_ROLE, Reply.mid_stream_overloaded("一二三四五六七八九十", after_chunks=1))
    status, raw = post(server, {**BODY, "stream": True}, {"x-api-key": "k"})
    events = sse_events(raw)
    assert status == 200
    assert events[-1] == (
        "error",
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    )


def test_replies_are_scripted_per_role_then_default(server: FakeAnthropicServer) -> None:
    server.script("summarizer", "第一条", "第二条")
    server.set_default("summarizer", "默认")
    texts = []
    for _ in range(3):
        _, text = post(server, BODY, {"x-api-key": "k", "x-novel-agent": "summarizer"})
        texts.append(json.loads(text)["content"][0]["text"])
    _, other = post(server, BODY, {"x-api-key": "k", "x-novel-agent": "quality_judge"})
    assert texts == ["第一条", "第二条", "默认"]
    assert json.loads(other)["content"][0]["text"] == "好的。"
    assert [r.role for r in server.requests] == ["summarizer"] * 3 + ["quality_judge"]


def test_http_fault_carries_retry_after(server: FakeAnthropicServer) -> None:
    server.script(ANY_ROLE, Reply.http_error(429, retry_after=3))
    host, port = server.base_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.request("POST", "/v1/messages", json.dumps(BODY), {"x-api-key": "k"})
    resp = conn.getresponse()
    assert resp.status == 429
    assert resp.getheader("retry-after") == "3"
    assert json.loads(resp.read())["error"]["type"] == "rate_limit_error"
    conn.close()


def _cached_body(model: str, stable: str, stream: bool = False) -> dict[str, Any]:
    return {
        "model": model,
        "max_tokens": 100,
        "stream": stream,
        "system": [{"type": "text", "text": stable, "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": "写第 3 章。"}],
    }


def _usage(server: FakeAnthropicServer, body: dict[str, Any]) -> dict[str, int]:
    status, text = post(server, body, {"x-api-key": "k"})
    assert status == 200
    return dict(json.loads(text)["usage"])


@pytest.mark.parametrize(
    ("model", "minimum"),
    [("claude-sonnet-4-6", 1024), ("claude-opus-4-6", 4096), ("claude-haiku-4-5", 4096), ("glm-4.6", 1024)],
)
def test_a_prefix_below_the_models_minimum_is_neither_written_nor_read(
    server: FakeAnthropicServer, model: str, minimum: int
) -> None:
    assert min_cacheable_tokens(model) == minimum
    short = "稳" * (minimum - 1)
    for _ in range(2):
        usage = _usage(server, _cached_body(model, short))
        assert usage["cache_creation_input_tokens"] == usage["cache_read_input_tokens"] == 0
    long = "稳" * minimum
    first, second = _usage(server, _cached_body(model, long)), _usage(server, _cached_body(model, long))
    assert (first["cache_creation_input_tokens"], first["cache_read_input_tokens"]) == (minimum, 0)
    assert (second["cache_creation_input_tokens"], second["cache_read_input_tokens"]) == (0, minimum)


def test_concurrent_requests_with_a_new_prefix_both_pay_the_write(server: FakeAnthropicServer) -> None:
    """An entry is readable only once the request that wrote it has started its response."""
    import threading

    server.set_default(ANY_ROLE, Reply("好的。", start_delay=0.5))
    body = _cached_body("claude-sonnet-4-6", "稳" * 2000, stream=True)
    threads = [threading.Thread(target=post, args=(server, body, {"x-api-key": "k"})) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    writes = [r["usage"]["cache_creation_input_tokens"] for r in server.reported]
    assert writes == [2000, 2000]
    after = _usage(server, _cached_body("claude-sonnet-4-6", "稳" * 2000))
    assert after["cache_read_input_tokens"] == 2000
