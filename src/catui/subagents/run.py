"""One sub-agent run: its child session, first message, metadata and counters (spec 6.1, 8.1).

A :class:`SubagentRun` is data. Where it runs is an executor's business
(:mod:`catui.subagents.executors`); the drivers in :mod:`.foreground` and
:mod:`.background` consume its events and keep the counters current through
:meth:`SubagentRun.observe`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.agents.definition import AgentDefinition
from catui.messages import Message, blocks_of, last_assistant_text
from catui.session.events import AssistantMessageEvent, Event, ResultEvent, UsageEvent
from catui.session.session import Session
from catui.session.usage import total_tokens
from catui.subagents.ids import new_run_id
from catui.subagents.limits import LimitHit, LimitWatcher, RunLimits
from catui.subagents.models import ChildModel
from catui.tools.base import ToolContext

if TYPE_CHECKING:
    from catui.mcp.subagents import ChildMcpServers
    from catui.worktree.model import WorktreeInfo


@dataclass
class SpawnRequest:
    """One Agent call's arguments, plus the id of the tool_use that made it."""

    description: str
    prompt: str
    subagent_type: str | None = None
    model: str | None = None
    run_in_background: bool = False
    name: str | None = None
    team_name: str | None = None
    mode: str | None = None
    isolation: str | None = None
    cwd: str | None = None
    tool_use_id: str | None = None
    effort: str | None = None
    """The call's ``effort`` (current contract); the definition's own effort wins, as its model does."""
    requested: str | None = None
    """What the call said of the background: ``"background"``, ``"foreground"``, or None when it left it out."""
    output_schema: dict[str, Any] | None = None
    """A JSON Schema the child answers through ``StructuredOutput`` (a workflow's ``agent(p, {schema})``);
    it replaces the definition's own ``outputSchema`` for this call."""
    withheld_tools: frozenset[str] = frozenset()
    """Tools this child must not have whatever its definition says (a workflow's agents: no Agent)."""
    shown_type: str | None = None
    """The agent type the child is recorded as (``workflow-subagent``), when not its definition's name."""
    transcript_dir: Path | None = None
    """Where the child's transcript and ``.meta.json`` go instead of ``<session>/subagents/`` (a workflow's
    agents: the run's folder, ``subagents/workflows/<run id>/``, observed-cc-now.md §7)."""
    extra_meta: dict[str, Any] = field(default_factory=dict)
    """More keys for the child's ``.meta.json`` (a workflow agent's ``workflowPhase`` and ``inWorkflowRun``)."""
    movable: bool = True
    """Whether the foreground child may move to the background (auto-background, Ctrl-B). A workflow's
    agents may not: the program awaits their results, not a launch text."""
    remote: bool = False
    """Run on the distributed executor when one is configured (Ray), though the caller waits for it: a
    workflow's agents. The in-process executor ignores it."""
    repository_share: str | None = None
    """Remote agents with the same value that run at the same time share one snapshot of the repository
    (a workflow's run id; catui.subagents.executors.shared_snapshots); None: a snapshot of its own."""


