"""The interaction channel and NOVEL_ASK gates: one pending question, cancel never hangs, resume semantics."""

from __future__ import annotations

import asyncio
import io
import json

import pytest

from novel_desktop.cli.prompter import TerminalResponder
from novel_desktop.domain.novel_ask import AnswerSpec, QuestionSpec
from novel_desktop.domain.novel_ask_answers import build_answer_spec, validate_answer_spec
from novel_desktop.pipeline.interaction import (
    AnswersFileResponder,
    AnswersNeeded,
    GateBlocked,
    InteractionBusy,
    InteractionCancelled,
    InteractionManager,
    InteractionRequest,
    refuse_non_interactive,
    resolve_gate,
)

SPEC = QuestionSpec.model_validate(
    {
        "version": 1,
        "topic": "quick start",
        "questions": [
            {
                "id": "genre",
                "header": "题材",
                "question": "写什么题材？",
                "kind": "single_choice",
                "options": [
                    {"label": "都市", "description": ""},
                    {"label": "玄幻", "description": "推荐：平台热门"},
                    {"label": "悬疑", "description": ""},
                ],
                "default": "玄幻",
                "allow_other": True,
            },
            {
                "id": "tags",
                "header": "标签",
                "question": "选几个标签",
                "kind": "multi_choice",
                "required": False,
                "options": [{"label": "系统"}, {"label": "重生"}, {"label": "种田"}],
            },
            {"id": "hero", "header": "主角", "question": "主角一句话设定", "kind": "free_text"},
        ],
    }
)
PATH = "staging/novel-ask/novel-init.answers.json"


class DictAnswers:
    """The load/save pair over a dict, standing in for the novel's answers table."""

    def __init__(self, stored: dict[str, str] | None = None) -> None:
        self.stored = dict(stored or {})

    def load(self, path: str) -> str | None:
        return self.stored.get(path)

    def save(self, path: str, text: str) -> None:
        self.stored[path] = text


def _answer(**answers: object) -> AnswerSpec:
    return build_answer_spec(SPEC, dict(answers), answered_by="test")


def test_a_second_request_while_one_is_pending_is_refused() -> None:
    async def scenario() -> None:
        manager = InteractionManager()
        first = asyncio.ensure_future(manager.request(SPEC))
        req = await manager.wait_next_request()
        with pytest.raises(InteractionBusy):
            await manager.request(SPEC)
        manager.respond(req.request_id, _answer(genre="都市", hero="外卖员"))
        answer = await first
        assert answer.answers["genre"] == "都市"
        assert manager.pending is None

    asyncio.run(scenario())


def test_cancel_wakes_the_waiter_and_leaves_nothing_pending() -> None:
    async def scenario() -> None:
        manager = InteractionManager()
        waiting = asyncio.ensure_future(manager.request(SPEC))
        await manager.wait_next_request()
        assert manager.cancel_pending()
        with pytest.raises(InteractionCancelled):
            await asyncio.wait_for(waiting, 1)
        assert manager.pending is None
        assert not manager.cancel_pending()

    asyncio.run(scenario())


def test_cancelling_the_asking_task_cancels_the_responder_too() -> None:
    started = asyncio.Event()
    stopped: list[bool] = []

    async def slow_responder(_req: InteractionRequest) -> AnswerSpec | None:
        started.set()
        try:
            await asyncio.sleep(60)
        finally:
            stopped.append(True)
        return None

    async def scenario() -> None:
        manager = InteractionManager(slow_responder)
        task = asyncio.ensure_future(manager.request(SPEC))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0)
        assert stopped == [True]
        assert manager.pending is None

    asyncio.run(scenario())


def test_an_invalid_answer_is_refused_by_respond() -> None:
    async def scenario() -> None:
        manager = InteractionManager()
        waiting = asyncio.ensure_future(manager.request(SPEC))
        req = await manager.wait_next_request()
        bad = AnswerSpec.model_validate(
            {
                "version": 1,
                "topic": "quick start",
                "answers": {"genre": "都市"},
                "answered_at": "2026-01-01T00:00:00Z",
                "answered_by": "x",
            }
        )
        with pytest.raises(ValueError, match="hero"):
            manager.respond(req.request_id, bad)
        manager.cancel_pending()
        with pytest.raises(InteractionCancelled):
            await waiting

    asyncio.run(scenario())


