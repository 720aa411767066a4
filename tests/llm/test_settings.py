"""LLM settings: defaults, round trip, broken files, presets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novel_desktop.llm import PRESETS, AgentRole, LLMSettings, load_settings, save_settings
from novel_desktop.llm.settings import default_settings_path


def test_defaults_split_three_tiers() -> None:
    """Issue 18 over the seed's table: the per-chapter bulk after the writer on Haiku (cost <= $0.08 a
    chapter), the writer on Sonnet, revision, the key-chapter judge and planning on Opus."""
    s = LLMSettings()
    assert s.provider == "anthropic"
    strong = {AgentRole.world_builder, AgentRole.character_weaver, AgentRole.plot_architect,
              AgentRole.reviser, AgentRole.judge_secondary}  # fmt: skip
    for role in strong:
        assert s.model_for(role) == "claude-opus-4-6"
    assert s.model_for(AgentRole.chapter_writer) == "claude-sonnet-4-6"
    for role in (AgentRole.summarizer, AgentRole.style_refiner, AgentRole.quality_judge):
        assert s.model_for(role) == "claude-haiku-4-5"
    for model in ("claude-opus-4-6", "claude-sonnet-4-6", "claude-haiku-4-5"):
        assert s.price_for(model) is not None


def test_a_provider_without_a_fast_tier_keeps_the_two_tier_split() -> None:
    s = LLMSettings.for_provider("deepseek")
    assert s.model_for(AgentRole.style_refiner) == PRESETS["deepseek"].strong_model
    assert s.model_for(AgentRole.summarizer) == PRESETS["deepseek"].cheap_model


def test_every_preset_model_has_a_price_and_url() -> None:
    s = LLMSettings()
    expected = {
        "anthropic": "https://api.anthropic.com",
        "deepseek": "https://api.deepseek.com/anthropic",
        "kimi": "https://api.moonshot.cn/anthropic",
        "glm": "https://open.bigmodel.cn/api/anthropic",
        "qwen": "https://dashscope-intl.aliyuncs.com/apps/anthropic",
    }
    for pid, url in expected.items():
        preset = PRESETS[pid]
        assert preset.base_url == url
        assert preset.display_name
        assert s.price_for(preset.strong_model) is not None
        assert s.price_for(preset.cheap_model) is not None
    assert "custom" in PRESETS
    assert PRESETS["anthropic"].supports_prompt_caching and PRESETS["anthropic"].supports_batches


def test_switching_provider_switches_the_model_split() -> None:
    s = LLMSettings.for_provider("deepseek")
    assert s.model_for(AgentRole.world_builder) == PRESETS["deepseek"].strong_model
    assert s.model_for(AgentRole.chapter_writer) == PRESETS["deepseek"].cheap_model


def test_round_trip(tmp_path: Path) -> None:
    s = LLMSettings(provider="kimi", base_url="https://proxy.example/anthropic")
    s.models[AgentRole.chapter_writer] = "my-model"
    s.max_tokens[AgentRole.summarizer] = 2000
    s.retry.max_attempts = 6
    path = tmp_path / "sub" / "llm.json"
    save_settings(s, path)

    loaded, problem = load_settings(path)

    assert problem is None
    assert loaded == s
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["models"]["chapter_writer"] == "my-model"
    assert not any("key" in k.lower() for k in data)


def test_missing_file_gives_defaults_silently(tmp_path: Path) -> None:
    settings, problem = load_settings(tmp_path / "nope.json")
    assert settings == LLMSettings()
    assert problem is None


def test_default_path_is_in_the_isolated_config_dir() -> None:
    path = default_settings_path()
    assert path.name == "llm.json"
    save_settings(LLMSettings(provider="glm"))
    assert load_settings().settings.provider == "glm"


@pytest.mark.parametrize(
    "content",
    [
        '{"provider": "anthropic", "models": ',
        '{"retry": {"max_attempts": 0}}',
        "[]",
        '{"read_timeout_s": "abc"}',
    ],
)
def test_broken_file_gives_defaults_and_a_reason(tmp_path: Path, content: str) -> None:
    path = tmp_path / "llm.json"
    path.write_text(content, encoding="utf-8")

    settings, problem = load_settings(path)

    assert settings == LLMSettings()
    assert problem is not None and "默认设置" in problem and str(path) in problem
    # What the author wrote survives the next save.
    assert (tmp_path / "llm.json.broken").read_text(encoding="utf-8") == content


def test_unreadable_file_gives_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "llm.json"
    path.write_text("{}", encoding="utf-8")

    def fail(*_a: object, **_k: object) -> str:
        raise OSError("disk gone")

    monkeypatch.setattr(Path, "read_text", fail)
    settings, problem = load_settings(path)
    assert settings == LLMSettings()
    assert problem is not None and "无法读取" in problem


def test_old_file_without_a_role_gets_its_default(tmp_path: Path) -> None:
    path = tmp_path / "llm.json"
    path.write_text(json.dumps({"models": {"chapter_writer": "x"}, "future_field": 1}), encoding="utf-8")
    settings, problem = load_settings(path)
    assert problem is None
    assert settings.model_for(AgentRole.chapter_writer) == "x"
    assert settings.model_for(AgentRole.judge_secondary) == "claude-opus-4-6"
    assert settings.timeout_for(AgentRole.judge_secondary) > 0
