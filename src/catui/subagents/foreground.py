"""Driving a child while its parent waits (spec 6.1 [12], 8.1), and handing it to the background.

:class:`ForegroundDriver` runs a child through the executor, forwards its
events to the parent's stream with ``task_*`` events, and returns its
tool_result. When background agents are available (a :class:`Handover` is
given), a running child can move to the background without losing a message:
when it outlives the auto-background threshold, or when
:meth:`ForegroundDriver.background_all` asks (Ctrl-B, the SDK). The parent's
Agent call then returns the handover's "launched" result instead of waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Protocol

from catui.session.events import AssistantMessageEvent, Event
from catui.subagents import task_events
from catui.subagents.child_session import mark_meta_finished
from catui.subagents.event_pump import INTERRUPTED, EventPump
from catui.subagents.executors import AgentExecutor
from catui.subagents.live import LiveAgents
from catui.subagents.outcome import RunConcluder, answer_text, end_status
from catui.subagents.result import ONE_SHOT_AGENT_TYPES
from catui.subagents.run import SubagentRun
from catui.tools.base import ToolResult

CANCEL_GRACE_S = 2.0

Handoff = EventPump
"""A moving run's events, read on by the new driver from where the foreground stopped reading."""


class Handover(Protocol):
    """Takes over a foreground run that moves to the background; returns the parent's immediate result."""

    def adopt(self, run: SubagentRun, handoff: Handoff) -> ToolResult: ...

    def continue_with_unread(self, agent_id: str, unread: list[str]) -> None:
        """Continue a finished agent (held by this process) in the background with messages it never read."""
        ...


@dataclass
class _Movable:
    run: SubagentRun
    outcome: asyncio.Future[bool] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    handoff: Handoff | None = None
    pump: EventPump | None = None
    moving: bool = False

    def move(self) -> None:
        """Ask for the move: the foreground reader stops waiting and hands the run over."""
        self.moving = True
        if self.pump is not None:
            self.pump.interrupt()


