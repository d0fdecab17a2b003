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
from catui.sdk._internal.controls import ClientControls
from catui.sdk._internal.driver import IDLE, ClientDriver
from catui.sdk._internal.prompts import check_text_prompt, is_prompt_stream, require_asyncio
from catui.sdk.options import CanUseToolCallback, CatuiOptions
from catui.sdk.permissions import PermissionRuleValue
from catui.sdk.types import (
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
    from catui.sdk.bg_attach import BgAttachment
    from catui.sdk.shapes import ContextUsageResponse, McpStatusResponse
    from catui.sdk.tools import SdkMcpServer, SdkTool, create_sdk_mcp_server, tool
    from catui.workflows.api import run_workflow, run_workflow_async

# These pull in pydantic (about half of the SDK's start-up); a client is created without them and
# connect() loads them with the rest of the agent.
_LAZY_NAMES: dict[str, str] = {
    "AgentDefinition": "catui.agents.definition",
    "SdkMcpServer": "catui.sdk.tools",
    "SdkTool": "catui.sdk.tools",
    "create_sdk_mcp_server": "catui.sdk.tools",
    "tool": "catui.sdk.tools",
    # Workflows from Python (catui.workflows): loaded when first used.
    "run_workflow": "catui.workflows.api",
    "run_workflow_async": "catui.workflows.api",
}


def __getattr__(name: str) -> Any:
    module = _LAZY_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'catui.sdk.client' has no attribute {name!r}")
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
        self._driver = ClientDriver(self.options)
        self._controls = ClientControls(self._driver)
        self._attached: BgAttachment | None = None

    @classmethod
    def attach(cls, session: str, options: CatuiOptions | None = None) -> CatuiClient:
        """A client of a running background session (``catui --bg``, :func:`catui.start_bg_session`), not a new agent.

        ``session`` is its name, id or a unique id prefix. Connected (``async with``), ``query()`` sends it a turn,
        ``receive_messages()`` / ``receive_response()`` yield its messages from the moment of attaching (they end
        when the session stops), ``options.can_use_tool`` answers its permission requests, and ``disconnect()``
        detaches: the session keeps running. Only ``options.can_use_tool`` is used; the session keeps the model,
        tools and permission mode it was started with. The other controls (``interrupt()``, ``set_model()`` …)
        raise :class:`CLIConnectionError`. An unknown or stopped session raises
        :class:`catui.BackgroundSessionError` on connect.
        """
        from catui.sdk.bg_attach import BgAttachment

        client = cls(options)
        client._attached = BgAttachment(session, client.options)
        return client

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
        if self._attached is not None:
            await self._attached.connect(prompt)
            return
        await self._driver.connect(prompt)

    async def disconnect(self) -> None:
        """Stop any run and background work, and release the provider. Safe to call twice.

        Attached to a background session: detach from it (it keeps running)."""
        if self._attached is not None:
            await self._attached.disconnect()
            return
        await self._driver.disconnect()

    # -- talking --------------------------------------------------------------------------------

    async def query(self, prompt: str | AsyncIterable[dict[str, Any]], session_id: str = "default") -> None:
        """Send a prompt to the main agent; read the answer with receive_response().

        ``prompt`` is a string, or an async iterable of user-message dicts
        (``{"type": "user", "message": {"role": "user", "content": ...}}``): each is
        queued as one prompt, in order; this returns once the iterable is exhausted.
        """
        if self._attached is not None:
            await self._attached.enqueue(prompt)
            return
        await self._driver.enqueue(prompt, "CatuiClient.query()")

    async def receive_messages(self) -> AsyncIterator[Message]:
        """Every message, as it arrives, until the client is closed (attached: until the session stops)."""
        if self._attached is not None:
            async for message in self._attached.messages():
                yield message
            return
        async for item in self._driver.messages():
            if item is not IDLE:
                yield item

    async def receive_response(self) -> AsyncIterator[Message]:
        """Messages up to and including the next main-agent ResultMessage.

        Attached to a background session that stops before it: :class:`catui.BackgroundSessionError`."""
        if self._attached is not None:
            async for message in self._attached.messages():
                yield message
                if isinstance(message, ResultMessage):
                    return
            from catui.bgsessions.api import BackgroundSessionError

            entry = self._attached.require_entry()
            raise BackgroundSessionError(f"background session {entry.id} ({entry.name}) stopped before it answered; "
                                         f"catui respawn {entry.id} starts it again.")
        async for item in self._driver.messages():
            if item is IDLE:
                continue
            yield item
            if isinstance(item, ResultMessage):
                return

    @property
    def session_id(self) -> str:
        if self._attached is not None:
            return self._attached.require_entry().session_id
        return str(self._driver.require_app().session.session_id)

    # -- control (claude-agent-sdk's ClaudeSDKClient names) ---------------------------------------

    async def interrupt(self) -> None:
        """Stop the current run (sub-agents included); it ends with an error_during_execution ResultMessage."""
        await self._controls.interrupt()

    async def set_permission_mode(self, mode: str) -> None:
        """Change the permission mode for the following tool calls (default, acceptEdits, plan, …)."""
        await self._controls.set_permission_mode(mode)

    async def set_model(self, model: str | None = None) -> None:
        """Switch the main agent's model (an alias, an id or provider:model); None means the default."""
        await self._controls.set_model(model)

    def team(self) -> list[dict[str, Any]]:
        """The members of the team this client's agent leads (name, agentId, color, busy, active,
        lastMessage); empty when it leads none."""
        return self._controls.team()

    async def stop_task(self, task_id: str) -> None:
        """Stop a task by id: a background agent or shell command, or a sub-agent running in the foreground.

        A background task's notification follows. A foreground agent stops at once: its parent's Agent
        call returns an error result saying it was stopped, a ``TaskNotificationMessage`` with status
        ``stopped`` follows, and the parent (and the agent's siblings) carry on.
        """
        await self._controls.stop_task(task_id)

    async def rewind_files(self, user_message_id: str) -> None:
        """Put the files the agents changed since a prompt back as they were before it.

        ``user_message_id`` is the ``uuid`` of a :class:`UserMessage` this client received for one of
        its prompts. Needs ``enable_file_checkpointing=True``; changes made by shell commands are not
        tracked. Raises :class:`CatuiError` for an unknown id or with checkpointing off.
        """
        await self._controls.rewind_files(user_message_id)

    async def background_tasks(self) -> list[str]:
        """Move the running foreground sub-agents to the background (Claude Code's Ctrl-B).

        The parent's Agent calls return at once with "launched in the background"
        results; the agents keep running and report with task messages. Returns
        the task ids of the agents moved.
        """
        return await self._controls.background_tasks()

    async def get_server_info(self) -> dict[str, Any]:
        """Commands (skills), agents, output styles and the model of this session."""
        return await self._controls.get_server_info()

    async def get_mcp_status(self) -> McpStatusResponse:
        """``{"mcpServers": [{"name", "status", "tools", "error"?}]}`` for configured and in-process servers."""
        return await self._controls.get_mcp_status()

    async def get_context_usage(self) -> ContextUsageResponse:
        """How full the main agent's context window is after its last model request."""
        return await self._controls.get_context_usage()

    async def reconnect_mcp_server(self, server_name: str) -> None:
        """Disconnect an MCP server and connect it again; its tools are offered again if it connects."""
        await self._controls.reconnect_mcp_server(server_name)

    async def toggle_mcp_server(self, server_name: str, enabled: bool) -> None:
        """Turn an MCP server off (disconnected, its tools gone) or on again for this session."""
        await self._controls.toggle_mcp_server(server_name, enabled)


async def query(
    prompt: str | AsyncIterable[dict[str, Any]], options: CatuiOptions | None = None
) -> AsyncIterator[Message]:
    """Run a prompt and yield its messages, ending when the agent and its background work are done.

    ``prompt`` is a string, or an async iterable of user-message dicts (each one
    prompt, run in turn; the iterable may wait between them). The stream starts
    with a ``SystemMessage(subtype="init")`` per prompt, holds the main agent's
    and sub-agents' messages (a sub-agent's carry ``parent_tool_use_id``) and a
    ``ResultMessage`` per prompt; when background agents were started, their
    task messages and one more ResultMessage per notification turn follow (under ``compat="2.1.332"`` each such
    turn opened by another init message, as Claude Code 2.1.332 does).

    When the last ResultMessage is an error (max turns, an API failure), a
    :class:`ResultError` is raised after it, as claude-agent-sdk does. Every
    error is a CatuiError.
    """
    require_asyncio("catui.query()")
    streamed = is_prompt_stream(prompt)
    if not streamed:
        check_text_prompt(prompt, "query()")
    driver = ClientDriver(options if options is not None else CatuiOptions(), ends_team=True)
    await driver.connect()
    feeder: asyncio.Task[None] | None = None
    last_result: ResultMessage | None = None
    try:
        if streamed:
            feeder = asyncio.create_task(driver.feed(prompt))  # type: ignore[arg-type]
        else:
            await driver.enqueue(prompt, "query()")
            driver.end_input()
        async for message in driver.until_input_done():
            if isinstance(message, ResultMessage):
                last_result = message
            yield message
    finally:
        if feeder is not None and not feeder.done():
            feeder.cancel()
            with contextlib.suppress(BaseException):
                await feeder
        await driver.disconnect()
    if last_result is not None and last_result.is_error:
        raise ResultError(
            f"the run ended with an error result ({last_result.subtype}): "
            f"{'; '.join(last_result.errors or []) or last_result.result or 'no details'}",
            data=dataclasses.asdict(last_result),
        )
