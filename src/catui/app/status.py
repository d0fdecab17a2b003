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


GRID_SIDE = 10
"""The context grid is GRID_SIDE × GRID_SIDE squares, each a hundredth of the window."""


def context_usage(model: str, last_usage: dict[str, Any] | None, *, auto_compact: bool = True) -> dict[str, Any]:
    """claude-agent-sdk's ``get_context_usage()``: how full the main agent's context window is, in the shape
    both official SDKs type (every field they require is there).

    ``totalTokens`` is what the last model request used (its input, cache reads and writes, and its
    output); before any request it is 0. ``categories`` splits it as catui can tell: the messages
    and the output of the last turn. catui does not break the context down by file, MCP tool or agent:
    ``memoryFiles``, ``mcpTools`` and ``agents`` are empty lists. ``apiUsage`` is the last request's
    usage (None before one); ``gridRows`` lays the categories out as the /context grid does.
    """
    # Imported here: it loads the model tables, which creating a client (bench_sdk measures it) does not need.
    from catui.session.usage import context_window, total_tokens

    window = context_window(model)
    usage = last_usage or {}
    used = total_tokens(usage)
    output = int(usage.get("output_tokens") or 0)
    categories = [
        {"id": "messages", "name": "Messages", "tokens": used - output, "color": "purple", "kind": "used"},
        {"name": "Last answer", "tokens": output, "color": "blue", "kind": "used"},
        {"id": "free_space", "name": "Free space", "tokens": max(window - used, 0), "color": "gray", "kind": "free"},
    ]
    api_usage = None if last_usage is None else {
        name: int(usage.get(name) or 0)
        for name in ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")}
    return {
        "model": model,
        "totalTokens": used,
        "maxTokens": window,
        "rawMaxTokens": window,
        "percentage": round(100.0 * used / window, 2) if window else 0.0,
        "categories": categories,
        "gridRows": context_grid(categories, window),
        "isAutoCompactEnabled": auto_compact,
        "memoryFiles": [],
        "mcpTools": [],
        "agents": [],
        "apiUsage": api_usage,
    }


def context_grid(categories: list[dict[str, Any]], window: int) -> list[list[dict[str, Any]]]:
    """The categories as rows of squares, in order, each square a hundredth of ``window``; a category's last
    square may be part full (``squareFullness``), and a used category gets at least one square."""
    per_square = window / (GRID_SIDE * GRID_SIDE) if window else 1.0
    squares: list[dict[str, Any]] = []
    for category in categories:
        tokens = int(category["tokens"])
        if tokens <= 0 or len(squares) >= GRID_SIDE * GRID_SIDE:
            continue
        share = round(100.0 * tokens / window, 2) if window else 0.0
        count = max(1, round(tokens / per_square))
        for index in range(min(count, GRID_SIDE * GRID_SIDE - len(squares))):
            fullness = min(1.0, max(0.0, tokens / per_square - index)) if category["kind"] == "used" else 1.0
            squares.append({"color": category["color"], "isFilled": category["kind"] == "used",
                            "categoryName": category["name"], "tokens": tokens, "percentage": share,
                            "squareFullness": round(fullness, 2)})
    return [squares[start:start + GRID_SIDE] for start in range(0, len(squares), GRID_SIDE)]


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
