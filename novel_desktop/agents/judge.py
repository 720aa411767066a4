"""QualityJudge on demand: judging a committed chapter again, alone or many at once in a Message Batch.

The chapter pipeline judges through :class:`novel_desktop.agents.chapter.LLMChapterAgents`; this agent serves
the author's 重新评审 and 批量重评 (seed 004 §6 Layer 3), where the verdict replaces the stored one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from novel_desktop.agents import facts as fact_sheet
from novel_desktop.agents.calls import structured_call, system_blocks
from novel_desktop.agents.context import load_facts
from novel_desktop.agents.ports import AgentResult
from novel_desktop.agents.suggestions import suggest_fixes
from novel_desktop.agents.templates import RenderedPrompt, render_template
from novel_desktop.domain.evaluation import DIMENSION_WEIGHTS, Evaluation
from novel_desktop.domain.platforms import platform_profile
from novel_desktop.domain.suggestions import SuggestionsReply
from novel_desktop.llm.batches import BatchError, BatchReport, BatchRequest, run_batch
from novel_desktop.llm.client import LLMClient
from novel_desktop.llm.roles import AgentRole
from novel_desktop.llm.structured import StructuredOutputError, parse_json_output
from novel_desktop.storage import layout
from novel_desktop.storage.aio import db
from novel_desktop.storage.store import NovelStore


def finish_evaluation(
    evaluation: Evaluation, chapter: int, weights: Mapping[str, float] = DIMENSION_WEIGHTS
) -> Evaluation:
    """The verdict with our weighted mean (the platform's weights, default the seed's; never the model's
    arithmetic) and its chapter number."""
    data = evaluation.to_json_dict()
    data["overall"] = round(evaluation.computed_overall(weights), 2)
    data["chapter"] = chapter
    return Evaluation.model_validate(data)


@dataclass
class BatchVerdicts:
    """A batch of verdicts: the new evaluation, its model and cost per chapter, and why others failed."""

    batch: BatchReport
    verdicts: dict[int, Evaluation] = field(default_factory=dict)
    models: dict[int, str] = field(default_factory=dict)
    costs: dict[int, float] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)


class LLMJudgeAgent:
    """QualityJudge over one novel and one client, for chapters already committed."""

    def __init__(self, store: NovelStore, client: LLMClient) -> None:
        self.store = store
        self.client = client

    def _weights(self) -> Mapping[str, float]:
        return platform_profile(self.store.meta().get("platform", "web")).weights

    def _prompt(self, chapter: int, text: str) -> RenderedPrompt:
        facts = load_facts(self.store, chapter)
        return render_template("quality_judge", fact_sheet.judge_context(facts, text))

    @property
    def model(self) -> str:
        """The judge's configured model (what a log line names when no response did)."""
        return self.client.settings.model_for(AgentRole.quality_judge)

    async def judge(self, chapter: int, text: str) -> AgentResult[Evaluation]:
        """Judge ``text`` as chapter ``chapter``; the value is None when the reply could not be parsed."""
        prompt = await db(self._prompt, chapter, text)
        result = await structured_call(
            self.client, AgentRole.quality_judge, prompt, Evaluation, what="评审结果", chapter=text
        )
        if result.value is not None:
            result.value = finish_evaluation(result.value, chapter, await db(self._weights))
        return result

    async def suggest(self, chapter: int, text: str, issues: Sequence[str]) -> AgentResult[SuggestionsReply]:
        """Concrete edits for ``text`` that address the judge's ``issues`` (prompts/fix_suggester.md)."""
        return await suggest_fixes(self.client, self.store, chapter, text, issues)

    async def judge_batch(
        self,
        texts: Mapping[int, str],
        *,
        prefer_batch: bool = True,
        first_poll_s: float = 5.0,
        on_progress: Callable[[str], None] | None = None,
    ) -> BatchVerdicts:
        """Judge many chapters in one Message Batch (half price), or one by one where the provider has none.

        A reply that does not parse is listed in ``failed``; nothing is raised for a single chapter.
        """
        requests = []
        for n, text in texts.items():
            prompt = await db(self._prompt, n, text)
            requests.append(
                BatchRequest(
                    f"chapter-{layout.num(n)}",
                    AgentRole.quality_judge,
                    system_blocks(prompt.system_blocks),
                    [{"role": "user", "content": prompt.user}],
                )
            )
        batch = await run_batch(
            self.client,
            requests,
            prefer_batch=prefer_batch,
            first_poll_s=first_poll_s,
            on_progress=on_progress,
        )
        out = BatchVerdicts(batch)
        weights = await db(self._weights)
        for n in texts:
            item = batch.results.get(f"chapter-{layout.num(n)}")
            if item is None or not item.ok or item.text is None:
                out.failed[n] = item.error if item is not None and item.error else "没有结果"
                continue
            try:
                out.verdicts[n] = finish_evaluation(parse_json_output(item.text, Evaluation), n, weights)
            except StructuredOutputError as exc:
                out.failed[n] = exc.detail
                continue
            out.models[n] = item.model
            out.costs[n] = item.cost_usd
        return out


__all__ = ["BatchError", "BatchReport", "BatchVerdicts", "LLMJudgeAgent", "finish_evaluation"]
