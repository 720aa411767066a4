"""llm layer (see ARCHITECTURE.md): the provider client, streaming, retries, usage and cost accounting.

Importing this package does not import the anthropic SDK; the client imports it on its first call.
"""

from __future__ import annotations

from novel_desktop.llm.client import LLMClient, LLMResponse, PromptBlock, build_system
from novel_desktop.llm.errors import (
    LLMAuthError,
    LLMBadRequest,
    LLMConfigError,
    LLMConnectionError,
    LLMEmptyResponse,
    LLMError,
    LLMOverloaded,
    LLMQuotaError,
    LLMServerError,
    LLMTimeout,
    LLMTruncated,
)
from novel_desktop.llm.providers import PRESETS, ModelPrice, ProviderPreset
from novel_desktop.llm.roles import AgentRole
from novel_desktop.llm.settings import LLMSettings, LoadedSettings, load_settings, save_settings
from novel_desktop.llm.structured import StructuredResult, call_structured, parse_json_output
from novel_desktop.llm.usage import Usage

__all__ = [
    "PRESETS",
    "AgentRole",
    "LLMAuthError",
    "LLMBadRequest",
    "LLMClient",
    "LLMConfigError",
    "LLMConnectionError",
    "LLMEmptyResponse",
    "LLMError",
    "LLMOverloaded",
    "LLMQuotaError",
    "LLMResponse",
    "LLMServerError",
    "LLMSettings",
    "LLMTimeout",
    "LLMTruncated",
    "LoadedSettings",
    "ModelPrice",
    "PromptBlock",
    "ProviderPreset",
    "StructuredResult",
    "Usage",
    "build_system",
    "call_structured",
    "load_settings",
    "parse_json_output",
    "save_settings",
]
