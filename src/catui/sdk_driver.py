"""The driver of a :class:`catui.CatuiClient`: runs queued prompts and background notification turns,
one at a time, and turns the session's events into the messages the caller reads.

A mixin of CatuiClient (same object; split out to keep sdk.py about the conversation's API).
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from catui.sdk_client_info import init_message
from catui.sdk_controls import wrap_error
from catui.sdk_messages import MessageView, message_from_event
from catui.sdk_output_format import StructuredResult
from catui.sdk_prompts import QueuedPrompt
from catui.sdk_types import MessageOrigin, ResultMessage, ToolResultBlock, UserMessage
from catui.session.compact_prompt import compact_events, compact_instructions
from catui.session.events import Event, ResultEvent, UsageEvent, UserMessageEvent

IDLE = object()
"""Put in the outbox when the client has nothing left to do: no prompt running, no background work pending."""

CLOSED = object()

END_OF_INPUT = object()
"""Put in the inbox after a one-shot query's last prompt; the driver answers with INPUT_DONE in the outbox."""

INPUT_DONE = object()

TASK_NOTIFICATION_ORIGIN: MessageOrigin = {"kind": "task-notification"}



class ClientDriver:
    """The part of CatuiClient that runs turns and delivers messages."""

    _app: Any
    _inbox: asyncio.Queue[QueuedPrompt]
    _outbox: asyncio.Queue[Any]
    _running: bool
    _interrupt_pending: bool
    _usage_by_agent: dict[str | None, dict[str, Any]]
    _parent_of_agent: dict[str, str]
    _view: MessageView
    _structured: StructuredResult | None
    _turn_origin: MessageOrigin | None
    _main_usage: dict[str, Any] | None
    _ends_team: bool

    def _install_idle_delivery(self) -> None:
        """Route events that background agents emit between runs to the consumer.

        The session drops events emitted while no run is active; a background
        agent's task_progress/task_notification can arrive then.
        """
        session = self._app.session
        deliver_in_run = session.emit

        def emit(event: Event) -> None:
            if self._running:
                deliver_in_run(event)
            else:
                self._deliver(event)

        session.emit = emit
        session.ctx.emit = emit

    def _deliver(self, event: Event) -> None:
        app = self._app
        if app is None:
            return
        if event.agent_id is not None:
            if event.parent_tool_use_id is not None:
                self._parent_of_agent[event.agent_id] = event.parent_tool_use_id
            elif event.agent_id in self._parent_of_agent:
                # Task events a sub-agent emits about its own sub-agents name only the emitting agent.
                event = dataclasses.replace(event, parent_tool_use_id=self._parent_of_agent[event.agent_id])
        if isinstance(event, UsageEvent):
            self._usage_by_agent[event.agent_id] = event.usage
            if event.agent_id is None:
                self._main_usage = dict(event.usage)
            return
        message = message_from_event(
            event, app.session.session_id, last_usage=self._usage_by_agent.pop(event.agent_id, None)
        )
        if message is None:
            return
        if isinstance(message, ResultMessage) and isinstance(event, ResultEvent):
            message = dataclasses.replace(message, origin=self._turn_origin)
            if self._structured is not None:
                # A notification turn answers a background task, not the caller: it owes no object.
                required = self._turn_origin is not TASK_NOTIFICATION_ORIGIN
                message = self._structured.finish(message, required=required)
        if (
            isinstance(message, UserMessage)
            and self._turn_origin is TASK_NOTIFICATION_ORIGIN
            and message.parent_tool_use_id is None
            and not any(isinstance(b, ToolResultBlock) for b in message.content)
        ):
            message = dataclasses.replace(message, origin=self._turn_origin)
        for shown in self._view.shown(message):
            self._outbox.put_nowait(shown)

    async def _drive(self) -> None:
        """Run queued prompts and background notifications, one at a time, for the client's life."""
        notification: asyncio.Task[Any] | None = None
        prompt_wait: asyncio.Task[QueuedPrompt] | None = None
        busy = False
        try:
            while True:
                if busy and notification is None and self._inbox.empty():
                    self._outbox.put_nowait(IDLE)
                    busy = False
                if prompt_wait is None:
                    prompt_wait = asyncio.create_task(self._inbox.get())
                waiting: set[asyncio.Task[Any]] = {prompt_wait}
                if notification is not None:
                    waiting.add(notification)
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if prompt_wait in done:
                    prompt = prompt_wait.result()
                    prompt_wait = None
                    busy = True
                    if prompt is END_OF_INPUT:
                        self._outbox.put_nowait(INPUT_DONE)
                    else:
                        await self._run_turn(prompt.content, from_user=True, origin=prompt.origin)
                elif notification is not None and notification in done:
                    content = notification.result()
                    notification = None
                    if content is None:
                        continue
                    await self._run_turn(content, from_user=False)
                if notification is None:
                    notification = self._wait_for_notification()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            self._outbox.put_nowait(wrap_error(exc))
        finally:
            for task in (prompt_wait, notification):
                if task is not None and not task.done():
                    task.cancel()

    def _wait_for_notification(self) -> asyncio.Task[Any] | None:
        waiter = getattr(self._app.tasks, "next_notification", None)
        if waiter is None:
            return None
        teams = getattr(self._app.services.subagents, "teams", None)
        if teams is not None and teams.team is not None:
            # A lead: its teammates' messages start its turns too; one-shot query() ends the team when
            # it goes quiet (as print mode does), a client that lives on keeps it.
            return asyncio.create_task(teams.next_lead_input(waiter, end_team=self._ends_team))
        return asyncio.create_task(waiter())

    async def _run_turn(self, prompt: Any, *, from_user: bool, origin: MessageOrigin | None = None) -> None:
        from catui.app import first_prompt_content

        app = self._app
        session = app.session
        if from_user and isinstance(prompt, list):
            # Content blocks of a streamed message: the context reminder (and an --agent's initialPrompt, which
            # first_prompt_content puts in its last block) go before them, as before a text prompt.
            *leading, opening = first_prompt_content(app, "")
            content = [*leading, *([opening] if opening.get("text", "").strip() else []), *prompt]
        else:
            content = first_prompt_content(app, prompt) if from_user else prompt
        # Imported here, as first_prompt_content is: a custom command (`/name args`) is expanded first.
        from catui.app_prompt import opening_blocks
        from catui.commands.prompt import command_prompt, grant_for_run, refusal_events
        from catui.model_switch import on_command_model

        command = await command_prompt(app, prompt) if from_user else None
        if command is not None and command.error is None:
            content = [*opening_blocks(app), *command.blocks]
            grant_for_run(session, command.rules)
        self._turn_origin = origin if from_user else TASK_NOTIFICATION_ORIGIN
        if self._structured is not None:
            self._structured.start_turn()
        if from_user:
            mcp = app.services.mcp
            if mcp is not None:
                await mcp.ready()  # the tool list is settled before the init message lists it
            self._outbox.put_nowait(init_message(app))
        skip_prompt_echo = from_user and not self._view.replay_user_messages
        self._running = True
        instructions = compact_instructions(prompt) if from_user and isinstance(prompt, str) else None
        events = session.run(content) if instructions is None else compact_events(app, instructions)
        if command is not None and command.error is not None and instructions is None:
            events = refusal_events(app, command)
        elif command is not None and command.skill is not None and instructions is None:
            events = on_command_model(app, command.skill.model, events)
        try:
            async for event in events:
                if self._interrupt_pending and not session.ctx.abort.is_set():
                    session.abort()
                if skip_prompt_echo and isinstance(event, UserMessageEvent) and event.agent_id is None:
                    # claude-agent-sdk does not echo the prompt back; a notification turn's message is shown.
                    skip_prompt_echo = False
                    continue
                self._deliver(event)
        finally:
            self._running = False
            self._interrupt_pending = False
