"""Shared building blocks of the domain models."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

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


def utc_now() -> datetime:
    """The current time with its zone, for audit fields."""
    return datetime.now(UTC)


def iso_now() -> str:
    """The current time as an RFC 3339 string with a zone."""
    return utc_now().isoformat(timespec="seconds")
