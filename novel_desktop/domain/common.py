"""Shared building blocks of the domain models."""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

#: Entity and storyline ids in state paths are slugs: lower-case ASCII words joined by '-' or '_'.
SLUG_RE = re.compile(r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$")
#: NOVEL_ASK question ids and answer keys.
SNAKE_CASE_RE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")


class SeedModel(BaseModel):
    """Base of every seed format.

    Unknown keys are kept (``extra="allow"``) so that a file written by another tool or a newer version
    survives an import/export round trip unchanged.
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def to_json_dict(self) -> dict[str, Any]:
        """The JSON object this model stands for, unknown keys included, unset optional keys left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


_T = TypeVar("_T")


def reject_duplicates(items: Sequence[_T], key: Callable[[_T], Hashable], message: str) -> Sequence[_T]:
    """``items`` unchanged, or ValueError(``message`` formatted with ``key=``) at the first repeated key: the
    one uniqueness check of the validators (rule ids, contract ids and versions, character slugs)."""
    seen: set[Hashable] = set()
    for item in items:
        k = key(item)
        if k in seen:
            raise ValueError(message.format(key=k))
        seen.add(k)
    return items


def utc_now() -> datetime:
    """The current time with its zone, for audit fields."""
    return datetime.now(UTC)


def iso_now() -> str:
    """The current time as an RFC 3339 string with a zone."""
    return utc_now().isoformat(timespec="seconds")