@dataclass
class SubagentRun:
    """A prepared child: its session, first message and metadata.

    Counters (``tool_use_count``, ``last_tool_name``, ``last_usage``) follow
    the child's messages as they arrive, for progress lines and task events.
    """

    agent_id: str
    definition: AgentDefinition
    request: SpawnRequest
    session: Session
    first_message: Message
    model: ChildModel
    parent_ctx: ToolContext
    transcript_path: Path | None = None
    worktree: WorktreeInfo | None = None
    is_async: bool = False
    is_fork: bool = False
    depth: int = 1
    """How deep this child is nested (its parent's depth plus one; the main agent is 0)."""
    is_resume: bool = False
    """Whether this run continues an agent that ran before (SendMessage to a finished agent)."""
    started: float = field(default_factory=time.monotonic)
    tool_use_count: int = 0
    last_tool_name: str | None = None
    last_call_description: str | None = None
    """The ``description`` argument of the child's latest tool call that had one (Bash, Agent), for progress."""
    last_usage: dict[str, Any] = field(default_factory=dict)
    result_event: ResultEvent | None = None
    aborted: bool = False
    current_contract: bool = False
    """The session follows the current Claude Code contract (its task events carry the current fields)."""
    run_id: str = field(default_factory=new_run_id)
    """This run's id in the current contract's task events and a notification turn's ``origin``."""
    end_status: str | None = None
    """How a background run ended (``completed``, ``failed``, ``stopped``, a limit), set before ``on_end`` runs."""
    on_end: list[Callable[[], None]] = field(default_factory=list)
    """Called once a background run has ended (the current contract's running-agents cap gives its place back)."""
    stop_event: asyncio.Event | None = None
    """When set, the child stops when this is set, instead of on the parent's abort (background runs)."""
    mcp_servers: ChildMcpServers | None = None
    """The MCP servers of the agent's own ``mcpServers``, closed when the run ends."""
    stop_requested: bool = False
    """Set by :meth:`request_stop` (TaskStop, ``CatuiClient.stop_task``): this run alone was asked to stop."""
    stop_request: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    """Set together with ``stop_requested``; executors wait on it."""
    limits: LimitWatcher | None = field(default=None, repr=False)
    """The watcher of the definition's limits (None when it sets none); built with the run."""
    limit_hit: LimitHit | None = None
    """The limit that stopped this run, when one did."""
    placement: dict[str, Any] = field(default_factory=dict)
    """Where the run executes, as its executor reports it (``{"executor": "ray", "node": …, "pid": …}``);
    empty for a run in this process."""
    placement_listeners: list[Callable[[dict[str, Any]], None]] = field(default_factory=list, repr=False)
    """Called with ``placement`` when an executor reports it (the task record writes it to its meta)."""
    _limit_hook_installed: bool = field(default=False, repr=False)
    history_before: int = field(default=-1, repr=False)
    """How many messages the child's session held before this run (a fork's inherited conversation, a resumed
    agent's past); set when the run is built."""

    def __post_init__(self) -> None:
        if self.history_before < 0:
            self.history_before = len(self.session.messages)
        limits = RunLimits.of(self.definition)
        if limits is not None and self.limits is None:
            self.limits = LimitWatcher(limits, self._stop_at_limit)

    def _stop_at_limit(self, hit: LimitHit) -> None:
        self.limit_hit = hit
        # Abort the child's loop now, not when the executor's stop waiter next runs: the loop runs
        # ahead of its consumer and would otherwise send another model request past the limit.
        self.session.abort()
        self.request_stop()

    def start_limits(self) -> None:
        """Start the wall-clock and stall timers (executors call it when the child starts running).

        The budgets are also checked before each of the child's model turns (its ``before_turn`` hook,
        chained once): its loop runs ahead of the events it emits.
        """
        if self.limits is None:
            return
        self.limits.start(self.session.usage)
        if not self._limit_hook_installed:
            self._limit_hook_installed = True
            async def check_limits_before_turn() -> None:
                if self.limits is not None:
                    self.limits.sample(self.session.usage, self.session.config.model)

            self.session.add_before_turn(check_limits_before_turn)

    def stop_limits(self) -> None:
        """Disarm the timers once the child has ended."""
        if self.limits is not None:
            self.limits.stop()

    @property
    def agent_type(self) -> str:
        return self.definition.agent_type

    @property
    def description(self) -> str:
        return self.request.description

    @property
    def messages(self) -> list[Message]:
        return self.session.messages

    def own_messages(self) -> list[Message]:
        """The messages of this run: without a fork's inherited conversation or a resumed agent's past."""
        return self.session.messages[self.history_before:]

    @property
    def duration_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)

    def report_placement(self, placement: dict[str, Any]) -> None:
        """An executor says where the run executes: kept on the run and passed to the listeners."""
        self.placement = dict(placement)
        for listener in list(self.placement_listeners):
            listener(self.placement)

    def stop_signal(self) -> asyncio.Event:
        """The event whose setting stops the child: its own stop event, else the parent's abort."""
        return self.stop_event if self.stop_event is not None else self.parent_ctx.abort

    async def wait_for_stop(self) -> None:
        """Return once this child is asked to stop: its stop signal (:meth:`stop_signal`) or :meth:`request_stop`."""
        waiters = [asyncio.ensure_future(event.wait()) for event in (self.stop_signal(), self.stop_request)]
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()

    def request_stop(self) -> None:
        """Stop this child at once (mid-request included); siblings and the parent carry on."""
        self.stop_requested = True
        self.stop_request.set()

    def clear_stop_request(self) -> None:
        """Forget an earlier stop, before the run continues (a stopped agent resumed with SendMessage)."""
        self.limit_hit = None
        if self.limits is not None:
            self.limits = LimitWatcher(self.limits.limits, self._stop_at_limit)
        self.stop_requested = False
        self.stop_request.clear()

    def progress_usage(self) -> dict[str, int]:
        """``{total_tokens, tool_uses, duration_ms}`` as task events and notifications report them."""
        return {
            "total_tokens": total_tokens(self.last_usage),
            "tool_uses": self.tool_use_count,
            "duration_ms": self.duration_ms,
        }

    def latest_text(self) -> str | None:
        """The text of the child's latest assistant message that has any (its answer so far)."""
        return last_assistant_text(self.messages) or None

    def observe(self, event: Event) -> None:
        """Update the counters from one of the child's events (its own, not its children's).

        The limit watcher sees every event: a grandchild's progress is progress too.
        """
        own = event.agent_id == self.agent_id
        if self.limits is not None:
            self.limits.observe(event, own, self.session.usage)
        if not own:
            return
        if isinstance(event, AssistantMessageEvent):
            for block in blocks_of(event.message):
                if block.get("type") == "tool_use":
                    self.tool_use_count += 1
                    self.last_tool_name = str(block.get("name", ""))
                    arguments = block.get("input")
                    described = arguments.get("description") if isinstance(arguments, dict) else None
                    if isinstance(described, str) and described.strip():
                        self.last_call_description = described.strip()
        elif isinstance(event, UsageEvent):
            self.last_usage = dict(event.usage)
        elif isinstance(event, ResultEvent):
            self.result_event = event

    def catch_up_tool_calls(self, first_index: int, tools_before: int) -> None:
        """Count the tool calls of messages not read yet when the child was stopped."""
        calls = [
            block
            for message in self.session.messages[first_index:]
            if message.get("role") == "assistant"
            for block in blocks_of(message)
            if block.get("type") == "tool_use"
        ]
        if len(calls) > self.tool_use_count - tools_before:
            self.tool_use_count = tools_before + len(calls)
            self.last_tool_name = str(calls[-1].get("name", ""))
