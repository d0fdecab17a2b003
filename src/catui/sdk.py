"""catui as a library: ``query()`` for one prompt, ``CatuiClient`` for a conversation.

The nouns and field names are claude-agent-sdk's (``AssistantMessage``,
``ResultMessage``, ``can_use_tool``, ``AgentDefinition`` …), but the agent runs
in this process: no CLI subprocess, any provider, the scripted one included::

    import anyio, catui

    async def main() -> None:
        options = catui.CatuiOptions(model="scripted:examples/scripts/hello.yaml")
        async for message in catui.query("Say hello", options):
            if isinstance(message, catui.ResultMessage):
                print(message.result)

Every error that leaves this module is a :class:`catui.CatuiError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from catui.errors import CancelledError, CatuiError, ConfigurationError, ProviderError, ToolError
from catui.permissions.context import PERMISSION_MODES
from catui.sdk_options import CanUseToolCallback, CatuiOptions, run_options_from
from catui.sdk_types import (
    AssistantMessage,
    ContentBlock,
    Message,
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TaskNotificationMessage,
    TaskProgressMessage,
    TaskStartedMessage,
    TaskUsage,
    TextBlock,
    ThinkingBlock,
    ToolPermissionContext,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    message_from_event,
)
from catui.session.compact_prompt import compact_events, compact_instructions
from catui.session.events import Event, UsageEvent, UserMessageEvent

if TYPE_CHECKING:
    from catui.agents.definition import AgentDefinition
    from catui.sdk_tools import SdkMcpServer, SdkTool, create_sdk_mcp_server, tool

# These pull in pydantic (about half of the SDK's start-up); a client is created without them and
# connect() loads them with the rest of the agent.
_LAZY_NAMES: dict[str, str] = {
    "AgentDefinition": "catui.agents.definition",
    "SdkMcpServer": "catui.sdk_tools",
    "SdkTool": "catui.sdk_tools",
    "create_sdk_mcp_server": "catui.sdk_tools",
    "tool": "catui.sdk_tools",
}


def __getattr__(name: str) -> Any:
    module = _LAZY_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'catui.sdk' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

__all__ = [
    "AgentDefinition",
    "AssistantMessage",
    "CanUseToolCallback",
    "CancelledError",
    "CatuiClient",
    "CatuiError",
    "CatuiOptions",
    "ConfigurationError",
    "ContentBlock",
    "Message",
    "PermissionResult",
    "PermissionResultAllow",
    "PermissionResultDeny",
    "PermissionUpdate",
    "ProviderError",
    "ResultMessage",
    "SdkMcpServer",
    "SdkTool",
    "StreamEvent",
    "SystemMessage",
    "TaskNotificationMessage",
    "TaskProgressMessage",
    "TaskStartedMessage",
    "TaskUsage",
    "TextBlock",
    "ThinkingBlock",
    "ToolError",
    "ToolPermissionContext",
    "ToolResultBlock",
    "ToolUseBlock",
    "UserMessage",
    "create_sdk_mcp_server",
    "query",
    "tool",
]

_IDLE = object()
"""Put in the outbox when the client has nothing left to do: no prompt running, no background work pending."""

_CLOSED = object()


def _wrap(exc: BaseException) -> CatuiError:
    if isinstance(exc, CatuiError):
        return exc
    error = CatuiError(f"internal error: {type(exc).__name__}: {exc}")
    error.__cause__ = exc
    return error


def _check_sdk_agents(app: Any) -> None:
    """Refuse agent definitions from options that did not load (a file's problem is only a warning)."""
    from catui.agents.registry import SDK_ORIGIN

    problems = [f.error for f in getattr(app.registry, "failed_files", []) if getattr(f, "path", None) == SDK_ORIGIN]
    if problems:
        raise ConfigurationError("CatuiOptions.agents: " + "; ".join(problems))


def _forget_unrequested_memory(app: Any, run_options: Any) -> None:
    """Without the user or project setting source, the main agent does not get CLAUDE.md / CATUI.md.

    build_app loads project memory whatever the sources; a library call that asked
    for no settings files must not be changed by memory files either.
    """
    sources = set(run_options.setting_sources)
    if run_options.system_prompt is None and not sources & {"user", "project"} and not app.session.messages:
        from catui.session.prompt import context_block

        app.services.context_block = context_block(None)


class CatuiClient:
    """A conversation with the main agent, kept open across prompts.

    Use it as an async context manager::

        async with catui.CatuiClient(options) as client:
            await client.query("Find the TODOs")
            async for message in client.receive_response():
                ...

    ``query()`` sends a prompt (prompts queue up while one runs);
    ``receive_messages()`` yields every message for as long as the client is
    open; ``receive_response()`` stops after the next main-agent
    :class:`ResultMessage`. Background agents keep working between prompts:
    their task messages arrive, and when one finishes the main agent is given
    its notification as a new turn (with its own ResultMessage), as Claude
    Code does.
    """

    def __init__(self, options: CatuiOptions | None = None) -> None:
        self.options = options if options is not None else CatuiOptions()
        self._app: Any = None
        self._inbox: asyncio.Queue[str] = asyncio.Queue()
        self._outbox: asyncio.Queue[Any] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None
        self._running = False
        self._interrupt_pending = False
        self._usage_by_agent: dict[str | None, dict[str, Any]] = {}
        self._parent_of_agent: dict[str, str] = {}
        self._ends_team = False
        """Whether a team the agent leaves running is ended when it goes quiet (one-shot ``query``)."""

    # -- lifecycle ------------------------------------------------------------------------------

    async def __aenter__(self) -> CatuiClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.disconnect()

    async def connect(self, prompt: str | None = None) -> None:
        """Build the agent (settings, model, tools, agents); optionally send a first prompt.

        Raises ConfigurationError for bad options (an unknown model, a bad agent definition).
        """
        if self._app is not None:
            return
        # Both import pydantic and the rest of the app: only when a client connects.
        from catui.app import build_app, start_app
        from catui.cli.interrupted_agents import handle_interrupted_agents

        try:
            run_options = run_options_from(self.options, abort_run=self._abort_main)
            app = build_app(run_options)
        except CatuiError:
            raise
        except Exception as exc:
            raise _wrap(exc) from exc
        try:
            _check_sdk_agents(app)
        except CatuiError:
            await app.aclose()
            raise
        _forget_unrequested_memory(app, run_options)
        try:
            await start_app(app)
        except CatuiError:
            await app.aclose()
            raise
        except Exception as exc:
            await app.aclose()
            raise _wrap(exc) from exc
        # Interrupted background agents of this project: resumed or reported per resumeInterruptedAgents
        # (print mode's default, off); what it says reaches the caller in the init message's warnings.
        await handle_interrupted_agents(app, interactive=False, say=app.services.startup_warnings.append)
        # A client may be connected again after disconnect(): start from empty queues.
        self._inbox, self._outbox = asyncio.Queue(), asyncio.Queue()
        self._app = app
        self._install_idle_delivery()
        self._pump = asyncio.create_task(self._drive(), name="catui-sdk-client")
        if prompt is not None:
            await self.query(prompt)

    async def disconnect(self) -> None:
        """Stop any run and background work, and release the provider. Safe to call twice."""
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
            raise _wrap(exc) from exc
        finally:
            self._outbox.put_nowait(_CLOSED)

    # -- talking --------------------------------------------------------------------------------

    async def query(self, prompt: str, session_id: str = "default") -> None:
        """Send a prompt to the main agent; read the answer with receive_response()."""
        self._require_app()
        if self._pump is None or self._pump.done():
            raise CatuiError("the client stopped after an error (see the exception raised earlier); open a new one")
        if not isinstance(prompt, str) or not prompt.strip():
            raise ConfigurationError("query() needs a non-empty prompt string")
        self._inbox.put_nowait(prompt)

    async def receive_messages(self) -> AsyncIterator[Message]:
        """Every message, as it arrives, until the client is closed."""
        async for item in self._messages():
            if item is not _IDLE:
                yield item

    async def receive_response(self) -> AsyncIterator[Message]:
        """Messages up to and including the next main-agent ResultMessage."""
        async for item in self._messages():
            if item is _IDLE:
                continue
            yield item
            if isinstance(item, ResultMessage):
                return

    async def _messages(self) -> AsyncIterator[Any]:
        self._require_app()
        while True:
            item = await self._outbox.get()
            if item is _CLOSED:
                return
            if isinstance(item, BaseException):
                raise _wrap(item) from item
            yield item

    async def _until_idle(self) -> AsyncIterator[Message]:
        """Messages until nothing is running or pending (what one-shot ``query()`` yields)."""
        async for item in self._messages():
            if item is _IDLE:
                return
            yield item

    # -- control --------------------------------------------------------------------------------

    async def interrupt(self) -> None:
        """Stop the current run (sub-agents included); it ends with an error_during_execution ResultMessage."""
        app = self._require_app()
        if self._running or not self._inbox.empty():
            self._interrupt_pending = True
            app.session.abort()

    async def set_permission_mode(self, mode: str) -> None:
        """Change the permission mode for the following tool calls (default, acceptEdits, plan, …)."""
        app = self._require_app()
        if mode not in PERMISSION_MODES:
            raise ConfigurationError(f"unknown permission mode {mode!r}; use one of {', '.join(PERMISSION_MODES)}")
        ctx = app.session.ctx
        if mode == "plan" and ctx.permissions.mode != "plan":
            ctx.plan.mode_before_plan = ctx.permissions.mode  # approving the plan returns to it
        ctx.permissions = ctx.permissions.with_mode(mode)

    async def set_model(self, model: str | None = None) -> None:
        """Switch the main agent's model (an alias, an id or provider:model); None means the default."""
        app = self._require_app()
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise ConfigurationError(f"set_model() needs a model name string or None, not {model!r}")
        from catui.model_switch import switch_model

        try:
            switch_model(app, model)
        except CatuiError:
            raise
        except Exception as exc:
            raise _wrap(exc) from exc

    async def stop_task(self, task_id: str) -> None:
        """Stop a task by id: a background agent or shell command, or a sub-agent running in the foreground.

        A background task's notification follows. A foreground agent stops at once: its parent's Agent
        call returns an error result saying it was stopped, a ``TaskNotificationMessage`` with status
        ``stopped`` follows, and the parent (and the agent's siblings) carry on.
        """
        app = self._require_app()
        tasks = getattr(app, "tasks", None)
        try:
            if tasks is None:
                raise KeyError(task_id)
            await tasks.stop(task_id)
        except KeyError:
            runtime = app.session.ctx.services.subagents
            if isinstance(task_id, str) and runtime is not None and await runtime.stop_foreground(task_id):
                return
            running = runtime.foreground_ids() if runtime is not None else []
            known = ", ".join([t.id for t in (tasks.list() if tasks is not None else [])] + running) or "none"
            raise ConfigurationError(
                f"no background task with id {task_id!r} and no sub-agent running with that id (known: {known})"
            ) from None
        except CatuiError:
            raise
        except Exception as exc:
            raise _wrap(exc) from exc

    async def background_tasks(self) -> list[str]:
        """Move the running foreground sub-agents to the background (Claude Code's Ctrl-B).

        The parent's Agent calls return at once with "launched in the background"
        results; the agents keep running and report with task messages. Returns
        the task ids of the agents moved.
        """
        app = self._require_app()
        runtime = app.session.ctx.services.subagents
        mover = runtime.background_all_foreground if runtime is not None else None
        if mover is None:
            raise CatuiError("background agents are not available in this catui build (no sub-agent runtime)")
        try:
            outcome = mover()
            if inspect.isawaitable(outcome):
                outcome = await outcome
        except CatuiError:
            raise
        except Exception as exc:
            raise _wrap(exc) from exc
        if isinstance(outcome, dict):
            return [str(t) for t in outcome]
        if isinstance(outcome, list | tuple | set):
            return [str(getattr(t, "id", t)) for t in outcome]
        return []

    @property
    def session_id(self) -> str:
        return str(self._require_app().session.session_id)

    def _require_app(self) -> Any:
        if self._app is None:
            raise CatuiError("the client is not connected: use `async with CatuiClient(options) as client:`")
        return self._app

    def _abort_main(self) -> None:
        if self._app is not None:
            self._interrupt_pending = True
            self._app.session.abort()

    # -- the driver -----------------------------------------------------------------------------

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
            return
        message = message_from_event(
            event, app.session.session_id, last_usage=self._usage_by_agent.pop(event.agent_id, None)
        )
        if message is not None:
            self._outbox.put_nowait(message)

    async def _drive(self) -> None:
        """Run queued prompts and background notifications, one at a time, for the client's life."""
        notification: asyncio.Task[Any] | None = None
        prompt_wait: asyncio.Task[str] | None = None
        busy = False
        try:
            while True:
                if busy and notification is None and self._inbox.empty():
                    self._outbox.put_nowait(_IDLE)
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
                    await self._run_turn(prompt, from_user=True)
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
            self._outbox.put_nowait(_wrap(exc))
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

    def team(self) -> list[dict[str, Any]]:
        """The members of the team this client's agent leads (name, agentId, color, busy, active,
        lastMessage); empty when it leads none."""
        app = self._require_app()
        teams = getattr(app.services.subagents, "teams", None)
        return teams.team.snapshot() if teams is not None and teams.team is not None else []

    async def _run_turn(self, prompt: Any, *, from_user: bool) -> None:
        from catui.app import first_prompt_content

        app = self._app
        session = app.session
        content = first_prompt_content(app, prompt) if from_user else prompt
        if from_user:
            mcp = app.services.mcp
            if mcp is not None:
                await mcp.ready()  # the tool list is settled before the init message lists it
            self._outbox.put_nowait(self._init_message())
        skip_prompt_echo = from_user
        self._running = True
        instructions = compact_instructions(prompt) if from_user and isinstance(prompt, str) else None
        events = session.run(content) if instructions is None else compact_events(app, instructions)
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

    def _init_message(self) -> SystemMessage:
        app = self._app
        session = app.session
        data = {
            "type": "system",
            "subtype": "init",
            "cwd": str(session.ctx.cwd),
            "session_id": session.session_id,
            "tools": [t.name for t in session.tools],
            "mcp_servers": app.services.mcp.server_statuses() if app.services.mcp is not None else [],
            "model": session.config.model,
            "permissionMode": session.ctx.permissions.mode,
            "agents": [a.agent_type for a in getattr(app.registry, "active", [])],
            "output_style": "default",
            # Settings problems, odd agent definitions (an unknown field) and start-up trouble are
            # reported here, never fatal (the CLI prints them).
            "warnings": [
                str(w)
                for w in [
                    *getattr(app.settings, "warnings", []),
                    *getattr(app.registry, "warnings", []),
                    *app.services.startup_warnings,
                ]
            ],
        }
        return SystemMessage("init", data)


async def query(prompt: str, options: CatuiOptions | None = None) -> AsyncIterator[Message]:
    """Run one prompt and yield its messages, ending when the agent and its background work are done.

    The stream starts with a ``SystemMessage(subtype="init")``, holds the main
    agent's and every sub-agent's messages (a sub-agent's carry
    ``parent_tool_use_id``) and a ``ResultMessage`` for the prompt; when
    background agents were started, their task messages and one more
    ResultMessage per notification turn follow. Raises CatuiError subclasses.
    """
    if not isinstance(prompt, str) or not prompt.strip():
        raise ConfigurationError("query() needs a non-empty prompt string")
    client = CatuiClient(options)
    client._ends_team = True
    await client.connect()
    try:
        await client.query(prompt)
        async for message in client._until_idle():
            yield message
    finally:
        await client.disconnect()

