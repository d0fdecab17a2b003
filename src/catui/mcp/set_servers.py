"""The official SDKs' ``setMcpServers`` (control request ``mcp_set_servers``): replace a running session's
dynamically added MCP servers, and answer Claude Code's ``McpSetServersResult``.

What is replaced, as Claude Code 2.1.332 does it (observed through the TypeScript SDK, docs/decisions.md):
the servers earlier calls set and the driver's in-process servers (``createSdkMcpServer``, sent as
``{"type": "sdk"}``); a stdio/http/sse server given at start stays unless a call names it, and servers of
the settings files are untouched unless named. ``added`` lists the names that are new or changed, or taken
over from the start's servers; ``removed`` those left out; ``errors`` the added servers that could not be
configured or connected (they are still listed in ``added``, as Claude Code lists them). The main agent is
offered the new servers' tools from its next request, and no longer the removed ones'.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from catui.errors import ConfigurationError
from catui.mcp.config import McpConfigError, McpServerConfig, parse_server_config
from catui.mcp.manager import McpManager
from catui.mcp.tools import McpTool

if TYPE_CHECKING:
    from catui.mcp.install import McpSession

ORIGIN = "setMcpServers"
"""Where a server of a call was written, for its error messages."""


async def set_mcp_servers(manager: McpManager, session: McpSession, servers: Any, *, env: Mapping[str, str],
                          background: bool = False) -> dict[str, Any]:
    """Apply one ``setMcpServers(servers)`` call to ``manager`` and ``session``; the McpSetServersResult.

    ``background`` (the SDK's ``connectInBackground``): answer without waiting for the connections, so
    only configuration errors are reported. A ``servers`` that is not an object is a ConfigurationError.
    """
    if not isinstance(servers, Mapping):
        raise ConfigurationError(f"{ORIGIN}: 'servers' must be an object of server names to configs, "
                                 f"such as {{\"docs\": {{\"command\": \"npx\", \"args\": [...]}}}}")
    configs: dict[str, McpServerConfig] = {}
    errors: dict[str, str] = {}
    for name, raw in servers.items():
        try:
            configs[str(name)], _warnings = parse_server_config(str(name), raw, origin=ORIGIN, scope="dynamic",
                                                               env=env)
        except McpConfigError as exc:
            errors[str(name)] = str(exc)
    added, removed = await manager.set_servers(configs, wait=not background)
    for name in added:
        connection = manager.connections[name]
        if connection.status == "failed":
            errors[name] = connection.error or "the server failed to connect"
    offer_server_tools(manager, session)
    return {"added": sorted([*added, *(n for n in errors if n not in configs)]), "removed": removed,
            "errors": errors}


def offer_server_tools(manager: McpManager, session: McpSession) -> None:
    """Give the main session the tools of the servers connected now, and the resource tools once.

    The servers' tools go last and the built-in ones stay sorted by name, as :func:`catui.mcp.install.install_mcp`
    orders them; a removed or replaced server's tools leave.
    """
    from catui.mcp.resources import resource_tools  # lazy, as in install_mcp

    others = [t for t in session.tools if not isinstance(t, McpTool)]
    present = {t.name for t in others}
    resource = [t for t in resource_tools(manager) if t.name not in present]
    if resource:
        builtin = sorted([*(t for t in others if not t.name.startswith("mcp__")), *resource], key=lambda t: t.name)
        others = [*builtin, *(t for t in others if t.name.startswith("mcp__"))]
    session.set_tools([*others, *manager.tools(manager.connected())])
