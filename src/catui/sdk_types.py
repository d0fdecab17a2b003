"""The SDK's message, content-block and permission types, named as in claude-agent-sdk.

A run's :mod:`catui.session.events` become these objects in
:func:`message_from_event`; everything else in the SDK speaks them. Every
message of a sub-agent carries ``parent_tool_use_id`` (the id of the Agent
tool_use that started it); the main agent's messages have None there.
"""

from __future__ import annotations

import uuid as uuid_module
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal, TypedDict

from catui.session.events import (
    AssistantMessageEvent,
    ErrorEvent,
    Event,
    ResultEvent,
    StreamEventRaw,
    SystemEvent,
    UserMessageEvent,
)

# -- content blocks --------------------------------------------------------------------------------


@dataclass
class TextBlock:
    """Text written by the model (or by the user)."""

    text: str


@dataclass
class ThinkingBlock:
    """Extended thinking; ``signature`` is what the API needs to accept it back."""

    thinking: str
    signature: str = ""


@dataclass
class ToolUseBlock:
    """A tool call the model made."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass
class ToolResultBlock:
    """The result of a tool call, as sent back to the model."""

    tool_use_id: str
    content: str | list[dict[str, Any]] | None = None
    is_error: bool | None = None


ContentBlock = TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock
"""Blocks of other kinds (images, redacted thinking) are kept as the API's plain dicts."""


# -- messages --------------------------------------------------------------------------------------


@dataclass
class UserMessage:
    """A user-role message: tool results, a sub-agent's prompt, or a background-task notification.

    ``tool_use_result`` is the structured result of the (single) tool call this
    message answers, as Claude Code's stream-json reports it (for an Agent call:
    status, agentId, agentType, content, totals).
    """

    content: str | list[ContentBlock | dict[str, Any]]
    uuid: str | None = None
    parent_tool_use_id: str | None = None
    tool_use_result: dict[str, Any] | Any | None = None
    agent_id: str | None = None
    """The sub-agent or teammate (``<name>@<team>``) the message belongs to; None for the main agent's."""


@dataclass
class AssistantMessage:
    """One complete model turn."""

    content: list[ContentBlock | dict[str, Any]]
    model: str
    parent_tool_use_id: str | None = None
    error: str | None = None
    usage: dict[str, Any] | None = None
    message_id: str | None = None
    stop_reason: str | None = None
    session_id: str | None = None
    uuid: str | None = None
    agent_id: str | None = None
    """The sub-agent or teammate (``<name>@<team>``) that wrote it; None for the main agent."""


@dataclass
class SystemMessage:
    """A ``system`` message: ``init`` at the start of each prompt, task events, errors."""

    subtype: str
    data: dict[str, Any]
    _: KW_ONLY
    parent_tool_use_id: str | None = None


class TaskUsage(TypedDict):
    """Totals of a background task so far."""

    total_tokens: int
    tool_uses: int
    duration_ms: int


TaskNotificationStatus = Literal["completed", "failed", "stopped", "budget_exceeded", "timed_out", "stalled"]


@dataclass
class TaskStartedMessage(SystemMessage):
    """A background task (an agent, a shell command) started."""

    task_id: str
    description: str
    uuid: str
    session_id: str
    tool_use_id: str | None = None
    task_type: str | None = None


@dataclass
class TaskProgressMessage(SystemMessage):
    """A running background task did something (``last_tool_name``); ``usage`` is its totals so far."""

    task_id: str
    description: str
    usage: TaskUsage
    uuid: str
    session_id: str
    tool_use_id: str | None = None
    last_tool_name: str | None = None


@dataclass
class TaskNotificationMessage(SystemMessage):
    """A background task ended (completed, failed or stopped); the main agent is told in a new turn."""

    task_id: str
    status: str
    output_file: str
    summary: str
    uuid: str
    session_id: str
    tool_use_id: str | None = None
    usage: TaskUsage | None = None


