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
import logging
from collections.abc import AsyncIterable, AsyncIterator
from typing import TYPE_CHECKING, Any

from catui.errors import (
    CancelledError,
    CatuiError,
    ClaudeSDKError,
    CLIConnectionError,
    CLIJSONDecodeError,
    CLINotFoundError,
    ConfigurationError,
    MessageParseError,
    ProcessError,
    ProviderError,
    ResultError,
    ToolError,
    UnsupportedEventLoopError,
)
from catui.sdk_controls import ClientControls, wrap_error
from catui.sdk_driver import CLOSED, END_OF_INPUT, IDLE, INPUT_DONE, ClientDriver
from catui.sdk_messages import MessageView
from catui.sdk_options import CanUseToolCallback, CatuiOptions, run_options_from
from catui.sdk_output_format import StructuredResult, output_schema_from
from catui.sdk_permissions import PermissionRuleValue
from catui.sdk_prompts import (
    QueuedPrompt,
    check_text_prompt,
    is_prompt_stream,
    prompt_from_message,
    require_asyncio,
)
from catui.sdk_setup import StderrLines, check_sdk_agents, memory_by_sources
from catui.sdk_types import (
    TERMINAL_TASK_STATUSES,
    AssistantMessage,
    ContentBlock,
    HookEventMessage,
    Message,
    MessageOrigin,
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    RateLimitEvent,
    RateLimitInfo,
    ResultMessage,
    ServerToolResultBlock,
    ServerToolUseBlock,
    StreamEvent,
    SystemMessage,
    TaskNotificationMessage,
    TaskProgressMessage,
    TaskStartedMessage,
    TaskUpdatedMessage,
    TaskUsage,
    TextBlock,
    ThinkingBlock,
    ToolPermissionContext,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

if TYPE_CHECKING:
    from catui.agents.definition import AgentDefinition
    from catui.sdk_tools import SdkMcpServer, SdkTool, create_sdk_mcp_server, tool
    from catui.workflows.api import run_workflow, run_workflow_async

# These pull in pydantic (about half of the SDK's start-up); a client is created without them and
# connect() loads them with the rest of the agent.
_LAZY_NAMES: dict[str, str] = {
    "AgentDefinition": "catui.agents.definition",
    "SdkMcpServer": "catui.sdk_tools",
    "SdkTool": "catui.sdk_tools",
    "create_sdk_mcp_server": "catui.sdk_tools",
    "tool": "catui.sdk_tools",
    # Workflows from Python (catui.workflows): loaded when first used.
    "run_workflow": "catui.workflows.api",
    "run_workflow_async": "catui.workflows.api",
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
    "TERMINAL_TASK_STATUSES",
    "AgentDefinition",
    "AssistantMessage",
    "CLIConnectionError",
    "CLIJSONDecodeError",
    "CLINotFoundError",
    "CanUseToolCallback",
    "CancelledError",
    "CatuiClient",
    "CatuiError",
    "CatuiOptions",
    "ClaudeSDKError",
    "ConfigurationError",
    "ContentBlock",
    "HookEventMessage",
    "Message",
    "MessageOrigin",
    "MessageParseError",
    "PermissionResult",
    "PermissionResultAllow",
    "PermissionResultDeny",
    "PermissionRuleValue",
    "PermissionUpdate",
    "ProcessError",
    "ProviderError",
    "RateLimitEvent",
    "RateLimitInfo",
    "ResultError",
    "ResultMessage",
    "SdkMcpServer",
    "SdkTool",
    "ServerToolResultBlock",
    "ServerToolUseBlock",
    "StreamEvent",
    "SystemMessage",
    "TaskNotificationMessage",
    "TaskProgressMessage",
    "TaskStartedMessage",
    "TaskUpdatedMessage",
    "TaskUsage",
    "TextBlock",
    "ThinkingBlock",
    "ToolError",
    "ToolPermissionContext",
    "ToolResultBlock",
    "ToolUseBlock",
    "UnsupportedEventLoopError",
    "UserMessage",
    "create_sdk_mcp_server",
    "query",
    "run_workflow",
    "run_workflow_async",
    "tool",
]


class CatuiClient(ClientDriver, ClientControls):
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
        self._inbox: asyncio.Queue[QueuedPrompt] = asyncio.Queue()
        self._outbox: asyncio.Queue[Any] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None
        self._running = False
        self._interrupt_pending = False
        self._usage_by_agent: dict[str | None, dict[str, Any]] = {}
        self._parent_of_agent: dict[str, str] = {}
        self._view = MessageView(
            forward_subagent_text=bool(getattr(self.options, "forward_subagent_text", False)),
            include_hook_events=bool(getattr(self.options, "include_hook_events", False)),
            replay_user_messages=bool(getattr(self.options, "replay_user_messages", False)),
        )
        self._structured: StructuredResult | None = None
        self._stderr_handler: StderrLines | None = None
        self._turn_origin: MessageOrigin | None = None
        self._main_usage: dict[str, Any] | None = None
        self._ends_team = False
        """Whether a team the agent leads is ended when it goes quiet (one-shot ``query``)."""

    # -- lifecycle ------------------------------------------------------------------------------

    async def __aenter__(self) -> CatuiClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.disconnect()

    async def connect(self, prompt: str | AsyncIterable[dict[str, Any]] | None = None) -> None:
        """Build the agent (settings, model, tools, agents); optionally send a first prompt (or a stream of them).

        Raises ConfigurationError for bad options (an unknown model, a bad agent definition).
        """
        require_asyncio("CatuiClient.connect()")
        if self._app is not None:
            return
        # Both import pydantic and the rest of the app: only when a client connects.
        from catui.app import build_app, start_app
        from catui.cli.interrupted_agents import handle_interrupted_agents

        try:
            schema = output_schema_from(getattr(self.options, "output_format", None))
            self._structured = StructuredResult(schema) if schema is not None else None
            run_options = run_options_from(
                self.options,
                abort_run=self._abort_main,
                on_permission_updates=self._apply_to_main,
                structured=self._structured,
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
        memory_by_sources(app, run_options)
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
        await handle_interrupted_agents(app, interactive=False, say=app.services.startup_warnings.append)
        # A client may be connected again after disconnect(): start from empty queues.
        self._inbox, self._outbox = asyncio.Queue(), asyncio.Queue()
        self._app = app
        self._attach_stderr()
        self._install_idle_delivery()
        self._pump = asyncio.create_task(self._drive(), name="catui-sdk-client")
        if prompt is not None:
            await self.query(prompt)

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
            for warning in app.services.startup_warnings:
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

    # -- talking --------------------------------------------------------------------------------

    async def query(self, prompt: str | AsyncIterable[dict[str, Any]], session_id: str = "default") -> None:
        """Send a prompt to the main agent; read the answer with receive_response().

        ``prompt`` is a string, or an async iterable of user-message dicts
        (``{"type": "user", "message": {"role": "user", "content": ...}}``): each is
        queued as one prompt, in order; this returns once the iterable is exhausted.
        """
        require_asyncio("CatuiClient.query()")
        self._require_running()
        if not is_prompt_stream(prompt):
            self._inbox.put_nowait(QueuedPrompt(check_text_prompt(prompt, "CatuiClient.query()")))
            return
        index = 0
        async for message in prompt:  # type: ignore[union-attr]
            self._require_running()
            self._inbox.put_nowait(prompt_from_message(message, index))
            index += 1

    def _require_running(self) -> None:
        self._require_app()
        if self._pump is None or self._pump.done():
            raise CatuiError("the client stopped after an error (see the exception raised earlier); open a new one")

    async def receive_messages(self) -> AsyncIterator[Message]:
        """Every message, as it arrives, until the client is closed."""
        async for item in self._messages():
            if item is not IDLE:
                yield item

    async def receive_response(self) -> AsyncIterator[Message]:
        """Messages up to and including the next main-agent ResultMessage."""
        async for item in self._messages():
            if item is IDLE:
                continue
            yield item
            if isinstance(item, ResultMessage):
                return

    async def _messages(self) -> AsyncIterator[Any]:
        self._require_app()
        while True:
            item = await self._outbox.get()
            if item is CLOSED:
                return
            if isinstance(item, BaseException):
                raise wrap_error(item) from item
            yield item

    async def _until_input_done(self) -> AsyncIterator[Message]:
        """Messages until the last queued prompt ran and nothing is pending (what one-shot ``query()`` yields)."""
        input_done = False
        async for item in self._messages():
            if item is INPUT_DONE:
                input_done = True
            elif item is IDLE:
                if input_done:
                    return
            else:
                yield item

    async def _feed(self, prompt: AsyncIterable[dict[str, Any]]) -> None:
        """Queue a streamed prompt's messages as they come, then mark the end of the input (one-shot query()).

        A bad message goes to the consumer as its error (raised from ``query()``'s loop).
        """
        try:
            await self.query(prompt)
        except CatuiError as exc:
            self._outbox.put_nowait(exc)
        except Exception as exc:
            self._outbox.put_nowait(wrap_error(exc))
        finally:
            self._end_input()

    def _end_input(self) -> None:
        self._inbox.put_nowait(END_OF_INPUT)  # type: ignore[arg-type]

    @property
    def session_id(self) -> str:
        return str(self._require_app().session.session_id)

    def _require_app(self) -> Any:
        if self._app is None:
            raise CLIConnectionError("the client is not connected: use `async with CatuiClient(options) as client:`")
        return self._app

    def _abort_main(self) -> None:
        if self._app is not None:
            self._interrupt_pending = True
            self._app.session.abort()

async def query(
    prompt: str | AsyncIterable[dict[str, Any]], options: CatuiOptions | None = None
) -> AsyncIterator[Message]:
    """Run a prompt and yield its messages, ending when the agent and its background work are done.

    ``prompt`` is a string, or an async iterable of user-message dicts (each one
    prompt, run in turn; the iterable may wait between them). The stream starts
    with a ``SystemMessage(subtype="init")`` per prompt, holds the main agent's
    and sub-agents' messages (a sub-agent's carry ``parent_tool_use_id``) and a
    ``ResultMessage`` per prompt; when background agents were started, their
    task messages and one more ResultMessage per notification turn follow.

    When the last ResultMessage is an error (max turns, an API failure), a
    :class:`ResultError` is raised after it, as claude-agent-sdk does. Every
    error is a CatuiError.
    """
    require_asyncio("catui.query()")
    streamed = is_prompt_stream(prompt)
    if not streamed:
        check_text_prompt(prompt, "query()")
    client = CatuiClient(options)
    client._ends_team = True
    await client.connect()
    feeder: asyncio.Task[None] | None = None
    last_result: ResultMessage | None = None
    try:
        if streamed:
            feeder = asyncio.create_task(client._feed(prompt))  # type: ignore[arg-type]
        else:
            await client.query(prompt)
            client._end_input()
        async for message in client._until_input_done():
            if isinstance(message, ResultMessage):
                last_result = message
            yield message
    finally:
        if feeder is not None and not feeder.done():
            feeder.cancel()
            with contextlib.suppress(BaseException):
                await feeder
        await client.disconnect()
    if last_result is not None and last_result.is_error:
        raise ResultError(
            f"the run ended with an error result ({last_result.subtype}): "
            f"{'; '.join(last_result.errors or []) or last_result.result or 'no details'}",
            data=dataclasses.asdict(last_result),
        )
