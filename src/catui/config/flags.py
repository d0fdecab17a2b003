"""Feature switches read from the environment and settings.

Each catui switch has a ``CATUI_`` name and honours the Claude Code name too.
A variable is on when its value is ``1``, ``true``, ``yes`` or ``on`` (any
case), as Claude Code reads them. ``env`` defaults to ``os.environ``; pass the
environment with the settings ``env`` object applied (see
:func:`catui.config.settings.settings_env`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from catui.config.settings import Settings
from catui.errors import ConfigurationError

TRUTHY: frozenset[str] = frozenset({"1", "true", "yes", "on"})
FALSY: frozenset[str] = frozenset({"0", "false", "no", "off"})

AUTO_BACKGROUND_DEFAULT_MS = 120_000

SettingsLike = Settings | Mapping[str, Any] | None


def is_truthy(value: str | None) -> bool:
    """Whether an environment value switches something on."""
    return value is not None and value.strip().lower() in TRUTHY


def is_falsy(value: str | None) -> bool:
    """Whether an environment value explicitly switches something off (unset is neither)."""
    return value is not None and value.strip().lower() in FALSY


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def _any_truthy(env: Mapping[str, str], *names: str) -> bool:
    return any(is_truthy(env.get(name)) for name in names)


def _setting(settings: SettingsLike, key: str) -> Any:
    return None if settings is None else settings.get(key)


def background_tasks_disabled(env: Mapping[str, str] | None = None) -> bool:
    """CATUI_DISABLE_BACKGROUND_TASKS or CLAUDE_CODE_DISABLE_BACKGROUND_TASKS: no background agents or shells."""
    return _any_truthy(_env(env), "CATUI_DISABLE_BACKGROUND_TASKS", "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS")


def agent_teams_enabled(env: Mapping[str, str] | None = None) -> bool:
    """CATUI_AGENT_TEAMS or CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS: named teammates and SendMessage between them."""
    return _any_truthy(_env(env), "CATUI_AGENT_TEAMS", "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS")


def team_shutdown_grace_s(env: Mapping[str, str] | None = None) -> float:
    """CATUI_TEAM_SHUTDOWN_GRACE_MS: how long print mode waits for teammates to approve catui's shutdown
    requests before stopping them (default 10000; a bad value falls back to it)."""
    raw = _env(env).get("CATUI_TEAM_SHUTDOWN_GRACE_MS", "").strip()
    try:
        value = int(raw) if raw else 10_000
    except ValueError:
        value = 10_000
    return max(0, value) / 1000


def auto_background_ms(env: Mapping[str, str] | None = None, settings: SettingsLike = None) -> int:
    """After how many milliseconds a synchronous sub-agent moves to the background; 0 means never.

    On (120000 ms) with CATUI_AUTO_BACKGROUND_TASKS, CLAUDE_AUTO_BACKGROUND_TASKS
    or the ``autoBackgroundAgents`` setting. ``CATUI_AUTO_BACKGROUND_MS`` sets
    the threshold itself (a positive whole number turns the feature on, ``0``
    off). Always 0 when background tasks are disabled.
    """
    environ = _env(env)
    if background_tasks_disabled(environ):
        return 0
    override = environ.get("CATUI_AUTO_BACKGROUND_MS")
    if override is not None and override.strip():
        try:
            value = int(override.strip())
        except ValueError:
            raise ConfigurationError(
                f"CATUI_AUTO_BACKGROUND_MS={override!r} is not a whole number of milliseconds; "
                "set it to e.g. 120000, or 0 to turn auto-backgrounding off"
            ) from None
        if value < 0:
            raise ConfigurationError(f"CATUI_AUTO_BACKGROUND_MS={value} must not be negative")
        return value
    enabled = _any_truthy(environ, "CATUI_AUTO_BACKGROUND_TASKS", "CLAUDE_AUTO_BACKGROUND_TASKS") or (
        _setting(settings, "autoBackgroundAgents") is True
    )
    return AUTO_BACKGROUND_DEFAULT_MS if enabled else 0


def fork_subagent_enabled(settings: SettingsLike = None, env: Mapping[str, str] | None = None) -> bool:
    """Whether the Agent tool may fork the parent's context (off unless turned on).

    CATUI_FORK_SUBAGENT / CLAUDE_CODE_FORK_SUBAGENT in the environment decide
    when set (on or off); otherwise the ``forkSubagent`` setting.
    """
    environ = _env(env)
    for name in ("CATUI_FORK_SUBAGENT", "CLAUDE_CODE_FORK_SUBAGENT"):
        value = environ.get(name)
        if is_truthy(value):
            return True
        if is_falsy(value):
            return False
    return _setting(settings, "forkSubagent") is True


MAX_SUBAGENT_SPAWN_DEPTH_DEFAULT = 1
"""Only the main agent (depth 0) spawns sub-agents, as in Claude Code 2.1.92."""


def max_subagent_spawn_depth(settings: SettingsLike = None, env: Mapping[str, str] | None = None) -> int:
    """How deep sub-agents may nest (a catui extension): children at depth < N may get the Agent tool.

    The main agent is depth 0 and its children depth 1, so the default 1 means no nesting.
    CATUI_MAX_SUBAGENT_SPAWN_DEPTH / CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH win over the
    ``maxSubagentSpawnDepth`` setting. Raises ConfigurationError for a value that is not a whole number >= 1.
    """
    environ = _env(env)
    for name in ("CATUI_MAX_SUBAGENT_SPAWN_DEPTH", "CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH"):
        raw = environ.get(name)
        if raw is not None and raw.strip():
            return _spawn_depth(raw.strip(), name)
    value = _setting(settings, "maxSubagentSpawnDepth")
    if value is None:
        return MAX_SUBAGENT_SPAWN_DEPTH_DEFAULT
    return _spawn_depth(value, "the maxSubagentSpawnDepth setting")


def _spawn_depth(value: object, where: str) -> int:
    fix = "set it to a whole number >= 1 (1 = no nesting, 3 = children and grandchildren may spawn)"
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ConfigurationError(f"{where}={value!r} is not a whole number; {fix}")
    try:
        depth = int(value)
    except ValueError:
        raise ConfigurationError(f"{where}={value!r} is not a whole number; {fix}") from None
    if depth < 1:
        raise ConfigurationError(f"{where}={depth} is below 1; {fix}")
    return depth


def send_message_enabled(settings: SettingsLike = None, env: Mapping[str, str] | None = None) -> bool:
    """Whether the SendMessage tool is offered (on unless the ``sendMessage`` setting or CATUI_SEND_MESSAGE is off)."""
    value = _env(env).get("CATUI_SEND_MESSAGE")
    if is_truthy(value):
        return True
    if is_falsy(value):
        return False
    return _setting(settings, "sendMessage") is not False


def telemetry_enabled(settings: SettingsLike = None, env: Mapping[str, str] | None = None) -> bool:
    """Whether catui writes its telemetry records (local JSONL in the catui home; nothing leaves the machine).

    On by default. The ``telemetry`` setting set to false, ``CATUI_TELEMETRY=0``,
    or CATUI_DISABLE_TELEMETRY / DISABLE_TELEMETRY turn it off.
    """
    environ = _env(env)
    if _any_truthy(environ, "CATUI_DISABLE_TELEMETRY", "DISABLE_TELEMETRY"):
        return False
    if environ.get("CATUI_TELEMETRY", "").strip().lower() in {"0", "false", "no", "off"}:
        return False
    return _setting(settings, "telemetry") is not False