class ForegroundDriver:
    """Runs children in the foreground; see the module docstring."""

    def __init__(
        self, executor: AgentExecutor, concluder: RunConcluder, live: LiveAgents, *,
        handover: Handover | None = None, auto_background_ms: int = 0,
    ) -> None:
        self.executor = executor
        self.concluder = concluder
        self.live = live
        self.handover = handover
        self.auto_background_ms = auto_background_ms
        self.running: dict[str, SubagentRun] = {}
        """Runs the parent is waiting for right now (their Agent call has not returned), by agent id."""
        self._ended: dict[str, asyncio.Event] = {}
        self._movable: dict[str, _Movable] = {}

    def is_movable(self, agent_id: str) -> bool:
        """Whether ``agent_id`` runs in the foreground and may receive messages (background agents available)."""
        return agent_id in self._movable

    def movable_runs(self) -> list[SubagentRun]:
        return [entry.run for entry in self._movable.values()]

    async def run_to_completion(self, run: SubagentRun) -> ToolResult:
        """Drive ``run`` while the parent waits, forwarding its events; returns its tool_result."""
        ended = asyncio.Event()
        self.running[run.agent_id] = run
        self._ended[run.agent_id] = ended
        try:
            return await self._drive(run)
        finally:
            if self.running.get(run.agent_id) is run:
                del self.running[run.agent_id]
                self._ended.pop(run.agent_id, None)
            ended.set()

    async def _drive(self, run: SubagentRun) -> ToolResult:
        emit = run.parent_ctx.emit
        task_events.emit(run, task_events.task_started(run))
        entry: _Movable | None = None
        try:
            if self.handover is None or not run.request.movable:
                events = self.executor.execute(run)
            else:
                entry = _Movable(run)
                events = self._movable_events(entry)
            async for event in events:
                if emit is not None:
                    emit(event)
                    if isinstance(event, AssistantMessageEvent) and event.agent_id == run.agent_id:
                        emit(task_events.task_progress(run))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug in a child must not take the parent down
            result = await self.concluder.crashed(run, exc)
            mark_meta_finished(run.transcript_path)
            task_events.emit(run, task_events.foreground_finished(run, end_status(run, result), answer_text(result)))
            return result
        if entry is not None and entry.handoff is not None and self.handover is not None:
            # Now a background task, which reports its own end.
            result = self.handover.adopt(run, entry.handoff)
            if not entry.outcome.done():
                entry.outcome.set_result(True)
            return result
        result = await self.concluder.finish(run)
        mark_meta_finished(run.transcript_path)
        # A child that finished just as the stop came is reported as it ended.
        status = end_status(run, result)
        task_events.emit(run, task_events.foreground_finished(run, status, answer_text(result)))
        return result

    async def _movable_events(self, entry: _Movable) -> AsyncIterator[Event]:
        """The executor's events for a run that may move; ends early (without loss) when it moves."""
        run = entry.run
        relay = asyncio.Event()  # the parent's abort still stops it, but a moved run outlives the parent's turn
        run.stop_event = relay
        link = asyncio.ensure_future(_relay(run.parent_ctx.abort, relay))
        self._movable[run.agent_id] = entry
        self.live.attach_inbox(run)
        pump = entry.pump = EventPump(self.executor.execute(run))
        loop = asyncio.get_running_loop()
        timer = loop.call_later(self.auto_background_ms / 1000, entry.move) if self.auto_background_ms > 0 else None
        handed_off = False
        try:
            while True:
                try:
                    event = await pump.next()
                except StopAsyncIteration:
                    return
                except asyncio.CancelledError:
                    relay.set()  # stop the child properly before giving up on it
                    await asyncio.wait({pump.task}, timeout=CANCEL_GRACE_S)
                    pump.task.cancel()
                    raise
                if event is not INTERRUPTED:
                    yield event
                    continue
                if not entry.moving:
                    continue
                entry.handoff = pump
                handed_off = True
                return
        finally:
            if timer is not None:
                timer.cancel()
            link.cancel()
            self._movable.pop(run.agent_id, None)
            if not handed_off:
                unread = self.live.close_inbox(run.agent_id)
                woken = self.live.take_wake(run.agent_id)
                if run.agent_type not in ONE_SHOT_AGENT_TYPES:
                    # Its result tells the parent to continue it with SendMessage: keep the conversation.
                    self.live.keep_finished(run)
                if woken and unread and self.handover is not None:
                    # A notification of its own background child came during its last request: it continues
                    # in the background with it (soon: this call's own bookkeeping ends first).
                    asyncio.get_running_loop().call_soon(self.handover.continue_with_unread, run.agent_id, unread)
                if not entry.outcome.done():
                    entry.outcome.set_result(False)
                if not pump.task.done():
                    with contextlib.suppress(BaseException):
                        await pump.cancel()

    async def stop(self, agent_id: str, *, wait_s: float = 10.0) -> SubagentRun | None:
        """Stop a running foreground child by id; None if there is none.

        The child aborts at once; its parent's Agent call returns an error result saying it was stopped
        (with its partial answer), and a ``task_notification`` with status ``stopped`` follows. Waits up
        to ``wait_s`` seconds for that call to return, so the caller can report the end.
        """
        run = self.running.get(agent_id)
        if run is None:
            return None
        ended = self._ended.get(agent_id)
        run.request_stop()
        if ended is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ended.wait(), wait_s)
        return run

    async def background_all(self, tool_use_id: str | None = None) -> list[str]:
        """Move every movable foreground child to the background (with ``tool_use_id``, only the one its Agent
        call started); returns the ids of those moved."""
        entries = [entry for entry in self._movable.values()
                   if tool_use_id is None or entry.run.request.tool_use_id == tool_use_id]
        for entry in entries:
            entry.move()
        moved: list[str] = []
        for entry in entries:
            if await entry.outcome:
                moved.append(entry.run.agent_id)
        return moved


async def _relay(source: asyncio.Event, target: asyncio.Event) -> None:
    await source.wait()
    target.set()
