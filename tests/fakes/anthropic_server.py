"""A fake Anthropic Messages API server on 127.0.0.1 for tests and benchmarks.

The real anthropic SDK talks to it over HTTP. It answers ``POST /v1/messages`` as JSON or as an SSE stream
with the real event sequence, reports usage with the cache fields (simulating prompt caching of prefixes
that end at a ``cache_control`` breakpoint, as strictly as the real API: a prefix below the model's minimum
cacheable length is neither written nor read, and an entry becomes readable only once the request that
wrote it has started its response), scripts replies per agent role (the ``x-novel-agent`` header)
and injects faults: HTTP errors (429 with retry-after, 500, 529), an ``error`` event in the middle of a
stream, a dropped connection, a stream that ends without message_stop, malformed JSON, truncation at
max_tokens (``Reply.truncated``: the reply stops with stop_reason max_tokens), an empty reply, a slow stream.

It also serves a minimal Message Batches API (``POST /v1/messages/batches``, ``GET …/batches/{id}`` and
``GET …/batches/{id}/results`` as JSONL). A batched request takes its reply from the queue named by its
``custom_id``, else ``BATCH_ROLE``, else ``ANY_ROLE``; a scripted HTTP error becomes an ``errored`` result.
A batch reports ``in_progress`` for ``batch_polls_before_end`` retrievals, then ``ended``.

Example::

    with FakeAnthropicServer() as server:
        server.script("summarizer", Reply.http_error(529), Reply('{"ok": true}'))
        server.set_default("chapter_writer", Reply("第一章……", chunk_size=4, delay=0.01))
        client = LLMClient(settings, api_key="sk-test", base_url=server.base_url)
        ...
        assert server.requests_for("summarizer")[1].body["model"] == "claude-sonnet-4-6"
"""

from __future__ import annotations

import json
import math
import re
import select
import socket
import threading
import uuid
from collections import defaultdict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from novel_desktop.llm.settings import LLMSettings

#: The API key tests give the fake server (it accepts any key unless started with ``api_key``).
TEST_KEY = "sk-ant-test-0123456789abcdef"
ANY_ROLE = "*"
#: How a judge panel's or a summarizer part's task names it (agents/judge_panels.py PANEL_TASKS,
#: agents/summary_parts.py PART_TASKS).
_PANEL = re.compile(r"【(?:评审组|摘要组) ([A-Z])】")
#: The judge's panels and the summarizer's parts: a reply queued or defaulted for the role serves every
#: panel of one judgement (every part of one summary).
_PANELS = {"quality_judge": ("A", "B", "C"), "summarizer": ("S", "M")}
#: The queue batched requests take their replies from when no queue is named by their custom_id.
BATCH_ROLE = "batch"


def fast_settings(provider: str | None = None, *, max_attempts: int = 2) -> LLMSettings:
    """Fresh settings with millisecond backoff, so a test's retries cost nothing: the defaults, or with
    ``provider`` that provider's preset (its model split)."""
    from novel_desktop.llm.settings import LLMSettings, RetrySettings

    retry = RetrySettings(max_attempts=max_attempts, base_backoff_s=0.001, max_backoff_s=0.01)
    return LLMSettings(retry=retry) if provider is None else LLMSettings.for_provider(provider, retry=retry)


def estimate_tokens(text: str) -> int:
    """A deterministic token estimate: one token per non-ASCII character (汉字 and full-width punctuation,
    as Claude's tokenizer counts Chinese, give or take) and one per four ASCII characters (JSON keys, ids)."""
    if not text:
        return 0
    ascii_chars = len(text.encode("ascii", "ignore"))  # the characters below 128, counted in C
    return len(text) - ascii_chars + math.ceil(ascii_chars / 4)


#: The shortest prefix the API caches, by model family (Anthropic's prompt-caching docs: 4,096 tokens for
#: Claude Opus 4.5/4.6 and Haiku 4.5, 1,024 for Sonnet and the older models). A breakpoint whose prefix is
#: shorter is neither written nor read.
CACHE_MINIMUM_TOKENS: tuple[tuple[str, int], ...] = (
    ("claude-opus-4-5", 4096),
    ("claude-opus-4-6", 4096),
    ("claude-haiku-4-5", 4096),
)
DEFAULT_CACHE_MINIMUM_TOKENS = 1024


