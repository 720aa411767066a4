"""LLM settings: provider, a model per agent role, prices, output limits, timeouts and retries.

The settings file is plain JSON in the user's config folder. It never holds the API key (see ``secrets``).
Model ids are data: a new model needs an edit of the settings, not of the code.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from novel_desktop.llm.providers import DEFAULT_PROVIDER, ModelPrice, default_prices, get_preset
from novel_desktop.llm.roles import FAST_ROLES, STRONG_ROLES, AgentRole

log = logging.getLogger(__name__)

SETTINGS_FILE_NAME = "llm.json"

_DEFAULT_MAX_TOKENS: dict[AgentRole, int] = {
    AgentRole.world_builder: 8192,
    AgentRole.character_weaver: 8192,
    # A volume outline of 30-50 chapters with contracts is long.
    AgentRole.plot_architect: 16000,
    # A 3,000-4,000 character chapter is about 5-6k tokens; leave room.
    AgentRole.chapter_writer: 8192,
    AgentRole.summarizer: 4096,
    AgentRole.style_analyzer: 4096,
    AgentRole.style_refiner: 8192,
    AgentRole.quality_judge: 4096,
    AgentRole.consistency_auditor: 4096,
    AgentRole.reviser: 8192,
    AgentRole.judge_secondary: 4096,
}

_DEFAULT_TIMEOUT_S: dict[AgentRole, float] = {
    role: (900.0 if role in {AgentRole.plot_architect, AgentRole.world_builder} else 600.0)
    for role in AgentRole
}


#: A local model on the author's own hardware may think for minutes before its first token (loading the
#: model, reading a 20,000-token prompt on a CPU) and write slowly: no byte for this long is a dropped
#: connection ...
LOCAL_READ_TIMEOUT_S = 900.0
#: ... and a stage may take this long, per role.
LOCAL_STAGE_TIMEOUT_S = 3600.0


def local_timeouts(data: dict[str, object]) -> dict[str, object]:
    """``data`` (a settings dump) with the local-model timeouts where it still has the defaults: for a new
    local preset, without undoing what the author set by hand."""
    out = dict(data)
    if out.get("read_timeout_s") == LLMSettings.model_fields["read_timeout_s"].default:
        out["read_timeout_s"] = LOCAL_READ_TIMEOUT_S
    stages = out.get("stage_timeout_s")
    if isinstance(stages, dict):
        out["stage_timeout_s"] = {
            role: LOCAL_STAGE_TIMEOUT_S if seconds == _DEFAULT_TIMEOUT_S.get(AgentRole(role)) else seconds
            for role, seconds in stages.items()
        }
    return out


def default_models(provider: str = DEFAULT_PROVIDER) -> dict[AgentRole, str]:
    """A provider's split: its fast model (if it has one) for FAST_ROLES, its strong model for STRONG_ROLES,
    its cheap one for the rest (the seed's two-tier split, plus issue 18's fast tier)."""
    preset = get_preset(provider)

    def model(role: AgentRole) -> str:
        if preset.fast_model and role in FAST_ROLES:
            return preset.fast_model
        return preset.strong_model if role in STRONG_ROLES else preset.cheap_model

    return {role: model(role) for role in AgentRole}


class RetrySettings(BaseModel):
    """Retry policy for transient failures (429, 5xx, 529, network, an error inside a stream)."""

    model_config = ConfigDict(extra="ignore")

    #: Attempts in all, the first one included.
    max_attempts: int = Field(default=4, ge=1, le=20)
    #: Backoff before retry n is base * 2**(n-1), with jitter, capped at max_backoff_s.
    base_backoff_s: float = Field(default=2.0, ge=0)
    max_backoff_s: float = Field(default=60.0, ge=0)


class LLMSettings(BaseModel):
    """Everything about model calls that the author can change; JSON-serialisable, never holds a key."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    #: A key of ``providers.PRESETS``.
    provider: str = DEFAULT_PROVIDER
    #: Overrides the preset's base URL (required for ``custom``). ANTHROPIC_BASE_URL overrides both.
    base_url: str | None = None
    models: dict[AgentRole, str] = Field(default_factory=default_models)
    #: USD per million tokens, by model id.
    prices: dict[str, ModelPrice] = Field(default_factory=default_prices)
    max_tokens: dict[AgentRole, int] = Field(default_factory=lambda: dict(_DEFAULT_MAX_TOKENS))
    #: The whole stage (every attempt and backoff included) must finish within this, per role.
    stage_timeout_s: dict[AgentRole, float] = Field(default_factory=lambda: dict(_DEFAULT_TIMEOUT_S))
    #: No byte for this long on an open connection counts as a dropped connection (and is retried).
    read_timeout_s: float = Field(default=120.0, gt=0)
    connect_timeout_s: float = Field(default=15.0, gt=0)
    retry: RetrySettings = Field(default_factory=RetrySettings)

    @model_validator(mode="after")
    def _fill_missing_roles(self) -> LLMSettings:
        # A file written before a role existed still gets a model, a limit and a timeout for it.
        split = default_models(self.provider)
        for role in AgentRole:
            self.models.setdefault(role, split[role])
            self.max_tokens.setdefault(role, _DEFAULT_MAX_TOKENS[role])
            self.stage_timeout_s.setdefault(role, _DEFAULT_TIMEOUT_S[role])
        return self

    @classmethod
    def for_provider(cls, provider: str, **overrides: object) -> LLMSettings:
        """Settings with the provider's model split (and, for a local server, its longer timeouts); prices
        keep the merged default table."""
        settings = cls.model_validate({"provider": provider, "models": default_models(provider), **overrides})
        if get_preset(provider).local:
            settings = cls.model_validate(local_timeouts(settings.model_dump(mode="json")))
        return settings

    def model_for(self, role: AgentRole) -> str:
        """The model id this role calls."""
        return self.models.get(role) or default_models(self.provider)[role]

    def max_tokens_for(self, role: AgentRole) -> int:
        """The output limit of this role."""
        return self.max_tokens.get(role, _DEFAULT_MAX_TOKENS[role])

    def timeout_for(self, role: AgentRole) -> float:
        """The stage timeout of this role, in seconds."""
        return self.stage_timeout_s.get(role, _DEFAULT_TIMEOUT_S[role])

    def price_for(self, model: str) -> ModelPrice | None:
        """The price of a model, or None when the table does not know it (its cost then counts as 0)."""
        return self.prices.get(model)


