"""What a connected client reports about its session: the init message, server info, MCP status,
context usage; and the MCP controls (reconnect, toggle). claude-agent-sdk's shapes, catui's values.
"""

from __future__ import annotations

from typing import Any

from catui.commands.listing import (
    command_entries,
    init_skill_names,
    plugin_entries,
    session_plugin_dirs,
    slash_command_names,
)
from catui.errors import ConfigurationError
from catui.sdk_types import SystemMessage
from catui.styles.active import reported_style


def skill_names(app: Any) -> list[str]:
    skills = app.services.skills
    return list(skills.names()) if skills is not None else []


def init_message(app: Any) -> SystemMessage:
    """The ``system``/``init`` message each prompt starts with."""
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
        # Custom commands and skills (each runs as /name), then catui's own print-mode commands.
        "slash_commands": slash_command_names(app),
        "skills": init_skill_names(app),
        "plugins": plugin_entries(session_plugin_dirs(app)),
        "agents": [a.agent_type for a in getattr(app.registry, "active", [])],
        "output_style": reported_style(app)[0],
        # catui's own key: the Claude Code contract this session follows (catui.config.compat).
        "compat": app.services.compat.name,
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


def server_info(app: Any) -> dict[str, Any]:
    """claude-agent-sdk's ``get_server_info()``: commands, agents, output styles, the model."""
    return {
        "commands": command_entries(app),
        "agents": [
            {"name": a.agent_type, "description": a.when_to_use, "model": a.model}
            for a in getattr(app.registry, "active", [])
        ],
        "output_style": reported_style(app)[0],
        "available_output_styles": reported_style(app)[1],
        "model": app.session.config.model,
        "models": [{"value": app.session.config.model, "displayName": app.model_display}],
    }


def mcp_status(app: Any) -> dict[str, Any]:
    """claude-agent-sdk's ``get_mcp_status()``: ``{"mcpServers": [{name, status, error?, tools}]}``."""
    manager = app.services.mcp
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
    for tool in app.options.extra_tools:
        parts = str(tool.name).split("__")
        if len(parts) == 3 and parts[0] == "mcp":
            in_process.setdefault(parts[1], []).append({"name": parts[2], "description": tool.description})
    servers.extend({"name": name, "status": "connected", "tools": tools} for name, tools in in_process.items())
    return {"mcpServers": servers}


def context_usage(app: Any, last_usage: dict[str, Any] | None) -> dict[str, Any]:
    """claude-agent-sdk's ``get_context_usage()``: how full the main agent's context window is.

    ``totalTokens`` is what the last model request used (its input, cache reads and writes, and its
    output); before any request it is 0. ``categories`` splits it as catui can tell: the messages
    and the output of the last turn.
    """
    # Imported here: it loads the model tables, which creating a client (bench_sdk measures it) does not need.
    from catui.session.usage import context_window, total_tokens

    model = app.session.config.model
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


def require_mcp_server(app: Any, name: Any) -> Any:
    """The MCP manager when ``name`` is one of its servers; ConfigurationError naming the known ones."""
    manager = app.services.mcp
    known = list(manager.connections) if manager is not None else []
    if not isinstance(name, str) or name not in known:
        raise ConfigurationError(
            f"no MCP server named {name!r} in this session (configured: {', '.join(known) or 'none'}); "
            "in-process SDK servers cannot be reconnected or toggled"
        )
    return manager


async def reconnect_mcp_server(app: Any, server_name: Any) -> None:
    """Disconnect a configured MCP server and connect it again; the main agent is offered its tools again.

    Shared by ``CatuiClient.reconnect_mcp_server()`` and the ``mcp_reconnect`` control request.
    """
    manager = require_mcp_server(app, server_name)
    await manager.reconnect(server_name)
    refresh_mcp_tools(app)


async def toggle_mcp_server(app: Any, server_name: Any, enabled: Any) -> None:
    """Turn a configured MCP server off (disconnected, its tools gone) or on again for this session.

    Shared by ``CatuiClient.toggle_mcp_server()`` and the ``mcp_toggle`` control request.
    """
    manager = require_mcp_server(app, server_name)
    if not isinstance(enabled, bool):
        raise ConfigurationError(f"toggling MCP server {server_name!r} needs enabled true or false, not {enabled!r}")
    if enabled:
        if server_name in manager.disabled or manager.connections[server_name].status != "connected":
            await manager.reconnect(server_name)
    else:
        await manager.disable(server_name)
    refresh_mcp_tools(app)


def refresh_mcp_tools(app: Any) -> None:
    """Give the main session the MCP tools of the servers connected now (after a reconnect or a toggle)."""
    manager = app.services.mcp
    session = app.session
    kept = [t for t in session.tools if not _is_server_tool(t, manager)]
    # Claude Code's order, as install_mcp keeps it: the others as they were, then the servers' tools.
    session.set_tools([*kept, *manager.tools(manager.connected())])


def _is_server_tool(tool: Any, manager: Any) -> bool:
    name = str(tool.name)
    return name.startswith("mcp__") and name.split("__")[1] in manager.connections
