"""EnterPlanMode / ExitPlanMode: switch to read-only planning, and present the plan for approval.

The plan lives in the session's plan file (:mod:`catui.tools.plan_file`): the
model writes it there during plan mode, and ExitPlanMode reads it and shows it
for approval. ExitPlanMode's input is Claude Code's, ``{allowedPrompts?}``.

The tools do not change the permission mode themselves (the permission
context is immutable and owned by the session); they return
``data={"permission_mode": ...}`` and the session applies it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from catui.permissions.context import PermissionRequest
from catui.tools.base import Tool, ToolContext, ToolResult
from catui.tools.plan_file import (
    plan_mode_instructions,
    read_plan,
)

ENTER_DESCRIPTION = """\
Switch to plan mode before a non-trivial implementation task, to explore and design an approach for the \
user to approve before any file changes.

Use it when the task has several valid approaches, touches many files, changes architecture, or when the \
requirements are unclear enough that you would otherwise make big assumptions. Skip it for small, obvious \
changes, pure questions and research.

In plan mode only read-only tools run: explore the code with Read, Glob and Grep, design the change, and \
ask questions if needed. The one file you may write is the plan file whose path plan mode gives you; write \
the plan there, then ask for approval with ExitPlanMode."""

EXIT_DESCRIPTION = """\
Ask the user to approve your plan and leave plan mode. Call it in plan mode once the plan is complete and \
written to the plan file named when plan mode started.

- The tool takes no plan text: it reads the plan file and shows its contents to the user, so write the plan \
there first (Write, or Edit for changes).
- Use it only for tasks that will change code, not after research or when answering questions.
- Settle open questions (with AskUserQuestion, where available) before calling it; do not ask "is this plan \
okay?" any other way, this tool is how approval is asked.
- If the user rejects the plan, stay in plan mode, revise the plan file with their feedback and call it again.

