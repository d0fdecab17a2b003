"""Session events → the SDK's messages (claude-agent-sdk's classes, in :mod:`catui.sdk.types`).

:func:`message_from_event` converts one event; :class:`MessageView` is what a
client applies on top: which sub-agent blocks and hook events are shown
(``forward_subagent_text``, ``include_hook_events``) and the rate-limit event
before a result refused with HTTP 429. (``task_updated`` messages come from the
sub-agent runtime itself, as stream-json's do.)
"""

from __future__ import annotations

import uuid as uuid_module
from dataclasses import dataclass, replace
from typing import Any

from catui.sdk.types import (
    AssistantMessage,
    ContentBlock,
    HookEventMessage,
    Message,
    MessageOrigin,
    RateLimitEvent,
    RateLimitInfo,
    ResultMessage,
    ServerToolResultBlock,
    ServerToolUseBlock,
    StreamEvent,
    SystemMessage,
    TaskNotificationMessage,
    TaskProgressMessage,
    TaskStartedMessage,
    TaskUpdatedMessage,
    TaskUsage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from catui.session.events import (
    AssistantMessageEvent,
    ErrorEvent,
    Event,
    ResultEvent,
    StreamEventRaw,
    SystemEvent,
    UserMessageEvent,
)

HOOK_SUBTYPES = frozenset({"hook_started", "hook_response"})

# The blocks a sub-agent's messages keep when its text is not forwarded (claude-agent-sdk's default).
_CALL_BLOCKS = (ToolUseBlock, ToolResultBlock, ServerToolUseBlock, ServerToolResultBlock)


def content_blocks(content: Any) -> list[ContentBlock | dict[str, Any]]:
    """API content (a string or block dicts) as SDK blocks; unknown kinds stay dicts."""
    if isinstance(content, str):
        return [TextBlock(content)]
    blocks: list[ContentBlock | dict[str, Any]] = []
    for raw in content or []:
        kind = raw.get("type") if isinstance(raw, dict) else None
        if kind == "text":
            blocks.append(TextBlock(raw.get("text", "")))
        elif kind == "thinking":
            blocks.append(ThinkingBlock(raw.get("thinking", ""), raw.get("signature", "")))
        elif kind == "tool_use":
            blocks.append(ToolUseBlock(raw.get("id", ""), raw.get("name", ""), dict(raw.get("input") or {})))
        elif kind == "tool_result":
            blocks.append(ToolResultBlock(raw.get("tool_use_id", ""), raw.get("content"), raw.get("is_error")))
        elif kind == "server_tool_use":
            blocks.append(ServerToolUseBlock(raw.get("id", ""), raw.get("name", ""), dict(raw.get("input") or {})))
        elif isinstance(kind, str) and kind.endswith("_tool_result") and "tool_use_id" in raw:
            # web_search_tool_result, web_fetch_tool_result, code_execution_tool_result, …
            blocks.append(ServerToolResultBlock(raw.get("tool_use_id", ""), dict(raw)))
        else:
            blocks.append(raw)
    return blocks


def _new_uuid() -> str:
    return str(uuid_module.uuid4())


def _task_usage(value: Any) -> TaskUsage | None:
    if not isinstance(value, dict):
        return None
    return TaskUsage(
        total_tokens=int(value.get("total_tokens") or 0),
        tool_uses=int(value.get("tool_uses") or 0),
        duration_ms=int(value.get("duration_ms") or 0),
    )


def system_message(event: SystemEvent, session_id: str) -> SystemMessage:
    """A ``system`` event as its SDK class (task events get their own subclasses)."""
    data = {"type": "system", "subtype": event.subtype, **event.data}
    data.setdefault("session_id", session_id)
    data.setdefault("uuid", _new_uuid())
    common: dict[str, Any] = {
        "subtype": event.subtype,
        "data": data,
        "parent_tool_use_id": event.parent_tool_use_id,
        "uuid": data["uuid"],
        "session_id": data["session_id"],
        "task_id": str(data.get("task_id") or ""),
        "tool_use_id": data.get("tool_use_id"),
    }
    if event.subtype == "task_started":
        return TaskStartedMessage(
            **common, description=str(data.get("description") or ""), task_type=data.get("task_type")
        )
    if event.subtype == "task_progress":
        return TaskProgressMessage(
            **common,
            description=str(data.get("description") or ""),
            usage=_task_usage(data.get("usage")) or TaskUsage(total_tokens=0, tool_uses=0, duration_ms=0),
            last_tool_name=data.get("last_tool_name"),
        )
    if event.subtype in HOOK_SUBTYPES:
        return HookEventMessage(
            event.subtype,
            data,
            parent_tool_use_id=event.parent_tool_use_id,
            hook_event_name=str(data.get("hook_event") or data.get("hook_event_name") or ""),
            session_id=data["session_id"],
            uuid=data["uuid"],
        )
    if event.subtype == "task_updated":
        raw_patch = data.get("patch")
        patch: dict[str, Any] = raw_patch if isinstance(raw_patch, dict) else {}
        return TaskUpdatedMessage(
            "task_updated",
            data,
            parent_tool_use_id=event.parent_tool_use_id,
            task_id=str(data.get("task_id") or ""),
            patch=patch,
            status=patch.get("status"),
            session_id=data["session_id"],
            uuid=data["uuid"],
        )
    if event.subtype == "task_notification":
        return TaskNotificationMessage(
            **common,
            status=str(data.get("status") or ""),
            output_file=str(data.get("output_file") or ""),
            summary=str(data.get("summary") or ""),
            usage=_task_usage(data.get("usage")),
        )
    return SystemMessage(event.subtype, data, parent_tool_use_id=event.parent_tool_use_id)


def result_message(event: ResultEvent, *, origin: MessageOrigin | None = None) -> ResultMessage:
    """The SDK's result for a run's ResultEvent; ``origin`` is what started the turn.

    A run ended by a failed API call is reported as Claude Code reports it: subtype ``success``
    (the loop itself did not fail), ``is_error``, ``terminal_reason="api_error"``, the HTTP status
    in ``api_error_status`` and "API Error: …" as the result text.
    """
    api_failure = event.terminal_reason == "api_error"
    result_text = f"API Error: {event.result}" if api_failure and not event.result.startswith("API Error") else event.result
    return ResultMessage(
        subtype="success" if api_failure else event.subtype,
        duration_ms=event.duration_ms,
        duration_api_ms=event.duration_api_ms,
        is_error=event.is_error,
        num_turns=event.num_turns,
        session_id=event.session_id,
        stop_reason=event.stop_reason,
        total_cost_usd=event.total_cost_usd,
        usage=dict(event.usage),
        result=result_text,
        model_usage=dict(event.model_usage),
        permission_denials=list(event.permission_denials),
        # Claude Code leaves errors empty for an API failure: the prose is in result.
        errors=[] if api_failure else [event.result] if event.is_error and event.result else None,
        api_error_status=event.api_error_status,
        uuid=_new_uuid(),
        terminal_reason=event.terminal_reason,
        origin=origin,
    )


def tool_use_result_of(event: UserMessageEvent) -> Any:
    """The structured result stream-json attaches: the single call's, or a list when several ran."""
    values = list(event.tool_use_results.values())
    if not values:
        return None
    return values[0] if len(values) == 1 else values


def message_from_event(
    event: Event, session_id: str, *, last_usage: dict[str, Any] | None = None
) -> Message | None:
    """The SDK message for one session event, or None for events the SDK does not show.

    Text/thinking deltas, tool start/end and usage events are internal (their
    content arrives in the complete messages); a sub-agent's own ResultEvent is
    summarised in the Agent tool's result instead.
    """
    if isinstance(event, AssistantMessageEvent):
        message = event.message
        return AssistantMessage(
            content=content_blocks(message.get("content")),
            model=event.model,
            parent_tool_use_id=event.parent_tool_use_id,
            usage=last_usage,
            message_id=f"msg_{event.uuid.replace('-', '')[:24]}" if event.uuid else None,
            stop_reason=message.get("stop_reason"),
            session_id=session_id,
            uuid=event.uuid or _new_uuid(),
            agent_id=event.agent_id,
        )
    if isinstance(event, UserMessageEvent):
        return UserMessage(
            content=content_blocks(event.message.get("content")),
            uuid=event.uuid or _new_uuid(),
            parent_tool_use_id=event.parent_tool_use_id,
            tool_use_result=tool_use_result_of(event),
            agent_id=event.agent_id,
        )
    if isinstance(event, SystemEvent):
        return system_message(event, session_id)
    if isinstance(event, StreamEventRaw):
        return StreamEvent(_new_uuid(), session_id, event.event, event.parent_tool_use_id)
    if isinstance(event, ErrorEvent):
        data = {"message": event.message, "agent_id": event.agent_id, "session_id": session_id}
        return SystemMessage("error", data, parent_tool_use_id=event.parent_tool_use_id)
    if isinstance(event, ResultEvent):
        return result_message(event) if event.agent_id is None else None
    return None


def rate_limit_rejected(result: ResultMessage) -> RateLimitEvent:
    """The rate-limit event for a run whose API call was finally refused with HTTP 429."""
    raw = {"status": "rejected", "api_error_status": result.api_error_status}
    return RateLimitEvent(RateLimitInfo(status="rejected", raw=raw), _new_uuid(), result.session_id)


@dataclass
class MessageView:
    """What a client shows of the converted messages (claude-agent-sdk's options of the same names)."""

    forward_subagent_text: bool = False
    include_hook_events: bool = False
    replay_user_messages: bool = False
    """Show the caller's own prompts too (with the uuids that ``rewind_files`` takes)."""

    def shown(self, message: Message) -> list[Message]:
        """``message`` as the caller sees it: nothing, itself (maybe trimmed), or itself and what follows it."""
        if isinstance(message, HookEventMessage) and not self.include_hook_events:
            return []
        if (
            isinstance(message, AssistantMessage)
            and message.parent_tool_use_id is not None
            and not self.forward_subagent_text
        ):
            # As Claude Code: a sub-agent's prompt and tool results always reach the caller, its text and
            # thinking only on request
            return _calls_only(message)
        if isinstance(message, ResultMessage) and message.api_error_status == 429:
            return [rate_limit_rejected(message), message]
        return [message]


def _calls_only(message: AssistantMessage) -> list[Message]:
    """A sub-agent's message with only its tool calls (none of its text or thinking)."""
    content = message.content
    if isinstance(content, str):
        return []
    kept: list[ContentBlock | dict[str, Any]] = [b for b in content if isinstance(b, _CALL_BLOCKS)]
    if not kept:
        return []
    return [replace(message, content=kept)]
