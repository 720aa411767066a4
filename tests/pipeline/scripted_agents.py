"""A ChapterAgents implementation scripted in Python, to test the pipeline's stage machine without an LLM."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from novel_desktop.agents.ports import (
    AgentResult,
    CallRecord,
    ChapterBrief,
    RefineFocus,
    RevisionOrder,
    SummaryOutput,
    WriteMode,
)
from novel_desktop.domain.evaluation import DIMENSION_WEIGHTS, Evaluation
from novel_desktop.domain.refine import RefineEdit, RefineEdits


class Crash(Exception):
    """Stands in for the process dying at a stage."""


def evaluation(chapter: int, overall: float, *, violations: int = 0) -> Evaluation:
    scores = {
        name: {"score": overall, "weight": w, "reason": "理由", "evidence": "原文"}
        for name, w in DIMENSION_WEIGHTS.items()
    }
    return Evaluation.model_validate(
        {
            "chapter": chapter,
            "contract_verification": {"W-001": "pass"},
            "scores": scores,
            "overall": overall,
            "recommendation": "pass" if overall >= 3.5 else "revise",
            "violations": [
                {"rule_id": "W-001", "confidence": "high", "description": "主角越级使用金丹法术"}
                for _ in range(violations)
            ],
            "risk_flags": [],
            "required_fixes": [{"target": "第3段", "instruction": "删去越级法术"}]
            if overall < 4 or violations
            else [],
            "issues": ["节奏拖沓"] if overall < 3.5 else [],
        }
    )


@dataclass
class ScriptedAgents:
    """Scores are consumed one per judge call; ``crash_at`` raises Crash when that agent is called."""

    scores: list[float] = field(default_factory=lambda: [4.2])
    secondary_scores: list[float] = field(default_factory=list)
    violations: list[int] = field(default_factory=list)
    key_chapter: bool = False
    crash_at: str | None = None
    write_delay: float = 0.0
    calls: list[str] = field(default_factory=list)
    on_write: Callable[[], Any] | None = None
    #: The focus each refine call was given (None: the first pass).
    focuses: list[RefineFocus | None] = field(default_factory=list)

    def _call(self, name: str) -> CallRecord:
        self.calls.append(name)
        if self.crash_at == name:
            raise Crash(name)
        return CallRecord(
            role=name, model="fake-model", input_tokens=1000, output_tokens=200, duration_ms=5, cost_usd=0.01
        )

    async def brief(self, chapter: int) -> ChapterBrief:
        return ChapterBrief(chapter=chapter, volume=1, storyline_id="main_arc", key_chapter=self.key_chapter)

    async def write(
        self,
        brief: ChapterBrief,
        *,
        mode: WriteMode,
        previous: str | None,
        revision: RevisionOrder | None,
        on_text: Callable[[str], None],
        on_reset: Callable[[], None],
    ) -> AgentResult[str]:
        record = self._call(f"write:{mode.value}")
        n = brief.chapter
        body = (
            f"# 第{n}章 山门\n\n　　林风嘴角勾起一抹冷笑，推开山门。“师父，我回来了。”\n\n　　院中无人，只有风。"
            + "\n\n　　他沿着石阶往上走，一步一步数着台阶。" * 8
            + (
                ""
                if revision is None
                else f"\n\n　　（修订：{'；'.join(revision.violations + revision.fixes)}）"
            )
        )
        for piece in (body[: len(body) // 2], body[len(body) // 2 :]):
            if self.write_delay:
                await asyncio.sleep(self.write_delay)
            on_text(piece)
        return AgentResult(body, [record])

    async def summarize(self, brief: ChapterBrief, text: str) -> AgentResult[SummaryOutput]:
        record = self._call("summarize")
        n = brief.chapter
        patch = {
            "chapter": n,
            "base_state_version": n - 1,
            "storyline_id": "main_arc",
            "ops": [{"op": "set", "path": "characters.lin-feng.location", "value": f"山门{n}"}],
        }
        return AgentResult(
            SummaryOutput(f"第{n}章：林风回到山门。", patch, "main_arc", f"林风第{n}章回山。"), [record]
        )

    async def refine(
        self, brief: ChapterBrief, text: str, *, focus: RefineFocus | None = None
    ) -> AgentResult[RefineEdits]:
        record = self._call("refine")
        self.focuses.append(focus)
        edits = (
            [RefineEdit(original="嘴角勾起一抹冷笑", refined="哼了一声", reason="黑名单")]
            if "嘴角" in text
            else []
        )
        return AgentResult(RefineEdits(edits=edits), [record])

    async def judge(self, brief: ChapterBrief, text: str, *, secondary: bool) -> AgentResult[Evaluation]:
        record = self._call("judge2" if secondary else "judge")
        source = self.secondary_scores if secondary else self.scores
        score = source.pop(0) if len(source) > 1 else source[0]
        violations = self.violations.pop(0) if (self.violations and not secondary) else 0
        return AgentResult(evaluation(brief.chapter, score, violations=violations), [record])