allowedPrompts (optional) lists the kinds of shell commands the plan will need, as short descriptions of \
what they do rather than exact commands, e.g. {"tool": "Bash", "prompt": "run the tests"} or \
{"tool": "Bash", "prompt": "install dependencies"}. The user sees them with the plan; ask only for what the \
plan needs."""

APPROVE_LABEL = "Yes, proceed"
APPROVE_ACCEPT_EDITS_LABEL = "Yes, and auto-accept edits"
REJECT_LABEL = "No, keep planning"


class EnterPlanModeTool(Tool):
    name = "EnterPlanMode"
    input_model_ref: ClassVar[str] = "catui.tools.plan_mode_input:EnterPlanModeInput"
    read_only = True

    @property
    def description(self) -> str:
        return ENTER_DESCRIPTION

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        if ctx.permissions.mode != "plan":
            # Approving the plan returns to this mode, as Claude Code restores its prePlanMode.
            ctx.plan.mode_before_plan = ctx.permissions.mode
        plan_file = ctx.permissions.plan_file
        text = "Entered plan mode. "
        if plan_file is None:
            text += (
                "Explore the codebase with read-only tools and design the change; do not edit files. When the "
                "plan is ready, ask for approval with ExitPlanMode."
            )
        else:
            text += plan_mode_instructions(plan_file)
        data: dict[str, Any] = {"permission_mode": "plan"}
        if plan_file is not None:
            data["planFilePath"] = str(plan_file)
        return ToolResult(text, data=data)


class ExitPlanModeTool(Tool):
    name = "ExitPlanMode"
    input_model_ref: ClassVar[str] = "catui.tools.plan_mode_input:ExitPlanModeInput"
    read_only = True

    @property
    def description(self) -> str:
        return EXIT_DESCRIPTION

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        # Leaving plan mode with a plan is the user's call: at a terminal the tool asks them itself;
        # elsewhere it is a permission question (can_use_tool, an allow rule) that print mode denies, as
        # Claude Code does. With nothing to approve (not in plan mode, no plan written) nobody is asked:
        # the call runs and its error tells the model what to do.
        request = super().permission_request(args, ctx)
        asks_itself = bool(ctx.interactive and ctx.ask_user is not None)
        nothing_to_approve = ctx.permissions.mode != "plan" or read_plan(ctx.permissions.plan_file) is None
        return replace(request, read_only=asks_itself or nothing_to_approve)

    def observable_input(self, raw_input: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        """The input as can_use_tool sees it: the plan file's text under ``plan``, and its path.

        claude-agent-sdk users read the plan from ``input["plan"]``, as Claude Code passes it.
        """
        shown = dict(raw_input)
        plan_file = ctx.permissions.plan_file
        plan = read_plan(plan_file)
        if plan is not None:
            shown["plan"] = plan
        if plan_file is not None:
            shown["planFilePath"] = str(plan_file)
        return shown

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.tools.plan_mode_input import ExitPlanModeInput
        assert isinstance(args, ExitPlanModeInput)
        if ctx.permissions.mode != "plan":
            return ToolResult(
                "You are not in plan mode, so there is no plan to approve. If your plan was already approved, "
                "go on implementing it.",
                is_error=True,
            )
        plan_file = ctx.permissions.plan_file
        if plan_file is None:
            return ToolResult(
                "This session has no plan file, so there is no plan to present. Describe the plan in your reply "
                "instead.",
                is_error=True,
            )
        plan = read_plan(plan_file)
        if plan is None:
            state = "is empty" if plan_file.exists() else "does not exist"
            return ToolResult(
                f"No plan to present: the plan file {plan_file} {state}. Write your plan to that file with the "
                "Write tool first, then call ExitPlanMode again.",
                is_error=True,
            )
        prompts = [p.model_dump() for p in args.allowedPrompts or []]
        resume_mode = ctx.plan.mode_before_plan or "default"
        if ctx.interactive and ctx.ask_user is not None:
            answer = await ctx.ask_user([_approval_question(plan, plan_file, prompts)])
            choice = next(iter(answer.values()), "") if answer else ""
            if choice not in (APPROVE_LABEL, APPROVE_ACCEPT_EDITS_LABEL):
                feedback = f" Their answer: {choice}" if choice and choice != REJECT_LABEL else ""
                return ToolResult(
                    "The user did not approve the plan; stay in plan mode, revise the plan file and call "
                    "ExitPlanMode again." + feedback,
                    is_error=True,
                    # No permission_mode here: a rejection leaves whatever mode the session is in.
                    data={"plan": plan, "filePath": str(plan_file), "approved": False},
                )
            if choice == APPROVE_ACCEPT_EDITS_LABEL:
                resume_mode = "acceptEdits"
        ctx.plan.mode_before_plan = None
        _record_allowed_prompts(ctx, prompts)
        text = (
            f"The user approved the plan. Start implementing it now. The plan is kept at {plan_file}; "
            f"update it there if the plan changes.\n\nApproved plan:\n{plan}"
        )
        if prompts:
            text += "\n\nShell commands the plan asked for: " + "; ".join(p["prompt"] for p in prompts) + "."
        return ToolResult(
            text,
            data={
                "permission_mode": resume_mode,
                "plan": plan,
                "filePath": str(plan_file),
                "allowedPrompts": prompts,
                "approved": True,
            },
        )


def _approval_question(plan: str, plan_file: Path, prompts: list[dict[str, str]]) -> dict[str, Any]:
    """The question the terminal shows; ``plan`` / ``planFilePath`` / ``allowedPrompts`` are shown above it."""
    return {
        "question": "Approve this plan and start implementing it?",
        "header": "Plan",
        "options": [
            {"label": APPROVE_LABEL, "description": "Leave plan mode and carry out the plan."},
            {"label": APPROVE_ACCEPT_EDITS_LABEL,
             "description": "Leave plan mode in acceptEdits mode: file edits run without asking."},
            {"label": REJECT_LABEL, "description": "Stay in plan mode and revise the plan."},
        ],
        "multiSelect": False,
        "plan": plan,
        "planFilePath": str(plan_file),
        "allowedPrompts": prompts,
    }


def _record_allowed_prompts(ctx: ToolContext, prompts: list[dict[str, str]]) -> None:
    """Keep the approved plan's allowedPrompts for the rest of the session.

    Claude Code turns them into session permissions matched by meaning ("run tests" covers pytest and
    npm test). No rule syntax says that, so catui records and shows them but approves no command
    by them; Bash calls are decided by the usual rules and mode.
    """
    if not prompts:
        return
    recorded = ctx.plan.allowed_prompts
    for prompt in prompts:
        if prompt not in recorded:
            recorded.append(prompt)
