"""Provider presets: Anthropic and the Anthropic-compatible endpoints Chinese authors use.

Model ids and prices here are only defaults that seed a new settings file; the user edits them in settings.
Prices are USD per million tokens as published when this table was written; check the provider's page.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field


class ModelPrice(BaseModel):
    """USD per million tokens for one model."""

    model_config = ConfigDict(extra="ignore")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_write: float = Field(ge=0)
    cache_read: float = Field(ge=0)


@dataclass(frozen=True)
class ProviderPreset:
    """One selectable provider: where it lives and which models it suggests."""

    id: str
    display_name: str
    base_url: str
    strong_model: str
    cheap_model: str
    #: The provider honours ``cache_control`` breakpoints (others cache automatically or not at all;
    #: the breakpoints are sent anyway and ignored).
    supports_prompt_caching: bool
    supports_batches: bool
    #: A third, fast and cheap tier for the per-chapter bulk (FAST_ROLES); None: those roles keep the
    #: strong/cheap split.
    fast_model: str | None = None
    #: Default prices of the preset's models.
    prices: dict[str, ModelPrice] = field(default_factory=dict)
    key_help: str = ""
    #: False for a server on the author's own machine that checks no key (Ollama, llama.cpp): the client
    #: sends a placeholder and never reads the keyring or ANTHROPIC_API_KEY for it.
    requires_key: bool = True
    #: What the author runs to get a model the server does not have ("{model}" is filled in); local only.
    pull_hint: str = ""
    #: What the author runs to start the server; local only.
    start_hint: str = ""

    @property
    def local(self) -> bool:
        """A model server on the author's machine (no key, no price, no prompt caching)."""
        return not self.requires_key


def _price(inp: float, out: float, write: float, read: float) -> ModelPrice:
    return ModelPrice(input=inp, output=out, cache_write=write, cache_read=read)


ANTHROPIC = ProviderPreset(
    id="anthropic",
    display_name="Anthropic（Claude 官方）",
    base_url="https://api.anthropic.com",
    strong_model="claude-opus-4-6",
    cheap_model="claude-sonnet-4-6",
    # Issue 18 over the seed's table: at 1 token per 汉字 the writer's ~3,000 output tokens on Sonnet are
    # ~$0.045 and a 1.7K-token Sonnet judge another $0.026, so a chapter cannot cost <= $0.08 unless the
    # summarizer, the refiner and the ordinary judge run on Haiku (the key-chapter judge stays on Opus).
    fast_model="claude-haiku-4-5",
    supports_prompt_caching=True,
    supports_batches=True,
    prices={
        # Cache writes cost 1.25x input, reads 0.1x (5-minute TTL).
        "claude-opus-4-6": _price(5.0, 25.0, 6.25, 0.50),
        "claude-sonnet-4-6": _price(3.0, 15.0, 3.75, 0.30),
        "claude-haiku-4-5": _price(1.0, 5.0, 1.25, 0.10),
    },
    key_help="在 console.anthropic.com 创建 API Key",
)

DEEPSEEK = ProviderPreset(
    id="deepseek",
    display_name="DeepSeek（深度求索）",
    base_url="https://api.deepseek.com/anthropic",
    strong_model="deepseek-reasoner",
    cheap_model="deepseek-chat",
    supports_prompt_caching=False,  # automatic disk cache; cache_control is ignored
    supports_batches=False,
    prices={
        "deepseek-reasoner": _price(0.28, 0.42, 0.28, 0.028),
        "deepseek-chat": _price(0.28, 0.42, 0.28, 0.028),
    },
    key_help="在 platform.deepseek.com 创建 API Key",
)

KIMI = ProviderPreset(
    id="kimi",
    display_name="Kimi（月之暗面 Moonshot）",
    base_url="https://api.moonshot.cn/anthropic",
    strong_model="kimi-k2-thinking",
    cheap_model="kimi-k2-0905-preview",
    supports_prompt_caching=False,  # automatic context cache
    supports_batches=False,
    prices={
        "kimi-k2-thinking": _price(0.60, 2.50, 0.60, 0.15),
        "kimi-k2-0905-preview": _price(0.60, 2.50, 0.60, 0.15),
    },
    key_help="在 platform.moonshot.cn 创建 API Key",
)

