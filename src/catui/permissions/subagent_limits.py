"""Permission limits on sub-agents: the mode a child may run in, and ``Agent(<type>)`` deny rules."""

from __future__ import annotations

from catui.permissions.model import MODE_PERMISSIVENESS, PermissionMode, PermissionRule, PermissionState
from catui.permissions.rules import format_rule, wildcard_matches


def cap_mode(parent_mode: PermissionMode, requested_mode: PermissionMode | None) -> PermissionMode:
    """A child's mode: the requested one unless it is more permissive than the parent's, else the parent's."""
    if requested_mode is None:
        return parent_mode
    if MODE_PERMISSIVENESS.index(requested_mode) > MODE_PERMISSIVENESS.index(parent_mode):
        return parent_mode
    return requested_mode


def is_agent_type_denied(ctx: PermissionState, agent_type: str) -> PermissionRule | None:
    """The ``Agent(<type>)`` deny rule that forbids ``agent_type``, if any."""
    for rule in ctx.rules:
        if (
            rule.behavior == "deny"
            and rule.tool_name == "Agent"
            and rule.content is not None
            and wildcard_matches(rule.content, agent_type)
        ):
            return rule
    return None


def agent_type_denied_message(agent_type: str, rule: PermissionRule) -> str:
    """The tool_result text when an agent type is denied (wording observed from Claude Code)."""
    return f"Agent type '{agent_type}' has been denied by permission rule '{format_rule(rule)}' from {rule.source}."
