"""One tool call: validate its input, run PreToolUse hooks, decide its permission, call it, run PostToolUse.

Whatever goes wrong (unknown tool, bad input, a denial, a tool bug) becomes an
error :class:`ToolResult` the model sees; only cancellation propagates.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from catui.errors import CatuiError
from catui.hooks.apply import apply_hook_decision
from catui.hooks.runner import HookOutcome
from catui.permissions.context import PermissionDecision
from catui.session.failures import format_validation_error
from catui.session.hook_steps import emit_hook_notices, post_tool_hooks
from catui.tools.base import CURRENT_TOOL_USE_ID, Tool, ToolResult, input_validation_error

if TYPE_CHECKING:
    from catui.session.loop_state import LoopDeps, LoopState


async def execute_tool(state: LoopState, session: LoopDeps, name: str, raw_input: dict[str, Any], tool_use_id: str) -> ToolResult:
    """Run the call ``name(raw_input)`` through hooks and permissions; its result, errors included."""
    tool = session.find_tool(name)
    if tool is None:
        hint = session.config.missing_tool_hints.get(name)
        return ToolResult(f"<tool_use_error>Error: No such tool available: {name}"
                          f"{('. ' + hint) if hint else ''}</tool_use_error>", is_error=True)
    try:
        args = tool.input_model.model_validate(raw_input)
    except input_validation_error() as exc:
        return ToolResult(format_validation_error(tool.name, exc), is_error=True)
    # Set before hooks and the permission check, so that can_use_tool callbacks know which call asks.
    CURRENT_TOOL_USE_ID.set(tool_use_id)
    hooks = session.config.hooks
    pre = None
    if hooks is not None:
        pre = await hooks.pre_tool_use(tool.name, raw_input, tool_use_id, session.ctx)
        emit_hook_notices(state, session, pre.notices)
        if pre.halt:
            state.run_state.halt(pre.stop_reason or "A PreToolUse hook stopped the agent.")
        if pre.updated_input is not None and pre.decision != "deny":
            try:  # a hook's rewritten input must still fit the tool
                args = tool.input_model.model_validate(pre.updated_input)
            except input_validation_error() as exc:
                return ToolResult(format_validation_error(tool.name, exc), is_error=True)
            raw_input = pre.updated_input
    permitted = await permit_call(state, session, tool, args, raw_input, pre, tool_use_id)
    if isinstance(permitted, ToolResult):
        return permitted
    args, raw_input = permitted
    history = session.config.file_history
    if history is not None:  # the file's state before this prompt's first change to it, for rewind_files
        history.before_tool(tool.name, raw_input, session.ctx.cwd)
    called = time.monotonic()
    try:
        result = await tool.call(args, session.ctx)
    except asyncio.CancelledError:
        raise
    except CatuiError as exc:
        result = ToolResult(f"Error: {exc}", is_error=True)
    except Exception as exc:  # a tool bug must not end the session; the model sees what failed
        result = ToolResult(f"Error: {name} failed: {type(exc).__name__}: {exc}", is_error=True)
    if hooks is not None:
        result = await post_tool_hooks(state, session, hooks, tool.name, raw_input, result, tool_use_id,
                                       duration_ms=int((time.monotonic() - called) * 1000))
    return result


async def permit_call(
    state: LoopState, session: LoopDeps, tool: Tool, args: Any, raw_input: dict[str, Any], pre: HookOutcome | None,
    tool_use_id: str,
) -> tuple[Any, dict[str, Any]] | ToolResult:
    """The permission check: rules, then the PreToolUse decision, then the approver when it is ``ask``.

    Allowed: the (possibly approver-rewritten) ``(args, raw_input)``. Denied or bad rewritten input: the
    error result to give the model (a denial is also recorded in ``state.permission_denials``).
    """
    request = tool.permission_request(args, session.ctx)
    decision = session.ctx.permissions.decide(request)
    source = "config"  # who decided, in Claude Code's telemetry terms (config, hook, user_*)
    if pre is not None and (pre.decision is not None or pre.halt):
        decision = apply_hook_decision(decision, pre, tool.name)
        source = "hook"
        if pre.halt and decision.behavior != "deny":
            decision = PermissionDecision("deny", state.run_state.hook_halt or "")
    if decision.behavior == "ask":
        if session.config.can_use_tool is not None:
            decision = await session.config.can_use_tool(tool, raw_input, request, session.ctx)
            source = "user_temporary" if decision.behavior == "allow" else "user_reject"
            if decision.behavior == "allow" and decision.updated_input is not None:
                try:  # the approver's rewritten input must still fit the tool
                    args = tool.input_model.model_validate(decision.updated_input)
                except input_validation_error() as exc:
                    return ToolResult(format_validation_error(tool.name, exc), is_error=True)
                raw_input = decision.updated_input
        else:
            decision = PermissionDecision(
                "deny",
                decision.reason
                or f"{tool.name} needs approval, and nobody can be asked in this mode. "
                f"Allow it with --allowedTools '{tool.name}' or a permissions.allow rule in settings.",
            )
    telemetry = session.config.telemetry
    if telemetry is not None:
        telemetry.tool_decision(name=tool.name, tool_use_id=tool_use_id, source=source, tool_input=raw_input,
                                decision="accept" if decision.behavior == "allow" else "reject")
    if decision.behavior != "allow":
        state.permission_denials.append({"tool_name": tool.name, "tool_use_id": tool_use_id, "tool_input": raw_input})
        return ToolResult(decision.reason or f"Permission to use {tool.name} was denied.", is_error=True)
    return args, raw_input
