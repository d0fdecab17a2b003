"""The values an agent definition's fields may take: sources, modes, scopes, colours, and the name rules.

Loaders (Markdown, JSON, plugins, the SDK) and the definition's own validation
share these, so a value means the same wherever a definition comes from.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

AgentSource = Literal["built-in", "plugin", "flagSettings", "userSettings", "projectSettings", "sdk"]
AGENT_SOURCES: frozenset[str] = frozenset(get_args(AgentSource))
# permissions.model.PERMISSION_MODES as a type, for the definition's field.
PermissionModeName = Literal["acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"]

MEMORY_SCOPES: tuple[str, ...] = ("user", "project", "local")
EFFORT_LEVELS: tuple[str, ...] = ("low", "medium", "high", "xhigh", "max")
"""The claude-agent-sdk's EffortLevel names (catui.models.reasoning sends them)."""
# The colours Claude Code's UI knows; other values are dropped by the loaders.
AGENT_COLORS: tuple[str, ...] = ("red", "blue", "green", "yellow", "purple", "orange", "pink", "cyan")
MAX_AGENT_NAME_LENGTH = 200
_CONTROL_CHARACTERS_RE = re.compile("[\x00-\x1f\x7f]")


def agent_name_problem(name: object) -> str | None:
    """Why ``name`` cannot be an agent type, or None when it can.

    Claude Code accepts any non-empty string (``Startup CTO`` and ``powershell-5.1-expert`` are
    real, working names), so catui only rejects what would break the Agent tool's description
    or the ``subagent_type`` round trip: control characters and absurd lengths.
    """
    if not isinstance(name, str):
        return f"must be a string, not {type(name).__name__}"
    if not name.strip():
        return "must not be empty"
    if _CONTROL_CHARACTERS_RE.search(name):
        return "must be one line without control characters (tabs, newlines)"
    if len(name) > MAX_AGENT_NAME_LENGTH:
        return f"is {len(name)} characters long; the limit is {MAX_AGENT_NAME_LENGTH}"
    return None


def normalize_model(value: object) -> str | None:
    """Claude Code's rule: a non-empty string, trimmed; ``inherit`` in any case → ``inherit``; else None."""
    if not isinstance(value, str) or not value.strip():
        return None
    trimmed = value.strip()
    return "inherit" if trimmed.lower() == "inherit" else trimmed
