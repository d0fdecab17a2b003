"""The SDK's message, content-block and permission types, named as in claude-agent-sdk.

A run's :mod:`catui.session.events` become these objects in
:func:`message_from_event`; everything else in the SDK speaks them. Every
message of a sub-agent carries ``parent_tool_use_id`` (the id of the Agent
tool_use that started it); the main agent's messages have None there.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal, TypedDict

from catui.sdk.permissions import (
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionRuleValue,
    PermissionUpdate,
    ToolPermissionContext,
)

# The permission types live in catui.sdk.permissions; the SDK's callers find them here with the rest.
__all__ = [
    "PermissionResult",
    "PermissionResultAllow",
    "PermissionResultDeny",
    "PermissionRuleValue",
    "PermissionUpdate",
    "ToolPermissionContext",
]

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


@dataclass
class ServerToolUseBlock:
    """A tool the API ran itself on the model's behalf (``web_search``, ``web_fetch``, …); ``name`` says which."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass
class ServerToolResultBlock:
    """The result of a server tool call; ``content`` is the API's block as it came (its ``type`` says which)."""

    tool_use_id: str
    content: dict[str, Any]


ContentBlock = TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock | ServerToolUseBlock | ServerToolResultBlock
"""Blocks of other kinds (images, redacted thinking) are kept as the API's plain dicts."""

MessageOrigin = dict[str, Any]  # keys: "kind" (catui.MessageOriginKind), "subkind" …
"""Where a user-role message came from: ``{"kind": "human"}`` for prompts, ``{"kind": "task-notification"}``
for a background task's notification turn (claude-agent-sdk's MessageOrigin)."""


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
    origin: MessageOrigin | None = None
    """``{"kind": "task-notification"}`` on a notification turn's message; None on tool results."""
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
    holds); ``structured_output`` is the validated value when ``output_format`` asked for one.
    ``terminal_reason`` says why the loop ended (``completed``, ``max_turns``,
    ``aborted_streaming``, ``aborted_tools``, ``api_error``, …); ``api_error_status``
    is the HTTP status of a failed API call; ``origin`` is what started the turn
    (``{"kind": "human"}`` or ``{"kind": "task-notification"}``).

    Under the current compatibility profile (``compat="2.1.332"``, docs/compat.md) ``num_turns`` counts the
    turn's own model requests (a notification turn answered at once: 1), and the keys Claude Code 2.1.332 adds
    to its result objects are filled in, as catui's stream-json shows them: ``result_index`` (0, 1, … per
    result of the client), ``subagent_stats`` (catui.subagents.stats), ``safety_stops`` and
    ``queued_turn_count`` (0), ``model_usage_since_last_result`` (``model_usage`` counted since the previous
    result) and the timings of the turn's first model request in milliseconds from the turn's start
    (``time_to_request_ms``, ``ttft_stream_ms``, ``first_content_frame_ms``, ``ttft_ms``; None when the turn
    sent none). Under the 2.1.92 profile they stay None and ``num_turns`` counts the whole session's requests.
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
    api_error_status: int | None = None
    uuid: str | None = None
    terminal_reason: str | None = None
    origin: MessageOrigin | None = None
    result_index: int | None = None
    subagent_stats: dict[str, Any] | None = None
    safety_stops: int | None = None
    queued_turn_count: int | None = None
    model_usage_since_last_result: dict[str, Any] | None = None
    time_to_request_ms: int | None = None
    ttft_stream_ms: int | None = None
    first_content_frame_ms: int | None = None
    ttft_ms: int | None = None


@dataclass
class StreamEvent:
    """A raw Anthropic stream event (only with ``include_partial_messages=True``)."""

    uuid: str
    session_id: str
    event: dict[str, Any]
    parent_tool_use_id: str | None = None


TaskUpdatedStatus = Literal["pending", "running", "paused", "completed", "failed", "killed"]

TERMINAL_TASK_STATUSES: frozenset[str] = frozenset({"completed", "failed", "stopped", "killed"})
"""Statuses of TaskNotificationMessage and TaskUpdatedMessage that mean the task is over."""


@dataclass
class TaskUpdatedMessage(SystemMessage):
    """A background task's state changed; ``patch`` holds the changed fields (``status``, ``end_time``, …).

    A terminal ``status`` (see TERMINAL_TASK_STATUSES) means the task is over; a
    task stopped by TaskStop reports ``killed`` here and ``stopped`` in its
    notification.
    """

    task_id: str
    patch: dict[str, Any]
    status: str | None = None
    session_id: str | None = None
    uuid: str | None = None


@dataclass
class HookEventMessage(SystemMessage):
    """A hook ran (only with ``include_hook_events=True``): ``subtype`` is ``hook_started`` or ``hook_response``."""

    hook_event_name: str = ""
    session_id: str | None = None
    uuid: str | None = None


RateLimitStatus = Literal["allowed", "allowed_warning", "rejected"]


@dataclass
class RateLimitInfo:
    """The provider's rate-limit state, read from its ``anthropic-ratelimit-*`` response headers or a 429."""

    status: RateLimitStatus
    resets_at: int | None = None
    rate_limit_type: str | None = None
    utilization: float | None = None
    overage_status: RateLimitStatus | None = None
    overage_resets_at: int | None = None
    overage_disabled_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass
class RateLimitEvent:
    """The rate-limit state changed (a request was refused with 429, or a retry waited for one)."""

    rate_limit_info: RateLimitInfo
    uuid: str
    session_id: str


Message = UserMessage | AssistantMessage | SystemMessage | ResultMessage | StreamEvent | RateLimitEvent


