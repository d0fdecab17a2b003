"""From a model spec (``sonnet``, ``claude-opus-4-6``, ``openai:gpt-4.1``, ``scripted:x.yaml``) to a provider.

Aliases ``sonnet``, ``opus`` and ``haiku`` map to concrete ids. The mapping
is, strongest first: ``ANTHROPIC_DEFAULT_SONNET_MODEL`` /
``ANTHROPIC_DEFAULT_OPUS_MODEL`` / ``ANTHROPIC_DEFAULT_HAIKU_MODEL`` (as in
Claude Code), then the ``modelAliases`` settings key, then the built-in
defaults. ``modelAliases`` may also add aliases of its own, and its targets
may name a provider::

    {"modelAliases": {"opus": "claude-opus-4-5", "fast": "openai:gpt-4.1-mini"}}

Environment variables may also come from the settings' ``env`` key, which
wins over the process environment (as in Claude Code).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from catui.config.settings import setting_origin
from catui.errors import ConfigurationError
from catui.models.base import ModelProvider

PROVIDERS = ("anthropic", "openai", "scripted")
DEFAULT_ALIASES: dict[str, str] = {
    "sonnet": "claude-sonnet-4-6",
    "opus": "claude-opus-4-6",
    "haiku": "claude-haiku-4-5-20251001",
}
ALIAS_ENV = {
    "sonnet": "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "opus": "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "haiku": "ANTHROPIC_DEFAULT_HAIKU_MODEL",
}
DEFAULT_OPENAI_MODEL = "gpt-4.1"
SCRIPTED_MODEL_ID = "scripted"
# A spec with a digit, dash, dot or slash is taken as a concrete model id; a bare word must be an alias.
_LOOKS_LIKE_ID = re.compile(r"[\d\-./]")
_OPENAI_ID = re.compile(r"^(gpt-|chatgpt-|o\d)")


@dataclass(frozen=True)
class ResolvedModel:
    """A model choice: which provider, which concrete id, and how to show it.

    ``alias`` is the alias the user wrote (None for a concrete id);
    ``script_path`` is the script of the scripted provider.
    """

    provider: str
    model_id: str
    alias: str | None
    display: str
    script_path: str | None = None


def effective_env(settings: Mapping[str, Any], env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The process environment (or ``env``) overlaid with the settings' ``env`` key."""
    merged = dict(os.environ if env is None else env)
    extra = settings.get("env")
    if isinstance(extra, Mapping):
        merged.update({str(k): str(v) for k, v in extra.items()})
    return merged


