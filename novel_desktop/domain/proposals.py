"""What an agent proposes and the author approves before it binds later chapters (seed 004 §6.5.5).

The world builder, the character weaver and the plot architect never write the novel directly: their output
is a :class:`Proposal` (a kind and a JSON payload). The author sees it as forms (the window) or as JSON (the
CLI, ``$EDITOR``) and answers one NOVEL_ASK question, :func:`review_spec`: 接受 (store it as proposed),
编辑 (store the author's edited payload, given in the answer's ``edited`` field as JSON text) or 重新生成
(ask the agent again, with the author's notes in ``changes``). Only an accepted payload is stored.

The same payload shapes serve later edits (a rule, a character, a contract, a storyline changed in the
middle of the novel): :func:`validate_payload` is the one check for the window's forms, the CLI's editor
and an answers file.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from novel_desktop.domain.characters import Character, Relationship
from novel_desktop.domain.common import SeedModel, reject_duplicates
from novel_desktop.domain.contracts import ChapterContract
from novel_desktop.domain.foreshadowing import VolumeForeshadowing
from novel_desktop.domain.novel_ask import AnswerSpec, QuestionSpec
from novel_desktop.domain.storylines import StorylineSchedule, StorylinesFile
from novel_desktop.domain.world import WorldRule

ProposalKind = Literal["world", "characters", "storylines", "volume_plan"]
PROPOSAL_KINDS: tuple[ProposalKind, ...] = ("world", "characters", "storylines", "volume_plan")
KIND_NAMES: dict[str, str] = {
    "world": "世界规则",
    "characters": "角色与契约",
    "storylines": "故事线",
    "volume_plan": "卷大纲与章节契约",
}

#: The review question's ids and the action labels (the answer values).
ACTION_Q = "review_action"
EDITED_Q = "edited"
CHANGES_Q = "changes"
ACCEPT = "接受"
EDIT = "编辑"
REGENERATE = "重新生成"


class WorldDocumentText(SeedModel):
    """A narrative world document (``world/<file>.md``) that comes with the rules."""

    file: str = Field(min_length=1)
    content: str = ""


class WorldPayload(SeedModel):
    """``world``: the L1 rules (ids unique) and the narrative documents that explain them."""

    rules: list[WorldRule] = Field(default_factory=list)
    documents: list[WorldDocumentText] = Field(default_factory=list)

    @field_validator("rules")
    @classmethod
    def _unique_rule_ids(cls, value: list[WorldRule]) -> list[WorldRule]:
        reject_duplicates(value, lambda r: r.id, "规则编号重复：{key}")
        return value


class CharactersPayload(SeedModel):
    """``characters``: characters (with their L2 contracts) and their relationships."""

    characters: list[Character] = Field(default_factory=list)
    relationships: list[Relationship] = Field(default_factory=list)

    @field_validator("characters")
    @classmethod
    def _unique_slugs(cls, value: list[Character]) -> list[Character]:
        reject_duplicates(value, lambda c: c.id, "角色 id 重复：{key}")
        return value


class VolumePlan(SeedModel):
    """``volume_plan``: a volume's outline as PlotArchitect derives it, with one contract per chapter."""

    outline: str = Field(min_length=1)
    chapter_contracts: list[ChapterContract] = Field(default_factory=list)
    storyline_schedule: StorylineSchedule | None = None
    foreshadowing: VolumeForeshadowing | None = None


PAYLOAD_MODELS: dict[str, type[SeedModel]] = {
    "world": WorldPayload,
    "characters": CharactersPayload,
    "storylines": StorylinesFile,
    "volume_plan": VolumePlan,
}


class Proposal(BaseModel):
    """One agent's output waiting for the author's approval."""

    kind: ProposalKind
    #: What the author sees as the dialog's title, e.g. 「快速起步：世界规则」.
    title: str
    payload: dict[str, Any]
    #: The first chapter the accepted payload binds (recorded in the changelog).
    effective_from: int = Field(default=1, ge=1)
    #: What the agent was asked, or why it ran (shown above the forms).
    note: str = ""

    def model(self) -> SeedModel:
        """The payload as its domain model (raises :class:`ProposalInvalid`)."""
        return parse_payload(self.kind, self.payload)

    def payload_text(self) -> str:
        """The payload as indented JSON, as the CLI's editor shows it."""
        return json.dumps(self.payload, ensure_ascii=False, indent=2)


