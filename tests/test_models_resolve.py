"""Model specs, aliases, defaults and provider creation; prices."""

from __future__ import annotations

from pathlib import Path

import pytest

from catui.errors import ConfigurationError
from catui.models.http_api.anthropic import AnthropicProvider
from catui.models.http_api.openai import OpenAIProvider
from catui.models.pricing import cost_usd, price_for
from catui.models.replay.scripted import ScriptedProvider
from catui.models.resolve import (
    clear_provider_cache,
    create_provider,
    default_max_tokens,
    model_aliases,
    resolve_model,
)

KEY = {"ANTHROPIC_API_KEY": "sk-ant"}


@pytest.mark.parametrize(
    ("spec", "model_id"),
    [("sonnet", "claude-sonnet-4-6"), ("opus", "claude-opus-4-6"), ("HAIKU", "claude-haiku-4-5-20251001")],
)
def test_builtin_aliases(spec: str, model_id: str) -> None:
    resolved = resolve_model(spec, {}, KEY)
    assert (resolved.provider, resolved.model_id, resolved.alias) == ("anthropic", model_id, spec.lower())
    assert model_id in resolved.display


def test_alias_overrides_environment_beats_settings() -> None:
    settings = {"modelAliases": {"opus": "claude-opus-4-5", "fast": "openai:gpt-4.1-mini"}}
    assert resolve_model("opus", settings, KEY).model_id == "claude-opus-4-5"
    env = {**KEY, "ANTHROPIC_DEFAULT_OPUS_MODEL": "claude-opus-4-1"}
    assert resolve_model("opus", settings, env).model_id == "claude-opus-4-1"
    fast = resolve_model("fast", settings, KEY)
    assert (fast.provider, fast.model_id, fast.alias) == ("openai", "gpt-4.1-mini", "fast")
    # The settings' env key counts as environment, as in Claude Code.
    in_settings = {"env": {"ANTHROPIC_DEFAULT_HAIKU_MODEL": "claude-3-5-haiku-latest"}}
    assert resolve_model("haiku", in_settings, KEY).model_id == "claude-3-5-haiku-latest"
    assert set(model_aliases(settings, KEY)) == {"sonnet", "opus", "haiku", "fast"}


def test_provider_prefixes() -> None:
    assert resolve_model("openai:gpt-4.1", {}, {}).provider == "openai"
    assert resolve_model("openai:", {}, {"OPENAI_MODEL": "gpt-5"}).model_id == "gpt-5"
    anthropic = resolve_model("anthropic:opus", {}, {})
    assert (anthropic.provider, anthropic.model_id) == ("anthropic", "claude-opus-4-6")
    assert resolve_model("anthropic:claude-x-1", {}, {}).model_id == "claude-x-1"
    scripted = resolve_model("scripted:path/to/script.yaml", {}, {})
    assert (scripted.provider, scripted.script_path) == ("scripted", "path/to/script.yaml")
    bedrock_like = resolve_model("us.anthropic.claude-opus-4-5-20251101-v1:0", {}, KEY)
    assert (bedrock_like.provider, bedrock_like.model_id) == (
        "anthropic",
        "us.anthropic.claude-opus-4-5-20251101-v1:0",
    )
    assert resolve_model("gpt-4o", {}, KEY).provider == "openai"
    assert resolve_model("claude-3-7-sonnet-latest", {}, {"OPENAI_API_KEY": "x"}).provider == "anthropic"
    assert resolve_model("llama-3.1-70b", {}, {"OPENAI_API_KEY": "x"}).provider == "openai"


def test_defaults_when_no_spec() -> None:
    assert resolve_model(None, {"model": "opus"}, KEY).model_id == "claude-opus-4-6"
    assert resolve_model(None, {}, {**KEY, "CATUI_MODEL": "haiku"}).alias == "haiku"
    assert resolve_model(None, {}, KEY).model_id == "claude-sonnet-4-6"
    assert resolve_model(None, {}, {"ANTHROPIC_AUTH_TOKEN": "t"}).provider == "anthropic"
    openai = resolve_model(None, {}, {"OPENAI_API_KEY": "x"})
    assert (openai.provider, openai.model_id) == ("openai", "gpt-4.1")
    assert resolve_model("", {}, {"OPENAI_API_KEY": "x", "OPENAI_MODEL": "o4-mini"}).model_id == "o4-mini"


def test_no_configuration_names_the_variables_and_the_demo() -> None:
    with pytest.raises(ConfigurationError) as caught:
        resolve_model(None, {}, {})
    message = str(caught.value)
    for needle in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "catui demo"):
        assert needle in message
    assert "\n" not in message


def test_unknown_alias_lists_the_aliases() -> None:
    with pytest.raises(ConfigurationError) as caught:
        resolve_model("sonet", {}, KEY)
    message = str(caught.value)
    assert "'sonet'" in message and "Did you mean 'sonnet'" in message and "haiku, opus, sonnet" in message
    with pytest.raises(ConfigurationError, match="needs a script path"):
        resolve_model("scripted:", {}, {})
    with pytest.raises(ConfigurationError, match="modelAliases"):
        resolve_model("opus", {"modelAliases": ["opus"]}, KEY)


