"""The user-interaction channel (seeds 000, 002, 003) and NOVEL_ASK gates.

Agents never ask: a step that needs the author's decision carries a NOVEL_ASK QuestionSpec and an
``answer_path``. :func:`resolve_gate` gives the seed's resume semantics (a stored valid AnswerSpec skips the
question, a missing one asks, an invalid one blocks the step), and asks through an
:class:`InteractionManager`, which allows one pending request at a time and whose cancel never leaves a
waiter hanging. The front end is a *responder*: the GUI's dialog, the terminal prompter, an answers file, or
the non-interactive refusal — they all return the same validated AnswerSpec.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from novel_desktop.domain.novel_ask import AnswerSpec, AnswerSpecInvalid, QuestionSpec, ValidationProblem
from novel_desktop.domain.novel_ask_answers import (
    GateState,
    build_answer_spec,
    evaluate_gate,
    validate_answer_path,
    validate_answer_spec,
)
from novel_desktop.domain.proposals import EDITED_Q, Proposal


@dataclass(frozen=True)
class InteractionRequest:
    """A question waiting for the author."""

    request_id: int
    spec: QuestionSpec
    answer_path: str | None = None
    source: str = "novel_ask"
    #: What the author may want to see while answering (an outline, a quality brief …), as text.
    context: str = ""
    #: An agent's output waiting for approval: the window shows it as forms, the CLI as JSON in $EDITOR.
    proposal: Proposal | None = None


class InteractionBusy(RuntimeError):
    """A second request while one is pending (the channel is serial)."""


class InteractionCancelled(Exception):
    """The author (or a shutdown) cancelled the question; the step is aborted cleanly."""


class AnswersNeeded(Exception):
    """Non-interactive mode met a question without a stored answer."""

    def __init__(self, request: InteractionRequest) -> None:
        self.request = request
        lines = [f"需要回答的问题（topic: {request.spec.topic}，answer_path: {request.answer_path}）："]
        for q in request.spec.questions:
            required = "必答" if q.required else "可选"
            options = " / ".join(o.label for o in q.options) if q.options else "自由填写"
            lines.append(f"  - {q.id}（{q.kind}，{required}）：{q.question} [{options}]")
        lines.append("请用 --answers-file 提供答案，或去掉 --non-interactive 在终端回答。")
        super().__init__("\n".join(lines))


class GateBlocked(Exception):
    """A stored AnswerSpec (or its path) is invalid: the step must not run until it is fixed or deleted."""

    def __init__(self, answer_path: str, problems: list[ValidationProblem]) -> None:
        self.answer_path = answer_path
        self.problems = problems
        detail = "；".join(str(p) for p in problems)
        super().__init__(
            f"{answer_path} 中保存的回答无效，该步骤已阻止：{detail}。修正或删除这份回答后重试即可重新提问。"
        )


class Responder(Protocol):
    """A front end that answers a request: an AnswerSpec, or None when the author cancels."""

    def __call__(self, request: InteractionRequest) -> Awaitable[AnswerSpec | None]: ...


class InteractionManager:
    """One pending request at a time; answers come from a responder or from :meth:`respond`.

    With a ``responder`` the manager calls it for every request (CLI, tests). Without one, a front end
    loops on :meth:`wait_next_request` and calls :meth:`respond` or :meth:`cancel_pending` (the GUI).
    """

    def __init__(self, responder: Responder | None = None) -> None:
        self._responder = responder
        self._ids = itertools.count(1)
        self._pending: tuple[InteractionRequest, asyncio.Future[AnswerSpec | None]] | None = None
        self._waiters: list[asyncio.Future[InteractionRequest]] = []
        self._responder_task: asyncio.Task[None] | None = None

    @property
    def pending(self) -> InteractionRequest | None:
        return self._pending[0] if self._pending else None

    async def request(
        self,
        spec: QuestionSpec,
        *,
        answer_path: str | None = None,
        source: str = "novel_ask",
        context: str = "",
        proposal: Proposal | None = None,
    ) -> AnswerSpec:
        """Ask and wait. Raises :class:`InteractionBusy` or :class:`InteractionCancelled`."""
        if self._pending is not None:
            raise InteractionBusy("已有一个问题在等待回答 (another question is pending)")
        loop = asyncio.get_running_loop()
        req = InteractionRequest(next(self._ids), spec, answer_path, source, context, proposal)
        future: asyncio.Future[AnswerSpec | None] = loop.create_future()
        self._pending = (req, future)
        try:
            if self._responder is not None:
                self._responder_task = asyncio.ensure_future(self._drive(req, future, self._responder))
            else:
                for waiter in self._waiters:
                    if not waiter.done():
                        waiter.set_result(req)
                self._waiters.clear()
            answer = await future
        finally:
            self._pending = None
            task, self._responder_task = self._responder_task, None
            if task is not None and not task.done():
                task.cancel()
        if answer is None:
            raise InteractionCancelled("已取消 (cancelled)")
        return answer

    async def _drive(
        self, req: InteractionRequest, future: asyncio.Future[AnswerSpec | None], responder: Responder
    ) -> None:
        try:
            answer = await responder(req)
        except Exception as exc:
            if not future.done():
                future.set_exception(exc)
            return
        except asyncio.CancelledError:
            if not future.done():
                future.set_result(None)
            raise
        if not future.done():
            future.set_result(answer)

    async def wait_next_request(self) -> InteractionRequest:
        """The next request (the pending one, if any) — for a front end without a responder."""
        if self._pending is not None:
            return self._pending[0]
        waiter: asyncio.Future[InteractionRequest] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        return await waiter

    def respond(self, request_id: int, answer: AnswerSpec) -> None:
        """Submit the answer to the pending request; an answer that does not validate is refused."""
        if self._pending is None or self._pending[0].request_id != request_id:
            raise LookupError(f"没有编号为 {request_id} 的待答问题 (no such pending question)")
        req, future = self._pending
        problems = validate_answer_spec(req.spec, answer.to_json_dict())
        if problems:
            raise AnswerSpecInvalid(problems)
        if not future.done():
            future.set_result(answer)

    def cancel_pending(self) -> bool:
        """Cancel the pending request (its waiter raises InteractionCancelled); False if none."""
        if self._pending is None:
            return False
        _, future = self._pending
        if not future.done():
            future.set_result(None)
        return True


# ---------------------------------------------------------------------------- gates
async def resolve_gate(
    spec: QuestionSpec,
    answer_path: str,
    manager: InteractionManager,
    *,
    load: Callable[[str], str | None],
    save: Callable[[str, str], None],
    context: str = "",
    proposal: Proposal | None = None,
) -> AnswerSpec:
    """Seed 000's gate: reuse a stored valid answer, ask when none exists, block on an invalid one.

    ``load``/``save`` read and write the AnswerSpec text by ``answer_path`` (the novel's answers table);
    they run in a worker thread because they touch SQLite.
    """
    path_problems = validate_answer_path(answer_path)
    if path_problems:
        raise GateBlocked(answer_path, path_problems)
    raw = await asyncio.to_thread(load, answer_path)
    if raw is not None:
        try:
            data: Any = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise GateBlocked(answer_path, [ValidationProblem("$", f"不是合法的 JSON：{exc.msg}")]) from None
        outcome = evaluate_gate(spec, data, present=True)
        if outcome.state is GateState.ANSWERED and outcome.answer is not None:
            return outcome.answer
        raise GateBlocked(answer_path, list(outcome.problems))
    answer = await manager.request(spec, answer_path=answer_path, context=context, proposal=proposal)
    text = json.dumps(answer.to_json_dict(), ensure_ascii=False, indent=2) + "\n"
    await asyncio.to_thread(save, answer_path, text)
    return answer


# ---------------------------------------------------------------------------- responders without a UI
@dataclass
class AnswersFileResponder:
    """Answers from a JSON file (automation, tests, the ``--answers-file`` option).

    The file maps an ``answer_path`` — or a topic — to either a full AnswerSpec or just its ``answers``
    object. A request the file does not cover goes to ``fallback`` (the terminal, or the non-interactive
    refusal).
    """

    answers: Mapping[str, Any]
    fallback: Responder | None = None
    answered_by: str = "answers_file"
    used: list[str] = field(default_factory=list)

    async def __call__(self, request: InteractionRequest) -> AnswerSpec | None:
        entry = None
        for key in (request.answer_path, request.spec.topic):
            if key is not None and key in self.answers:
                entry = self.answers[key]
                self.used.append(key)
                break
        if entry is None:
            if self.fallback is None:
                raise AnswersNeeded(request)
            return await self.fallback(request)
        chosen = entry.get("answers", entry) if isinstance(entry, Mapping) else entry
        if not isinstance(chosen, Mapping):
            raise AnswerSpecInvalid([ValidationProblem("answers", "答案文件中的条目必须是对象")])
        values = dict(chosen)
        if isinstance(values.get(EDITED_Q), dict | list):
            # An edited proposal may be given as the JSON object itself; the answer holds it as text.
            values[EDITED_Q] = json.dumps(values[EDITED_Q], ensure_ascii=False, indent=2)
        return build_answer_spec(request.spec, values, answered_by=self.answered_by)


async def refuse_non_interactive(request: InteractionRequest) -> AnswerSpec | None:
    """The ``--non-interactive`` responder: stop with the list of what must be answered."""
    raise AnswersNeeded(request)