GLM = ProviderPreset(
    id="glm",
    display_name="GLM（智谱 Zhipu）",
    base_url="https://open.bigmodel.cn/api/anthropic",
    strong_model="glm-4.6",
    cheap_model="glm-4.5-air",
    supports_prompt_caching=False,  # automatic context cache
    supports_batches=False,
    prices={
        "glm-4.6": _price(0.60, 2.20, 0.60, 0.11),
        "glm-4.5-air": _price(0.20, 1.10, 0.20, 0.03),
    },
    key_help="在 open.bigmodel.cn 创建 API Key",
)

QWEN = ProviderPreset(
    id="qwen",
    display_name="通义千问（阿里云百炼 DashScope 国际站）",
    base_url="https://dashscope-intl.aliyuncs.com/apps/anthropic",
    strong_model="qwen3-max",
    cheap_model="qwen-plus",
    supports_prompt_caching=False,
    supports_batches=False,
    prices={
        "qwen3-max": _price(1.20, 6.00, 1.20, 0.24),
        "qwen-plus": _price(0.40, 1.20, 0.40, 0.08),
    },
    key_help="在阿里云百炼控制台创建 API Key",
)

CUSTOM = ProviderPreset(
    id="custom",
    display_name="自定义（任意 Anthropic 兼容地址）",
    base_url="http://127.0.0.1:8000",
    strong_model="claude-opus-4-6",
    cheap_model="claude-sonnet-4-6",
    supports_prompt_caching=True,
    supports_batches=False,
    prices={},
    key_help="填写该服务要求的 API Key；不校验密钥的本地服务可填任意值",
)

# Local servers that speak the Messages API themselves. They check no key (the SDK still sends a header: a
# placeholder), cost nothing, and claim no prompt caching. The model names are only suggestions: the author
# types the ones they have pulled, per agent, on the settings' model page.
OLLAMA = ProviderPreset(
    id="ollama",
    display_name="Ollama（本地模型）",
    base_url="http://localhost:11434",
    strong_model="qwen3:14b",
    cheap_model="qwen3:8b",
    supports_prompt_caching=False,
    supports_batches=False,
    prices={"qwen3:14b": _price(0, 0, 0, 0), "qwen3:8b": _price(0, 0, 0, 0)},
    key_help="本地模型不需要 API Key",
    requires_key=False,
    pull_hint="ollama pull {model}",
    start_hint="ollama serve",
)

LLAMA_CPP = ProviderPreset(
    id="llamacpp",
    display_name="llama.cpp server（本地模型）",
    base_url="http://localhost:8080",
    # llama-server answers with the model it was started with, whatever name a request gives.
    strong_model="local-model",
    cheap_model="local-model",
    supports_prompt_caching=False,
    supports_batches=False,
    prices={"local-model": _price(0, 0, 0, 0)},
    key_help="本地模型不需要 API Key",
    requires_key=False,
    pull_hint="llama-server -m <model.gguf> --alias {model}",
    start_hint="llama-server -m <model.gguf>",
)

#: Every preset by id, in the order the settings dialog lists them.
PRESETS: dict[str, ProviderPreset] = {
    p.id: p for p in (ANTHROPIC, DEEPSEEK, KIMI, GLM, QWEN, OLLAMA, LLAMA_CPP, CUSTOM)
}
#: The key a local server is sent (it checks none; the SDK needs one to send a request at all).
LOCAL_PLACEHOLDER_KEY = "local"

DEFAULT_PROVIDER = "anthropic"


def get_preset(provider: str) -> ProviderPreset:
    """The preset with this id; an unknown id (from a newer version) falls back to ``custom``."""
    return PRESETS.get(provider, CUSTOM)


def default_prices() -> dict[str, ModelPrice]:
    """The price table of every preset's models, merged (model ids do not collide across providers)."""
    table: dict[str, ModelPrice] = {}
    for preset in PRESETS.values():
        for model, price in preset.prices.items():
            table[model] = price.model_copy()
    return table
