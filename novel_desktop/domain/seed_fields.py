"""Field types and a base class shared by the seed-format models.

The seed files are written by LLM agents and by hand, so the field types here are chosen to read them
without losing anything on the way back out: numbers keep their int/float kind, timestamps keep their
exact text.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, BeforeValidator, Field

from novel_desktop.domain.common import SLUG_RE, SeedModel


def _timestamp_to_text(value: Any) -> Any:
    # Code hands us datetimes; files hand us strings. Both are stored as the string so that
    # "2026-02-27T10:12:34.000Z" is written back exactly as it was read.
    if isinstance(value, datetime):
        return value.isoformat(timespec="seconds")
    return value


def _check_timestamp(value: str) -> str:
    try:
        datetime.fromisoformat(value)
    except ValueError as exc:
        raise ValueError(f"not an ISO 8601 date-time: {value!r}") from exc
    return value


#: An ISO 8601 date-time kept as its original text (a datetime is accepted and formatted on the way in).
IsoTimestamp = Annotated[str, BeforeValidator(_timestamp_to_text), AfterValidator(_check_timestamp)]


def _check_slug(value: str) -> str:
    if not SLUG_RE.fullmatch(value):
        raise ValueError(f"not a slug (lower-case ASCII words joined by '-' or '_'): {value!r}")
    return value


#: An entity, storyline or foreshadowing id: lower-case ASCII words joined by '-' or '_'.
Slug = Annotated[str, AfterValidator(_check_slug)]

#: A chapter number (chapters count from 1).
ChapterNo = Annotated[int, Field(ge=1)]

#: A non-negative count (tokens, milliseconds, revisions).
Count = Annotated[int, Field(ge=0)]

#: A JSON number that keeps its kind (``18`` stays an int, ``18.5`` a float), so files round-trip as written.
Number = int | float

#: A non-negative JSON number that keeps its kind.
NonNegative = Annotated[int, Field(ge=0)] | Annotated[float, Field(ge=0)]

#: A score on the judge's 1-5 scale (an int or a float such as 3.5).
Score = Annotated[int, Field(ge=1, le=5)] | Annotated[float, Field(ge=1, le=5)]

#: The three-level scale used for confidence, severity and leak risk.
Level = Literal["high", "medium", "low"]

#: Hard rules block a chapter; soft rules are only reported.
ConstraintType = Literal["hard", "soft"]

__all__ = [
    "ChapterNo",
    "ConstraintType",
    "Count",
    "IsoTimestamp",
    "Level",
    "NonNegative",
    "Number",
    "Score",
    "Slug",
    "WrittenWhole",
]


class WrittenWhole(SeedModel):
    """A seed model whose core keys are always written, even when they still hold their defaults.

    ``SeedModel.to_json_dict`` leaves out keys that were never set, which keeps imported files exactly as
    they were. Some files (the checkpoint, the state, a foreshadowing entry) must instead always carry
    their core keys, also when the model was created in code from defaults; subclasses list those keys in
    ``always_written``.
    """

    always_written: ClassVar[tuple[str, ...]] = ()

    def model_post_init(self, context: Any, /) -> None:
        """Mark the always-written keys as set so that ``to_json_dict`` includes them."""
        self.__pydantic_fields_set__.update(self.always_written)