def test_children_of_a_scripted_session_stay_on_the_script() -> None:
    parent = resolve_model("scripted:demo.yaml", {}, {})
    child = resolve_model("haiku", {}, {}, within=parent)
    assert (child.provider, child.model_id, child.script_path) == (
        "scripted",
        "claude-haiku-4-5-20251001",
        "demo.yaml",
    )
    assert resolve_model("inherit", {}, {}, within=parent) == parent
    anthropic_parent = resolve_model("sonnet", {}, KEY)
    assert resolve_model("opus", {}, KEY, within=anthropic_parent).provider == "anthropic"
    with pytest.raises(ConfigurationError, match="inherit"):
        resolve_model("inherit", {}, KEY)


def test_default_max_tokens() -> None:
    assert default_max_tokens("claude-opus-4-6") == 64000
    assert default_max_tokens("claude-sonnet-4-6") == 32000
    assert default_max_tokens("gpt-4.1") == 32000


def test_create_provider_shares_instances_per_configuration(tmp_path: Path) -> None:
    clear_provider_cache()
    script = tmp_path / "s.yaml"
    script.write_text("turns:\n  - content: [{type: text, text: hi}]\n")
    env = {"ANTHROPIC_API_KEY": "a", "ANTHROPIC_BASE_URL": "http://127.0.0.1:1"}
    first = create_provider(resolve_model("sonnet", {}, env), {}, env)
    assert isinstance(first, AnthropicProvider) and first.base_url == "http://127.0.0.1:1"
    assert create_provider(resolve_model("opus", {}, env), {}, env) is first
    other = create_provider(resolve_model("sonnet", {}, env), {}, {**env, "ANTHROPIC_API_KEY": "b"})
    assert other is not first
    openai = create_provider(
        resolve_model("openai:gpt-4.1", {}, {}), {}, {"OPENAI_BASE_URL": "http://127.0.0.1:2/v1"}
    )
    assert isinstance(openai, OpenAIProvider) and openai.url == "http://127.0.0.1:2/v1/chat/completions"
    scripted = create_provider(resolve_model(f"scripted:{script}", {}, {}), {}, {})
    assert isinstance(scripted, ScriptedProvider)
    child = resolve_model("haiku", {}, {}, within=resolve_model(f"scripted:{script}", {}, {}))
    assert create_provider(child, {}, {}) is scripted
    with pytest.raises(ConfigurationError, match="cannot read script"):
        create_provider(resolve_model(f"scripted:{tmp_path / 'missing.yaml'}", {}, {}), {}, {})
    clear_provider_cache()


def test_providers_without_credentials_for_the_public_endpoints_say_what_to_set() -> None:
    with pytest.raises(ConfigurationError) as anthropic:
        create_provider(resolve_model("sonnet", {}, {}), {}, {})
    assert "ANTHROPIC_API_KEY" in str(anthropic.value) and "catui demo" in str(anthropic.value)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        create_provider(resolve_model("openai:gpt-4.1", {}, {}), {}, {})
    # A compatible server of one's own may need no key.
    keyless = create_provider(
        resolve_model("sonnet", {}, {}), {}, {"ANTHROPIC_BASE_URL": "http://127.0.0.1:3"}
    )
    assert isinstance(keyless, AnthropicProvider) and keyless.api_key is None
    clear_provider_cache()


def test_prices() -> None:
    million = {"input_tokens": 1_000_000, "output_tokens": 1_000_000}
    assert cost_usd("claude-sonnet-4-6", million) == pytest.approx(18.0)
    assert cost_usd("claude-opus-4-6", million) == pytest.approx(30.0)
    assert cost_usd("claude-opus-4-1-20250805", million) == pytest.approx(90.0)
    assert cost_usd("claude-haiku-4-5-20251001", million) == pytest.approx(6.0)
    assert cost_usd("gpt-4.1", million) == 0.0 and cost_usd("scripted", million) == 0.0
    cache = {"cache_read_input_tokens": 1_000_000, "cache_creation_input_tokens": 1_000_000}
    assert cost_usd("claude-sonnet-4-6", cache) == pytest.approx(0.3 + 3.75)
    split = {
        "cache_creation_input_tokens": 2_000_000,
        "cache_creation": {"ephemeral_5m_input_tokens": 1_000_000, "ephemeral_1h_input_tokens": 1_000_000},
    }
    assert cost_usd("claude-sonnet-4-6", split) == pytest.approx(3.75 + 6.0)
    assert cost_usd("claude-haiku-4-5", {"server_tool_use": {"web_search_requests": 3}}) == pytest.approx(
        0.03
    )
    assert cost_usd("claude-sonnet-4-6", {"input_tokens": None, "output_tokens": 10}) == pytest.approx(
        0.00015
    )
    assert price_for("claude-3-5-haiku-20241022") is not None
    assert price_for("claude-opus-4-20250514") == price_for("claude-opus-4-1")
