"""What catui asks the program driving it, over the control protocol: permissions, hook callbacks, SDK MCP servers.

- ``--permission-prompt-tool stdio``: a call the rules would ask about is
  sent as a ``can_use_tool`` request; the answer allows it (perhaps with a
  rewritten input) or denies it (perhaps stopping the run).
- The ``hooks`` of the ``initialize`` request: every callback id becomes a
  :class:`~catui.hooks.config.CallbackHook` whose call is a ``hook_callback``
  request, so they fire where settings hooks fire, sub-agents included.
- MCP servers of type ``sdk`` live in the driver's process: catui's MCP client
  talks JSON-RPC to them through ``mcp_message`` requests.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any

from catui.cli.stream.control_channel import ControlChannel, ControlRequestFailed
from catui.errors import ConfigurationError
from catui.hooks.callback import CallbackGroup, callback_hooks_config
from catui.hooks.config import HooksConfig
from catui.mcp.config import SdkTransport
from catui.permissions.context import PermissionDecision, PermissionRequest
from catui.permissions.updates import apply_permission_updates, suggested_updates

if TYPE_CHECKING:
    from catui.session.config import PermissionHook
    from catui.tools.base import Tool, ToolContext


def stdio_permission_asker(channel: ControlChannel, warn: Callable[[str], None],
                           interrupt: Callable[[], None], main_context: Callable[[], ToolContext | None]
                           ) -> PermissionHook:
    """The session's permission callback for ``--permission-prompt-tool stdio``: asks the driver.

    ``interrupt`` stops the main agent's turn (a deny with ``interrupt: true`` from any agent does);
    ``main_context`` gives the main agent's context, where an approval's permission updates also go.
    """

    async def ask(tool: Tool, raw_input: dict[str, Any], request: PermissionRequest,
                  ctx: ToolContext) -> PermissionDecision:
        shown = tool.observable_input(raw_input, ctx)
        question: dict[str, Any] = {
            "subtype": "can_use_tool",
            "tool_name": tool.name,
            "input": shown,
            "permission_suggestions": permission_suggestions(request, ctx),
            "blocked_path": str(request.file_path) if request.file_path is not None else None,
            "tool_use_id": ctx.tool_use_id,
        }
        if ctx.agent_id is not None:
            question["agent_id"] = ctx.agent_id
        try:
            answer = await channel.request(question, abort=ctx.abort)
        except ControlRequestFailed as exc:
            return PermissionDecision("deny", f"Permission to use {tool.name} could not be asked for: {exc}")
        updates = answer.get("updatedPermissions")
        if answer.get("behavior") == "allow" and isinstance(updates, list) and updates:
            apply_updates([ctx, main_context()], updates, warn)
        return decision_from_answer(tool.name, shown, answer, ctx, interrupt)

    return ask


def permission_suggestions(request: PermissionRequest, ctx: ToolContext) -> list[dict[str, Any]]:
    """What "allow, and don't ask again" would add, as Claude Code suggests it (the same as catui's SDK)."""
    return suggested_updates(request, ctx.cwd, *ctx.permissions.working_directories)


def apply_updates(contexts: list[ToolContext | None], updates: list[Any], warn: Callable[[str], None]) -> None:
    """An approval's ``updatedPermissions``, applied to the asking agent's context and the main agent's."""
    notes: list[str] = []
    seen: set[int] = set()
    for ctx in contexts:
        if ctx is None or id(ctx) in seen:
            continue
        seen.add(id(ctx))
        ctx.permissions, notes = apply_permission_updates(ctx.permissions, updates)
    for note in notes:
        warn(f"can_use_tool answer: {note}")


def decision_from_answer(tool_name: str, shown: Mapping[str, Any], answer: Mapping[str, Any], ctx: ToolContext,
                         interrupt: Callable[[], None]) -> PermissionDecision:
    """A ``can_use_tool`` answer as the session's decision; ``interrupt: true`` on a deny also stops the run."""
    behavior = answer.get("behavior")
    if behavior == "allow":
        updated = answer.get("updatedInput")
        if isinstance(updated, dict) and updated != dict(shown):
            return PermissionDecision("allow", "allowed by the driver's can_use_tool", updated_input=updated)
        return PermissionDecision("allow", "allowed by the driver's can_use_tool")
    if behavior == "deny":
        if answer.get("interrupt") is True:
            ctx.abort.set()
            interrupt()
        message = answer.get("message")
        return PermissionDecision("deny", message if isinstance(message, str) and message
                                  else f"Permission to use {tool_name} was denied.")
    return PermissionDecision(
        "deny", f"The driver's can_use_tool answer has behavior {behavior!r}; expected \"allow\" or \"deny\"."
    )


def initialize_hooks(hooks: Any, channel: ControlChannel) -> HooksConfig | None:
    """The ``hooks`` of an ``initialize`` request as callback hooks (None when there are none).

    Shape: ``{"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"], "timeout": 30}], ...}``.
    Raises ConfigurationError for a malformed entry.
    """
    if not hooks:
        return None
    if not isinstance(hooks, Mapping):
        raise ConfigurationError("initialize: 'hooks' must be an object of event names to matcher lists")
    groups: dict[str, list[CallbackGroup]] = {}
    for event, entries in hooks.items():
        if not isinstance(entries, list):
            raise ConfigurationError(f"initialize: hooks[{event!r}] must be a list of matchers")
        for index, entry in enumerate(entries):
            ids = entry.get("hookCallbackIds") if isinstance(entry, Mapping) else None
            if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                raise ConfigurationError(f"initialize: hooks[{event!r}][{index}] needs a 'hookCallbackIds' list")
            groups.setdefault(str(event), []).append(CallbackGroup(
                matcher=entry.get("matcher"),
                callbacks=[forwarding_callback(channel, callback_id) for callback_id in ids],
                timeout=entry.get("timeout"),
                names=list(ids),
            ))
    return callback_hooks_config(groups, source="initialize hooks")


def forwarding_callback(channel: ControlChannel, callback_id: str) -> Any:
    """A hook callback that asks the driver to run its callback ``callback_id`` and returns its answer."""

    async def forward(input_data: dict[str, Any], tool_use_id: str | None, _context: dict[str, Any]) -> Any:
        return await channel.request({"subtype": "hook_callback", "callback_id": callback_id,
                                      "input": input_data, "tool_use_id": tool_use_id})

    forward.__qualname__ = callback_id
    return forward


def control_mcp_transport(channel: ControlChannel) -> SdkTransport:
    """Opens the streams of an ``sdk`` MCP server for ``mcp.ClientSession``: each message is an ``mcp_message``."""

    @contextlib.asynccontextmanager
    async def open_streams(server_name: str) -> AsyncIterator[tuple[Any, Any]]:
        # lazy, as everywhere in catui: the `mcp` SDK costs ~0.5 s to import and only MCP runs need it
        import anyio
        import mcp.types
        from mcp.shared.message import SessionMessage

        adapter = getattr(mcp.types, "jsonrpc_message_adapter", None)  # mcp 2; mcp 1's JSONRPCMessage is a model

        def parse(reply: dict[str, Any]) -> Any:
            if adapter is not None:
                return adapter.validate_python(reply)
            return mcp.types.JSONRPCMessage.model_validate(reply)  # type: ignore[attr-defined, unused-ignore]

        to_client_send, to_client = anyio.create_memory_object_stream[Any](100)
        from_client, from_client_receive = anyio.create_memory_object_stream[Any](100)

        async def forward(message: Any) -> None:
            payload = message.message.model_dump(by_alias=True, mode="json", exclude_none=True)
            expects_answer = "id" in payload and "method" in payload
            try:
                answer = await channel.request({"subtype": "mcp_message", "server_name": server_name,
                                                "message": payload})
                reply = answer.get("mcp_response")
            except ControlRequestFailed as exc:
                reply = {"jsonrpc": "2.0", "id": payload.get("id"), "error": {"code": -32603, "message": str(exc)}}
            if expects_answer and isinstance(reply, dict) and ("result" in reply or "error" in reply):
                await to_client_send.send(SessionMessage(parse(reply)))

        async def pump() -> None:
            async with anyio.create_task_group() as requests:
                async for message in from_client_receive:
                    requests.start_soon(forward, message)  # tool calls run side by side

        async with anyio.create_task_group() as group:
            group.start_soon(pump)
            try:
                yield to_client, from_client
            finally:
                group.cancel_scope.cancel()

    return open_streams
