"""What the loop's steps work on: the state that changes during a session's runs (:class:`LoopState`) and
the dependencies that do not (:class:`LoopDeps`).

A model turn, a tool round, one tool call, a compaction and the hook steps (:mod:`.model_turn`,
:mod:`.tool_round`, :mod:`.tool_call`, :mod:`.compaction`, :mod:`.hook_steps`) each take both. The
:class:`~catui.session.session.Session` owns one ``LoopState`` and is the ``LoopDeps`` of its steps, which
never import it back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from catui.messages import Message
from catui.models.base import ModelRequest
from catui.session.config import SessionConfig, TurnTotals
from catui.session.events import Event
from catui.session.request_timing import RunTimings
from catui.session.run_state import RunState
from catui.session.usage import empty_usage
from catui.tools.base import Tool, ToolContext


@dataclass
class LoopState:
    """One conversation's changing state: its messages, usage and counters, and the current run's notes."""

    messages: list[Message] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=empty_usage)
    totals: TurnTotals = field(default_factory=TurnTotals)
    permission_denials: list[dict[str, Any]] = field(default_factory=list)
    last_stop_reason: str | None = None
    context_mark: tuple[int, int] | None = None
    """(messages counted, tokens): the context size the last response's usage measured."""
    run_state: RunState = field(default_factory=RunState)
    """What the current run's tool calls leave for its loop (a hook's halt, follow-ups, run-only rules)."""
    timings: RunTimings = field(default_factory=RunTimings)
    """When the current run's first request went out and its first frames came back (its result's timing keys)."""


class LoopDeps(Protocol):
    """What the steps use and a run does not change: the config, the tool context, and the session's
    operations on its stream, transcript and tools."""

    config: SessionConfig
    ctx: ToolContext

    def emit(self, event: Event) -> None:
        """Push an event into the current run's stream."""
        ...

    def event_fields(self) -> dict[str, Any]:
        """The fields every event of this session carries (``agent_id``, ``parent_tool_use_id``)."""
        ...

    def append_message(self, message: Message, extra: dict[str, Any] | None = None) -> str:
        """Add a message to the conversation and the transcript; the transcript line's uuid."""
        ...

    def replace_messages(self, messages: list[Message]) -> None:
        """Continue from these messages instead (a compaction)."""
        ...

    def find_tool(self, name: str) -> Tool | None:
        """The offered tool called ``name`` (or with that alias)."""
        ...

    def build_request(self) -> ModelRequest:
        """The request the next model turn sends."""
        ...

    def pending_messages(self) -> list[str]:
        """The texts that join this tool-result round (SendMessage's inbox, background notifications)."""
        ...