def model_aliases(settings: Mapping[str, Any], env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every alias and its target spec, after settings and environment overrides."""
    env = effective_env(settings, env)
    aliases = dict(DEFAULT_ALIASES)
    configured = settings.get("modelAliases")
    if configured is not None and not isinstance(configured, Mapping):
        raise ConfigurationError(
            f"settings key `modelAliases`{setting_origin(settings, 'modelAliases')} must be an object mapping "
            "alias names to model ids"
        )
    for name, target in (configured or {}).items():
        if not isinstance(target, str) or not target.strip():
            raise ConfigurationError(f"settings `modelAliases.{name}`{setting_origin(settings, 'modelAliases')} "
                                     "must be a non-empty model id string")
        aliases[str(name).lower()] = target.strip()
    for name, variable in ALIAS_ENV.items():
        if env.get(variable):
            aliases[name] = env[variable].strip()
    return aliases


def _has_anthropic_credentials(env: Mapping[str, str]) -> bool:
    return bool(env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN"))


def _display(provider: str, model_id: str, alias: str | None, script_path: str | None) -> str:
    if provider == "scripted":
        return f"scripted ({Path(script_path or '').name or 'script'})" + (f" as {model_id}" if alias else "")
    name = f"{alias} ({model_id})" if alias else model_id
    return name if provider == "anthropic" else f"{name} via {provider}"


def _make(provider: str, model_id: str, alias: str | None, script_path: str | None = None) -> ResolvedModel:
    return ResolvedModel(
        provider, model_id, alias, _display(provider, model_id, alias, script_path), script_path
    )


def _unknown(spec: str, aliases: Mapping[str, str]) -> ConfigurationError:
    import difflib

    close = difflib.get_close_matches(spec.lower(), list(aliases), n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return ConfigurationError(
        f"unknown model {spec!r}.{hint} Use an alias ({', '.join(sorted(aliases))}), a full model id such as "
        "claude-sonnet-4-6, or provider:model (anthropic:<id>, openai:gpt-4.1, scripted:path/to/script.yaml)."
    )


def resolve_model(
    spec: str | None,
    settings: Mapping[str, Any],
    env: Mapping[str, str] | None = None,
    *,
    within: ResolvedModel | None = None,
) -> ResolvedModel:
    """Resolve a model spec; with ``spec`` None, the configured default.

    The default is ``settings["model"]``, then ``CATUI_MODEL`` (or
    ``ANTHROPIC_MODEL``), then the sonnet alias when Anthropic credentials
    are set, then ``OPENAI_MODEL`` (or gpt-4.1) on the OpenAI provider when
    ``OPENAI_API_KEY`` is set. ``within`` is the model of a parent agent: when
    it runs on the scripted provider, an alias or id resolves onto the same
    script, so sub-agents of a scripted session stay offline.
    """
    env_map = effective_env(settings, env)
    aliases = model_aliases(settings, env_map)
    if spec is None or not spec.strip() or spec.strip().lower() == "default":
        configured = settings.get("model")
        if isinstance(configured, str) and configured.strip():
            return resolve_model(configured, settings, env_map, within=within)
        from_env = env_map.get("CATUI_MODEL") or env_map.get("ANTHROPIC_MODEL")
        if from_env and from_env.strip():
            return resolve_model(from_env, settings, env_map, within=within)
        if within is not None:
            return within
        if _has_anthropic_credentials(env_map):
            return _make("anthropic", aliases["sonnet"], "sonnet")
        if env_map.get("OPENAI_API_KEY"):
            return _make("openai", env_map.get("OPENAI_MODEL") or DEFAULT_OPENAI_MODEL, None)
        raise ConfigurationError(
            "no model provider is configured: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), "
            "or OPENAI_API_KEY (with OPENAI_BASE_URL for a compatible server), or pass --model; "
            "run `catui demo` to try catui offline."
        )
    return _resolve_spec(spec.strip(), aliases, env_map, within, depth=0)


def _resolve_spec(
    spec: str, aliases: Mapping[str, str], env: Mapping[str, str], within: ResolvedModel | None, depth: int
) -> ResolvedModel:
    if depth > 5:
        raise ConfigurationError(f"model alias {spec!r} refers to itself through `modelAliases`")
    prefix, sep, rest = spec.partition(":")
    if sep and prefix.lower() in PROVIDERS:
        provider, rest = prefix.lower(), rest.strip()
        if provider == "scripted":
            if not rest:
                raise ConfigurationError("`scripted:` needs a script path, e.g. scripted:path/to/script.yaml")
            return _make("scripted", SCRIPTED_MODEL_ID, None, rest)
        if provider == "openai":
            return _make("openai", rest or env.get("OPENAI_MODEL") or DEFAULT_OPENAI_MODEL, None)
        if not rest:
            return _make("anthropic", aliases["sonnet"], "sonnet")
        if rest.lower() in aliases:
            target = aliases[rest.lower()]
            return _make("anthropic", target.partition(":")[2] if ":" in target else target, rest.lower())
        return _make("anthropic", rest, None)
    lowered = spec.lower()
    if lowered == "inherit":
        if within is None:
            raise ConfigurationError(
                "model 'inherit' is only meaningful for a sub-agent; give a model alias or id"
            )
        return within
    if lowered in aliases:
        target = aliases[lowered]
        target_prefix, target_sep, _ = target.partition(":")
        chained = target.lower() in aliases and target.lower() != lowered
        if (target_sep and target_prefix.lower() in PROVIDERS) or chained:
            resolved = _resolve_spec(target, aliases, env, None, depth + 1)
        else:
            resolved = ResolvedModel(_provider_for_id(target, env), target, None, "")
        return _onto_parent(replace(resolved, alias=lowered), within)
    if not _LOOKS_LIKE_ID.search(spec):
        raise _unknown(spec, aliases)
    return _onto_parent(ResolvedModel(_provider_for_id(spec, env), spec, None, ""), within)


def _provider_for_id(model_id: str, env: Mapping[str, str]) -> str:
    lowered = model_id.lower()
    if lowered.startswith("claude"):
        return "anthropic"
    if _OPENAI_ID.match(lowered) or (env.get("OPENAI_API_KEY") and not _has_anthropic_credentials(env)):
        return "openai"
    return "anthropic"


def _onto_parent(resolved: ResolvedModel, within: ResolvedModel | None) -> ResolvedModel:
    if within is not None and within.provider == "scripted" and resolved.provider != "scripted":
        return _make("scripted", resolved.model_id, resolved.alias, within.script_path)
    return _make(resolved.provider, resolved.model_id, resolved.alias, resolved.script_path)


def default_max_tokens(model_id: str) -> int:
    """The max_tokens catui asks for: 64000 for opus-class models, 32000 otherwise."""
    return 64000 if "opus" in model_id.lower() else 32000


ANTHROPIC_DEFAULT_URL = "https://api.anthropic.com"
OPENAI_DEFAULT_URL = "https://api.openai.com/v1"

_provider_cache: dict[tuple[Any, ...], ModelProvider] = {}
_cache_lock = threading.Lock()


def create_provider(
    resolved: ResolvedModel, settings: Mapping[str, Any], env: Mapping[str, str] | None = None
) -> ModelProvider:
    """The provider for ``resolved``, one shared instance per provider and configuration.

    Scripted providers are shared per script file, so a session and its
    sub-agents draw turns from one script. Relative script paths are taken
    from the current directory.
    """
    env_map = effective_env(settings, env)
    provider: ModelProvider
    if resolved.provider == "anthropic":
        from catui.models.http_api.anthropic import AnthropicProvider

        anthropic = AnthropicProvider(env=env_map)
        if not (anthropic.api_key or anthropic.auth_token) and anthropic.base_url == ANTHROPIC_DEFAULT_URL:
            raise ConfigurationError(
                f"model {resolved.model_id} needs Anthropic credentials: set ANTHROPIC_API_KEY (or "
                "ANTHROPIC_AUTH_TOKEN), or ANTHROPIC_BASE_URL for a compatible server; "
                "run `catui demo` to try catui offline."
            )
        key: tuple[Any, ...] = (
            "anthropic",
            anthropic.base_url,
            anthropic.api_key,
            anthropic.auth_token,
            tuple(anthropic.betas),
            tuple(sorted(anthropic.extra_headers.items())),
            anthropic.retry,
            anthropic.prompt_caching,
            anthropic.transport_settings,
        )
        provider = anthropic
    elif resolved.provider == "openai":
        from catui.models.http_api.openai import OpenAIProvider

        openai = OpenAIProvider(env=env_map)
        if not openai.api_key and openai.base_url == OPENAI_DEFAULT_URL:
            raise ConfigurationError(
                f"model {resolved.model_id} needs OPENAI_API_KEY (or OPENAI_BASE_URL for a compatible server "
                "that needs no key); run `catui demo` to try catui offline."
            )
        key = ("openai", openai.base_url, openai.api_key, openai.retry, openai.transport_settings)
        provider = openai
    elif resolved.provider == "scripted":
        from catui.models.replay.scripted import ScriptedProvider

        path = Path(resolved.script_path or "").expanduser()
        key = ("scripted", str(path.resolve()))
        with _cache_lock:
            cached = _provider_cache.get(key)
        if cached is not None:
            return cached
        provider = ScriptedProvider(path)
    else:
        raise ConfigurationError(
            f"unknown model provider {resolved.provider!r} (known: {', '.join(PROVIDERS)})"
        )
    with _cache_lock:
        return _provider_cache.setdefault(key, provider)


def clear_provider_cache() -> None:
    """Forget shared provider instances (a fresh script replay starts from its first turn)."""
    with _cache_lock:
        _provider_cache.clear()
