"""How large a model's context window is, and when a conversation is near enough to it to compact.

One table (:data:`CONTEXT_WINDOWS`) maps model ids to window sizes; the
first entry whose prefix the model id starts with wins, and ``[1m]`` variants
have a million tokens. It can be overridden:

- ``CATUI_CONTEXT_WINDOW`` (env): one size for every model;
- the ``contextWindow`` setting: a whole number for every model, or a mapping
  of model id prefixes to sizes (``{"claude-sonnet-4": 1000000}``), consulted
  before the table.

Auto-compaction starts when the conversation's tokens reach
``autocompact_percent`` (default 92, ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE``) of
the usable window, which is the window minus room for the answer. It is off
with ``DISABLE_AUTO_COMPACT=1`` or the ``autoCompactEnabled: false`` setting
(``/compact`` still works); ``DISABLE_COMPACT=1`` turns off both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from catui.config.settings import setting_origin
from catui.errors import ConfigurationError

DEFAULT_CONTEXT_WINDOW = 200_000
ONE_MILLION = 1_000_000

CONTEXT_WINDOWS: tuple[tuple[str, int], ...] = (
    # Anthropic: every current Claude model has 200k (1M with the [1m] variants, handled apart).
    ("claude-", 200_000),
    # OpenAI-compatible ids, as sent after the ``openai:`` prefix.
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
)
"""Model id prefix → window in tokens, first match wins; unknown models get DEFAULT_CONTEXT_WINDOW."""

DEFAULT_AUTOCOMPACT_PERCENT = 92
MAX_ANSWER_RESERVE = 20_000
"""Tokens kept free for the model's answer (at most this, at most the request's max_tokens, at most 1/4 window)."""

WINDOW_ENV = "CATUI_CONTEXT_WINDOW"
WINDOW_SETTING = "contextWindow"
PERCENT_ENV = "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"


def table_context_window(model: str) -> int:
    """The window of ``model`` from the built-in table alone (no overrides)."""
    lowered = model.lower()
    if "[1m]" in lowered:
        return ONE_MILLION
    bare = lowered.split(":", 1)[1] if ":" in lowered else lowered
    for prefix, size in CONTEXT_WINDOWS:
        if bare.startswith(prefix):
            return size
    return DEFAULT_CONTEXT_WINDOW


@dataclass(frozen=True)
class ContextPolicy:
    """Window sizes and the auto-compaction switch of one app; shared by the main agent and its sub-agents."""

    every_model: int | None = None
    by_prefix: Mapping[str, int] = field(default_factory=dict)
    autocompact_percent: int = DEFAULT_AUTOCOMPACT_PERCENT
    auto_enabled: bool = True
    compact_enabled: bool = True

    def window(self, model: str) -> int:
        """The context window of ``model`` in tokens, overrides first."""
        if self.every_model is not None:
            return self.every_model
        lowered = model.lower()
        # Longest prefix first, so that "claude-sonnet-4-5" beats "claude-".
        for prefix in sorted(self.by_prefix, key=len, reverse=True):
            if lowered.startswith(prefix.lower()) or lowered.split(":", 1)[-1].startswith(prefix.lower()):
                return self.by_prefix[prefix]
        return table_context_window(model)

    def usable(self, model: str, max_tokens: int) -> int:
        """What the conversation itself may fill: the window minus room for the answer."""
        window = self.window(model)
        return window - min(max_tokens, MAX_ANSWER_RESERVE, window // 4)

    def auto_threshold(self, model: str, max_tokens: int) -> int:
        """The size at which the conversation is compacted before the next request."""
        return self.usable(model, max_tokens) * self.autocompact_percent // 100


def context_policy(env: Mapping[str, str], settings: Mapping[str, Any] | None) -> ContextPolicy:
    """The policy from the environment and settings; a malformed value is a ConfigurationError naming it."""
    settings = settings or {}
    every_model: int | None = None
    by_prefix: dict[str, int] = {}
    raw_env = (env.get(WINDOW_ENV) or "").strip()
    if raw_env:
        every_model = _tokens(raw_env, f"{WINDOW_ENV}={raw_env!r}")
    setting = settings.get(WINDOW_SETTING)
    origin = setting_origin(settings, WINDOW_SETTING)
    if setting is not None and every_model is None:
        if isinstance(setting, Mapping):
            for prefix, size in setting.items():
                by_prefix[str(prefix)] = _tokens(size, f"setting {WINDOW_SETTING}.{prefix}={size!r}{origin}")
        else:
            every_model = _tokens(setting, f"setting {WINDOW_SETTING}={setting!r}{origin}")
    percent = DEFAULT_AUTOCOMPACT_PERCENT
    raw_percent = (env.get(PERCENT_ENV) or "").strip()
    if raw_percent:
        if not raw_percent.isdigit() or not 1 <= int(raw_percent) <= 100:
            raise ConfigurationError(f"{PERCENT_ENV}={raw_percent!r} is not a percentage; "
                                     "set it to a whole number from 1 to 100 (e.g. 80)")
        percent = int(raw_percent)
    compact_enabled = not _truthy(env.get("DISABLE_COMPACT"))
    auto_enabled = (compact_enabled and not _truthy(env.get("DISABLE_AUTO_COMPACT"))
                    and settings.get("autoCompactEnabled", True) is not False)
    return ContextPolicy(every_model=every_model, by_prefix=by_prefix, autocompact_percent=percent,
                         auto_enabled=auto_enabled, compact_enabled=compact_enabled)


def _tokens(raw: Any, where: str) -> int:
    if isinstance(raw, bool):
        raw = None
    try:
        value = int(str(raw).strip()) if raw is not None else 0
    except ValueError:
        value = 0
    if value < 1000:
        raise ConfigurationError(f"{where} is not a context window size; give a whole number of tokens "
                                 "of at least 1000 (e.g. 200000)")
    return value


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")
