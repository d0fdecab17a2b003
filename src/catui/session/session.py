"""The agent loop: stream a model turn, run its tool calls, repeat until the model is done.

One :class:`Session` is one conversation with one model and one tool set; the
main agent and every sub-agent each have their own. ``run(prompt)`` is an
async iterator of :mod:`catui.session.events` and always ends with a
:class:`ResultEvent`, whatever happened (end of turn, max turns, an abort, an
unrecoverable provider error).

The loop lives here; a model turn is :mod:`catui.session.model_turn`, a tool
round :mod:`catui.session.tool_round` (each call: :mod:`catui.session.tool_call`),
the hook steps :mod:`catui.session.hook_steps`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from catui.errors import CatuiError, ProviderError
from catui.messages import Block, Message, text_of, tool_uses_of, user_message
from catui.models.base import ModelRequest
from catui.permissions.rules import denies_tool_outright
from catui.prompt_blocks import PromptBlockError, check_tool_results
from catui.session.budget import BUDGET_SUBTYPE
from catui.session.config import PermissionHook, SessionConfig, TurnTotals, new_session_id
from catui.session.context_window import ContextPolicy
from catui.session.events import ErrorEvent, Event, ResultEvent, UserMessageEvent
from catui.session.failures import format_validation_error
from catui.session.file_history import prompt_preview
from catui.session.hook_steps import emit_hook_notices, stop_hook_continues
from catui.session.loop_state import LoopState
from catui.session.model_turn import model_turn
from catui.session.run_state import RunState
from catui.session.tool_round import run_tool_round, transcript_tool_results, with_plan_reminder
from catui.tools.base import Tool
from catui.tools.plan_file import plan_file_for_session

if TYPE_CHECKING:
    from catui.session.compaction import CompactionOutcome

__all__ = [
    "PermissionHook", "Session", "SessionConfig", "TurnTotals", "format_validation_error", "new_session_id",
    "transcript_tool_results",
]

_DONE = object()
_STOP_NOW = object()


class Session:
    """One conversation. Not safe to ``run`` twice at the same time."""

    def __init__(self, config: SessionConfig) -> None:
        self.config = config
        self.ctx = config.tool_context
        self.ctx.session = self  # the context's owner, for the layers above tools (sub-agents find their parent)
        self.state = LoopState(messages=list(config.history))
        """What changes during runs (messages, usage, counters, the current run's notes); the steps take it."""
        self._queue: asyncio.Queue[Any] | None = None
        self._held: list[Event] = []
        self._idle_sinks: list[Callable[[Event], None]] = []
        self._before_turn_steps: list[Callable[[], Awaitable[None]]] = []
        self._pending_sources: list[Callable[[], list[str]]] = []
        self._tools_by_name: dict[str, Tool] = {}
        if config.agent_id is not None:
            # Only the main agent writes and presents a plan; a sub-agent in plan mode stays read-only.
            if self.ctx.permissions.plan_file is not None:
                self.ctx.permissions = self.ctx.permissions.with_plan_file(None)
        elif self.ctx.permissions.plan_file is None:
            # The main agent's plan file, where it writes its plan in plan mode (catui.tools.plan_file).
            self.ctx.permissions = self.ctx.permissions.with_plan_file(plan_file_for_session(config.session_id))
        self.set_tools(config.tools)
        if config.idle_events is not None:
            self.ctx.emit = self.emit  # events between runs reach the idle listener too

    # -- public API -----------------------------------------------------------------------------

    @property
    def messages(self) -> list[Message]:
        return self.state.messages

    @property
    def usage(self) -> dict[str, Any]:
        return self.state.usage

    @property
    def totals(self) -> TurnTotals:
        return self.state.totals

    @property
    def permission_denials(self) -> list[dict[str, Any]]:
        return self.state.permission_denials

    @property
    def last_stop_reason(self) -> str | None:
        return self.state.last_stop_reason

    @property
    def context_mark(self) -> tuple[int, int] | None:
        return self.state.context_mark

    @property
    def run_state(self) -> RunState:
        return self.state.run_state

    @property
    def session_id(self) -> str:
        return self.config.session_id

    @property
    def tools(self) -> list[Tool]:
        return self.config.tools

    # -- extension points: parts built after the session (MCP, sub-agents, deferred tools) join it here ----

    def add_before_turn(self, step: Callable[[], Awaitable[None]]) -> None:
        """Await ``step`` before each model turn, after ``config.before_turn`` and the steps added earlier (MCP's
        wait for its servers, a sub-agent's limit check, the handoff hold, the parent's task notices)."""
        self._before_turn_steps.append(step)

    def add_pending_messages(self, source: Callable[[], list[str]]) -> None:
        """Append what ``source`` returns to each tool-result round, after ``config.pending_messages`` and the
        sources added earlier (background agents' notifications, SendMessage's inbox)."""
        self._pending_sources.append(source)

    def pending_messages(self) -> list[str]:
        """The texts that join this tool-result round (read once per round: sources drain their queues)."""
        texts = list(self.config.pending_messages()) if self.config.pending_messages is not None else []
        for source in self._pending_sources:
            texts.extend(source())
        return texts

    def _before_turn_steps_in_order(self) -> list[Callable[[], Awaitable[None]]]:
        first = [self.config.before_turn] if self.config.before_turn is not None else []
        return [*first, *self._before_turn_steps]

    def set_tool_view(self, view: Callable[[list[Tool]], list[dict[str, Any]]]) -> None:
        """Send the tools as ``view`` renders them (deferred tools: names only until ToolSearch loads them)."""
        self.config.tool_view = view

    def set_tools(self, tools: list[Tool]) -> None:
        """Offer these tools, minus any the permission context denies outright (e.g. ``--disallowedTools Bash``)."""
        outright = [r for r in self.ctx.permissions.rules if r.behavior == "deny" and r.content is None]
        if outright:
            tools = [t for t in tools if not any(denies_tool_outright(r, t.name) for r in outright)]
        self.config.tools = list(tools)
        self._tools_by_name = {}
        for tool in tools:
            self._tools_by_name[tool.name] = tool
            for alias in tool.aliases:
                self._tools_by_name.setdefault(alias, tool)

    def find_tool(self, name: str) -> Tool | None:
        """The offered tool called ``name`` (or with that alias), None when there is none."""
        return self._tools_by_name.get(name)

    def set_model(self, model: str) -> None:
        self.config.model = model

    def replace_messages(self, messages: list[Message]) -> None:
        """Continue from these messages instead (a compaction); the transcript is the caller's to write."""
        self.state.messages[:] = messages
        self.state.context_mark = None

    async def compact(self, instructions: str | None = None) -> CompactionOutcome:
        """``/compact``: summarise the conversation now (between runs); raises CompactionError if it cannot."""
        from catui.session.compaction import compact_session  # lazy (catui.lazy): /compact, a full context

        policy = self.config.context_policy or ContextPolicy()
        return await compact_session(self.state, self, policy, trigger="manual", instructions=instructions)

    def is_running(self) -> bool:
        """Whether a :meth:`run` is under way (events emitted now reach its consumer)."""
        return self._queue is not None

    def abort(self) -> None:
        """Stop the current run as soon as possible; the run still ends with a ResultEvent."""
        self.ctx.abort.set()

    def stop_now(self) -> None:
        """Abort the current run and end its stream at once, cancelling a model request in flight.

        The consumer's ``async for`` over :meth:`run` ends without waiting for the loop to notice the
        abort, and without a ResultEvent (the caller reports the stop). Nothing happens between runs.
        """
        self.ctx.abort.set()
        if self._queue is not None:
            self._queue.put_nowait(_STOP_NOW)

    def emit(self, event: Event) -> None:
        """Push an event (typically a sub-agent's) into the stream of the current run (between runs: to
        ``config.idle_events``, else nowhere)."""
        if self._queue is not None:
            self._queue.put_nowait(event)
        elif self._idle_sinks:
            self._idle_sinks[-1](event)
        elif self.config.idle_events is not None:
            self.config.idle_events(event)

    def deliver_idle_events(self, sink: Callable[[Event], None]) -> Callable[[], None]:
        """Send the events emitted between runs to ``sink`` (in place of ``config.idle_events``) until the
        returned undo is called: a front end that shows them between its turns holds one while it serves."""
        self._idle_sinks.append(sink)
        self.ctx.emit = self.emit

        def restore() -> None:
            with contextlib.suppress(ValueError):
                self._idle_sinks.remove(sink)

        return restore

    def emit_or_hold(self, event: Event) -> None:
        """Push an event into the current run's stream or, between runs, into the next run's (first).

        For agents that live across this session's turns (teammates): what they do while it waits
        for its next prompt is shown when that turn starts rather than lost.
        """
        if self._queue is not None:
            self._queue.put_nowait(event)
        else:
            self._held.append(event)

    async def run(self, prompt: str | list[Block] | Message) -> AsyncGenerator[Event, None]:
        """Send ``prompt`` and drive the loop; yields events, the last being a ResultEvent."""
        queue: asyncio.Queue[Any] = asyncio.Queue()
        for held in self._held:
            queue.put_nowait(held)
        self._held.clear()
        self._queue = queue
        self.ctx.emit = self.emit
        self.ctx.abort.clear()
        producer = asyncio.create_task(self._drive(prompt))

        def finished(_task: asyncio.Task[None]) -> None:
            # Events emitted after this point would queue behind _DONE and be lost: from now on the
            # session counts as idle, so emitters (background agents) take their idle route instead.
            if self._queue is queue:
                self._queue = None
            queue.put_nowait(_DONE)

        producer.add_done_callback(finished)
        try:
            while True:
                item = await queue.get()
                if item is _DONE or item is _STOP_NOW:
                    break
                yield item
            if item is _DONE:
                producer.result()
        finally:
            if not producer.done():
                self.ctx.abort.set()
                producer.cancel()
                with contextlib.suppress(BaseException):
                    await producer
            elif not producer.cancelled():
                producer.exception()  # read, so a stopped run's late failure is not logged as unretrieved
            self._queue = None

    # -- the loop -------------------------------------------------------------------------------

    def event_fields(self) -> dict[str, Any]:
        """The fields every event of this session carries (which agent, under which Agent call)."""
        return {"agent_id": self.config.agent_id, "parent_tool_use_id": self.config.parent_tool_use_id}

    def append_message(self, message: Message, extra: dict[str, Any] | None = None) -> str:
        """Add ``message`` to the conversation and the transcript; the transcript line's uuid."""
        self.messages.append(message)
        if self.config.transcript is not None:
            # A TranscriptWriteError (a CatuiError) ends the run with an error result, so print mode exits
            # non-zero: a conversation that cannot be saved is never reported as a success.
            return self.config.transcript.append(message, extra=extra)
        return str(uuid.uuid4())

    async def _drive(self, prompt: str | list[Block] | Message) -> None:
        telemetry = self.config.telemetry
        if telemetry is None:
            await self._drive_run(prompt)
            return
        with telemetry.run(session_id=self.session_id, agent_id=self.config.agent_id, agent_type=self.ctx.agent_type,
                           prompt=prompt, model=self.config.model, spawned_from=self.config.spawned_from) as observed:
            result = await self._drive_run(prompt)
            observed.finished(subtype=result.subtype, is_error=result.is_error, num_turns=result.num_turns,
                              duration_ms=result.duration_ms)

    async def _drive_run(self, prompt: str | list[Block] | Message) -> ResultEvent:
        started = time.monotonic()
        self.state.timings.start_run(started)
        message = prompt if isinstance(prompt, dict) else user_message(prompt)
        subtype, is_error, result_text = "success", False, ""
        terminal_reason, api_error_status, in_tools = "completed", None, False
        api_error_message: str | None = None
        hooks, refused, stop_continuations = self.config.hooks, False, 0
        self.run_state.start_run()
        turns_this_run = 0
        try:
            content = message.get("content")
            if isinstance(content, list):
                try:  # a tool_result answering no open call would make every later request fail: never stored
                    check_tool_results(content, self.messages)
                except PromptBlockError as exc:
                    subtype, is_error, result_text, refused = "error_during_execution", True, str(exc), True
                    terminal_reason = "error"
                    self.emit(ErrorEvent(message=str(exc), **self.event_fields()))
            if hooks is not None and not refused:  # SessionStart / SubagentStart / UserPromptSubmit may refuse
                message, start = await hooks.before_run(message, has_history=bool(self.messages),
                                                        model=self.config.model, ctx=self.ctx)
                emit_hook_notices(self.state, self, start.notices)
                refused = start.blocked or start.halt
                if refused:
                    subtype, is_error = "error_during_execution", True
                    result_text = start.reason or start.stop_reason or "A hook stopped this prompt."
                    terminal_reason = "hook_stopped"
            if not refused:
                message = with_plan_reminder(self.state, self, message)
                line_uuid = self.append_message(message)
                history = self.config.file_history
                if history is not None and self.config.agent_id is None:
                    # The files this prompt's turn changes can be rewound to their state here.
                    history.begin_prompt(line_uuid, prompt_preview(message))
                self.emit(UserMessageEvent(message=message, uuid=line_uuid, **self.event_fields()))
            while not refused:
                if self.ctx.abort.is_set():
                    raise asyncio.CancelledError
                if self.config.budget is not None and self.config.budget.exceeded:
                    subtype, is_error, result_text = BUDGET_SUBTYPE, True, self.config.budget.describe()
                    break
                if self.config.max_turns is not None and turns_this_run >= self.config.max_turns:
                    subtype, is_error = "error_max_turns", True
                    result_text = result_text or f"Reached the maximum number of turns ({self.config.max_turns})."
                    terminal_reason = "max_turns"
                    break
                for step in self._before_turn_steps_in_order():
                    await step()
                    if self.ctx.abort.is_set():  # the hook stopped the run (a sub-agent at one of its limits)
                        raise asyncio.CancelledError
                # A conversation of one message is never compacted (fit_context returns at once), so a
                # one-prompt run does not load the compaction code.
                if self.config.context_policy is not None and len(self.state.messages) >= 2:
                    from catui.session.compaction import fit_context  # lazy (catui.lazy)

                    await fit_context(self.state, self, self.config.context_policy)
                in_tools = False
                assistant = await model_turn(self.state, self)
                turns_this_run += 1
                self.totals.num_turns += 1
                result_text = text_of(assistant) or result_text
                if self.config.budget is not None and self.config.budget.exceeded:
                    # As Claude Code: the turn that reached the budget is the last; its tool calls do not run.
                    subtype, is_error, result_text = BUDGET_SUBTYPE, True, self.config.budget.describe()
                    break
                tool_uses = tool_uses_of(assistant)
                if not tool_uses:
                    if hooks is not None and await stop_hook_continues(self.state, self, hooks, result_text, stop_continuations):
                        stop_continuations += 1
                        continue
                    break
                in_tools = True  # until the next model turn starts: an abort seen before it stopped the tools
                await run_tool_round(self.state, self, tool_uses)
                if self.run_state.hook_halt is not None:  # a hook answered continue: false
                    result_text = self.run_state.hook_halt
                    terminal_reason = "hook_stopped"
                    break
        except asyncio.CancelledError:
            subtype, is_error = "error_during_execution", True
            result_text = "Interrupted by the user."
            self.state.last_stop_reason = "aborted"
            terminal_reason = "aborted_tools" if in_tools else "aborted_streaming"
            if self.config.budget is not None and self.config.budget.exceeded:  # the budget stopped the run
                subtype, result_text = BUDGET_SUBTYPE, self.config.budget.describe()
        except CatuiError as exc:
            subtype, is_error = "error_during_execution", True
            result_text = str(exc)
            api_error_status = exc.status if isinstance(exc, ProviderError) else None
            api_error_message = exc.api_message if isinstance(exc, ProviderError) else None
            terminal_reason = "api_error" if isinstance(exc, ProviderError) else "error"
            self.emit(ErrorEvent(message=str(exc), **self.event_fields()))
        run_rules = self.run_state.take_run_rules()
        if run_rules:
            self.ctx.permissions = self.ctx.permissions.without_rules(run_rules)
        result = self.result_event(subtype, is_error, result_text, started=started, terminal_reason=terminal_reason,
                                   api_error_status=api_error_status)
        result.api_error_message = api_error_message
        self.emit(result)
        return result

    def result_event(self, subtype: str, is_error: bool, result_text: str, *, started: float,
                     terminal_reason: str | None = None, api_error_status: int | None = None) -> ResultEvent:
        """A run's closing event with the session's totals so far (``started``: the run's monotonic start).

        Front ends use it too, to end a run that stopped while no turn was running (the budget tripping
        while print mode waits for background agents).
        """
        return ResultEvent(
            subtype=subtype,
            is_error=is_error,
            result=result_text,
            session_id=self.session_id,
            num_turns=self.totals.num_turns,
            duration_ms=int((time.monotonic() - started) * 1000),
            duration_api_ms=self.totals.api_ms,
            usage=dict(self.usage),
            model_usage=self.config.usage_tracker.model_usage_json(),
            total_cost_usd=round(self.config.usage_tracker.total_cost_usd, 6),
            permission_denials=list(self.permission_denials),
            stop_reason=self.last_stop_reason,
            terminal_reason=terminal_reason,
            api_error_status=api_error_status,
            # A run that sent no request of its own (a front end ending one) reports no request timings.
            request_timings=self.state.timings.keys() if self.state.timings.started == started else {},
            **self.event_fields(),
        )

    def build_request(self) -> ModelRequest:
        """The request the next model turn sends: the conversation so far, the system prompt, the tools."""
        return ModelRequest(
            model=self.config.model,
            messages=self.messages,
            system=self.config.system_prompt,
            tools=(self.config.tool_view(self.config.tools) if self.config.tool_view is not None
                   else [tool.to_api() for tool in self.config.tools]),
            max_tokens=self.config.max_tokens,
            temperature=self.config.temperature,
            thinking=self.config.thinking,
            effort=self.config.effort,
            metadata={"agent_id": self.config.agent_id, **self.config.request_metadata},
        )
