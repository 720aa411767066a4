"""What an agent hands back to the pipeline (seed 001 §10.1, §10.5).

Agents never ask the user: one that needs a decision returns :class:`RequiresUserDecision`, which the
pipeline turns into a NOVEL_ASK question.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Discriminator, Field, Tag, TypeAdapter

from novel_desktop.domain.common import SeedModel
from novel_desktop.domain.seed_fields import ChapterNo, Count, Level, Score, WrittenWhole


class ChapterCompleted(WrittenWhole):
    """A chapter was written and its state updated."""

    # The tag must be written even when the model was built in code, or the reply could not be told apart.
    always_written: ClassVar[tuple[str, ...]] = ("status",)

    status: Literal["completed"] = "completed"
    chapter: ChapterNo
    word_count: Count
    quality_score: Score | None = None
    summary: str = ""


class ConflictDetected(WrittenWhole):
    """The agent found a plot conflict that must be fixed before going on."""

    always_written: ClassVar[tuple[str, ...]] = ("status",)

    status: Literal["conflict_detected"] = "conflict_detected"
    chapter: ChapterNo
    detail: str
    severity: Level


class RequiresUserDecision(WrittenWhole):
    """The agent's output needs the user's confirmation or choice (outline, contract change, low score)."""

    always_written: ClassVar[tuple[str, ...]] = ("type",)

    type: Literal["requires_user_decision"] = "requires_user_decision"
    recommendation: str
    options: list[str] = Field(min_length=1)
    rationale: str = ""
    #: The agent's full output, shown to the user and used once they decide.
    data: dict[str, Any] = Field(default_factory=dict)


def _return_kind(value: Any) -> str | None:
    # A decision is tagged by "type", the two outcomes by "status".
    if isinstance(value, SeedModel):
        value = value.to_json_dict()
    if not isinstance(value, Mapping):
        return None
    if value.get("type") == "requires_user_decision":
        return "requires_user_decision"
    status = value.get("status")
    return status if status in ("completed", "conflict_detected") else None


#: Any agent return, told apart by its ``status`` or ``type`` key.
AgentReturn = Annotated[
    Annotated[ChapterCompleted, Tag("completed")]
    | Annotated[ConflictDetected, Tag("conflict_detected")]
    | Annotated[RequiresUserDecision, Tag("requires_user_decision")],
    Discriminator(_return_kind),
]

_ADAPTER: TypeAdapter[ChapterCompleted | ConflictDetected | RequiresUserDecision] = TypeAdapter(AgentReturn)

_FENCED_JSON = re.compile(r"```(?:json)?\s*\n(.*?)\n\s*```", re.DOTALL)


def _extract_json(text: str) -> Any:
    # Agents answer in "structured text": bare JSON, JSON in a ```json fence, or JSON inside prose.
    try:
        return json.loads(text)
    except ValueError:
        pass
    for block in _FENCED_JSON.findall(text):
        try:
            return json.loads(block)
        except ValueError:
            continue
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        try:
            return json.loads(text[start : end + 1])
        except ValueError:
            pass
    raise ValueError("no JSON object found in the agent's reply")


def parse_agent_return(
    value: Mapping[str, Any] | str,
) -> ChapterCompleted | ConflictDetected | RequiresUserDecision:
    """Parse an agent's return into the matching model.

    ``value`` is a decoded JSON object or the agent's raw reply text. Raises ``pydantic.ValidationError``
    when the object is not one of the three kinds or a field is wrong, and ``ValueError`` when the text
    holds no JSON object (``ValidationError`` is a ``ValueError`` too, so one ``except`` catches both).
    """
    data = _extract_json(value) if isinstance(value, str) else value
    return _ADAPTER.validate_python(data)
