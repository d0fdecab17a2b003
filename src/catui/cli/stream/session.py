"""``catui --input-format stream-json --output-format stream-json``: a conversation driven over stdin/stdout.

This is how claude-agent-sdk runs its CLI, so ``ClaudeAgentOptions(cli_path=
"catui")`` drives catui. The driver first sends a ``control_request`` of
subtype ``initialize`` (callback hooks, agent definitions); catui builds the
application with them and answers. Then each ``{"type": "user"}`` line is a
prompt, run as one turn whose events go out as stream-json lines (a
``system``/``init`` line first, a ``result`` line last). Prompts that arrive
during a turn wait for it; background agents keep working between prompts and
their notifications become turns of their own, as in Claude Code. While it
runs, catui asks the driver through control requests (:mod:`.control_bridges`)
and answers the driver's (:mod:`.control_requests`). When stdin closes, catui
finishes the running turn and any background agents, then exits: status 1
when the last result was an error, else 0.

A driver that skips ``initialize`` (a script piping prompts) gets the
application the command-line flags describe.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from catui.app.build import AgentApp, RunOptions, build_app, first_prompt_content, start_app
from catui.app.model_swap import on_command_model
from catui.app.output_format import StructuredResult
from catui.app.prompt import opening_blocks
from catui.cli.run_support import deliver_idle_events, settle_startup_objects
from catui.cli.stream.control_bridges import control_mcp_transport, initialize_hooks, stdio_permission_asker
from catui.cli.stream.control_channel import ControlChannel
from catui.cli.stream.control_requests import ControlRequestHandler, initialize_response
from catui.cli.stream.initialize_request import apply_initialize
from catui.cli.stream.input import StreamInputError, UserInput, read_messages, user_input_from
from catui.cli.stream.output import StreamJsonWriter
from catui.cli.stream.session_state import SessionStateReporter
from catui.cli.stream.turn_results import notification_turn_origin
from catui.commands.prompt import command_prompt, grant_for_run, refusal_events
from catui.errors import CatuiError, ConfigurationError
from catui.session.claude_link import claude_project_slug, claude_projects_dir
from catui.session.compact_prompt import compact_events, compact_instructions
from catui.session.events import Event, ResultEvent, UsageEvent

if TYPE_CHECKING:
    from catui.tools.base import ToolContext


class StreamSession:
    """One driven conversation: reads stdin, runs turns, writes stdout. ``warn`` prints a line on stderr."""

    def __init__(self, run_options: RunOptions, *, permission_prompt_tool: str | None, out: TextIO,
                 warn: Callable[[str], None], stdin: BinaryIO | None = None,
                 structured: StructuredResult | None = None,
                 report_state: Callable[[Callable[[dict[str, Any]], None]], SessionStateReporter | None]
                 = lambda _write: None, replay_user_messages: bool = False,
                 forward_subagent_text: bool = False, await_initialize: bool = False,
                 bypass_allowed: bool = True, session_mirror: bool = False) -> None:
        self.bypass_allowed = bypass_allowed
        self.session_mirror = session_mirror
        """``--session-mirror`` (the Python SDK's ``session_store``): each transcript line also goes to the driver
        as a ``transcript_mirror`` frame, named by its path under Claude Code's projects folder."""
        self.run_options = run_options
        self.forward_subagent_text = forward_subagent_text
        """Show sub-agents' text and thinking (``--forward-subagent-text``, or ``forwardSubagentText`` in
        ``initialize``); by default only their prompts, tool calls and results."""
        self.await_initialize = await_initialize
        """``--await-initialize``: build nothing before ``initialize`` arrives (prompts before it wait)."""
        self.applied: dict[str, bool] = {}
        """The ``*_applied`` keys of the answer to ``initialize`` (which delivered fields catui used)."""
        self.replay_user_messages = replay_user_messages
        self.structured = structured
        """``--json-schema``: each prompt's result carries the object the agent handed back."""
        self.permission_prompt_tool = permission_prompt_tool
        self.out = out
        self.warn = warn
        self.stdin = stdin
        self.channel = ControlChannel(self._write_line)
        self.state = report_state(self._write_line)
        """``session_state_changed`` frames, when the driver asked for them (see :mod:`.session_state`)."""
        if self.state is not None:
            self.state.session_id = lambda: self.app.session.session_id if self.app is not None else None
        self.prompts: asyncio.Queue[UserInput | None] = asyncio.Queue()
        self.app: AgentApp | None = None
        self.writer: StreamJsonWriter | None = None
        self.handler: ControlRequestHandler | None = None
        self.last_result: ResultEvent | None = None
        self.main_usage: dict[str, Any] | None = None
        """The main agent's last model usage (``get_context_usage`` measures the context with it)."""
        self._initialize: asyncio.Future[dict[str, Any]] | None = None
        self._answering: dict[str, asyncio.Task[None]] = {}
        self._early_requests: list[tuple[str, dict[str, Any]]] = []
        self._running = False
        self._terminating = False
        self._input_failed = False
        self._sent_first_prompt = False
        self._eof = asyncio.Event()

    # -- output ---------------------------------------------------------------------------------

    def _write_line(self, obj: dict[str, Any]) -> None:
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.out.flush()

    # -- input ----------------------------------------------------------------------------------

    def _on_message(self, message: dict[str, Any], line: int) -> None:
        kind = message["type"]
        if kind == "control_response":
            self.channel.deliver(message)
        elif kind == "control_request":
            self._on_request(message, line)
        elif kind == "control_cancel_request":
            task = self._answering.get(str(message.get("request_id")))
            if task is not None:
                task.cancel()
        elif kind == "user":
            try:
                self.prompts.put_nowait(user_input_from(message, line))
            except StreamInputError as exc:
                self.warn(str(exc))
                # The driver waits for a result per prompt: the refusal is one, in order, and never stored.
                self.prompts.put_nowait(UserInput("", line, refused=str(exc)))
        else:
            self.warn(f"stdin line {line}: catui does not handle messages of type {kind!r}; the line is skipped")

    def _on_request(self, message: dict[str, Any], line: int) -> None:
        request_id, request = message.get("request_id"), message.get("request")
        problem = malformed_request(request_id, request)
        if problem is not None:
            self.warn(f"stdin line {line}: {problem}")
            # Answered all the same, so a driver waiting on it hears why; an id that is not a string or an
            # integer cannot be echoed faithfully (NaN is not JSON), so the answer then names none.
            echo = request_id if isinstance(request_id, (str, int)) and not isinstance(request_id, bool) else None
            self.channel.respond_error(echo, f"stdin line {line}: {problem}")
            return
        assert isinstance(request_id, str) and isinstance(request, dict)  # malformed_request said so
        if request.get("subtype") == "initialize" and self._initialize is not None and not self._initialize.done():
            self._initialize.set_result(message)
            return
        if self.handler is None:
            self._early_requests.append((request_id, request))  # answered once the application is built
            return
        self._dispatch(self.handler, request_id, request)

    def _dispatch(self, handler: ControlRequestHandler, request_id: str, request: dict[str, Any]) -> None:
        task = asyncio.ensure_future(self._answer(handler, request_id, request))
        self._answering[request_id] = task
        task.add_done_callback(lambda _t: self._answering.pop(request_id, None))

    async def _answer(self, handler: ControlRequestHandler, request_id: str, request: dict[str, Any]) -> None:
        try:
            response = await handler.handle(request)
        except CatuiError as exc:
            self.channel.respond_error(request_id, str(exc))
        except Exception as exc:  # a bug answering one request must not end the conversation
            self.channel.respond_error(request_id, f"internal error: {type(exc).__name__}: {exc}")
        else:
            self.channel.respond(request_id, response)

    def _stdin_closed(self, task: asyncio.Task[None]) -> None:
        self._eof.set()
        if not task.cancelled() and task.exception() is not None:
            # Reading stdin itself failed: later prompts are lost, so the run must not end as a success.
            self._input_failed = True
            self.warn(f"error: catui stopped reading stdin: {type(task.exception()).__name__}: {task.exception()}")
        self.prompts.put_nowait(None)
        self.channel.close("catui's stdin was closed")

    # -- the session ----------------------------------------------------------------------------

    async def run(self) -> int:
        """Serve the conversation until stdin closes and the work is done; returns the exit status."""
        loop = asyncio.get_running_loop()
        self._initialize = loop.create_future()
        reader = asyncio.ensure_future(read_messages(self._on_message, self.warn, self.stdin))
        reader.add_done_callback(self._stdin_closed)
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGTERM, self._terminate)
        try:
            first_prompt = asyncio.ensure_future(self.prompts.get())
            starting: set[asyncio.Future[Any]] = {self._initialize, first_prompt}
            await asyncio.wait(starting, return_when=asyncio.FIRST_COMPLETED)
            if self.await_initialize and not self._initialize.done() and first_prompt.result() is not None:
                # --await-initialize: the driver sends initialize before anything runs; a prompt waits for it
                eof_seen: asyncio.Future[Any] = asyncio.ensure_future(self._eof.wait())
                await asyncio.wait({self._initialize, eof_seen}, return_when=asyncio.FIRST_COMPLETED)
                eof_seen.cancel()
            init = self._initialize.result() if self._initialize.done() else None
            if not self._initialize.done():
                self._initialize.cancel()  # a later initialize is answered "already initialized"
            first: UserInput | None = None
            eof = False
            if first_prompt.done():
                first, eof = first_prompt.result(), first_prompt.result() is None
            else:
                first_prompt.cancel()
            app = await self._start(init)
            try:
                return await self._serve(app, first, eof)
            finally:
                await (self.app or app).aclose()  # the session /clear started last, if any
        finally:
            reader.cancel()
            with contextlib.suppress(BaseException):
                await reader

    async def _start(self, init: dict[str, Any] | None) -> AgentApp:
        request_id = str(init["request_id"]) if init is not None else None
        try:
            app = build_app(self._options_for(init["request"] if init is not None else None))
            await start_app(app)
        except CatuiError as exc:
            if request_id is not None:
                self.channel.respond_error(request_id, str(exc))
            raise
        settle_startup_objects(app)
        for warning in [*app.settings.warnings, *app.services.startup_warnings,
                        *(f.error for f in app.registry.failed_files)]:
            self.warn(f"warning: {warning}")
        self._wire(app)
        if request_id is not None:
            self.channel.respond(request_id, {**initialize_response(app), **self.applied})
        assert self.handler is not None
        for early_id, early in self._early_requests:  # in order, before any prompt: a mode set first applies
            await self._answer(self.handler, early_id, early)
        self._early_requests.clear()
        return app

    def _wire(self, app: AgentApp) -> None:
        """Make ``app`` the session the driver talks to: output, control requests, MCP warnings."""
        self.app = app
        self.writer = StreamJsonWriter(app, self.out, replay_user_messages=self.replay_user_messages,
                                       forward_subagent_text=self.forward_subagent_text)
        self.handler = ControlRequestHandler(app, interrupt=self._interrupt, main_usage=lambda: self.main_usage,
                                             bypass_allowed=self.bypass_allowed)
        mcp = app.services.mcp
        if mcp is not None:
            mcp.on_warning = lambda message: self.warn(f"warning: {message}")

    def _mirror_line(self, record: dict[str, Any]) -> None:
        folder = claude_projects_dir(os.environ) / claude_project_slug(self.run_options.cwd)
        self._write_line({"type": "transcript_mirror", "filePath": str(folder / f"{record.get('sessionId')}.jsonl"),
                          "entries": [record]})

    def _options_for(self, init: dict[str, Any] | None) -> RunOptions:
        options = replace(self.run_options, sdk_mcp_transport=control_mcp_transport(self.channel))
        if self.session_mirror:
            options = replace(options, transcript_mirror=self._mirror_line)
        if self.permission_prompt_tool == "stdio":
            asker = stdio_permission_asker(self.channel, self.warn, self._interrupt, self._main_context)
            options = replace(options, can_use_tool=asker)
        if init is None:
            return options
        agents = init.get("agents")
        if agents is not None and not isinstance(agents, dict):
            raise ConfigurationError("initialize: 'agents' must be an object of agent names to definitions")
        laid = apply_initialize(options, init, self.warn)
        self.applied = laid.applied
        self.forward_subagent_text = self.forward_subagent_text or laid.forward_subagent_text
        return replace(
            laid.options,
            sdk_agents={**(options.sdk_agents or {}), **agents} if agents else laid.options.sdk_agents,
            callback_hooks=initialize_hooks(init.get("hooks"), self.channel),
        )

    async def _clear(self, old: AgentApp) -> AgentApp:
        """Start a new session with the same options (a new id and transcript; the old one stays resumable),
        tell the driver with a ``conversation_reset`` message and end the command with a result, as Claude Code."""
        started = time.monotonic()
        options = replace(old.options, resume=None, continue_conversation=False, fork_session=False,
                          session_id=None, resume_session_at=None, resume_drops_turn=None)
        try:
            new = build_app(options)
            await start_app(new)
        except CatuiError as exc:
            assert self.writer is not None
            failed = old.session.result_event("error_during_execution", True,
                                              f"/clear could not start a new session: {exc}", started=started,
                                              terminal_reason="error")
            self.writer.write(failed)
            self.last_result = failed
            return old
        settle_startup_objects()
        self._write_line({"type": "conversation_reset", "new_conversation_id": str(uuid.uuid4()),
                          "uuid": str(uuid.uuid4()), "session_id": old.session.session_id})
        await old.aclose("clear")
        self._wire(new)
        self._sent_first_prompt = False
        self.main_usage = None
        assert self.writer is not None
        done = new.session.result_event("success", False, "", started=started)
        self.writer.origin = None
        self.writer.write(done)
        self.last_result = done
        return new

    def _main_context(self) -> ToolContext | None:
        return self.app.session.ctx if self.app is not None else None

    def _terminate(self) -> None:
        """SIGTERM (the driver giving up on a graceful close): stop the turn and stop waiting for anything."""
        self._terminating = True
        self._interrupt()
        self.prompts.put_nowait(None)

    def _interrupt(self) -> None:
        if self.app is not None and self._running:
            self.app.session.abort()

    async def _serve(self, app: AgentApp, first: UserInput | None, eof: bool) -> int:
        idle: asyncio.Queue[Event] = asyncio.Queue()
        restore = deliver_idle_events(app.session, idle)
        idle_writer = asyncio.ensure_future(self._write_idle_events(idle))
        prompt_wait: asyncio.Task[UserInput | None] | None = None
        notification: asyncio.Task[Any] | None = None

        async def clear() -> None:
            """``/clear``: a new session in place of the old one (whose background agents stop)."""
            nonlocal app, restore, notification
            if notification is not None:
                notification.cancel()
                notification = None
            restore()
            app = await self._clear(app)
            restore = deliver_idle_events(app.session, idle)

        try:
            if first is not None and first.is_command("clear"):
                await clear()
            elif first is not None:
                await self._turn(app, first)
                notification = self._watch_notifications(app)
                if notification is None and self.state is not None:
                    self.state.set("idle")
            while True:
                waiting: set[asyncio.Future[Any]] = set()
                if not eof:
                    prompt_wait = prompt_wait or asyncio.ensure_future(self.prompts.get())
                    waiting.add(prompt_wait)
                if notification is not None:
                    waiting.add(notification)
                if not waiting or self._terminating:
                    break  # stdin is closed and no background agent is left (or catui was told to stop)
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if notification is not None and notification in done:
                    content, notification = notification.result(), None
                    if content is not None:
                        await self._turn(app, content)
                        notification = self._watch_notifications(app)
                    if notification is None and self.state is not None:
                        self.state.set("idle")  # no background agent left: no turn is owed
                if prompt_wait is not None and prompt_wait in done:
                    prompt, prompt_wait = prompt_wait.result(), None
                    if prompt is None:
                        eof = True
                    elif prompt.is_command("clear"):
                        await clear()
                    else:
                        await self._turn(app, prompt)
                        if notification is None:
                            notification = self._watch_notifications(app)
                        if notification is None and self.state is not None:
                            self.state.set("idle")
        finally:
            for task in (prompt_wait, notification, idle_writer):
                if task is not None and not task.done():
                    task.cancel()
            restore()
        if self._input_failed:
            return 1
        return 1 if self.last_result is not None and self.last_result.is_error else 0

    async def _write_idle_events(self, idle: asyncio.Queue[Event]) -> None:
        while True:
            event = await idle.get()
            if self.writer is not None:
                self.writer.write(event)

    def _watch_notifications(self, app: AgentApp) -> asyncio.Task[Any] | None:
        """A task giving the next background notification (None when no background work is left)."""
        waiter = app.tasks.next_notification
        return asyncio.ensure_future(waiter()) if waiter is not None else None

    async def _turn(self, app: AgentApp, prompt: UserInput | Any) -> None:
        """One turn: a user prompt (after the init line), or a background notification's content."""
        assert self.writer is not None
        self.writer.origin = prompt.origin if isinstance(prompt, UserInput) else notification_turn_origin(app)
        if isinstance(prompt, UserInput) and prompt.refused is not None:
            self.writer.init()
            refusal = app.session.result_event("error_during_execution", True, prompt.refused,
                                               started=time.monotonic(), terminal_reason="error")
            self.writer.write(refusal)
            self.last_result = refusal
            return
        command = await command_prompt(app, prompt.content) if isinstance(prompt, UserInput) else None
        # `/compact [instructions]` compacts the session instead of running a turn, as in print mode and the SDK
        instructions = compact_prompt(prompt.content) if isinstance(prompt, UserInput) and command is None else None
        content: Any = ""  # a compaction sends none
        if isinstance(prompt, UserInput):
            if command is not None and command.error is None:
                # a custom command (`/name args`): its expansion stands for the typed text
                content = command.blocks if self._sent_first_prompt else [*opening_blocks(app), *command.blocks]
                grant_for_run(app.session, command.rules)
            elif instructions is None:
                # The context reminders go before the conversation's first prompt only, as in the terminal session.
                content = prompt.content if self._sent_first_prompt else prompt_content(app, prompt.content)
            self._sent_first_prompt = self._sent_first_prompt or instructions is None
            mcp = app.services.mcp
            if mcp is not None:
                await mcp.ready()  # the tool list is settled before the init line lists it
            self.writer.init()
        else:
            content = prompt
        self._running = True
        if self.state is not None:
            self.state.set("running")
        if self.structured is not None:
            self.structured.start_turn()
        try:
            if instructions is not None:
                events = compact_events(app.session, instructions)
            elif command is not None and command.error is not None:
                events = refusal_events(app, command)
            else:
                model = command.skill.model if command is not None and command.skill is not None else None
                events = on_command_model(app, model, app.session.run(content))
            async for event in events:
                if isinstance(event, ResultEvent) and event.agent_id is None and self.structured is not None:
                    event = self.structured.finish(event, required=isinstance(prompt, UserInput))
                if isinstance(event, UsageEvent) and event.agent_id is None:
                    self.main_usage = dict(event.usage)
                self.writer.write(event)
                if isinstance(event, ResultEvent) and event.agent_id is None:
                    self.last_result = event
        finally:
            self._running = False


def malformed_request(request_id: Any, request: Any) -> str | None:
    """What is wrong with a ``control_request`` line's envelope (None: nothing)."""
    if request_id is None:
        return "a control_request needs a 'request_id' (a string unique to the request); this one has none"
    if not isinstance(request_id, str):
        return f"a control_request's 'request_id' must be a string, not {type(request_id).__name__}"
    if not isinstance(request, dict):
        return (f"control_request {request_id[:80]!r} needs a 'request' object with a 'subtype', "
                f"not {type(request).__name__}")
    return None


def compact_prompt(content: str | list[dict[str, Any]]) -> str | None:
    """The instructions of a ``/compact`` prompt, sent as a string or as one text block; None for another prompt."""
    if isinstance(content, str):
        return compact_instructions(content)
    if len(content) != 1 or content[0].get("type") != "text" or not isinstance(content[0].get("text"), str):
        return None
    return compact_instructions(content[0]["text"])


def prompt_content(app: AgentApp, content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A prompt's blocks after the context reminders catui puts before a user's words."""
    if isinstance(content, str):
        return first_prompt_content(app, content)
    head = first_prompt_content(app, "")
    if head and head[-1].get("type") == "text" and not head[-1].get("text"):
        head = head[:-1]
    return [*head, *content]
