"""The machinery of one :class:`catui.CatuiClient` (and of one ``query()``): the app it builds, the prompts
it queues, the turns it runs one at a time (prompts and background notifications), and the messages it
hands the caller, converted from the session's events.

The client is a list of short calls into one :class:`ClientDriver`; ``query()`` uses the same driver.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterable, AsyncIterator
from typing import TYPE_CHECKING, Any

from catui.app.output_format import StructuredResult, output_schema_from
from catui.errors import CatuiError, CLIConnectionError, ConfigurationError
from catui.lazy import long_lived_load
from catui.sdk._internal.client_info import init_data
from catui.sdk._internal.messages import MessageView, message_from_event
from catui.sdk._internal.prompts import (
    QueuedPrompt,
    check_text_prompt,
    is_prompt_stream,
    prompt_from_message,
    require_asyncio,
)
from catui.sdk._internal.setup import StderrLines, check_sdk_agents
from catui.sdk.options import CatuiOptions, run_options_from
from catui.sdk.permissions import apply_sdk_permission_updates
from catui.sdk.types import Message, MessageOrigin, ResultMessage, SystemMessage, ToolResultBlock, UserMessage
from catui.session.compact_prompt import compact_events, compact_instructions
from catui.session.events import Event, ResultEvent, SystemEvent, UsageEvent, UserMessageEvent
from catui.tasks.notifications import notification_turn_origin

if TYPE_CHECKING:
    from catui.app.services import AgentApp
    from catui.sdk._internal.result_keys import CurrentResultKeys

IDLE = object()
"""Put in the outbox when the client has nothing left to do: no prompt running, no background work pending."""

CLOSED = object()

END_OF_INPUT = object()
"""Put in the inbox after a one-shot query's last prompt; the driver answers with INPUT_DONE in the outbox."""

INPUT_DONE = object()

TASK_NOTIFICATION_ORIGIN: MessageOrigin = {"kind": "task-notification"}


def wrap_error(exc: BaseException) -> CatuiError:
    """``exc`` as a CatuiError (itself when it is one)."""
    if isinstance(exc, CatuiError):
        return exc
    error = CatuiError(f"internal error: {type(exc).__name__}: {exc}")
    error.__cause__ = exc
    return error


TASK_EVENT_SUBTYPES = frozenset({"task_started", "task_progress", "task_notification", "task_updated",
                                 "background_tasks_changed"})
"""Background work's events (agents, shells, workflows), whoever emitted them."""

