"""The input models of :mod:`catui.subagents.teams.tools`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from pydantic import Field

from catui.tools.tool_input import ToolInput


class TeamCreateInput(ToolInput):
    """TeamCreate's arguments (required: team_name)."""

    team_name: str = Field(description="The new team's name (letters, digits, '.', '_', '-').")
    description: str | None = Field(default=None, description="What the team is for.")
    agent_type: str | None = Field(default=None, description="Your own role on the team (default: team-lead).")


class TeamDeleteInput(ToolInput):
    """TeamDelete takes no arguments."""
