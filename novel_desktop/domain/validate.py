"""Which seed format a project file holds, and whether its content matches it.

Used when a project folder is imported: a file that does not match is still kept, with these problems shown.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ValidationError

_VALIDATORS: list[tuple[re.Pattern[str], str, str]] = []


def problems_for(path: str, data: Any) -> list[str]:
    """Problems of ``data`` (parsed JSON) against the seed format of ``path``; [] when fine or unknown."""
    model = model_for(path)
    if model is None:
        return []
    try:
        model.model_validate(data)
    except ValidationError as exc:
        return [
            f"{'.'.join(str(p) for p in err['loc']) or '(根)'}: {err['msg']}"
            for err in exc.errors(include_url=False)
        ]
    return []


def model_for(path: str) -> type[BaseModel] | None:
    """The domain model of a project-relative path, if the seed defines one."""
    _ = path
    return None