class LoadedSettings(NamedTuple):
    """What ``load_settings`` found: the settings to use and, if the file was unusable, why (Chinese)."""

    settings: LLMSettings
    problem: str | None


def default_settings_path() -> Path:
    """``llm.json`` in the user's config folder."""
    from novel_desktop.paths import user_config_dir

    return user_config_dir() / SETTINGS_FILE_NAME


def load_settings(path: Path | None = None) -> LoadedSettings:
    """Read the settings; defaults when the file is missing; never raises.

    A broken file (bad JSON, invalid values, unreadable) gives the defaults plus a message; the broken file
    is copied aside to ``<name>.broken`` so a later save does not destroy what the author wrote.
    """
    path = path or default_settings_path()
    if not path.exists():
        return LoadedSettings(LLMSettings(), None)
    try:
        raw = path.read_text(encoding="utf-8")
        return LoadedSettings(LLMSettings.model_validate_json(raw), None)
    except (OSError, UnicodeDecodeError) as exc:
        problem = f"无法读取模型设置文件 {path}：{exc.__class__.__name__}。已使用默认设置。"
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else None
        where = ".".join(str(p) for p in first["loc"]) if first else ""
        detail = f"{where}：{first['msg']}" if first else str(exc)
        problem = (
            f"模型设置文件 {path} 已损坏或格式不对（{detail}），已使用默认设置；"
            f"原文件另存为 {path.name}.broken。"
        )
    backup = path.with_name(path.name + ".broken")
    try:
        shutil.copyfile(path, backup)
    except OSError:
        log.warning("could not keep a copy of the broken settings file %s", path)
    log.warning("LLM settings unusable, using defaults: %s", problem)
    return LoadedSettings(LLMSettings(), problem)


def save_settings(settings: LLMSettings, path: Path | None = None) -> None:
    """Write the settings atomically (a crash leaves the old file or the new one, never half)."""
    path = path or default_settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(settings.model_dump(mode="json"), ensure_ascii=False, indent=2)
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(data + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
