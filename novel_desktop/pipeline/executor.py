"""Steps for an external executor (Claude Code, Codex) working on an exported project folder (seed 000).

The novel's checkpoint says which step comes next (:mod:`novel_desktop.pipeline.executor_steps`);
:mod:`novel_desktop.pipeline.executor_packets` describes that step as a seed-000 :class:`InstructionPacket`:
which agent runs, the project-relative files it reads (``manifest.paths``, §8.3) and small values inline, a
NOVEL_ASK gate (``novel_ask`` + ``answer_path``) where the author must decide, the files it must write
(``expected_outputs``), and the commands that follow. The executor writes those files into the folder
(``novel export-folder --skeleton``); :mod:`novel_desktop.pipeline.step_results` validates them and advances.
The steps are the built-in pipeline's (quick start, volume planning, the chapter pipeline, the volume review),
in the same order the orchestrator runs them (seed 004 §8.2)::

    novel:init               WorldBuilder (light) + CharacterWeaver; gate: platform binding   → QUICK_START
    novel:style              StyleAnalyzer → style-profile.json; then the trial outline of chapters 1-3
    chapter:001..003:*       the three trial chapters, through the chapter steps below
    novel:trial              no agent; gate: 继续 / 调整风格 / 重来                           → VOL_PLANNING
    volume:02:plan           PlotArchitect: the volume outline; gate: the author confirms     → WRITING
    chapter:048:draft        ChapterWriter → staging/chapters/chapter-048.md
    chapter:048:summarize    Summarizer → summary, state delta (and storyline memory)
    chapter:048:refine       StyleRefiner → the polished chapter (again once after a 3.5-3.9 verdict)
    chapter:048:judge        QualityJudge → the evaluation (and the second judge's on a key chapter)
    chapter:048:revise       reviser → a new staging/chapters/chapter-048.md from the judge's fixes
    chapter:048:commit       no agent: the quality gate, then the commit; gate when the score is 2.0-2.9
    volume:02:review         after the volume's last chapter; gate: 确认 / 修改 / 加角色    → VOL_PLANNING

This module holds what every part shares: step ids, errors, reading the outputs and the staged verdict.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from novel_desktop.domain.evaluation import Evaluation
from novel_desktop.domain.gate import GateDecision
from novel_desktop.domain.novel_ask import (
    AgentRef,
    ExpectedOutput,
    InstructionPacket,
    Manifest,
    NextAction,
    QuestionSpec,
    ValidationProblem,
)
from novel_desktop.domain.novel_ask_answers import evaluate_gate
from novel_desktop.pipeline.verdict import SECONDARY_EVAL, Verdict, staged_notes, staged_verdict
from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore, dumps

PACKET_VERSION = 1
CHAPTER_ACTIONS = ("draft", "summarize", "refine", "judge", "revise", "commit")
VOLUME_ACTIONS = ("plan", "review")
NOVEL_ACTIONS = ("init", "style", "trial")
#: The chapter pipeline's stages a checkpoint may name (``pipeline_stage``); None means none in flight.
PIPELINE_STAGES = ("drafting", "drafted", "refined", "judged", "committed")

_CHAPTER_STEP = re.compile(r"^chapter:(\d{3,}):(" + "|".join(CHAPTER_ACTIONS) + r")$")
_VOLUME_STEP = re.compile(r"^volume:(\d{2,}):(" + "|".join(VOLUME_ACTIONS) + r")$")
_NOVEL_STEP = re.compile(r"^novel:(" + "|".join(NOVEL_ACTIONS) + r")$")


class StepError(ValueError):
    """The step id is malformed or names a step that cannot be described now."""


class CheckpointError(StepError):
    """The checkpoint names something no step follows from (an unknown ``pipeline_stage``)."""


class StepInvalid(Exception):
    """The step's outputs (or its gate's answer) do not validate; ``problems`` says why."""

    def __init__(self, step: str, problems: list[ValidationProblem]) -> None:
        self.step = step
        self.problems = problems
        lines = "\n".join(f"- {p}" for p in problems)
        super().__init__(f"步骤 {step} 未通过校验 (step not valid)：\n{lines}")


class StepRefused(Exception):
    """The step validated but cannot advance now (out of order, or the author's answer says stop)."""


@dataclass(frozen=True)
class Step:
    """A parsed step id."""

    kind: str  # "chapter" | "volume" | "novel"
    action: str
    number: int = 0

    @property
    def id(self) -> str:
        if self.kind == "chapter":
            return f"chapter:{layout.num(self.number)}:{self.action}"
        if self.kind == "volume":
            return f"volume:{self.number:02d}:{self.action}"
        return f"novel:{self.action}"


def parse_step(step: str) -> Step:
    """Parse ``chapter:048:draft``, ``volume:02:plan``, ``volume:01:review`` or ``novel:init``; raise
    :class:`StepError`."""
    text = step.strip()
    m = _NOVEL_STEP.match(text)
    if m:
        return Step("novel", m.group(1))
    m = _CHAPTER_STEP.match(text)
    if m:
        if int(m.group(1)) < 1:
            raise StepError(f"章节号必须从 1 开始：{step} (chapter numbers start at 1)")
        return Step("chapter", m.group(2), int(m.group(1)))
    m = _VOLUME_STEP.match(text)
    if m and int(m.group(1)) >= 1:
        return Step("volume", m.group(2), int(m.group(1)))
    raise StepError(
        f"无法识别的步骤：{step!r}（应为 chapter:048:draft、volume:02:plan、volume:01:review、"
        "novel:init、novel:style 或 novel:trial） (unknown step)"
    )


# ---------------------------------------------------------------------------- reading outputs
class FolderReader:
    """Reads project-relative paths from an exported folder, or from the novel when there is none."""

    def __init__(self, store: NovelStore, folder: Path | None) -> None:
        self.store = store
        self.folder = folder

    def read(self, path: str) -> str | None:
        if self.folder is not None:
            target = self.folder / path
            try:
                return target.read_text(encoding="utf-8") if target.is_file() else None
            except (OSError, UnicodeDecodeError):
                return None
        return store_text(self.store, path)


def store_text(store: NovelStore, path: str) -> str | None:
    """The text the novel holds for a project-relative path of the §9.1 layout, or None."""
    kind, number = layout.classify(path)
    K = layout.Kind
    if kind is K.ANSWER:
        return store.answer(path)
    if kind is K.STAGING:
        return store.staging(path.removeprefix("staging/"))
    if kind is K.DOCUMENT:
        return store.document(path)
    if kind is K.CHAPTER and number is not None:
        return store.chapter_text(number)
    if kind is K.SUMMARY and number is not None:
        return store.summary(number)
    if kind is K.EVALUATION and number is not None:
        ev = store.evaluation(number)
        return dumps(ev) if ev is not None else None
    if kind is K.CURRENT_STATE:
        return dumps(store.current_state())
    if kind is K.CHECKPOINT:
        return dumps(store.checkpoint())
    return None


# ---------------------------------------------------------------------------- where the novel stands
def key_chapter(store: NovelStore, n: int) -> bool:
    """Whether chapter ``n`` is judged twice (volume start or end, a convergence event), as the pipeline."""
    from novel_desktop.agents.context import load_facts

    return load_facts(store, n).key_chapter


def secondary_eval_path(n: int) -> str:
    """The project-relative path of the second judge's evaluation in staging."""
    return f"staging/{SECONDARY_EVAL.format(n=layout.num(n))}"


def staged_gate(store: NovelStore, n: int) -> Verdict | None:
    """The quality gate's verdict on the staged chapter (the lower judge counts on key chapters)."""
    revisions = int(staged_notes(store, n)["revisions"])
    return staged_verdict(store, n, revisions=revisions, secondary=key_chapter(store, n))


def gate_decision(store: NovelStore, n: int) -> tuple[GateDecision, Evaluation] | None:
    """The quality gate's decision on the staged evaluation (the lower judge counts on key chapters)."""
    verdict = staged_gate(store, n)
    return None if verdict is None else (verdict.decision, verdict.evaluation)


def commit_answer_path(store: NovelStore, n: int) -> str:
    # One question per judging round, so that a re-judged chapter is asked afresh.
    rounds = len(staged_notes(store, n)["scores"])
    return f"{layout.NOVEL_ASK_DIR}chapter-{layout.num(n)}-commit-j{rounds}.answers.json"


def answer_choice(store: NovelStore, answer_path: str, spec: QuestionSpec, question: str) -> str | None:
    raw = store.answer(answer_path)
    if raw is None:
        return None
    try:
        outcome = evaluate_gate(spec, json.loads(raw))
    except json.JSONDecodeError:
        return None
    if outcome.answer is None:
        return None
    value = outcome.answer.answers.get(question)
    return value if isinstance(value, str) else None


def chapter_facts(store: NovelStore, n: int) -> tuple[int, str | None, str]:
    """Volume, storyline and outline section of chapter ``n``."""
    from novel_desktop.agents.context import load_facts

    facts = load_facts(store, n)
    return facts.volume, facts.storyline_id, facts.chapter_outline


# ---------------------------------------------------------------------------- packets
def existing(store: NovelStore, paths: dict[str, str | list[str]]) -> dict[str, str | list[str]]:
    """Keep only the inputs the novel (and so an exported folder) actually has."""
    out: dict[str, str | list[str]] = {}
    for key, value in paths.items():
        if isinstance(value, list):
            kept = [p for p in value if store_text(store, p) is not None]
            if kept:
                out[key] = kept
        elif store_text(store, value) is not None:
            out[key] = value
    return out


def output(path: str, note: str | None = None, *, required: bool = True) -> ExpectedOutput:
    return ExpectedOutput(path=path, required=required, note=note)


ANSWER_NOTE = "AnswerSpec JSON record for the NOVEL_ASK gate (written before main step execution)."


def make_packet(
    step: Step,
    agent: AgentRef,
    paths: dict[str, str | list[str]],
    inline: dict[str, Any],
    outputs: list[ExpectedOutput],
    gate: tuple[QuestionSpec, str] | None = None,
) -> InstructionPacket:
    if gate is not None:
        outputs = [output(gate[1], ANSWER_NOTE), *outputs]
    return InstructionPacket(
        version=PACKET_VERSION,
        step=step.id,
        agent=agent,
        manifest=Manifest(mode="paths", inline=inline, paths=paths),
        novel_ask=gate[0] if gate else None,
        answer_path=gate[1] if gate else None,
        expected_outputs=outputs,
        next_actions=[
            NextAction(kind="command", command=f"novel validate {step.id}"),
            NextAction(kind="command", command=f"novel advance {step.id}"),
        ],
    )


def changed_chars(before: str, after: str) -> int:
    """How many characters a rewrite of ``before`` into ``after`` changed (per changed span, the longer
    side), the measure of the refiner's 15% budget."""
    matcher = SequenceMatcher(None, before, after, autojunk=False)
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")


__all__ = [
    "ANSWER_NOTE",
    "CHAPTER_ACTIONS",
    "PACKET_VERSION",
    "PIPELINE_STAGES",
    "CheckpointError",
    "FolderReader",
    "Step",
    "StepError",
    "StepInvalid",
    "StepRefused",
    "answer_choice",
    "changed_chars",
    "chapter_facts",
    "commit_answer_path",
    "existing",
    "gate_decision",
    "key_chapter",
    "make_packet",
    "output",
    "parse_step",
    "secondary_eval_path",
    "staged_gate",
    "store_text",
]
