"""TeamCreate and TeamDelete (observed section 10), offered to the lead when the teams feature is on."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from catui.permissions.context import PermissionRequest
from catui.tools.base import Tool, ToolContext, ToolResult

CREATE_DESCRIPTION = """Create an agent team that you lead, so that you can split a larger piece of work \
between teammates who run side by side and talk to each other.

After TeamCreate, start each teammate with the Agent tool, giving it a `name` (and this `team_name`). \
Teammates keep running between tasks: write to them with SendMessage (to a name, or "*" for all), and \
their messages reach you when your turn ends, as <teammate-message> blocks. When the work is done, send \
each teammate {"type": "shutdown_request"}, wait for their approvals, then call TeamDelete. You lead one \
team at a time."""

DELETE_DESCRIPTION = """Delete the team you lead and its files. Every teammate must have shut down first \
(send each a shutdown_request with SendMessage and wait for the approval); otherwise nothing is deleted \
and the active members are listed."""


class TeamLead(Protocol):
    """What the team tools call on the team (``catui.subagents.teams.coordinator.TeamCoordinator``)."""

    def create_team(self, team_name: str, description: str | None, agent_type: str | None,
                    ctx: ToolContext) -> ToolResult: ...

    def delete_team(self) -> ToolResult: ...


class TeamTool(Tool):
    """What the team tools share: a schema without the input model's docstring, no approval needed."""

    read_only: ClassVar[bool] = False

    def __init__(self, coordinator: TeamLead | None) -> None:
        self.coordinator = coordinator
        """The team this session leads (None when the teams feature is off)."""

    def input_schema(self) -> dict[str, Any]:
        schema = super().input_schema()
        schema.pop("description", None)  # the model's docstring is for readers of this code, not the model
        return schema

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        # Organising one's own agents touches nothing of the user's; no approval needed.
        return PermissionRequest(tool_name=self.name, tool_input=args.model_dump(exclude_none=True),
                                 read_only=True, subject="")


def _no_team_support() -> ToolResult:
    return ToolResult("Agent teams are not available in this session (turn them on with CATUI_AGENT_TEAMS=1).",
                      is_error=True)


class TeamCreateTool(TeamTool):
    """Creates the team this session leads."""

    name: ClassVar[str] = "TeamCreate"
    input_model_ref: ClassVar[str] = "catui.subagents.teams.tools_input:TeamCreateInput"

    @property
    def description(self) -> str:
        return CREATE_DESCRIPTION

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.subagents.teams.tools_input import TeamCreateInput
        assert isinstance(args, TeamCreateInput)
        coordinator = self.coordinator
        if coordinator is None or ctx.team is not None:
            return _no_team_support()
        return coordinator.create_team(args.team_name.strip(), args.description, args.agent_type, ctx)


class TeamDeleteTool(TeamTool):
    """Deletes the team this session leads once every teammate has shut down."""

    name: ClassVar[str] = "TeamDelete"
    input_model_ref: ClassVar[str] = "catui.subagents.teams.tools_input:TeamDeleteInput"

    @property
    def description(self) -> str:
        return DELETE_DESCRIPTION

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        coordinator = self.coordinator
        if coordinator is None or ctx.team is not None:
            return _no_team_support()
        return coordinator.delete_team()
