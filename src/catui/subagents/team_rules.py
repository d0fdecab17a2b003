"""Spec 12.3's rules for Agent calls made inside a team, checked before anything is prepared."""

from __future__ import annotations

from catui.subagents.run import SpawnRequest
from catui.tools.base import ToolContext, ToolResult

TEAMS_NOT_BUILT = (
    "Agent teams are not available in catui yet: team_name together with name starts a teammate, and "
    "teammates are not built. Leave out team_name to start a named background agent instead."
)
TEAMMATE_CANNOT_SPAWN_TEAMMATE = "Teammates cannot spawn other teammates — the team roster is flat."
IN_PROCESS_TEAMMATE_NO_BACKGROUND = "In-process teammates cannot spawn background agents."


def team_rules(request: SpawnRequest, parent_ctx: ToolContext) -> ToolResult | None:
    """A refusal, or None: a teammate cannot spawn teammates, an in-process one no background agents."""
    team = parent_ctx.services.team
    if team is not None and request.name:
        return ToolResult(TEAMMATE_CANNOT_SPAWN_TEAMMATE, is_error=True)
    if team is not None and team.in_process and request.run_in_background:
        return ToolResult(IN_PROCESS_TEAMMATE_NO_BACKGROUND, is_error=True)
    if request.team_name and request.name:
        return ToolResult(TEAMS_NOT_BUILT, is_error=True)
    return None
