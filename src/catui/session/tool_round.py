"""One tool round: an assistant message's tool calls, run in batches, answered by one user message.

Consecutive concurrency-safe calls run together, at most
``max_tool_use_concurrency`` at a time (a sliding window), the rest one by one;
the results come back in tool_use order.
"""

from __future__ import annotations

import asyncio
import functools
from typing import TYPE_CHECKING, Any

from catui.messages import Block, Message, tool_result_block, user_message
from catui.session.events import ToolEndEvent, ToolStartEvent, UserMessageEvent
from catui.session.tool_call import execute_tool
from catui.session.tool_window import run_windowed
from catui.session.usage import add_usage
from catui.tools.base import input_validation_error
from catui.tools.plan_file import plan_mode_reminder

if TYPE_CHECKING:
    from catui.session.loop_state import LoopDeps, LoopState


def transcript_tool_results(data: dict[str, Any], tool_uses: list[Block]) -> dict[str, Any] | None:
    """The transcript line's structured results, as Claude Code records them (``toolUseResult``).

    One call: its result object; several: ``toolUseResults`` by tool_use id (catui keeps a round's results
    in one message). WebSearch's server blocks (``server_tool_use``, ``web_search_tool_result``) are kept
    this way, and a resumed session reads only ``message``, so nothing else changes.
    """
    if not data:
        return None
    if len(tool_uses) == 1:
        return {"toolUseResult": data.get(tool_uses[0]["id"])}
    return {"toolUseResults": data}


def with_plan_reminder(state: LoopState, session: LoopDeps, message: Message) -> Message:
    """Add the plan-mode reminder (plan file path, rules) once per entry into plan mode."""
    reminder = plan_mode_reminder(session.ctx)
    if reminder is None:
        return message
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    return {**message, "content": [*blocks, {"type": "text", "text": reminder}]}


async def run_tool_round(state: LoopState, session: LoopDeps, tool_uses: list[Block]) -> None:
    """Run one assistant message's tool calls and append their results as one user message."""
    results: dict[str, tuple[Block, Any]] = {}
    batch: list[Block] = []

    async def flush_batch() -> None:
        if batch:
            # At most N at a time, a new one starting as soon as one ends (observed section 14).
            # Tools marked ``outside_window`` (the current contract's Agent calls: its running-agents cap
            # limits them instead) all start at once; the rest share the window.
            free = [b for b in batch if getattr(session.find_tool(b.get("name", "")), "outside_window", False)]
            windowed = [b for b in batch if b not in free]
            starters = [functools.partial(run_one_tool, state, session, b) for b in windowed]
            limit = max(1, session.config.max_tool_use_concurrency)
            outcomes, free_outcomes = await asyncio.gather(
                run_windowed(starters, limit) if starters else _nothing(),
                asyncio.gather(*(run_one_tool(state, session, b) for b in free)))
            for block, outcome in [*zip(windowed, outcomes, strict=True), *zip(free, free_outcomes, strict=True)]:
                results[block["id"]] = outcome
            batch.clear()

    for block in tool_uses:
        tool = session.find_tool(block.get("name", ""))
        safe = False
        if tool is not None:
            try:
                safe = tool.is_concurrency_safe(tool.input_model.model_validate(block.get("input") or {}))
            except input_validation_error():
                safe = True  # it will fail validation on its own, harmlessly, in the batch
        if safe:
            batch.append(block)
            continue
        await flush_batch()
        results[block["id"]] = await run_one_tool(state, session, block)
    await flush_batch()

    content: list[Block] = [results[b["id"]][0] for b in tool_uses]
    content.extend(block for b in tool_uses for block in state.run_state.take_follow_ups(b["id"]))
    data = {b["id"]: results[b["id"]][1] for b in tool_uses if results[b["id"]][1] is not None}
    for text in session.pending_messages():
        content.append({"type": "text", "text": text})
    message = with_plan_reminder(state, session, user_message(content))
    line_uuid = session.append_message(message, extra=transcript_tool_results(data, tool_uses))
    session.emit(UserMessageEvent(message=message, tool_use_results=data, uuid=line_uuid, **session.event_fields()))


async def _nothing() -> list[Any]:
    return []


async def run_one_tool(state: LoopState, session: LoopDeps, block: Block) -> tuple[Block, Any]:
    """One call with its start/end events and side effects on the session; its tool_result block and data."""
    tool_use_id = block["id"]
    name = block.get("name", "")
    raw_input = block.get("input") or {}
    fields = session.event_fields()
    state.totals.tool_uses += 1
    session.emit(ToolStartEvent(tool_use_id=tool_use_id, name=name, input=raw_input, **fields))
    telemetry = session.config.telemetry
    if telemetry is None:
        result = await execute_tool(state, session, name, raw_input, tool_use_id)
    else:  # the call's span is current while it runs: an Agent call's child hangs under it
        with telemetry.tool_call(name=name, tool_use_id=tool_use_id, tool_input=raw_input) as observed:
            result = await execute_tool(state, session, name, raw_input, tool_use_id)
            observed.finished(is_error=result.is_error, content=result.content, data=result.data)
    if result.data is not None and isinstance(result.data, dict) and "permission_mode" in result.data:
        mode = result.data["permission_mode"]
        session.ctx.permissions = session.ctx.permissions.with_mode(mode)
    session.emit(
        ToolEndEvent(
            tool_use_id=tool_use_id, name=name, is_error=result.is_error, content=result.content,
            data=result.data, **fields,
        )
    )
    if result.follow_up:
        state.run_state.add_follow_up(tool_use_id, list(result.follow_up))
    if result.server_tool_use:
        add_usage(state.usage, {"server_tool_use": result.server_tool_use})
    if result.run_rules:  # granted until this run ends (the loop takes them back)
        session.ctx.permissions = session.ctx.permissions.with_rules(*result.run_rules)
        state.run_state.grant_run_rules(list(result.run_rules))
    return tool_result_block(tool_use_id, result.content, is_error=result.is_error), result.data
