"""Turning raw frontmatter / JSON values into AgentDefinition fields, the way Claude Code reads them.

Claude Code is lenient: a value it cannot use is dropped (logged at debug
level) and the agent still loads. catui keeps that leniency but records a
warning for every dropped value, so ``catui agents validate`` can show it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from catui.agents.field_values import AGENT_COLORS, EFFORT_LEVELS, MEMORY_SCOPES, normalize_model
from catui.agents.limit_fields import load_output_schema, parse_duration
from catui.agents.tool_lists import parse_tool_list
from catui.errors import ConfigurationError
from catui.permissions.model import PERMISSION_MODES

# Frontmatter keys that map to AgentDefinition fields (everything else goes to extra_fields).
KNOWN_KEYS: frozenset[str] = frozenset(
    {
        "name",
        "description",
        "prompt",
        "tools",
        "disallowedTools",
        "model",
        "effort",
        "permissionMode",
        "maxTurns",
        "background",
        "memory",
        "isolation",
        "skills",
        "initialPrompt",
        "appendSystemPrompt",
        "mcpServers",
        "requiredMcpServers",
        "hooks",
        "color",
        "cwd",
        # catui's own fields, in both spellings (coerce_limit_fields reads them).
        "maxBudgetUsd", "max_budget_usd", "maxTokens", "max_tokens", "timeout",
        "stallTimeout", "stall_timeout", "outputSchema", "output_schema",
    }
)

# Plausible spellings that Claude Code silently ignores; the agent then gets ALL tools, so say so.
MISSPELLED_KEYS: dict[str, str] = {
    "allowedTools": "tools",
    "allowed-tools": "tools",
    "allowed_tools": "tools",
    "Tools": "tools",
    "disallowed-tools": "disallowedTools",
    "disallowed_tools": "disallowedTools",
    "disallowedtools": "disallowedTools",
    "max_turns": "maxTurns",
    "max-turns": "maxTurns",
    "permission_mode": "permissionMode",
    "permission-mode": "permissionMode",
    "initial_prompt": "initialPrompt",
    "mcp_servers": "mcpServers",
}

# Model values that need no warning: aliases, full Claude ids, and catui's ``provider:model`` form.
KNOWN_MODEL_ALIASES: frozenset[str] = frozenset(
    {"sonnet", "opus", "haiku", "inherit", "best", "opusplan", "sonnet[1m]", "opus[1m]"}
)

Warn = Callable[[str], None]
"""Receives one warning about a field. Each message begins with the field's name (quoted or not), so a loader
that knows where the field is written can put its line in front (``line 5: color 'Red' …``)."""

# Keys handled before the rest of coerce_fields' checks (plus the ones the loaders read themselves).
# For data with only these keys, coerce_fields returns values that pass fields_are_checked (the Markdown
# loader relies on it; tests/test_agents_loading.py checks it).
COMMON_KEYS: frozenset[str] = frozenset(
    {"name", "description", "prompt", "tools", "disallowedTools", "model", "color"}
)


def model_is_known(model: str) -> bool:
    """True for an alias, a ``claude-…`` id, a ``provider:model`` spec or a provider path like ``us.anthropic…``."""
    lowered = model.lower()
    return lowered in KNOWN_MODEL_ALIASES or lowered.startswith("claude-") or ":" in model or "." in model


def parse_name_list(value: Any) -> list[str] | None:
    """``skills`` / ``requiredMcpServers``: a comma-separated string or a list of strings."""
    if value is None:
        return None
    if isinstance(value, str):
        items = [part.strip() for part in value.split(",")]
    elif isinstance(value, list):
        items = [item.strip() for item in value if isinstance(item, str)]
    else:
        return None
    return [item for item in items if item]


def coerce_fields(
    data: Mapping[str, Any], warn: Warn, *, plugin: bool = False, schema_dir: str | None = None
) -> dict[str, Any]:
    """AgentDefinition keyword arguments for every optional field in ``data`` (not name/description/prompt).

    ``schema_dir`` is the folder a relative ``outputSchema`` path is read from (the definition's).
    Unlike Claude Code's fields, a bad limit or schema raises ConfigurationError: a budget the user
    set but that silently does not apply would be worse than an agent that does not load.

    ``plugin`` drops permissionMode, hooks and mcpServers: Claude Code ignores them in plugin
    agents so that installing a plugin cannot silently widen permissions or start servers.
    """
    out: dict[str, Any] = {}
    if "tools" in data:
        out["tools"] = parse_tool_list(data["tools"])
        if isinstance(data["tools"], dict):
            warn("'tools' is a mapping (another tool's format); catui reads it as no tools at all")
    if "disallowedTools" in data:
        out["disallowed_tools"] = parse_tool_list(data["disallowedTools"]) or []

    if "model" in data and data["model"] is not None:
        model = normalize_model(data["model"])
        if model is None:
            warn(f"'model' must be a non-empty string, got {data['model']!r}; the agent inherits the model")
        else:
            out["model"] = model
            if not model_is_known(model):
                warn(
                    f"model '{model}' is not a known model (expected sonnet, opus, haiku, inherit or a full model id); "
                    "it is passed to the provider as written"
                )

    color = data.get("color")
    if color is not None:
        if isinstance(color, str) and color in AGENT_COLORS:
            out["color"] = color
        else:
            warn(
                f"color {color!r} is not one of {', '.join(AGENT_COLORS)} (matching is case-sensitive: "
                "write the colour in lower case); ignored"
            )
    if data.keys() <= COMMON_KEYS:
        return out  # most files: none of the fields below is present

    if "effort" in data and data["effort"] is not None:
        effort = data["effort"]
        if isinstance(effort, str) and effort.strip().lower() in EFFORT_LEVELS:
            out["effort"] = effort.strip().lower()
        elif isinstance(effort, int) and not isinstance(effort, bool) and effort > 0:
            out["effort"] = effort
        else:
            warn(f"effort {effort!r} is not one of {', '.join(EFFORT_LEVELS)} or a positive integer; ignored")

    if "maxTurns" in data and data["maxTurns"] is not None:
        turns = _positive_int(data["maxTurns"])
        if turns is None:
            warn(f"maxTurns {data['maxTurns']!r} is not a positive integer; ignored")
        else:
            out["max_turns"] = turns

    if "background" in data:
        raw = data["background"]
        if raw is True or raw == "true":
            out["background"] = True
        elif not (raw is False or raw == "false" or raw is None):
            warn(f"background {raw!r} is not true or false; ignored")

    for key, field, allowed in (
        ("memory", "memory", MEMORY_SCOPES),
        ("isolation", "isolation", ("worktree",)),
    ):
        raw = data.get(key)
        if raw is None:
            continue
        if raw in allowed:
            out[field] = raw
        else:
            warn(f"{key} {raw!r} is not one of {', '.join(allowed)}; ignored")

    skills = parse_name_list(data.get("skills"))
    if skills is not None:
        out["skills"] = skills
    required = parse_name_list(data.get("requiredMcpServers"))
    if required is not None:
        out["required_mcp_servers"] = required

    initial = data.get("initialPrompt")
    if isinstance(initial, str) and initial.strip():
        out["initial_prompt"] = initial
    elif initial is not None:
        warn("initialPrompt must be a non-empty string; ignored")

    append = data.get("appendSystemPrompt")
    if isinstance(append, bool | str):
        out["append_system_prompt"] = append

    coerce_limit_fields(data, out, schema_dir=schema_dir)

    for key in ("permissionMode", "hooks", "mcpServers", "cwd"):
        if plugin and data.get(key) is not None:
            warn(f"'{key}' is ignored in plugin agents, for safety (a plugin must not widen permissions)")
    if not plugin:
        _coerce_unsafe_fields(data, out, warn)
    return out


def _coerce_unsafe_fields(data: Mapping[str, Any], out: dict[str, Any], warn: Warn) -> None:
    # `cwd` adds its folder to the agent's working directories, so it widens permissions like the others.
    cwd = data.get("cwd")
    if cwd is not None:
        if isinstance(cwd, str) and Path(cwd).expanduser().is_absolute():
            out["cwd"] = cwd
        else:
            warn(f"cwd {cwd!r} must be an absolute folder path; ignored")

    mode = data.get("permissionMode")
    if mode is not None:
        if mode in PERMISSION_MODES:
            out["permission_mode"] = mode
        else:
            warn(f"permissionMode {mode!r} is not one of {', '.join(PERMISSION_MODES)}; ignored")

    servers = data.get("mcpServers")
    if servers is not None:
        if isinstance(servers, list) and all(isinstance(s, str | dict) for s in servers):
            out["mcp_servers"] = list(servers)
        else:
            warn("mcpServers must be a list of server names or {name: config} objects; ignored")

    hooks = data.get("hooks")
    if hooks is not None:
        if isinstance(hooks, dict) and all(isinstance(v, list) for v in hooks.values()):
            out["hooks"] = dict(hooks)
        else:
            warn("hooks must map event names to lists, e.g. {PreToolUse: [...]}; ignored")


# (camelCase key, snake_case key, AgentDefinition field) of catui's own per-agent limits and schema.
_LIMIT_KEYS: tuple[tuple[str, str, str], ...] = (
    ("maxBudgetUsd", "max_budget_usd", "max_budget_usd"),
    ("maxTokens", "max_tokens", "max_tokens"),
    ("timeout", "timeout", "timeout"),
    ("stallTimeout", "stall_timeout", "stall_timeout"),
    ("outputSchema", "output_schema", "output_schema"),
)


def coerce_limit_fields(data: Mapping[str, Any], out: dict[str, Any], *, schema_dir: str | None) -> None:
    """``maxBudgetUsd``, ``maxTokens``, ``timeout``, ``stallTimeout``, ``outputSchema`` (either spelling)."""
    for camel, snake, field in _LIMIT_KEYS:
        if camel in data and snake in data and camel != snake:
            raise ConfigurationError(f"'{camel}' and '{snake}' are the same field; keep one")
        key = camel if camel in data else snake
        raw = data.get(key)
        if raw is None:
            continue
        if field == "max_budget_usd":
            budget = _positive_number(raw)
            if budget is None:
                raise ConfigurationError(f"{key} {raw!r} must be a positive number of US dollars, e.g. 0.50")
            out[field] = budget
        elif field == "max_tokens":
            tokens = _positive_int(raw)
            if tokens is None:
                raise ConfigurationError(f"{key} {raw!r} must be a positive whole number of tokens, e.g. 200000")
            out[field] = tokens
        elif field == "output_schema":
            out[field] = load_output_schema(raw, base_dir=schema_dir, where=key)
        else:
            seconds = parse_duration(raw)
            if seconds is None:
                raise ConfigurationError(f"{key} {raw!r} is not a positive duration; write e.g. 90s, 10m or 1h")
            out[field] = seconds


def _positive_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, int | float) and value > 0 and value != float("inf"):
        return float(value)
    return None


def _positive_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
        return number if number > 0 else None
    return None


def extra_fields(data: Mapping[str, Any], warn: Warn) -> dict[str, Any]:
    """Keys catui does not use, kept verbatim; likely misspellings are reported."""
    extras: dict[str, Any] = {}
    for key, value in data.items():
        if key in KNOWN_KEYS:
            continue
        extras[str(key)] = value
        suggestion = MISSPELLED_KEYS.get(str(key))
        if suggestion:
            consequence = (
                " so the agent gets ALL tools" if suggestion == "tools" and "tools" not in data else ""
            )
            warn(f"'{key}' is not an agent field and is ignored{consequence}; did you mean '{suggestion}'?")
    return extras
