"""How much runs at once: the tool-call window and the cap on running background agents.

Both are whole numbers read from the environment first, then settings:

- the tool-call window (``CATUI_MAX_TOOL_USE_CONCURRENCY``, then
  ``CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY``, then the ``maxToolUseConcurrency``
  setting; default 10, as in Claude Code);
- the cap on background agents running at once in one session
  (``CATUI_MAX_CONCURRENT_SUBAGENTS``, then the ``maxConcurrentSubagents``
  setting; default 20, the cap later Claude Code versions use).

A value that is not a positive whole number is not fatal: the default is
used and a one-line warning says which value was ignored and how to fix it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT_TOOL_USE_CONCURRENCY = 10
DEFAULT_MAX_CONCURRENT_SUBAGENTS = 20

TOOL_USE_CONCURRENCY_ENV = ("CATUI_MAX_TOOL_USE_CONCURRENCY", "CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY")
TOOL_USE_CONCURRENCY_SETTING = "maxToolUseConcurrency"
CONCURRENT_SUBAGENTS_ENV = ("CATUI_MAX_CONCURRENT_SUBAGENTS",)
CONCURRENT_SUBAGENTS_SETTING = "maxConcurrentSubagents"


@dataclass(frozen=True)
class Limit:
    """A resolved limit, and the warning to show when a configured value was ignored."""

    value: int
    warning: str | None = None


def tool_use_concurrency(env: Mapping[str, str], settings: Mapping[str, Any] | None) -> Limit:
    """How many concurrency-safe tool calls of one message run at once."""
    return _resolve(env, settings, TOOL_USE_CONCURRENCY_ENV, TOOL_USE_CONCURRENCY_SETTING,
                    DEFAULT_TOOL_USE_CONCURRENCY)


def max_concurrent_subagents(env: Mapping[str, str], settings: Mapping[str, Any] | None) -> Limit:
    """How many background agents of one session run at once; more are queued."""
    return _resolve(env, settings, CONCURRENT_SUBAGENTS_ENV, CONCURRENT_SUBAGENTS_SETTING,
                    DEFAULT_MAX_CONCURRENT_SUBAGENTS)


def _resolve(
    env: Mapping[str, str], settings: Mapping[str, Any] | None, env_names: tuple[str, ...], setting: str,
    default: int,
) -> Limit:
    for name in env_names:
        raw = env.get(name)
        if raw is not None and raw.strip():
            value = _positive_int(raw.strip())
            if value is None:
                return Limit(default, f"{name}={raw!r} is not a positive whole number; using {default}. "
                                      f"Set it to e.g. {default}, or unset it.")
            return Limit(value)
    configured = None if settings is None else settings.get(setting)
    if configured is None:
        return Limit(default)
    value = configured if isinstance(configured, int) and not isinstance(configured, bool) and configured > 0 else None
    if value is None:
        return Limit(default, f"the `{setting}` setting ({configured!r}) is not a positive whole number; "
                              f"using {default}. Set it to e.g. {default} in settings.json, or remove it.")
    return Limit(value)


def _positive_int(text: str) -> int | None:
    try:
        value = int(text)
    except ValueError:
        return None
    return value if value > 0 else None