def min_cacheable_tokens(model: str) -> int:
    """The minimum cacheable prefix of ``model`` (:data:`CACHE_MINIMUM_TOKENS`, else 1,024)."""
    return next(
        (n for prefix, n in CACHE_MINIMUM_TOKENS if model.startswith(prefix)), DEFAULT_CACHE_MINIMUM_TOKENS
    )


@dataclass
class Reply:
    """One scripted answer: text plus delivery options, or a fault."""

    text: str = "好的。"
    #: Characters per text_delta event.
    chunk_size: int = 8
    #: Seconds to wait before each delta (a slow stream).
    delay: float = 0.0
    #: Output tokens per second for streaming (overrides ``delay``; for benchmarks).
    token_rate: float | None = None
    #: Seconds before the response starts (message_start, or the JSON body): the time to first token.
    start_delay: float = 0.0
    stop_reason: str = "end_turn"
    #: Overrides of the usage fields the server computes.
    usage: dict[str, int] = field(default_factory=dict)
    #: A model id to report instead of the requested one.
    model: str | None = None
    # --- faults ---
    #: Answer with this HTTP status and an error body instead of a message.
    http_status: int | None = None
    error_type: str | None = None
    error_message: str | None = None
    retry_after: float | None = None
    #: Send ``error_after_chunks`` deltas, then an ``event: error`` of this type (after HTTP 200).
    mid_stream_error: str | None = None
    error_after_chunks: int = 2
    #: Send this many deltas, then close the socket without finishing the chunked body.
    disconnect_after_chunks: int | None = None
    #: No content block at all.
    empty: bool = False
    #: Finish the HTTP body cleanly but without message_delta and message_stop (a proxy cut the stream).
    ends_early: bool = False
    #: After the first delta, wait (at most 10 s) until this event is set before the rest: a reply that
    #: stays unfinished until something else has happened. Whether it was set is appended to ``held``.
    hold_until: threading.Event | None = None

    # Named faults, so a test reads as what it simulates.
    @classmethod
    def http_error(
        cls, status: int, *, retry_after: float | None = None, message: str | None = None
    ) -> Reply:
        """An HTTP error with the type the real API uses for the status."""
        types = {
            400: "invalid_request_error",
            401: "authentication_error",
            402: "billing_error",
            403: "permission_error",
            404: "not_found_error",
            413: "request_too_large",
            429: "rate_limit_error",
            500: "api_error",
            529: "overloaded_error",
        }
        if status == 429 and retry_after is None:
            retry_after = 1
        return cls(
            http_status=status,
            error_type=types.get(status, "api_error"),
            error_message=message,
            retry_after=retry_after,
        )

    @classmethod
    def overloaded(cls) -> Reply:
        return cls.http_error(529)

    @classmethod
    def mid_stream_overloaded(
        cls, text: str = "这是一段会被中断的文字，不应留下。", after_chunks: int = 2
    ) -> Reply:
        return cls(text, chunk_size=4, mid_stream_error="overloaded_error", error_after_chunks=after_chunks)

    @classmethod
    def disconnect(cls, text: str = "说到一半连接就断了，这段文字作废。", after_chunks: int = 2) -> Reply:
        return cls(text, chunk_size=4, disconnect_after_chunks=after_chunks)

    @classmethod
    def malformed_json(cls) -> Reply:
        return cls('好的，结果如下：\n```json\n{"chapter": 3, "summary": "主角入城", \n```')

    @classmethod
    def truncated(cls, text: str) -> Reply:
        return cls(text, stop_reason="max_tokens")

    @classmethod
    def cut_short(cls, text: str = "代理提前结束了这个流，这段文字作废。") -> Reply:
        """A stream whose body ends cleanly but without message_stop (no stop_reason either)."""
        return cls(text, chunk_size=4, ends_early=True)

    @classmethod
    def empty_reply(cls) -> Reply:
        return cls("", empty=True)

    @classmethod
    def slow(cls, text: str = "慢" * 200, delay: float = 0.05, chunk_size: int = 2) -> Reply:
        return cls(text, chunk_size=chunk_size, delay=delay)


