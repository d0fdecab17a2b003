"""Nested sub-agents (a catui extension; off by default, as Claude Code 2.1.92 never nests).

With ``maxSubagentSpawnDepth`` / CATUI_MAX_SUBAGENT_SPAWN_DEPTH set to N, a
child at depth d < N (the main agent is 0, its children 1, …) keeps the Agent
tool, but only when its definition asks for it: ``tools: ["*"]``, or ``Agent``
/ ``Agent(type, …)`` in its tools list (a definition without a ``tools`` field
inherits the parent's tools minus the never-given ones, and stays a leaf). A
child at the cap never has it. ``Agent(type, …)`` limits which types the child
may start.
"""

from __future__ import annotations

from catui.agents.definition import AgentDefinition
from catui.subagents.question_relay import ASK_USER_QUESTION, asks_the_user
from catui.subagents.tool_filter import TOOLS_NEVER_GIVEN_TO_CHILDREN, tool_spec_name

AGENT_TOOL_NAME = "Agent"


def asks_for_agent_tool(definition: AgentDefinition) -> bool:
    """Whether the definition's tools list names the Agent tool (or ``*``)."""
    allow = definition.tools or []
    return any(entry.strip() == "*" or tool_spec_name(entry) == AGENT_TOOL_NAME for entry in allow)


def may_spawn(definition: AgentDefinition, depth: int, max_depth: int, *, by_default: bool = False) -> bool:
    """Whether a child of ``definition`` at ``depth`` gets the Agent tool under a cap of ``max_depth``.

    ``by_default`` (the current contract): a definition without a ``tools`` field has it too.
    """
    if depth >= max_depth:
        return False
    return asks_for_agent_tool(definition) or (by_default and definition.tools is None)


def tools_never_given(
    definition: AgentDefinition, depth: int, max_depth: int, *, by_default: bool = False,
    child_messaging: bool = False,
) -> frozenset[str]:
    """The tools the child at ``depth`` must not have (Agent unless it may spawn; AskUserQuestion unless listed;
    SendMessage unless ``child_messaging``, the current contract, where a sub-agent may write to "main")."""
    never = TOOLS_NEVER_GIVEN_TO_CHILDREN
    if child_messaging:
        never = never - {"SendMessage"}
    if may_spawn(definition, depth, max_depth, by_default=by_default):
        never = never - {AGENT_TOOL_NAME}
    if asks_the_user(definition):  # catui's opt-in: its questions are relayed (question_relay.py)
        never = never - {ASK_USER_QUESTION}
    return never


def spawnable_types(definition: AgentDefinition) -> frozenset[str] | None:
    """The agent types ``Agent(type, …)`` entries allow; None when any type is allowed (``*`` or bare ``Agent``)."""
    allowed: set[str] = set()
    for entry in definition.tools or []:
        entry = entry.strip()
        if entry == "*":
            return None
        if tool_spec_name(entry) != AGENT_TOOL_NAME:
            continue
        if "(" not in entry:
            return None
        inner = entry.split("(", 1)[1].rsplit(")", 1)[0]
        allowed.update(part.strip() for part in inner.split(",") if part.strip())
    return frozenset(allowed) if allowed else None


def refusal_for(parent: AgentDefinition, subagent_type: str | None, default_type: str) -> str | None:
    """The error text when a nested parent asks for a type its ``Agent(type, …)`` entry leaves out, else None."""
    allowed = spawnable_types(parent)
    wanted = subagent_type or default_type
    if allowed is None or wanted in allowed:
        return None
    return (
        f"Agent type '{wanted}' is not one this agent ({parent.agent_type}) may start: its tools list allows "
        f"Agent({', '.join(sorted(allowed))}). Use one of those types, or widen the Agent entry of its definition"
        + (f" ({parent.filename})" if parent.filename else "")
        + "."
    )
