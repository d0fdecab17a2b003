"""What a :class:`~catui.session.session.Session` is built from: its config and the run's counters."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from catui.config.concurrency import DEFAULT_TOOL_USE_CONCURRENCY
from catui.hooks.runner import HookRunner
from catui.messages import Block, Message
from catui.models.base import ModelProvider
from catui.permissions.context import PermissionDecision, PermissionRequest
from catui.session.budget import SessionBudget
from catui.session.context_window import ContextPolicy
from catui.session.events import Event
from catui.session.file_history import FileHistory
from catui.session.transcript import TranscriptWriter
from catui.session.usage import UsageTracker
from catui.tools.base import Tool, ToolContext

if TYPE_CHECKING:
    from catui.telemetry.hooks import RunTelemetry, SpawnContext

PermissionHook = Callable[[Tool, dict[str, Any], PermissionRequest, ToolContext], Awaitable[PermissionDecision]]
"""Asked when the permission decision is ``ask``: the terminal prompt, or the SDK's can_use_tool."""


def new_session_id() -> str:
    """A fresh session id (a UUID4, as Claude Code's)."""
    return str(uuid.uuid4())


@dataclass
class SessionConfig:
    """Everything a session needs. ``usage_tracker`` may be shared with sub-agents (modelUsage totals)."""

    provider: ModelProvider
    model: str
    tools: list[Tool]
    tool_context: ToolContext
    tool_view: Callable[[list[Tool]], list[dict[str, Any]]] | None = None
    missing_tool_hints: dict[str, str] = field(default_factory=dict)
    """A sentence added to the "No such tool available" error for these tool names (the current contract's
    Agent at the nesting limit)."""
    """Which tools a request sends (deferred tools, catui.tools.tool_search); None sends every tool."""
    system_prompt: list[Block] = field(default_factory=list)
    session_id: str = field(default_factory=new_session_id)
    max_turns: int | None = None
    max_tokens: int = 32000
    temperature: float | None = None
    thinking: dict[str, Any] | None = None
    effort: str | None = None
    """The wire effort level (``catui.models.reasoning``); None sends none."""
    transcript: TranscriptWriter | None = None
    can_use_tool: PermissionHook | None = None
    include_partial_messages: bool = False
    usage_tracker: UsageTracker = field(default_factory=UsageTracker)
    agent_id: str | None = None
    parent_tool_use_id: str | None = None
    pending_messages: Callable[[], list[str]] | None = None
    before_turn: Callable[[], Awaitable[None]] | None = None
    idle_events: Callable[[Event], None] | None = None
    """Where events emitted between runs go (background agents' task messages), instead of being dropped;
    the SDK's client delivers them to its caller. Set, the context's ``emit`` is the session's from the start."""
    """Awaited before each model turn (the owner's checks: background notices, limits, MCP servers ready)."""
    request_metadata: dict[str, Any] = field(default_factory=dict)
    fallback: tuple[ModelProvider, str] | None = None
    """(provider, model id) to switch to when the model is overloaded after its retries."""
    hooks: HookRunner | None = None
    """Settings-defined hooks (catui.hooks); None runs no hook code at all."""
    history: list[Message] = field(default_factory=list)
    """Messages the session starts from (a resumed or forked session's old conversation)."""
    max_tool_use_concurrency: int = DEFAULT_TOOL_USE_CONCURRENCY
    """How many concurrency-safe calls of one message run at once (a sliding window; catui.config.concurrency)."""
    context_policy: ContextPolicy | None = None
    """Window sizes and auto-compaction (catui.session.compaction); None never compacts."""
    file_history: FileHistory | None = None
    """File checkpoints for rewind_files (None unless checkpointing is on); sub-agents' edits go in it too."""
    budget: SessionBudget | None = None
    """The session-wide spending limit, shared by the main session and its sub-agents: once it trips, their runs
    end with its subtype (a turn that crossed it runs no tools)."""
    telemetry: RunTelemetry | None = None
    """OpenTelemetry spans, metrics and events (catui.telemetry.switch); None, the default, records nothing."""
    spawned_from: SpawnContext | None = None
    """A sub-agent's place in the trace: ``telemetry.spawn_context()`` taken by the call that started it."""


@dataclass
class TurnTotals:
    """Counters over the session's life: model turns, tool calls, and time spent waiting on the API."""

    num_turns: int = 0
    tool_uses: int = 0
    api_ms: int = 0
