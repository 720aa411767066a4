"""Application settings that are not secrets: language, recent novels (``app.json`` in the config folder).

LLM settings live in ``llm.json`` (see ``llm.settings``); the API key lives in the OS keyring or the
environment, never here.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from novel_desktop.paths import user_config_dir

MAX_RECENT = 10


class AppSettings(BaseModel):
    language: Literal["zh", "en"] = "zh"
    recent_novels: list[str] = Field(default_factory=list)

    def add_recent(self, path: str | Path) -> None:
        p = str(Path(path).resolve())
        self.recent_novels = [p, *[r for r in self.recent_novels if r != p]][:MAX_RECENT]


def settings_path() -> Path:
    return user_config_dir() / "app.json"


def load_app_settings(path: Path | None = None) -> AppSettings:
    """The saved settings, or defaults when the file is missing or broken (never raises)."""
    p = path or settings_path()
    try:
        return AppSettings.model_validate(json.loads(p.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return AppSettings()


def save_app_settings(settings: AppSettings, path: Path | None = None) -> None:
    """Write atomically, so a crash never leaves a half-written settings file."""
    p = path or settings_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".app-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(settings.model_dump_json(indent=2))
    os.replace(tmp, p)