@dataclass
class ResultMessage:
    """The end of one prompt's run: the final text, totals, usage per model and cost.

    ``errors`` lists what went wrong when ``is_error`` (the text ``result`` also
    holds); ``structured_output`` is always None: catui has no ``output_format`` yet.
    """

    subtype: str
    duration_ms: int
    duration_api_ms: int
    is_error: bool
    num_turns: int
    session_id: str
    stop_reason: str | None = None
    total_cost_usd: float | None = None
    usage: dict[str, Any] | None = None
    result: str | None = None
    structured_output: Any = None
    model_usage: dict[str, Any] | None = None
    permission_denials: list[Any] | None = None
    errors: list[str] | None = None
    uuid: str | None = None


@dataclass
class StreamEvent:
    """A raw Anthropic stream event (only with ``include_partial_messages=True``)."""

    uuid: str
    session_id: str
    event: dict[str, Any]
    parent_tool_use_id: str | None = None


Message = UserMessage | AssistantMessage | SystemMessage | ResultMessage | StreamEvent


# -- permissions -----------------------------------------------------------------------------------


@dataclass
class PermissionUpdate:
    """A permission change suggested with a request. catui sends none (``suggestions`` is empty)."""

    type: str
    rules: list[Any] | None = None
    behavior: str | None = None
    mode: str | None = None
    directories: list[str] | None = None
    destination: str | None = None


@dataclass
class ToolPermissionContext:
    """What ``can_use_tool`` learns about a call besides the tool's name and input.

    ``agent_id`` is None for the main agent and the sub-agent's id otherwise;
    ``agent_type`` is ``"main"`` for the main agent and the sub-agent's type
    (``general-purpose``, ``Explore``, a custom name) otherwise.
    ``tool_use_id`` is the id of the call (its ToolUseBlock's ``id``).
    ``decision_reason`` is not filled in yet.
    """

    signal: Any | None = None
    suggestions: list[PermissionUpdate] = field(default_factory=list)
    tool_use_id: str | None = None
    agent_id: str | None = None
    agent_type: str | None = None
    blocked_path: str | None = None
    decision_reason: str | None = None


@dataclass
class PermissionResultAllow:
    """Let the call run.

    ``updated_input`` (rewriting the model's arguments) is not supported by catui
    yet: returning one that differs from the input ends the run with a clear error.
    ``updated_permissions`` is accepted and ignored.
    """

    behavior: Literal["allow"] = "allow"
    updated_input: dict[str, Any] | None = None
    updated_permissions: list[PermissionUpdate] | None = None


@dataclass
class PermissionResultDeny:
    """Refuse the call; ``message`` goes back to the model. ``interrupt=True`` also stops the run."""

    behavior: Literal["deny"] = "deny"
    message: str = ""
    interrupt: bool = False


PermissionResult = PermissionResultAllow | PermissionResultDeny


# -- events → messages -----------------------------------------------------------------------------


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
    if event.subtype == "task_notification":
        return TaskNotificationMessage(
            **common,
            status=str(data.get("status") or ""),
            output_file=str(data.get("output_file") or ""),
            summary=str(data.get("summary") or ""),
            usage=_task_usage(data.get("usage")),
        )
    return SystemMessage(event.subtype, data, parent_tool_use_id=event.parent_tool_use_id)


def result_message(event: ResultEvent) -> ResultMessage:
    return ResultMessage(
        subtype=event.subtype,
        duration_ms=event.duration_ms,
        duration_api_ms=event.duration_api_ms,
        is_error=event.is_error,
        num_turns=event.num_turns,
        session_id=event.session_id,
        stop_reason=event.stop_reason,
        total_cost_usd=event.total_cost_usd,
        usage=dict(event.usage),
        result=event.result,
        model_usage=dict(event.model_usage),
        permission_denials=list(event.permission_denials),
        errors=[event.result] if event.is_error and event.result else None,
        uuid=_new_uuid(),
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
