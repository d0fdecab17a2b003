"""The session as the loop's steps see it: what a model turn, a tool round, a compaction and a hook step use.

:class:`~catui.session.session.Session` is the one implementation. The steps (:mod:`.model_turn`,
:mod:`.tool_round`, :mod:`.tool_call`, :mod:`.compaction`, :mod:`.hook_steps`) are typed by this protocol
rather than by the class, so the loop's module imports them and they never import it back.
"""

from __future__ import annotations

from typing import Any, Protocol

from catui.messages import Message
from catui.models.base import ModelRequest
from catui.session.config import SessionConfig, TurnTotals
from catui.session.events import Event
from catui.session.run_state import RunState
from catui.tools.base import Tool, ToolContext


class LoopHost(Protocol):
    """One conversation's state (messages, usage, counters, the current run's notes) and its fixed parts
    (config, tool context), with the few operations the steps share."""

    config: SessionConfig
    ctx: ToolContext
    messages: list[Message]
    usage: dict[str, Any]
    totals: TurnTotals
    permission_denials: list[dict[str, Any]]
    last_stop_reason: str | None
    context_mark: tuple[int, int] | None
    run_state: RunState

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
