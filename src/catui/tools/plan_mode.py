"""EnterPlanMode / ExitPlanMode: switch to read-only planning, and present the plan for approval.

The tools do not change the permission mode themselves (the permission
context is immutable and owned by the session); they return
``data={"permission_mode": ...}`` and the session applies it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import Field

from catui.permissions.context import PermissionRequest
from catui.tools.base import Tool, ToolContext, ToolInput, ToolResult

ENTER_DESCRIPTION = """\
Switch to plan mode before a non-trivial implementation task, to explore and design an approach for the \
user to approve before any file changes.

Use it when the task has several valid approaches, touches many files, changes architecture, or when the \
requirements are unclear enough that you would otherwise make big assumptions. Skip it for small, obvious \
changes, pure questions and research.

In plan mode only read-only tools run: explore the code with Read, Glob and Grep, design the change, and \
ask questions if needed; then present the plan with ExitPlanMode."""

EXIT_DESCRIPTION = """\
Present your implementation plan and ask the user to approve it, leaving plan mode.

Call it only in plan mode, once the plan is complete, and only for tasks that will change code (not for \
research). plan is the plan in Markdown: concise, with the files to change and the steps. If the user \
rejects it, keep planning with their feedback. Do not ask "is this plan okay?" in any other way; this tool \
is how approval is asked."""

APPROVE_LABEL = "Yes, proceed"
PRE_PLAN_MODE_KEY = "pre_plan_mode"  # ctx.services entry: the mode EnterPlanMode left
REJECT_LABEL = "No, keep planning"


class EnterPlanModeInput(ToolInput):
    pass


class ExitPlanModeInput(ToolInput):
    plan: str = Field(description="The plan to present for approval, in Markdown.")


class EnterPlanModeTool(Tool):
    name = "EnterPlanMode"
    input_model = EnterPlanModeInput
    read_only = True

    @property
    def description(self) -> str:
        return ENTER_DESCRIPTION

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        if ctx.permissions.mode != "plan":
            # Approving the plan returns to this mode, as Claude Code restores its prePlanMode.
            ctx.services[PRE_PLAN_MODE_KEY] = ctx.permissions.mode
        return ToolResult(
            "Entered plan mode. Explore the codebase with read-only tools and design the change; do not edit "
            "files. When the plan is ready, present it with ExitPlanMode.",
            data={"permission_mode": "plan"},
        )


class ExitPlanModeTool(Tool):
    name = "ExitPlanMode"
    input_model = ExitPlanModeInput
    read_only = True

    @property
    def description(self) -> str:
        return EXIT_DESCRIPTION

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        # At a terminal the tool asks the user to approve the plan itself; elsewhere leaving plan mode is a
        # permission question (can_use_tool, an allow rule), and print mode denies it, as Claude Code does.
        request = super().permission_request(args, ctx)
        return replace(request, read_only=bool(ctx.interactive and ctx.ask_user is not None))

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        assert isinstance(args, ExitPlanModeInput)
        if not args.plan.strip():
            return ToolResult("plan is empty; write the plan you want approved.", is_error=True)
        if ctx.permissions.mode != "plan":
            return ToolResult(
                "You are not in plan mode, so there is no plan to approve. If your plan was already approved, "
                "go on implementing it.",
                is_error=True,
            )
        resume_mode = ctx.services.get(PRE_PLAN_MODE_KEY, "default")
        if ctx.interactive and ctx.ask_user is not None:
            question = {
                "question": "Approve this plan and start implementing it?",
                "header": "Plan",
                "options": [
                    {"label": APPROVE_LABEL, "description": "Leave plan mode and carry out the plan."},
                    {"label": REJECT_LABEL, "description": "Stay in plan mode and revise the plan."},
                ],
                "multiSelect": False,
                "plan": args.plan,
            }
            answers = await ctx.ask_user([question])
            answer = next(iter(answers.values()), "") if answers else ""
            if answer != APPROVE_LABEL:
                feedback = f" Their answer: {answer}" if answer and answer != REJECT_LABEL else ""
                return ToolResult(
                    "The user did not approve the plan; stay in plan mode and revise it." + feedback,
                    is_error=True,
                    # No permission_mode here: a rejection leaves whatever mode the session is in.
                    data={"plan": args.plan, "approved": False},
                )
            ctx.services.pop(PRE_PLAN_MODE_KEY, None)
            return ToolResult(
                f"The user approved the plan. Start implementing it now.\n\nApproved plan:\n{args.plan}",
                data={"permission_mode": resume_mode, "plan": args.plan, "approved": True},
            )
        ctx.services.pop(PRE_PLAN_MODE_KEY, None)
        return ToolResult(
            f"Plan recorded; leaving plan mode. Carry it out now.\n\nPlan:\n{args.plan}",
            data={"permission_mode": resume_mode, "plan": args.plan, "approved": True},
        )
