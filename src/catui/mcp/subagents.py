"""What the sub-agent runtime asks of MCP: required servers (spec 6.1 [6]) and an agent's own servers.

``requiredMcpServers`` entries match as in Claude Code: each entry must be
contained, ignoring case, in the name of a connected server that has tools.
The runtime first waits (up to 30 s) for matching servers that are still
connecting, then refuses the spawn with :func:`required_servers_error`'s text.

An agent's ``mcpServers`` names configured servers (their tools are added to
the child's) or gives ``{name: config}`` inline; inline servers are connected
for the child alone and closed with :meth:`ChildMcpServers.aclose` when it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.mcp.config import McpConfigError, parse_server_config
from catui.mcp.connection import McpConnection
from catui.mcp.manager import McpManager
from catui.mcp.tools import McpTool

if TYPE_CHECKING:
    from catui.agents.definition import AgentDefinition

REQUIRED_SERVERS_WAIT_S = 30.0


def available_servers(manager: McpManager | None, tool_names: Iterable[str] = ()) -> list[str]:
    """Names of the connected servers that offer tools (what ``requiredMcpServers`` is matched against).

    ``tool_names`` adds the servers behind ``mcp__<server>__<tool>`` names of
    other origins (the SDK's in-process servers), as Claude Code reads them from the tool pool.
    """
    names: list[str] = []
    if manager is not None:
        names.extend(name for name, c in manager.connections.items() if c.status == "connected" and c.tools)
    for tool_name in tool_names:
        parts = tool_name.split("__")
        if len(parts) >= 3 and parts[0] == "mcp" and parts[1] and parts[1] not in names:
            names.append(parts[1])
    return list(dict.fromkeys(names))


def missing_required_servers(
    manager: McpManager | None, required: Sequence[str], tool_names: Iterable[str] = ()
) -> list[str]:
    """The entries of ``required`` that no available server name contains (ignoring case)."""
    available = [n.lower() for n in available_servers(manager, tool_names)]
    return [p for p in required if not any(p.lower() in name for name in available)]


def required_servers_error(
    manager: McpManager | None, names: Sequence[str], agent_type: str = "", tool_names: Iterable[str] = ()
) -> str | None:
    """Why an agent needing ``names`` cannot start now, or None when every one is available."""
    tool_names = list(tool_names)
    missing = missing_required_servers(manager, names, tool_names)
    if not missing:
        return None
    who = f"Agent type '{agent_type}'" if agent_type else "This agent"
    lines = [f"{who} requires MCP servers matching: {', '.join(missing)}."]
    available = available_servers(manager, tool_names)
    lines.append(f"Connected MCP servers with tools: {', '.join(available) if available else 'none'}.")
    if manager is not None:
        for connection in manager.matching(missing):
            if connection.status == "failed":
                lines.append(f"Server '{connection.name}' failed: {connection.error}")
            elif connection.status == "pending":
                lines.append(f"Server '{connection.name}' is still connecting.")
    lines.append(
        "Configure the server in .mcp.json or the mcpServers settings (and check that it starts), "
        "or use another agent type."
    )
    return " ".join(lines)


async def check_required_servers(
    manager: McpManager | None,
    names: Sequence[str],
    *,
    agent_type: str = "",
    tool_names: Iterable[str] = (),
    timeout_s: float = REQUIRED_SERVERS_WAIT_S,
) -> str | None:
    """Wait (bounded) for pending servers matching ``names``, then :func:`required_servers_error`."""
    if not names:
        return None
    tool_names = list(tool_names)
    missing = missing_required_servers(manager, names, tool_names)
    if manager is not None and missing:
        await manager.wait_for(missing, timeout_s)
    return required_servers_error(manager, names, agent_type, tool_names)


def mcp_tool_pool(manager: McpManager | None, parent_tools: Sequence[Any]) -> list[Any]:
    """The parent's tools plus the tools of servers that connected after the parent's list was settled.

    A child's tools are chosen from this pool (spec 9.3 adds the connected MCP
    tools to it), so a server an agent requires, which connected late, still
    reaches that agent.
    """
    if manager is None:
        return list(parent_tools)
    present = {t.name for t in parent_tools}
    late = [t for t in manager.tools() if t.name not in present]
    return [*parent_tools, *late]


@dataclass
class ChildMcpServers:
    """The MCP tools an agent's ``mcpServers`` give it, problems met, and its own connections to close."""

    tools: list[McpTool] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    owned: list[McpConnection] = field(default_factory=list)

    async def aclose(self) -> None:
        """Close the connections made for this child alone (inline servers). Safe to call twice."""
        owned, self.owned = self.owned, []
        for connection in owned:
            with contextlib.suppress(Exception):
                await connection.aclose()


async def child_mcp_tools(
    manager: McpManager | None, definition: AgentDefinition, *, timeout_s: float | None = None
) -> ChildMcpServers:
    """The tools of the servers a definition's ``mcp_servers`` lists (names or inline ``{name: config}``).

    Named servers come from the session's manager (waited for, bounded);
    inline ones are connected now for the child's lifetime. Call
    :meth:`ChildMcpServers.aclose` when the child ends. Plugin agents never
    reach here with servers: their ``mcpServers`` are dropped when loaded.
    """
    out = ChildMcpServers()
    entries = list(getattr(definition, "mcp_servers", None) or [])
    if not entries:
        return out
    agent = getattr(definition, "agent_type", "agent")
    names, inline = _split_entries(entries, agent, out.errors)
    wait = timeout_s if timeout_s is not None else REQUIRED_SERVERS_WAIT_S
    if names:
        if manager is None:
            out.errors.append(f"Agent '{agent}' names MCP server(s) {', '.join(names)}, but no MCP server is configured")
        else:
            await manager.wait_for(names, wait)
            for name in names:
                connection = manager.connections.get(name)
                if connection is None:
                    out.errors.append(f"Agent '{agent}' names MCP server '{name}', which is not configured")
                elif connection.status != "connected":
                    out.errors.append(f"MCP server '{name}' for agent '{agent}' is not connected: {connection.error}")
                else:
                    out.tools.extend(manager.tools_of(connection))
    if inline:
        helper = manager or McpManager({}, cwd=_cwd_of(manager))
        connections = await asyncio.gather(*(helper.add_server(config, timeout_s=wait) for config in inline))
        for connection in connections:
            out.owned.append(connection)
            if connection.status == "connected":
                out.tools.extend(helper.tools_of(connection))
            else:
                out.errors.append(
                    f"MCP server '{connection.name}' of agent '{agent}' did not connect: {connection.error or 'timed out'}"
                )
    return out


def _split_entries(entries: Iterable[Any], agent: str, errors: list[str]) -> tuple[list[str], list[Any]]:
    names: list[str] = []
    inline: list[Any] = []
    for entry in entries:
        if isinstance(entry, str):
            names.append(entry)
        elif isinstance(entry, Mapping):
            for name, raw in entry.items():
                try:
                    config, _warnings = parse_server_config(
                        str(name), raw, origin=f"agent '{agent}' mcpServers", scope="agent"
                    )
                except McpConfigError as exc:
                    errors.append(str(exc))
                    continue
                inline.append(config)
        else:
            errors.append(f"agent '{agent}': an mcpServers entry must be a server name or {{name: config}}")
    return names, inline


def _cwd_of(manager: McpManager | None) -> Any:
    return manager.cwd if manager is not None else Path.cwd()
