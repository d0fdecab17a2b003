"""Spec 12.3's rules for Agent calls made inside a team, checked before anything is prepared.

A teammate cannot start teammates (the roster is flat), and an in-process
teammate cannot start background agents — neither by ``run_in_background``
nor through a definition with ``background: true``. Texts as observed.
"""

from __future__ import annotations

from catui.subagents.resolve import DEFAULT_AGENT_TYPE, find_agent
from catui.subagents.run import SpawnRequest
from catui.tools.base import AgentCatalogue, ToolContext, ToolResult

TEAMMATE_CANNOT_SPAWN_TEAMMATE = (
    "Teammates cannot spawn other teammates — the team roster is flat. To spawn a subagent instead, omit the "
    "`name` parameter."
)
IN_PROCESS_TEAMMATE_NO_BACKGROUND = (
    "In-process teammates cannot spawn background agents. Use run_in_background=false for synchronous subagents."
)


def team_rules(request: SpawnRequest, parent_ctx: ToolContext, registry: AgentCatalogue | None = None) -> ToolResult | None:
    """A refusal, or None. ``registry`` lets a definition's ``background: true`` count as asking for one."""
    team = parent_ctx.team
    if team is None:
        return None
    if request.name:
        return ToolResult(TEAMMATE_CANNOT_SPAWN_TEAMMATE, is_error=True)
    if team.in_process and (request.run_in_background or _background_by_definition(request, registry)):
        return ToolResult(IN_PROCESS_TEAMMATE_NO_BACKGROUND, is_error=True)
    return None


def _background_by_definition(request: SpawnRequest, registry: AgentCatalogue | None) -> bool:
    if registry is None:
        return False
    definition = find_agent(registry, request.subagent_type or DEFAULT_AGENT_TYPE)
    return bool(definition is not None and definition.background)


class TeamRules:
    """The spawn gate: :func:`team_rules` with the application's agent registry."""

    def __init__(self, registry: AgentCatalogue) -> None:
        self.registry = registry

    def __call__(self, request: SpawnRequest, parent_ctx: ToolContext) -> ToolResult | None:
        return team_rules(request, parent_ctx, self.registry)
