"""The loop's hook steps (catui.hooks): notices as events, PostToolUse, and Stop / SubagentStop.

Only reached when the session's config has hooks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catui.hooks.apply import MAX_STOP_HOOK_CONTINUATIONS, result_with_hook_feedback, stop_feedback_text
from catui.hooks.runner import HookNotice, HookRunner
from catui.hooks.tool_response import claude_tool_response
from catui.messages import result_text as content_text
from catui.messages import user_message
from catui.session.events import ErrorEvent, SystemEvent, UserMessageEvent
from catui.tools.base import ToolResult

if TYPE_CHECKING:
    from catui.session.loop_state import LoopDeps, LoopState


def emit_hook_notices(state: LoopState, session: LoopDeps, notices: list[HookNotice]) -> None:
    """Each hook's output as a ``hook_response`` system event of the session."""
    for notice in notices:
        session.emit(SystemEvent(subtype="hook_response", data=notice.as_event_data(), **session.event_fields()))


async def post_tool_hooks(
    state: LoopState, session: LoopDeps, hooks: HookRunner, tool_name: str, tool_input: dict[str, Any], result: ToolResult,
    tool_use_id: str, duration_ms: int | None = None,
) -> ToolResult:
    """PostToolUse (or PostToolUseFailure for an error result); the result with the hooks' feedback added.

    ``duration_ms``: how long the tool ran (PostToolUse reports it in the current contract)."""
    if result.is_error:
        post = await hooks.post_tool_use_failure(tool_name, tool_input, content_text(result.content),
                                                 tool_use_id, session.ctx)
    else:
        response = claude_tool_response(tool_name, tool_input, result.data, content_text(result.content))
        post = await hooks.post_tool_use(tool_name, tool_input, response, tool_use_id, session.ctx,
                                         duration_ms=duration_ms)
    emit_hook_notices(state, session, post.notices)
    if post.halt:
        state.run_state.halt(post.stop_reason or f"A {post.event} hook stopped the agent.")
    return result_with_hook_feedback(result, post, tool_name)


async def stop_hook_continues(state: LoopState, session: LoopDeps, hooks: HookRunner, last_text: str, continuations: int) -> bool:
    """Run Stop / SubagentStop hooks; True when one blocked and the reason went back to the model."""
    if session.ctx.abort.is_set():
        return False
    outcome = await hooks.at_stop(last_text, stop_hook_active=continuations > 0, ctx=session.ctx)
    emit_hook_notices(state, session, outcome.notices)
    if not outcome.blocked or outcome.halt:
        return False
    if continuations >= MAX_STOP_HOOK_CONTINUATIONS:
        session.emit(ErrorEvent(message=f"{outcome.event} hooks blocked stopping {continuations} times in a row; "
                                "the agent stops anyway. Make the hook check stop_hook_active.",
                                **session.event_fields()))
        return False
    message = user_message(stop_feedback_text(outcome))
    line_uuid = session.append_message(message)
    session.emit(UserMessageEvent(message=message, uuid=line_uuid, **session.event_fields()))
    return True
