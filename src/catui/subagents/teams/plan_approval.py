"""A plan-mode teammate's ExitPlanMode: the plan goes to the lead for approval (observed section 10)."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from catui.paths import catui_home
from catui.subagents.teams.files import safe_file_name
from catui.tools.base import Tool, ToolContext, ToolResult

DESCRIPTION = """Present your plan to the team lead for approval and leave plan mode once it is approved.

Call it when your plan is complete. The plan is written to your plan file and sent to the lead; the \
lead's answer arrives as a plan_approval_response message. Until then, change nothing."""


class PlanApprovals(Protocol):
    """Where a teammate's plan goes for approval (``catui.subagents.teams.coordinator.TeamCoordinator``)."""

    def submit_plan(self, name: str, plan_file: str, plan: str) -> str: ...


class TeammateExitPlanModeTool(Tool):
    """ExitPlanMode for a teammate in plan mode: asks the lead instead of the user."""

    name: ClassVar[str] = "ExitPlanMode"
    input_model_ref: ClassVar[str] = "catui.subagents.teams.plan_approval_input:TeammateExitPlanModeInput"
    read_only: ClassVar[bool] = True

    def __init__(self, coordinator: PlanApprovals) -> None:
        self.coordinator = coordinator

    @property
    def description(self) -> str:
        return DESCRIPTION

    def input_schema(self) -> dict[str, Any]:
        schema = super().input_schema()
        schema.pop("description", None)  # the model's docstring is for readers of this code, not the model
        return schema

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.subagents.teams.plan_approval_input import TeammateExitPlanModeInput
        assert isinstance(args, TeammateExitPlanModeInput)
        team = ctx.team
        coordinator = self.coordinator
        if team is None or coordinator is None:
            return ToolResult("ExitPlanMode here is for team members; this agent is not on a team.", is_error=True)
        if ctx.permissions.mode != "plan":
            return ToolResult("You are not in plan mode: your plan was already approved, so go on with it.",
                              is_error=True)
        if not args.plan.strip():
            return ToolResult("The plan is empty: pass the whole plan as `plan`.", is_error=True)
        path = catui_home() / "plans" / f"{safe_file_name(team.team_name)}-{safe_file_name(team.member_name)}.md"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(args.plan, encoding="utf-8")
        except OSError as exc:
            return ToolResult(f"Could not write the plan file {path}: {exc}", is_error=True)
        request_id = coordinator.submit_plan(team.member_name, str(path), args.plan)
        return ToolResult(
            f"Your plan was written to {path} and sent to the team lead for approval (request id: {request_id}). "
            "Wait for the lead's plan_approval_response before you change anything.",
            data={"planFilePath": str(path), "requestId": request_id},
        )