def test_gate_asks_once_then_resumes_from_the_stored_answer() -> None:
    store = DictAnswers()
    calls: list[int] = []

    async def responder(req: InteractionRequest) -> AnswerSpec | None:
        calls.append(req.request_id)
        return _answer(genre="悬疑", hero="失忆的侦探")

    async def scenario() -> None:
        manager = InteractionManager(responder)
        first = await resolve_gate(SPEC, PATH, manager, load=store.load, save=store.save)
        second = await resolve_gate(SPEC, PATH, manager, load=store.load, save=store.save)
        assert first.answers == second.answers == {"genre": "悬疑", "hero": "失忆的侦探"}

    asyncio.run(scenario())
    assert calls == [1]
    assert validate_answer_spec(SPEC, json.loads(store.stored[PATH])) == []


def test_gate_blocks_on_an_invalid_stored_answer_and_a_bad_path() -> None:
    stored = {
        "version": 1,
        "topic": "quick start",
        "answers": {"genre": "科幻"},
        "answered_at": "2026-01-01T00:00:00Z",
        "answered_by": "x",
    }
    stored["answers"]["hero"] = "x"
    store = DictAnswers({PATH: json.dumps({**stored, "topic": "另一个"})})
    manager = InteractionManager(refuse_non_interactive)
    with pytest.raises(GateBlocked, match="topic"):
        asyncio.run(resolve_gate(SPEC, PATH, manager, load=store.load, save=store.save))
    store.stored[PATH] = "{not json"
    with pytest.raises(GateBlocked, match="JSON"):
        asyncio.run(resolve_gate(SPEC, PATH, manager, load=store.load, save=store.save))
    with pytest.raises(GateBlocked, match="answer_path"):
        asyncio.run(resolve_gate(SPEC, "../outside.json", manager, load=store.load, save=store.save))


def test_non_interactive_stops_with_the_list_of_questions() -> None:
    manager = InteractionManager(refuse_non_interactive)
    store = DictAnswers()
    with pytest.raises(AnswersNeeded) as info:
        asyncio.run(resolve_gate(SPEC, PATH, manager, load=store.load, save=store.save))
    message = str(info.value)
    assert "genre" in message
    assert "hero" in message
    assert "--answers-file" in message
    assert store.stored == {}


def test_answers_file_by_path_or_topic() -> None:
    by_path = AnswersFileResponder({PATH: {"genre": "都市", "hero": "程序员"}})
    by_topic = AnswersFileResponder(
        {"quick start": {"answers": {"genre": "末日", "tags": ["系统"], "hero": "x"}}}
    )
    manager_a, manager_b = InteractionManager(by_path), InteractionManager(by_topic)
    a = asyncio.run(manager_a.request(SPEC, answer_path=PATH))
    b = asyncio.run(manager_b.request(SPEC, answer_path=PATH))
    assert a.answers == {"genre": "都市", "hero": "程序员"}
    assert b.answers == {"genre": "末日", "tags": ["系统"], "hero": "x"}  # 末日 is an "Other" answer
    assert a.answered_by == "answers_file"


def _terminal(lines: str) -> tuple[TerminalResponder, io.StringIO]:
    out = io.StringIO()
    return TerminalResponder(stdin=io.StringIO(lines), stdout=out), out


def test_terminal_lists_recommended_first_and_takes_defaults() -> None:
    responder, out = _terminal("\n\n一个会算命的厨子\n")
    answer = asyncio.run(InteractionManager(responder).request(SPEC))
    text = out.getvalue()
    assert text.index("1. 玄幻") < text.index("2. 都市")
    assert "0. 其他" in text
    assert answer.answers == {"genre": "玄幻", "hero": "一个会算命的厨子"}
    assert answer.answered_by == "novel_cli"


def test_terminal_multi_select_other_and_retries_on_bad_input() -> None:
    responder, out = _terminal("7\n0\n科幻\n1，3\n\n主角\n")
    answer = asyncio.run(InteractionManager(responder).request(SPEC))
    assert answer.answers == {"genre": "科幻", "tags": ["系统", "种田"], "hero": "主角"}
    assert "没有编号 7" in out.getvalue()


def test_terminal_end_of_input_cancels() -> None:
    responder, _ = _terminal("2\n")
    with pytest.raises(InteractionCancelled):
        asyncio.run(InteractionManager(responder).request(SPEC))
