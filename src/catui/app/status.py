"""What a front end reports about its session: MCP status and context usage; and the MCP controls
(reconnect, toggle). claude-agent-sdk's shapes, catui's values.

Each function takes the parts it reads; front ends call them through
:class:`catui.app.services.AgentApp` (``app.mcp_status()``, ``app.context_usage(…)`` …).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from catui.errors import ConfigurationError

if TYPE_CHECKING:  # the SDK's client imports this module before it loads the agent
    from catui.mcp.manager import McpManager
    from catui.session.session import Session
    from catui.tools.base import Tool

def mcp_status(manager: McpManager | None, extra_tools: Sequence[Tool]) -> dict[str, Any]:
    """claude-agent-sdk's ``get_mcp_status()``: ``{"mcpServers": [{name, status, error?, tools}]}``.

    ``extra_tools`` are the run's in-process tools (``create_sdk_mcp_server``'s among them).
    """
    servers: list[dict[str, Any]] = []
    if manager is not None:
        for name, connection in manager.connections.items():
            entry: dict[str, Any] = {
                "name": name,
                "status": "disabled" if name in manager.disabled else connection.status,
                "tools": [{"name": t.name, "description": getattr(t, "description", "") or ""}
                          for t in connection.tools] if connection.status == "connected" else [],
            }
            if connection.error:
                entry["error"] = connection.error
            servers.append(entry)
    # In-process servers (create_sdk_mcp_server) are always connected: their tools are functions here.
    in_process: dict[str, list[dict[str, Any]]] = {}
    for tool in extra_tools:
        parts = str(tool.name).split("__")
        if len(parts) == 3 and parts[0] == "mcp":
            in_process.setdefault(parts[1], []).append({"name": parts[2], "description": tool.description})
    servers.extend({"name": name, "status": "connected", "tools": tools} for name, tools in in_process.items())
    return {"mcpServers": servers}


def context_usage(model: str, last_usage: dict[str, Any] | None) -> dict[str, Any]:
    """claude-agent-sdk's ``get_context_usage()``: how full the main agent's context window is.

    ``totalTokens`` is what the last model request used (its input, cache reads and writes, and its
    output); before any request it is 0. ``categories`` splits it as catui can tell: the messages
    and the output of the last turn.
    """
    # Imported here: it loads the model tables, which creating a client (bench_sdk measures it) does not need.
    from catui.session.usage import context_window, total_tokens

    window = context_window(model)
    usage = last_usage or {}
    used = total_tokens(usage)
    output = int(usage.get("output_tokens") or 0)
    return {
        "model": model,
        "totalTokens": used,
        "maxTokens": window,
        "rawMaxTokens": window,
        "percentage": round(100.0 * used / window, 2) if window else 0.0,
        "categories": [
            {"name": "Messages", "tokens": used - output, "color": "purple"},
            {"name": "Last answer", "tokens": output, "color": "blue"},
            {"name": "Free space", "tokens": max(window - used, 0), "color": "gray"},
        ],
    }


def require_mcp_server(manager: McpManager | None, name: Any) -> McpManager:
    """The MCP manager when ``name`` is one of its servers; ConfigurationError naming the known ones."""
    known = list(manager.connections) if manager is not None else []
    if manager is None or not isinstance(name, str) or name not in known:
        raise ConfigurationError(
            f"no MCP server named {name!r} in this session (configured: {', '.join(known) or 'none'}); "
            "in-process SDK servers cannot be reconnected or toggled"
        )
    return manager


async def reconnect_mcp_server(manager: McpManager | None, session: Session, server_name: Any) -> None:
    """Disconnect a configured MCP server and connect it again; the main agent is offered its tools again.

    Shared by ``CatuiClient.reconnect_mcp_server()`` and the ``mcp_reconnect`` control request.
    """
    manager = require_mcp_server(manager, server_name)
    await manager.reconnect(server_name)
    refresh_mcp_tools(manager, session)


async def toggle_mcp_server(manager: McpManager | None, session: Session, server_name: Any, enabled: Any) -> None:
    """Turn a configured MCP server off (disconnected, its tools gone) or on again for this session.

    Shared by ``CatuiClient.toggle_mcp_server()`` and the ``mcp_toggle`` control request.
    """
    manager = require_mcp_server(manager, server_name)
    if not isinstance(enabled, bool):
        raise ConfigurationError(f"toggling MCP server {server_name!r} needs enabled true or false, not {enabled!r}")
    if enabled:
        if server_name in manager.disabled or manager.connections[server_name].status != "connected":
            await manager.reconnect(server_name)
    else:
        await manager.disable(server_name)
    refresh_mcp_tools(manager, session)


def refresh_mcp_tools(manager: McpManager, session: Session) -> None:
    """Give the main session the MCP tools of the servers connected now (after a reconnect or a toggle)."""
    kept = [t for t in session.tools if not _is_server_tool(t, manager)]
    # Claude Code's order, as install_mcp keeps it: the others as they were, then the servers' tools.
    session.set_tools([*kept, *manager.tools(manager.connected())])


def _is_server_tool(tool: Tool, manager: McpManager) -> bool:
    name = str(tool.name)
    return name.startswith("mcp__") and name.split("__")[1] in manager.connections