@dataclass
class RecordedRequest:
    """A request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def role(self) -> str | None:
        return self.headers.get("x-novel-agent")

    @property
    def panel(self) -> str | None:
        """The judge panel or summarizer part a request asks for (``A``/``B``/``C`` from 【评审组 X】, ``S``/``M``
        from 【摘要组 X】, in the last block of its first user turn: a repair retry continues the same
        conversation), or None."""
        content = self.body["messages"][0].get("content") if self.body.get("messages") else None
        last = content if isinstance(content, str) else str((content or [{}])[-1].get("text", ""))
        match = _PANEL.search(last)
        return match.group(1) if match else None

    @property
    def user_text(self) -> str:
        """The first user turn as the model reads it: the string, or its text blocks joined in order (a
        chapter goes as its own cache-marked block)."""
        content = self.body["messages"][0]["content"]
        if isinstance(content, str):
            return content
        return "".join(str(block.get("text", "")) for block in content)

    @property
    def system_blocks(self) -> list[dict[str, Any]]:
        system = self.body.get("system")
        if isinstance(system, str):
            return [{"type": "text", "text": system}]
        return list(system or [])


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False

    def __init__(self, owner: FakeAnthropicServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)


class _ClientGone(Exception):
    pass


class FakeAnthropicServer:
    """The fake Messages API; see the module docstring. Thread-safe scripting and inspection."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        default_reply: Reply | None = None,
        require_key: bool = True,
        models: set[str] | None = None,
    ) -> None:
        #: When set, any other key gets a 401; when None any non-empty key is accepted.
        self.api_key = api_key
        #: False: a local server (Ollama, llama.cpp) that checks no key at all; the headers are still recorded.
        self.require_key = require_key
        #: When set, a request for any other model gets Ollama's answer for a model it has not pulled:
        #: 404 not_found_error "model '<name>' not found".
        self.models = models
        self.default_reply = default_reply or Reply()
        self.requests: list[RecordedRequest] = []
        #: The usage the server reported for each message, as far as the client received it (a stream the
        #: client closed early reported message_start's usage only): dicts with role, model and usage.
        self.reported: list[dict[str, Any]] = []
        #: Roles whose stream the client closed before the end.
        self.disconnects: list[str | None] = []
        #: For each reply with ``hold_until``: whether the event was set before the wait ran out.
        self.held: list[bool] = []
        self.client_disconnected = threading.Event()
        self._lock = threading.Lock()
        self._queues: dict[str, deque[Reply]] = defaultdict(deque)
        self._defaults: dict[str, Reply] = {}
        self._cache: set[tuple[str, str]] = set()
        self._stopping = threading.Event()
        #: Message Batches: id → the batch object and its JSONL result lines; retrievals so far.
        self.batches: dict[str, dict[str, Any]] = {}
        self.batch_polls_before_end = 1
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ---
    def start(self) -> FakeAnthropicServer:
        self._httpd = _Server(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-anthropic",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeAnthropicServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "start() the server first"
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    # --- scripting ---
    def script(self, role: str, *replies: Reply | str) -> None:
        """Queue replies for a role (``ANY_ROLE`` for any); each request takes the next one."""
        with self._lock:
            for r in replies:
                self._queues[str(role)].append(Reply(r) if isinstance(r, str) else r)

    def set_default(self, role: str, reply: Reply | str) -> None:
        """The reply a role gets when its queue is empty."""
        with self._lock:
            self._defaults[str(role)] = Reply(reply) if isinstance(reply, str) else reply

    def pending(self, role: str) -> int:
        with self._lock:
            return len(self._queues[str(role)])

    def requests_for(self, role: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.role == str(role)]

    def clear_cache(self) -> None:
        """Forget the cached prefixes (as if the 5-minute TTL had passed)."""
        with self._lock:
            self._cache.clear()

    def _next_reply(self, role: str | None, *more: str, panel: str | None = None) -> Reply:
        """The next reply for ``role``. A judge panel's request takes ``"<role>#<panel>"``'s queue first
        (a test scripting each panel), then the role's; a reply it takes from the role's queue is also
        queued for the other panels, so one scripted judgement answers every part of one judging."""
        with self._lock:
            keys = (role or "", *more, ANY_ROLE)
            if panel is not None:
                own = f"{role}#{panel}"
                if self._queues[own]:
                    return self._queues[own].popleft()
                if self._queues[role or ""]:
                    reply = self._queues[role or ""].popleft()
                    for other in _PANELS.get(role or "", ()):
                        if other != panel:
                            self._queues[f"{role}#{other}"].append(reply)
                    return reply
            for key in keys:
                if self._queues[key]:
                    return self._queues[key].popleft()
            if panel is not None and f"{role}#{panel}" in self._defaults:
                return self._defaults[f"{role}#{panel}"]
            for key in keys:
                if key in self._defaults:
                    return self._defaults[key]
            return self.default_reply

    # --- usage with simulated prompt caching ---
    def _commit_cache(self, model: str, prefixes: list[str]) -> None:
        """Make the prefixes a request wrote readable: called once its response has begun (message_start
        or the JSON body), so two concurrent requests with the same new prefix both pay for the write."""
        with self._lock:
            self._cache.update((model, p) for p in prefixes)

    def _prompt_usage(self, body: dict[str, Any]) -> tuple[dict[str, int], list[str]]:
        """The prompt's usage fields and the cacheable prefixes it writes (to :meth:`_commit_cache` once
        its response starts). Only breakpoints whose prefix reaches the model's minimum count."""
        segments: list[tuple[str, bool]] = []
        system = body.get("system")
        if isinstance(system, str):
            segments.append((system, False))
        else:
            for block in system or []:
                segments.append((str(block.get("text", "")), "cache_control" in block))
        for message in body.get("messages", []):
            content = message.get("content")
            if isinstance(content, str):
                segments.append((content, False))
            else:
                for block in content or []:
                    segments.append((str(block.get("text", "")), "cache_control" in block))
        total = sum(estimate_tokens(t) for t, _ in segments)
        model = str(body.get("model", ""))
        breakpoints = [i for i, (_, bp) in enumerate(segments) if bp]
        read = creation = 0
        minimum = min_cacheable_tokens(model)
        prefixes = [
            p
            for p in ("".join(t for t, _ in segments[: i + 1]) for i in breakpoints)
            if estimate_tokens(p) >= minimum
        ]
        if prefixes:
            with self._lock:
                hit = next((p for p in reversed(prefixes) if (model, p) in self._cache), "")
            read = estimate_tokens(hit)
            creation = max(0, estimate_tokens(prefixes[-1]) - read)
        usage = {
            "input_tokens": max(0, total - read - creation),
            "cache_creation_input_tokens": creation,
            "cache_read_input_tokens": read,
        }
        return usage, prefixes


def _breakpoints(body: dict[str, Any]) -> int:
    """How many blocks of a request (system and messages) carry ``cache_control``."""
    blocks = (
        [b for b in body.get("system") or [] if isinstance(b, dict)]
        if not isinstance(body.get("system"), str)
        else []
    )
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            blocks += [b for b in content if isinstance(b, dict)]
    return sum(1 for b in blocks if "cache_control" in b)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    #: The model and the cacheable prefixes of the request being answered, committed when it starts.
    _written: tuple[str, list[str]] = ("", [])

    def setup(self) -> None:
        super().setup()
        # Without TCP_NODELAY small SSE events are held back and arrive in one lump.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    @property
    def owner(self) -> FakeAnthropicServer:
        return self.server.owner

    # --- HTTP plumbing ---
    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_{uuid.uuid4().hex[:16]}")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_error(
        self, status: int, etype: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        self._send_json(status, {"type": "error", "error": {"type": etype, "message": message}}, headers)

    def _peer_closed(self) -> bool:
        readable, _, _ = select.select([self.connection], [], [], 0)
        if not readable:
            return False
        try:
            return bool(self.connection.recv(1, socket.MSG_PEEK) == b"")
        except OSError:
            return True

    def _chunk(self, data: bytes) -> None:
        if self._peer_closed():
            raise _ClientGone
        try:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        except OSError as exc:
            raise _ClientGone from exc

    def _event(self, name: str, payload: dict[str, Any]) -> None:
        self._chunk(f"event: {name}\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n".encode())

    # --- the endpoint ---
    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send_error(400, "invalid_request_error", "request body is not JSON")
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        path = self.path.split("?", 1)[0]
        record = RecordedRequest(path, headers, body)
        with self.owner._lock:
            self.owner.requests.append(record)
        if path not in ("/v1/messages", "/v1/messages/batches"):
            self._send_error(404, "not_found_error", f"no route {path}")
            return
        if self.owner.require_key and not self._authorized(headers):
            return
        if self.owner.models is not None and body.get("model") not in self.owner.models:
            self._send_error(404, "not_found_error", f"model '{body.get('model')}' not found")
            return
        if path == "/v1/messages/batches":
            self._create_batch(body)
            return
        for name in ("model", "max_tokens", "messages"):
            if name not in body:
                self._send_error(400, "invalid_request_error", f"{name}: Field required")
                return

        if (
            _breakpoints(body) > 4
        ):  # as the real API: "A maximum of 4 blocks with cache_control may be provided"
            self._send_error(
                400, "invalid_request_error", "A maximum of 4 blocks with cache_control may be provided"
            )
            return

        reply = self.owner._next_reply(record.role, panel=record.panel)
        if reply.http_status is not None:
            extra = {"retry-after": f"{reply.retry_after:g}"} if reply.retry_after is not None else {}
            self._send_error(
                reply.http_status,
                reply.error_type or "api_error",
                reply.error_message or f"scripted {reply.http_status}",
                extra,
            )
            return

        usage, written = self.owner._prompt_usage(body)
        usage["output_tokens"] = 0 if reply.empty else estimate_tokens(reply.text)
        usage.update(reply.usage)
        model = reply.model or str(body["model"])
        self._written = (str(body["model"]), written)
        report: dict[str, Any] = {"role": record.role, "model": model, "usage": {}}
        with self.owner._lock:
            self.owner.reported.append(report)
        if reply.start_delay > 0 and self.owner._stopping.wait(reply.start_delay):
            return
        if body.get("stream"):
            try:
                self._stream(reply, model, usage, report)
            except _ClientGone:
                self.close_connection = True
                with self.owner._lock:
                    self.owner.disconnects.append(record.role)
                self.owner.client_disconnected.set()
        else:
            self._json_message(reply, model, usage)
            if not reply.mid_stream_error and reply.disconnect_after_chunks is None:
                report["usage"] = dict(usage)

    def _authorized(self, headers: dict[str, str]) -> bool:
        """Check the key (``x-api-key`` or ``Authorization: Bearer``); answer 401 and return False if bad."""
        key = headers.get("x-api-key")
        auth = headers.get("authorization", "")
        if not key and auth.lower().startswith("bearer "):
            key = auth[7:].strip()
        if not key:
            self._send_error(401, "authentication_error", "x-api-key header is required")
            return False
        if self.owner.api_key is not None and key != self.owner.api_key:
            self._send_error(401, "authentication_error", "invalid x-api-key")
            return False
        return True

    # --- Message Batches ---
    def _create_batch(self, body: dict[str, Any]) -> None:
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            self._send_error(400, "invalid_request_error", "requests: must be a non-empty list")
            return
        batch_id = f"msgbatch_{uuid.uuid4().hex[:24]}"
        lines: list[str] = []
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for item in requests:
            custom_id = str(item.get("custom_id", ""))
            params = dict(item.get("params") or {})
            with self.owner._lock:
                self.owner.requests.append(RecordedRequest(f"/v1/messages/batches#{custom_id}", {}, params))
            reply = self.owner._next_reply(custom_id, BATCH_ROLE)
            if reply.http_status is not None:
                result: dict[str, Any] = {
                    "type": "errored",
                    "error": {
                        "type": "error",
                        "error": {
                            "type": reply.error_type or "api_error",
                            "message": reply.error_message or f"scripted {reply.http_status}",
                        },
                    },
                }
                counts["errored"] += 1
            else:
                usage, written = self.owner._prompt_usage(params)
                self.owner._commit_cache(str(params.get("model", "")), written)
                usage["output_tokens"] = 0 if reply.empty else estimate_tokens(reply.text)
                usage.update(reply.usage)
                result = {
                    "type": "succeeded",
                    "message": {
                        "id": f"msg_{uuid.uuid4().hex[:24]}",
                        "type": "message",
                        "role": "assistant",
                        "model": reply.model or str(params.get("model", "")),
                        "content": [] if reply.empty else [{"type": "text", "text": reply.text}],
                        "stop_reason": reply.stop_reason,
                        "stop_sequence": None,
                        "usage": usage,
                    },
                }
                counts["succeeded"] += 1
                with self.owner._lock:
                    self.owner.reported.append(
                        {"role": BATCH_ROLE, "model": result["message"]["model"], "usage": dict(usage)}
                    )
            lines.append(json.dumps({"custom_id": custom_id, "result": result}, ensure_ascii=False))
        batch = {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": "in_progress",
            "request_counts": {**counts, "processing": len(requests), "succeeded": 0, "errored": 0},
            "created_at": "2026-03-01T00:00:00Z",
            "expires_at": "2026-03-02T00:00:00Z",
            "ended_at": None,
            "cancel_initiated_at": None,
            "archived_at": None,
            "results_url": None,
        }
        with self.owner._lock:
            self.owner.batches[batch_id] = {"batch": batch, "lines": lines, "counts": counts, "polls": 0}
        self._send_json(200, batch)

    def do_GET(self) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        path = self.path.split("?", 1)[0]
        with self.owner._lock:
            self.owner.requests.append(RecordedRequest(path, headers, {}))
        parts = path.strip("/").split("/")
        if len(parts) not in (4, 5) or parts[:3] != ["v1", "messages", "batches"]:
            self._send_error(404, "not_found_error", f"no route {path}")
            return
        if self.owner.require_key and not self._authorized(headers):
            return
        with self.owner._lock:
            entry = self.owner.batches.get(parts[3])
            if entry is not None and len(parts) == 4:
                entry["polls"] += 1
                if entry["polls"] > self.owner.batch_polls_before_end:
                    entry["batch"].update(
                        processing_status="ended",
                        request_counts={**entry["counts"], "processing": 0},
                        ended_at="2026-03-01T00:05:00Z",
                        results_url=f"{self.owner.base_url}/v1/messages/batches/{parts[3]}/results",
                    )
            batch = dict(entry["batch"]) if entry is not None else None
        if entry is None or batch is None:
            self._send_error(404, "not_found_error", f"no batch {parts[3]}")
            return
        if len(parts) == 4:
            self._send_json(200, batch)
            return
        if parts[4] != "results" or batch["processing_status"] != "ended":
            self._send_error(404, "not_found_error", "results are not ready")
            return
        data = ("\n".join(entry["lines"]) + "\n").encode()
        self.send_response(200)
        self.send_header("content-type", "application/binary")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _json_message(self, reply: Reply, model: str, usage: dict[str, int]) -> None:
        if reply.mid_stream_error:
            self._send_error(529, reply.mid_stream_error, "Overloaded")
            return
        if reply.disconnect_after_chunks is not None:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        content = [] if reply.empty else [{"type": "text", "text": reply.text}]
        self.owner._commit_cache(*self._written)
        self._send_json(
            200,
            {
                "id": f"msg_{uuid.uuid4().hex[:24]}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": reply.stop_reason,
                "stop_sequence": None,
                "usage": usage,
            },
        )

    def _pause(self, seconds: float) -> None:
        if seconds > 0 and self.owner._stopping.wait(seconds):
            raise _ClientGone

    def _stream(
        self, reply: Reply, model: str, usage: dict[str, int], report: dict[str, Any] | None = None
    ) -> None:
        report = report if report is not None else {}
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", f"req_{uuid.uuid4().hex[:16]}")
        self.end_headers()
        start_usage = {k: v for k, v in usage.items() if k != "output_tokens"}
        start_usage["output_tokens"] = 1
        self._event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_{uuid.uuid4().hex[:24]}",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": start_usage,
                },
            },
        )
        report["usage"] = dict(start_usage)
        self.owner._commit_cache(*self._written)
        if not reply.empty:
            self._event(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            )
            self._event("ping", {"type": "ping"})
            size = max(1, reply.chunk_size)
            chunks = [reply.text[i : i + size] for i in range(0, len(reply.text), size)]
            for n, piece in enumerate([*chunks, None]):
                if reply.mid_stream_error and n == min(reply.error_after_chunks, len(chunks)):
                    etype = reply.mid_stream_error
                    message = reply.error_message or ("Overloaded" if etype == "overloaded_error" else etype)
                    self._event("error", {"type": "error", "error": {"type": etype, "message": message}})
                    self._chunk(b"")
                    return
                if reply.disconnect_after_chunks is not None and n == min(
                    reply.disconnect_after_chunks, len(chunks)
                ):
                    # Mid-body: the chunked encoding is left unfinished, as when a proxy drops the line.
                    self.close_connection = True
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if piece is None:
                    break
                if n == 1 and reply.hold_until is not None:
                    self.owner.held.append(reply.hold_until.wait(10))
                if reply.token_rate:
                    self._pause(estimate_tokens(piece) / reply.token_rate)
                else:
                    self._pause(reply.delay)
                self._event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": piece},
                    },
                )
            self._event("content_block_stop", {"type": "content_block_stop", "index": 0})
        if reply.ends_early:
            self._chunk(b"")
            return
        self._event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
        report["usage"]["output_tokens"] = usage["output_tokens"]
        self._event("message_stop", {"type": "message_stop"})
        self._chunk(b"")  # the terminating zero-length chunk


__all__ = [
    "ANY_ROLE",
    "BATCH_ROLE",
    "CACHE_MINIMUM_TOKENS",
    "FakeAnthropicServer",
    "RecordedRequest",
    "Reply",
    "estimate_tokens",
    "min_cacheable_tokens",
]