class ProposalInvalid(ValueError):
    """An edited payload does not validate; ``problems`` says where, in Chinese."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("；".join(problems))


def _problems(exc: ValidationError) -> list[str]:
    out = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ())) or "(根)"
        out.append(f"{where}：{err.get('msg', '')}")
    return out


def parse_payload(kind: str, payload: Any) -> SeedModel:
    """Validate ``payload`` (parsed JSON) as a ``kind`` payload; raise :class:`ProposalInvalid`."""
    model = PAYLOAD_MODELS.get(kind)
    if model is None:
        raise ProposalInvalid([f"未知的提案类型：{kind}"])
    if not isinstance(payload, dict):
        raise ProposalInvalid(["内容必须是一个 JSON 对象（{…}）"])
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        raise ProposalInvalid(_problems(exc)) from None


def validate_payload(kind: str, payload: Any) -> list[str]:
    """The problems of ``payload`` as a ``kind`` payload; empty when it is valid."""
    try:
        parse_payload(kind, payload)
    except ProposalInvalid as exc:
        return exc.problems
    return []


def parse_payload_text(kind: str, text: str) -> SeedModel:
    """Parse JSON text (the editor's file, an answer's ``edited`` field) as a ``kind`` payload."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProposalInvalid([f"不是有效的 JSON：第 {exc.lineno} 行第 {exc.colno} 列，{exc.msg}"]) from None
    return parse_payload(kind, data)


def review_spec(
    proposal: Proposal,
    *,
    regenerate: bool = True,
    extra_options: Sequence[tuple[str, str]] = (),
    extra_questions: Sequence[dict[str, Any]] = (),
) -> QuestionSpec:
    """The one review question of a proposal: 接受 / 编辑 / 重新生成, with the edited JSON and notes.

    ``extra_options`` (label, description) follow the three (the volume plan's 调整章数); an answer choosing
    one reads back as action ``other`` with the label in ``choice``. ``extra_questions`` are appended.
    """
    name = KIND_NAMES.get(proposal.kind, proposal.kind)
    options = [
        {"label": ACCEPT, "description": f"推荐：按现状保存{name}，自第 {proposal.effective_from} 章起生效"},
        {"label": EDIT, "description": "先改（增删改条目）再保存；只保存你确认后的内容"},
    ]
    if regenerate:
        options.append({"label": REGENERATE, "description": "让智能体按你的意见重新生成"})
    options += [{"label": label, "description": desc} for label, desc in extra_options]
    return QuestionSpec.model_validate(
        {
            "version": 1,
            "topic": f"{proposal.kind} review",
            "questions": [
                {
                    "id": ACTION_Q,
                    "header": name[:12],
                    "question": f"{proposal.title}：保存前请确认。",
                    "kind": "single_choice",
                    "required": True,
                    "options": options,
                    "default": ACCEPT,
                },
                {
                    "id": EDITED_Q,
                    "header": "编辑后的内容",
                    "question": "编辑后的完整 JSON（选“编辑”时填写）",
                    "kind": "free_text",
                    "required": False,
                },
                {
                    "id": CHANGES_Q,
                    "header": "修改意见",
                    "question": "要智能体改什么？（选“重新生成”时填写）",
                    "kind": "free_text",
                    "required": False,
                },
                *extra_questions,
            ],
        }
    )


class ReviewDecision(BaseModel):
    """The author's answer to :func:`review_spec`, read back."""

    #: ``other``: one of the question's extra options (its label is in ``choice``).
    action: Literal["accept", "edit", "regenerate", "other"]
    #: The payload to store: the proposal's on 接受, the edited one on 编辑; None on 重新生成.
    payload: dict[str, Any] | None = None
    changes: str = ""
    #: The option label the author chose (接受 / 编辑 / 重新生成 / an extra option).
    choice: str = ACCEPT


def read_review(proposal: Proposal, answer: AnswerSpec) -> ReviewDecision:
    """What the author decided; an 编辑 whose JSON does not validate raises :class:`ProposalInvalid`."""
    answers = answer.answers
    action = answers.get(ACTION_Q)
    changes = str(answers.get(CHANGES_Q) or "").strip()
    if action == REGENERATE:
        return ReviewDecision(action="regenerate", changes=changes, choice=REGENERATE)
    if isinstance(action, str) and action not in (ACCEPT, EDIT, ""):
        return ReviewDecision(action="other", changes=changes, choice=action)
    if action == EDIT:
        text = answers.get(EDITED_Q)
        if not isinstance(text, str) or not text.strip():
            raise ProposalInvalid(["选了“编辑”，但回答里没有编辑后的 JSON（edited）"])
        model = parse_payload_text(proposal.kind, text)
        return ReviewDecision(action="edit", payload=model.to_json_dict(), changes=changes, choice=EDIT)
    parse_payload(proposal.kind, proposal.payload)
    return ReviewDecision(action="accept", payload=proposal.payload, changes=changes)
