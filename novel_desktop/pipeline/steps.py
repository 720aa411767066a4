"""What every lifecycle step shares: its report, its error, asking the author through NOVEL_ASK, and the one
loop that turns an agent's ``requires_user_decision`` into a question and calls the agent again.

Agents never ask the author (001 §10.5): a reply that needs a decision comes back as such, the pipeline asks
(the answer is stored by ``answer_path``, so re-running the same step reuses it), and the agent runs once more
with the author's decision in its request.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from novel_desktop.agents.ports import AgentResult, CallRecord
from novel_desktop.domain.agent_returns import RequiresUserDecision
from novel_desktop.domain.characters import Character
from novel_desktop.domain.novel_ask import AnswerSpec, QuestionSpec
from novel_desktop.pipeline.interaction import InteractionManager, resolve_gate
from novel_desktop.storage.store import NovelStore


class LifecycleError(Exception):
    """A lifecycle step could not finish; the message says why and what to do."""


@dataclass
class StepReport:
    """What one lifecycle step did: a line for the author, what it wrote, the LLM calls it took."""

    message: str
    written: list[str] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: True when the loop should stop here for the author (a pause, not an error).
    pause: bool = False

    @property
    def cost_usd(self) -> float:
        return sum(c.cost_usd for c in self.calls)


async def ask(
    store: NovelStore,
    interaction: InteractionManager,
    spec: QuestionSpec,
    answer_path: str,
    context: str = "",
) -> AnswerSpec:
    """A NOVEL_ASK gate with the seed's resume semantics, stored in the novel's answers."""
    return await resolve_gate(
        spec, answer_path, interaction, load=store.answer, save=store.put_answer, context=context
    )


def question(
    qid: str,
    header: str,
    text: str,
    *,
    kind: str = "single_choice",
    options: Sequence[tuple[str, str]] = (),
    default: str | None = None,
    required: bool = True,
    allow_other: bool = False,
) -> dict[str, Any]:
    """One NOVEL_ASK question as a dict (for :func:`spec`)."""
    q: dict[str, Any] = {"id": qid, "header": header, "question": text, "kind": kind, "required": required}
    if options:
        q["options"] = [{"label": label, "description": desc} for label, desc in options]
    if default is not None:
        q["default"] = default
    if allow_other:
        q["allow_other"] = True
    return q


def spec(topic: str, *questions: dict[str, Any]) -> QuestionSpec:
    """A QuestionSpec of ``questions``."""
    return QuestionSpec.model_validate({"version": 1, "topic": topic, "questions": list(questions)})


async def ask_decision(
    store: NovelStore,
    interaction: InteractionManager,
    decision: RequiresUserDecision,
    topic: str,
    answer_path: str,
) -> str:
    """An agent's ``requires_user_decision`` as a NOVEL_ASK question (001 §10.5); the chosen option."""
    options = list(dict.fromkeys(o for o in decision.options if o.strip())) or ["确认"]
    default = decision.recommendation if decision.recommendation in options else options[0]
    q = question(
        "decision",
        "需要你决定",
        f"{decision.rationale or '需要你做决定'}（建议：{decision.recommendation}）",
        options=[(o, "推荐" if o == default else "") for o in options],
        default=default,
        allow_other=True,
    )
    answer = await ask(
        store, interaction, spec(topic, q), answer_path, json.dumps(decision.data, ensure_ascii=False)[:3000]
    )
    choice = answer.answers.get("decision")
    return choice if isinstance(choice, str) else default


def character_files(store: NovelStore) -> list[Character]:
    """The active characters whose profiles parse (a broken file is skipped, not fatal)."""
    out = []
    for path in store.list_documents("characters/active/"):
        data = store.document_json(path) if path.endswith(".json") else None
        if isinstance(data, dict):
            data.setdefault("id", path.rsplit("/", 1)[-1].removesuffix(".json"))
            try:
                out.append(Character.model_validate(data))
            except ValueError:
                continue
    return out


# ---------------------------------------------------------------------------- the decision loop
class _MayDecide(Protocol):
    def decision(self) -> RequiresUserDecision | None: ...


R = TypeVar("R", bound=_MayDecide)


@dataclass
class Consulted(Generic[R]):
    """How consulting an agent ended. ``reply`` is its result when it gave one (not a decision)."""

    reply: R | None = None
    calls: list[CallRecord] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: The author's answer to the agent's question, when one was asked.
    choice: str | None = None
    #: The agent's last ``requires_user_decision`` (why it could not go on), when it returned one.
    decision: RequiresUserDecision | None = None
    #: Why there is no reply: "unparsable" (the output never parsed), "undecided" (still a decision after
    #: the author answered), "declined" (the author's answer ended the step), or "" when there is a reply.
    outcome: str = ""


async def consult(
    store: NovelStore,
    interaction: InteractionManager | None,
    call: Callable[[dict[str, str]], Awaitable[AgentResult[R]]],
    context: dict[str, str],
    *,
    request: str,
    topic: str,
    answer_path: str,
    declines: Callable[[str], bool] = lambda _choice: False,
) -> Consulted[R]:
    """Call an agent; when it needs a decision, ask the author and call it once more with the answer.

    ``request`` is the context's ``update_request``; the author's choice is appended to it for the second
    call. ``declines(choice)`` ends the step without a second call (e.g. 放弃 / 驳回). Without an
    ``interaction`` a decision is not asked and the result is "undecided".
    """
    out: Consulted[R] = Consulted()
    for attempt in (1, 2):
        result = await call(context)
        out.calls += result.calls
        out.warnings += result.warnings
        if result.value is None:
            out.outcome = "unparsable"
            return out
        out.decision = result.value.decision()
        if out.decision is None:
            out.reply = result.value
            return out
        if attempt == 2 or interaction is None:
            break
        out.choice = await ask_decision(store, interaction, out.decision, topic, answer_path)
        if declines(out.choice):
            out.outcome = "declined"
            return out
        context = {**context, "update_request": f"{request}\n\n作者的决定：{out.choice}"}
    out.outcome = "undecided"
    return out


__all__ = [
    "Consulted",
    "LifecycleError",
    "StepReport",
    "ask",
    "ask_decision",
    "character_files",
    "consult",
    "question",
    "spec",
]
