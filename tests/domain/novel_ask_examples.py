"""The NOVEL_ASK fixture files and a helper the NOVEL_ASK tests share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from novel_desktop.domain.novel_ask import ValidationProblem

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "novel_ask"


def load_fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def fields(problems: list[ValidationProblem]) -> list[str]:
    return [p.field for p in problems]
