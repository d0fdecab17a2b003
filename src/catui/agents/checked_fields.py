"""A fast, strict check that a definition's fields need no validation (most definitions skip pydantic).

``fields_are_checked`` is True only for values AgentDefinition's validation
would accept unchanged; then a loader may build the definition directly
(``definition.construct_checked``), which costs a fraction of validating.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from catui.agents.field_values import (
    AGENT_SOURCES,
    EFFORT_LEVELS,
    MEMORY_SCOPES,
    agent_name_problem,
    normalize_model,
)
from catui.permissions.model import PERMISSION_MODES


def _is_str(value: Any) -> bool:
    return type(value) is str


def _is_optional_str(value: Any) -> bool:
    return value is None or type(value) is str


def _is_optional_name_list(value: Any) -> bool:
    # Blank names are an error; every loader drops them, so one here means "validate".
    if value is None:
        return True
    return type(value) is list and all(type(item) is str and item.strip() for item in value)


def _is_optional_str_dict(value: Any) -> bool:
    return value is None or (type(value) is dict and all(type(key) is str for key in value))


def _is_optional_bool(value: Any) -> bool:
    return value is None or type(value) is bool


def _one_of(choices: tuple[Any, ...]) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        return value is None or (type(value) is str and value in choices)

    return check


# One cheap, strict check per field: True only for values validation would accept unchanged.
_FIELD_CHECKS: dict[str, Callable[[Any], bool]] = {
    "agent_type": lambda v: type(v) is str and (not v or agent_name_problem(v) is None),
    "description": _is_str,
    "prompt": _is_str,
    "base_dir": _is_str,
    "when_to_use": lambda v: v is None or type(v) is str or callable(v),
    "system_prompt_builder": lambda v: v is None or callable(v),
    "tools": _is_optional_name_list,
    "disallowed_tools": _is_optional_name_list,
    "skills": _is_optional_name_list,
    "required_mcp_servers": _is_optional_name_list,
    "model": lambda v: v is None or (type(v) is str and normalize_model(v) == v),
    "effort": lambda v: v is None or type(v) is int or (type(v) is str and v in EFFORT_LEVELS),
    "permission_mode": _one_of(PERMISSION_MODES),
    "isolation": _one_of(("worktree",)),
    "memory": _one_of(MEMORY_SCOPES),
    "background": _is_optional_bool,
    "forks_parent_context": lambda v: v is None or v is True or v == "turn",
    "mcp_servers": lambda v: v is None or type(v) is list,
    "source": lambda v: type(v) is str and v in AGENT_SOURCES,
    "color": _is_optional_str,
    "max_turns": lambda v: v is None or (type(v) is int and v > 0),
    "initial_prompt": _is_optional_str,
    "omit_claude_md": lambda v: type(v) is bool,
    "append_system_prompt": lambda v: v is None or type(v) in (bool, str),
    "hooks": _is_optional_str_dict,
    "filename": _is_optional_str,
    "cwd": _is_optional_str,
    "plugin_name": _is_optional_str,
    "aliases": lambda v: type(v) is tuple and all(type(item) is str for item in v),
    "extra_fields": lambda v: type(v) is dict and all(type(key) is str for key in v),
    "max_budget_usd": lambda v: v is None or (type(v) is float and v > 0),
    "max_tokens": lambda v: v is None or (type(v) is int and v > 0),
    "timeout": lambda v: v is None or (type(v) is float and v > 0),
    "stall_timeout": lambda v: v is None or (type(v) is float and v > 0),
    "output_schema": lambda v: v is None or type(v) is dict,
}


def fields_are_checked(fields: dict[str, Any]) -> bool:
    """True when ``fields`` certainly pass AgentDefinition's validation unchanged (a fast, strict subset).

    An unknown or camelCase key is "not checked": pydantic then maps it or names the mistake.
    """
    checks = _FIELD_CHECKS
    for key, value in fields.items():
        check = checks.get(key)
        if check is None or not check(value):
            return False
    return True
