"""What the pipeline needs from the agents, as protocols (the ports the agents implement).

The pipeline (stages, staging, gate, recovery, the lifecycle) is written against these protocols;
``agents.chapter``, ``agents.planning`` and ``agents.judge`` implement them over the LLM client and the prompt
templates, and tests may implement them directly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, runtime_checkable

from novel_desktop.domain.evaluation import Evaluation
from novel_desktop.domain.refine import RefineEdits

if TYPE_CHECKING:
    from novel_desktop.agents.context import FactsSource, NovelFacts
    from novel_desktop.agents.context_recorder import ContextRecorder
    from novel_desktop.agents.judge import BatchVerdicts
    from novel_desktop.agents.planning import AuditReply, CharacterReply, PlanReply, WorldReply
    from novel_desktop.domain.style import StyleProfile
    from novel_desktop.domain.suggestions import SuggestionsReply

T = TypeVar("T")


@dataclass(frozen=True)
class CallRecord:
    """One LLM call: what a pipeline log stage line (§9.2) records."""

    role: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    duration_ms: int = 0
    cost_usd: float = 0.0
    attempts: int = 1


@dataclass
class AgentResult(Generic[T]):
    """An agent's parsed output (None when it could not be parsed), the calls it took, and warnings."""

    value: T | None
    calls: list[CallRecord] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class DraftTruncated(Exception):
    """The writer's (or reviser's) reply was still cut at the output limit after every continuation: the
    text is incomplete and must not be used (issue 16 point 1). ``calls`` are the calls it took (billed)."""

    def __init__(self, message: str, calls: Sequence[CallRecord] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.calls = list(calls)


class WriteMode(StrEnum):
    DRAFT = "draft"
    REVISE = "revise"  # targeted revision with the judge's required fixes (the stronger model)
    REWRITE = "rewrite"  # a whole new chapter (score < 2.0)


@dataclass(frozen=True)
class RevisionOrder:
    """What the reviser is told: its round (1 or 2, seed §8.2), each violation as a readable line with the
    rule it breaks, and the judge's targeted fixes (``位置：改法``)."""

    round: int = 1
    violations: tuple[str, ...] = ()
    fixes: tuple[str, ...] = ()
    #: The violation lines the previous round was given (round 2 is told which of its own are left over).
    earlier: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "round": self.round,
            "violations": list(self.violations),
            "fixes": list(self.fixes),
        }
        if self.earlier:
            data["earlier"] = list(self.earlier)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RevisionOrder:
        return cls(
            int(data.get("round") or 1),
            tuple(str(v) for v in data.get("violations") or ()),
            tuple(str(f) for f in data.get("fixes") or ()),
            tuple(str(v) for v in data.get("earlier") or ()),
        )


@dataclass(frozen=True)
class RefineFocus:
    """What a later StyleRefiner pass (the second polish of a 3.5-3.9 chapter) is told: the judge's style
    findings (one line each; empty: the usual order, AI phrases first) and how many characters it may still
    change (``None``: the whole 15% of the text; the program rejects edits beyond it)."""

    points: tuple[str, ...] = ()
    budget: int | None = None


@dataclass(frozen=True)
class ChapterBrief:
    """What the pipeline knows about the chapter before writing it."""

    chapter: int
    volume: int
    storyline_id: str | None = None
    title: str = ""
    #: Volume start or end, or a storyline convergence chapter: judged twice, the lower score counts.
    key_chapter: bool = False
    #: The outline text of this chapter, for display.
    outline: str = ""
    #: The novel as the chapter's agents read it (:class:`~novel_desktop.agents.context.NovelFacts`), when
    #: they say: the gate checks the chapter against the facts it was written and judged on, without reading
    #: the novel again (2 ms a chapter on a 500-chapter novel). None: the gate reads them.
    facts: NovelFacts | None = field(default=None, compare=False, repr=False)


@dataclass
class SummaryOutput:
    """The Summarizer's output for one chapter."""

    summary_markdown: str
    patch: dict[str, Any] | None = None
    storyline_id: str | None = None
    storyline_memory: str | None = None
    cross_references: list[str] = field(default_factory=list)
    leak_risk: str = "low"


class ChapterAgents(Protocol):
    """The agents of one chapter (seed 004 §6 Layer 2b)."""

    async def brief(self, chapter: int) -> ChapterBrief: ...

    async def write(
        self,
        brief: ChapterBrief,
        *,
        mode: WriteMode,
        previous: str | None,
        revision: RevisionOrder | None,
        on_text: Callable[[str], None],
        on_reset: Callable[[], None],
    ) -> AgentResult[str]: ...

    async def summarize(self, brief: ChapterBrief, text: str) -> AgentResult[SummaryOutput]: ...

    async def refine(
        self, brief: ChapterBrief, text: str, *, focus: RefineFocus | None = None
    ) -> AgentResult[RefineEdits]: ...

    async def judge(self, brief: ChapterBrief, text: str, *, secondary: bool) -> AgentResult[Evaluation]: ...


@runtime_checkable
class FitsLength(Protocol):
    """Chapter agents that can bring a draft outside the platform's length range into it by edits (one
    pass, issue 16 point 2). Agents without it (test doubles) skip the pass; the gate still reports the
    length."""

    async def fit_length(self, brief: ChapterBrief, text: str) -> AgentResult[RefineEdits]: ...


@runtime_checkable
class ReadsFacts(Protocol):
    """Chapter agents that can read their facts from another source than the open novel (the historical
    rebuild hands them the novel as it was when a chapter was written). Agents that read nothing (test
    doubles) need not implement it."""

    def reading(self, source: FactsSource) -> ChapterAgents: ...


@runtime_checkable
class WritesAhead(Protocol):
    """Chapter agents that can draft a queued run's next chapter early (pipeline/ahead.py): the same agents
    reading ``source`` (the novel as it will be once the chapter before commits) and recording their prompts
    to ``recorder`` until the draft is adopted; what the writer leaves for the summarizer is shared, so the
    adopted draft is summarized as its own. Agents that read nothing (test doubles) need not implement it."""

    def ahead(self, source: FactsSource, recorder: ContextRecorder) -> ChapterAgents: ...


class PlanningAgents(Protocol):
    """What the lifecycle needs from the planning agents (``agents.planning.LLMPlanningAgents``)."""

    async def world(self, context: dict[str, str]) -> AgentResult[WorldReply]: ...

    async def characters(self, context: dict[str, str]) -> AgentResult[CharacterReply]: ...

    async def plot(self, context: dict[str, str]) -> AgentResult[PlanReply]: ...

    async def style(self, context: dict[str, str]) -> AgentResult[StyleProfile]: ...

    async def audit(self, context: dict[str, str]) -> AgentResult[AuditReply]: ...


class JudgeAgent(Protocol):
    """QualityJudge on demand, for committed chapters (``agents.judge.LLMJudgeAgent``)."""

    @property
    def model(self) -> str: ...

    async def judge(self, chapter: int, text: str) -> AgentResult[Evaluation]: ...

    async def suggest(
        self, chapter: int, text: str, issues: Sequence[str]
    ) -> AgentResult[SuggestionsReply]: ...

    async def judge_batch(
        self,
        texts: Mapping[int, str],
        *,
        prefer_batch: bool = True,
        first_poll_s: float = 5.0,
        on_progress: Callable[[str], None] | None = None,
    ) -> BatchVerdicts: ...
