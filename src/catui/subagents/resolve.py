"""From an Agent call's ``subagent_type`` to an agent definition (spec 6.1 [5]).

An omitted type means general-purpose (the fork path, when it exists, takes
over here). An unknown type and a type denied by an ``Agent(<type>)`` rule
are errors the parent sees as the call's result, in the observed wording.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from catui.agents.definition import AgentDefinition
from catui.errors import CatuiError
from catui.permissions.context import PermissionContext
from catui.permissions.subagent_limits import agent_type_denied_message, is_agent_type_denied

if TYPE_CHECKING:
    from catui.tools.base import AgentCatalogue

DEFAULT_AGENT_TYPE = "general-purpose"


class AgentSpawnError(CatuiError):
    """A spawn that cannot start; ``str(error)`` is the exact tool_result text the parent receives."""


class AgentTypeNotFoundError(AgentSpawnError):
    """No active agent has the requested type."""


class AgentTypeDeniedError(AgentSpawnError):
    """A permission rule forbids the requested agent type."""


def active_agents(registry: AgentCatalogue) -> list[AgentDefinition]:
    """The registry's active definitions, in order (built-ins first, then custom agents in load order)."""
    return list(getattr(registry, "active", []) or [])


def find_agent(registry: AgentCatalogue, agent_type: str) -> AgentDefinition | None:
    """The active definition called ``agent_type``, or None."""
    getter = getattr(registry, "get", None)
    if getter is not None:
        found = getter(agent_type)
        if found is not None:
            return found
    return next((a for a in active_agents(registry) if a.agent_type == agent_type), None)


def resolve_agent_type(
    registry: AgentCatalogue, subagent_type: str | None, permissions: PermissionContext
) -> AgentDefinition:
    """The definition an Agent call asks for.

    Raises :class:`AgentTypeNotFoundError` (``Agent type 'X' not found.
    Available agents: a, b``) or :class:`AgentTypeDeniedError` (``Agent type
    'X' has been denied by permission rule 'Agent(X)' from <source>.``).
    """
    wanted = subagent_type if subagent_type else DEFAULT_AGENT_TYPE
    definition = find_agent(registry, wanted)
    if definition is None:
        names = ", ".join(a.agent_type for a in active_agents(registry))
        raise AgentTypeNotFoundError(f"Agent type '{wanted}' not found. Available agents: {names}")
    rule = is_agent_type_denied(permissions, definition.agent_type)
    if rule is not None:
        raise AgentTypeDeniedError(agent_type_denied_message(definition.agent_type, rule))
    return definition