class ClientDriver:
    """One client's app, queues and turns.

    ``ends_team``: a team the agent leads is ended when it goes quiet (one-shot ``query()``, as print mode).
    """

    def __init__(self, options: CatuiOptions, *, ends_team: bool = False) -> None:
        self.options = options
        self._app: AgentApp | None = None
        self._inbox: asyncio.Queue[Any] = asyncio.Queue()
        self._outbox: asyncio.Queue[Any] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None
        self._running = False
        self._held_in_turn: list[Event] = []
        """Events the session sent between its runs while this client's turn was still under way (before the
        session's run started its stream, or after it ended): delivered when the turn ends."""
        self._interrupt_pending = False
        self._usage_by_agent: dict[str | None, dict[str, Any]] = {}
        self._parent_of_agent: dict[str, str] = {}
        self._view = MessageView(
            forward_subagent_text=bool(getattr(options, "forward_subagent_text", False)),
            include_hook_events=bool(getattr(options, "include_hook_events", False)),
            replay_user_messages=bool(getattr(options, "replay_user_messages", False)),
        )
        self._structured: StructuredResult | None = None
        self._stderr_handler: StderrLines | None = None
        self._turn_origin: MessageOrigin | None = None
        self._notification_turn = False
        self._main_usage: dict[str, Any] | None = None
        self._ends_team = ends_team
        self._result_keys: CurrentResultKeys | None = None
        """The current contract's result keys (docs/compat.md, point 6); None in the 2.1.92 profile."""

    # -- lifecycle ------------------------------------------------------------------------------

    @property
    def app(self) -> AgentApp | None:
        """The connected application, or None."""
        return self._app

    def require_app(self) -> AgentApp:
        """The connected application; CLIConnectionError when the client is not connected."""
        if self._app is None:
            raise CLIConnectionError("the client is not connected: use `async with CatuiClient(options) as client:`")
        return self._app

    @property
    def main_usage(self) -> dict[str, Any] | None:
        """The usage of the main agent's last model request (what ``get_context_usage()`` measures)."""
        return self._main_usage

    async def connect(self, prompt: str | AsyncIterable[dict[str, Any]] | None = None) -> None:
        """Build the agent (settings, model, tools, agents); optionally send a first prompt (or a stream of them).

        Raises ConfigurationError for bad options (an unknown model, a bad agent definition).
        """
        if self._app is not None:
            return
        # Both import pydantic and the rest of the app: only when a client connects (catui.lazy).
        with long_lived_load():
            from catui.app.build import build_app, start_app
            from catui.app.interrupted_agents import handle_interrupted_agents

        try:
            schema = output_schema_from(getattr(self.options, "output_format", None))
            self._structured = StructuredResult(schema) if schema is not None else None
            run_options = run_options_from(
                self.options,
                abort_run=self.abort_main,
                on_permission_updates=self.apply_to_main,
                structured=self._structured,
                idle_events=self._deliver_between_runs,
            )
            app = build_app(run_options)
        except CatuiError:
            raise
        except Exception as exc:
            raise wrap_error(exc) from exc
        try:
            check_sdk_agents(app)
        except CatuiError:
            await app.aclose()
            raise
        try:
            await start_app(app)
        except CatuiError:
            await app.aclose()
            raise
        except Exception as exc:
            await app.aclose()
            raise wrap_error(exc) from exc
        # Interrupted background agents of this project: resumed or reported per resumeInterruptedAgents
        # (print mode's default, off); what it says reaches the caller in the init message's warnings.
        await handle_interrupted_agents(app, interactive=False, say=app.startup_warnings.append)
        # A client may be connected again after disconnect(): start from empty queues.
        self._inbox, self._outbox = asyncio.Queue(), asyncio.Queue()
        self._app = app
        if app.compat.current:
            # lazy: the 2.1.92 profile stamps none
            from catui.sdk._internal.result_keys import CurrentResultKeys

            self._result_keys = CurrentResultKeys(app)
        else:
            self._result_keys = None
        self._attach_stderr()
        self._pump = asyncio.create_task(self._drive(), name="catui-sdk-client")
        if prompt is not None:
            await self.enqueue(prompt, "CatuiClient.connect()")

    def _attach_stderr(self) -> None:
        callback = getattr(self.options, "stderr", None)
        if callback is None:
            return
        if not callable(callback):
            raise ConfigurationError("CatuiOptions.stderr must be a function taking one line (str)")
        self._stderr_handler = StderrLines(callback)
        logger = logging.getLogger("catui")
        logger.addHandler(self._stderr_handler)
        app = self._app
        if app is not None:
            for warning in app.startup_warnings:
                self._stderr_handler.emit(logging.makeLogRecord({"msg": f"warning: {warning}"}))

    def _detach_stderr(self) -> None:
        handler, self._stderr_handler = self._stderr_handler, None
        if handler is not None:
            logging.getLogger("catui").removeHandler(handler)

    async def disconnect(self) -> None:
        """Stop any run and background work, and release the provider. Safe to call twice."""
        self._detach_stderr()
        app, self._app = self._app, None
        if app is None:
            return
        if self._pump is not None:
            app.session.abort()
            self._pump.cancel()
            with contextlib.suppress(BaseException):
                await self._pump
            self._pump = None
        try:
            await app.aclose()
        except CatuiError:
            raise
        except Exception as exc:
            raise wrap_error(exc) from exc
        finally:
            self._outbox.put_nowait(CLOSED)

    # -- prompts in, messages out ---------------------------------------------------------------

    async def enqueue(self, prompt: str | AsyncIterable[dict[str, Any]], where: str) -> None:
        """Queue a prompt: a string, or each user-message dict of an async iterable, in order (``where``
        names the caller in errors)."""
        require_asyncio(where)
        self.require_running()
        if not is_prompt_stream(prompt):
            self._inbox.put_nowait(QueuedPrompt(check_text_prompt(prompt, where)))
            return
        index = 0
        async for message in prompt:  # type: ignore[union-attr]
            self.require_running()
            self._inbox.put_nowait(prompt_from_message(message, index))
            index += 1

    def require_running(self) -> None:
        """Raise unless connected and the driver still runs (it stops after an internal error)."""
        self.require_app()
        if self._pump is None or self._pump.done():
            raise CatuiError("the client stopped after an error (see the exception raised earlier); open a new one")

    async def messages(self) -> AsyncIterator[Any]:
        """Every item of the outbox until the client closes (IDLE markers included; errors raised)."""
        self.require_app()
        while True:
            item = await self._outbox.get()
            if item is CLOSED:
                return
            if isinstance(item, BaseException):
                raise wrap_error(item) from item
            yield item

    async def until_input_done(self) -> AsyncIterator[Message]:
        """Messages until the last queued prompt ran and nothing is pending (what one-shot ``query()`` yields)."""
        input_done = False
        async for item in self.messages():
            if item is INPUT_DONE:
                input_done = True
            elif item is IDLE:
                if input_done:
                    return
            else:
                yield item

    async def feed(self, prompt: AsyncIterable[dict[str, Any]]) -> None:
        """Queue a streamed prompt's messages as they come, then mark the end of the input (one-shot query()).

        A bad message goes to the consumer as its error (raised from ``query()``'s loop).
        """
        try:
            await self.enqueue(prompt, "CatuiClient.query()")
        except CatuiError as exc:
            self._outbox.put_nowait(exc)
        except Exception as exc:
            self._outbox.put_nowait(wrap_error(exc))
        finally:
            self.end_input()

    def end_input(self) -> None:
        """No prompt follows: once the queued ones ran and nothing is pending, the outbox gets INPUT_DONE."""
        self._inbox.put_nowait(END_OF_INPUT)

    # -- the main agent -------------------------------------------------------------------------

    def interrupt(self) -> None:
        """Stop the current run (its queued prompts still run), if one runs or is queued."""
        app = self.require_app()
        if self._running or not self._inbox.empty():
            self._interrupt_pending = True
            app.session.abort()

    def abort_main(self) -> None:
        """Abort the main agent's run now (``can_use_tool`` answered with ``interrupt=True``)."""
        if self._app is not None:
            self._interrupt_pending = True
            self._app.session.abort()

    def apply_to_main(self, updates: list[Any]) -> None:
        """Apply a ``can_use_tool`` answer's ``updated_permissions`` to the main agent as well."""
        app = self._app
        if app is None:
            return
        ctx = app.session.ctx
        with contextlib.suppress(ValueError):  # already checked when the asking agent applied them
            ctx.permissions = apply_sdk_permission_updates(ctx.permissions, updates)

    # -- delivery -------------------------------------------------------------------------------

    def _deliver_between_runs(self, event: Event) -> None:
        """The session's events between runs (background agents' task messages, a workflow's progress).

        While a turn of this client is under way outside its session's run (a hook before the run, the result
        after it), the background work's events are held and come after that turn's messages, never lost; the
        main agent's own events there are the turn's (a manual compaction yields its boundary itself)."""
        if not self._running:
            self._deliver(event)
        elif event.agent_id is not None or (isinstance(event, SystemEvent) and event.subtype in TASK_EVENT_SUBTYPES):
            self._held_in_turn.append(event)

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
            if self._result_keys is not None and event.agent_id is None:
                message = self._result_keys.apply(message, event)
            if self._structured is not None:
                # A notification turn answers a background task, not the caller: it owes no object.
                required = not self._notification_turn
                message = self._structured.finish(message, required=required)
        if (
            isinstance(message, UserMessage)
            and self._notification_turn
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
        app = self.require_app()
        if app.tasks is None:
            return None
        waiter = app.tasks.next_notification
        teams = app.leading_team()
        if teams is not None:
            # A lead: its teammates' messages start its turns too; one-shot query() ends the team when
            # it goes quiet (as print mode does), a client that lives on keeps it.
            return asyncio.create_task(teams.next_lead_input(waiter, end_team=self._ends_team))
        return asyncio.create_task(waiter())

    @staticmethod
    def _notification_origin(app: Any) -> MessageOrigin:
        """A notification turn's origin: its kind, and in the current contract its producer and run."""
        if not app.services.compat.current or app.tasks is None:
            return TASK_NOTIFICATION_ORIGIN
        return notification_turn_origin(app.tasks.notifications.last_started_turn, current=True)

    async def _run_turn(self, prompt: Any, *, from_user: bool, origin: MessageOrigin | None = None) -> None:
        from catui.app.build import first_prompt_content

        app = self.require_app()
        session = app.session
        if from_user and isinstance(prompt, list):
            # Content blocks of a streamed message: the context reminder (and an --agent's initialPrompt, which
            # first_prompt_content puts in its last block) go before them, as before a text prompt.
            *leading, opening = first_prompt_content(app, "")
            content = [*leading, *([opening] if opening.get("text", "").strip() else []), *prompt]
        else:
            content = first_prompt_content(app, prompt) if from_user else prompt
        # Imported here, as first_prompt_content is: a custom command (`/name args`) is expanded first.
        from catui.app.model_swap import on_command_model
        from catui.app.prompt import opening_blocks
        from catui.commands.prompt import command_prompt, grant_for_run, refusal_events

        command = await command_prompt(app, prompt) if from_user else None
        if command is not None and command.error is None:
            content = [*opening_blocks(app), *command.blocks]
            grant_for_run(session, command.rules)
        self._notification_turn = not from_user
        self._turn_origin = origin if from_user else self._notification_origin(app)
        if self._structured is not None:
            self._structured.start_turn()
        if from_user:
            await app.mcp_ready()  # the tool list is settled before the init message lists it
            self._outbox.put_nowait(SystemMessage("init", init_data(app)))
        elif app.compat.current:
            # 2.1.332 opens every turn a notification starts with a second init, as catui's CLI does there
            self._outbox.put_nowait(SystemMessage("init", init_data(app)))
        skip_prompt_echo = from_user and not self._view.replay_user_messages
        self._running = True
        instructions = compact_instructions(prompt) if from_user and isinstance(prompt, str) else None
        events = session.run(content) if instructions is None else compact_events(session, instructions)
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
            held, self._held_in_turn = self._held_in_turn, []
            for event in held:
                self._deliver(event)
