"""The events a running session emits; the CLI, print mode and the SDK consume them.

Every event carries ``agent_id`` (None for the main agent) and
``parent_tool_use_id`` (the Agent tool_use that started the emitting sub-agent,
None for the main agent), so that a consumer can nest a child's output under
the call that spawned it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from catui.messages import Message


@dataclass(kw_only=True)
class Event:
    agent_id: str | None = None
    parent_tool_use_id: str | None = None


@dataclass(kw_only=True)
class TextDelta(Event):
    text: str


@dataclass(kw_only=True)
class ThinkingDelta(Event):
    text: str


@dataclass(kw_only=True)
class StreamEventRaw(Event):
    """A raw provider stream event, for ``include_partial_messages`` consumers."""

    event: dict[str, Any]


@dataclass(kw_only=True)
class AssistantMessageEvent(Event):
    """A complete assistant message, as appended to the transcript."""

    message: Message
    model: str
    uuid: str = ""
    message_id: str = ""
    stop_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class UserMessageEvent(Event):
    """A user message appended to the conversation (the prompt, or the tool_results of a turn).

    ``tool_use_results`` maps tool_use ids to the structured result (``ToolResult.data``).
    """

    message: Message
    tool_use_results: dict[str, Any] = field(default_factory=dict)
    uuid: str = ""


@dataclass(kw_only=True)
class ToolStartEvent(Event):
    tool_use_id: str
    name: str
    input: dict[str, Any]


@dataclass(kw_only=True)
class ToolEndEvent(Event):
    tool_use_id: str
    name: str
    is_error: bool
    content: Any
    data: Any = None


@dataclass(kw_only=True)
class UsageEvent(Event):
    model: str
    usage: dict[str, Any]


@dataclass(kw_only=True)
class SystemEvent(Event):
    """``system`` events in Claude Code's stream-json: init, task_started, task_progress, task_notification."""

    subtype: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class ErrorEvent(Event):
    message: str


@dataclass(kw_only=True)
class ResultEvent(Event):
    """The end of a run (one prompt), with the totals print mode's json reports."""

    subtype: str  # success | error_max_turns | error_during_execution
    is_error: bool
    result: str
    session_id: str
    num_turns: int
    duration_ms: int
    duration_api_ms: int
    usage: dict[str, Any]
    model_usage: dict[str, Any]
    total_cost_usd: float
    permission_denials: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None
    terminal_reason: str | None = None
    """Why the loop ended: completed, max_turns, aborted_streaming, aborted_tools, api_error, hook_stopped,
    error (claude-agent-sdk's ResultMessage.terminal_reason)."""
    api_error_status: int | None = None
    """The HTTP status of the API call whose failure ended the run, if one did."""
    api_error_message: str | None = None
    """That failure's message as the API sent it (a sub-agent's failure text quotes it in the current contract)."""
    request_timings: dict[str, int] = field(default_factory=dict)
    """The run's first request, in ms from the run's start (catui.session.request_timing): ``time_to_request_ms``,
    ``ttft_stream_ms``, ``first_content_frame_ms``, ``ttft_ms``; those it reached."""
    structured_output: Any = None
    """The object the main agent handed back through StructuredOutput (``--json-schema``, ``output_format``)."""
