"""All MCP connections of a session: started together, in the background, and closed together.

:class:`McpManager` connects to every configured server concurrently, each in
its own task (status pending → connected or failed, with the reason), and
turns the connected servers' tools into catui tools. Callers wait for
connections with :meth:`McpManager.wait_for`, bounded, and never block on a
server that is slow or broken.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from catui.mcp.config import McpServerConfig, SdkTransport
from catui.mcp.connection import McpConnection
from catui.mcp.tools import MAX_TOOL_NAME_CHARS, McpTool, make_mcp_tool

DEFAULT_CONNECT_TIMEOUT_S = 30.0
"""How long one server may take to start and answer (``MCP_TIMEOUT`` in ms changes it, as in Claude Code)."""


def connect_timeout_from_env(env: Mapping[str, str] | None = None) -> float:
    raw = (env if env is not None else os.environ).get("MCP_TIMEOUT", "").strip()
    try:
        return max(int(raw), 1) / 1000 if raw else DEFAULT_CONNECT_TIMEOUT_S
    except ValueError:
        return DEFAULT_CONNECT_TIMEOUT_S


def same_server(a: McpServerConfig, b: McpServerConfig) -> bool:
    """Whether two configs reach the same server the same way (where each was written does not count)."""
    return (a.transport, a.command, a.args, dict(a.env), a.url, dict(a.headers)) == \
        (b.transport, b.command, b.args, dict(b.env), b.url, dict(b.headers))


def _quiet_sdk_logging() -> None:
    # The SDK logs transport noise (a server's bad line, a closed pipe) through `logging`; without a handler
    # Python prints it on stderr over catui's own output. Failures reach the user as statuses and tool errors.
    logger = logging.getLogger("mcp")
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
        logger.propagate = False


class McpManager:
    """The connections to the configured MCP servers.

    ``warnings`` holds the configuration problems met while reading the
    servers; ``on_warning`` (optional) is called once for each server that
    fails, with a one-line message.
    """

    def __init__(
        self,
        configs: Mapping[str, McpServerConfig],
        *,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        connect_timeout_s: float | None = None,
        warnings: Iterable[str] = (),
        sdk_transport: SdkTransport | None = None,
    ) -> None:
        self.cwd = Path(cwd)
        self.sdk_transport = sdk_transport
        self.env = dict(env) if env is not None else None
        self.connect_timeout_s = connect_timeout_s or connect_timeout_from_env(env)
        self.warnings: list[str] = list(warnings)
        self.on_warning: Callable[[str], None] | None = None
        self.connections: dict[str, McpConnection] = {
            name: self._new_connection(config) for name, config in configs.items()
        }
        self._started = False
        self._closed = False
        self._reported: set[str] = set()
        self._tool_cache: dict[str, list[McpTool]] = {}
        self.ready_timeout_s = 5.0
        self._ready_callbacks: list[Callable[[McpManager], None]] = []
        self._ready_done = False
        self._ready_lock: asyncio.Lock | None = None
        self.disabled: set[str] = set()
        """Servers turned off for this session (``toggle_mcp_server``): disconnected, no tools."""
        self.replaceable: set[str] = {name for name, config in configs.items() if config.transport == "sdk"}
        """The servers :meth:`set_servers` replaces: those an earlier call set, and the driver's in-process
        ones (as Claude Code does; a stdio/http server given at start stays unless a call names it)."""

    def _new_connection(self, config: McpServerConfig) -> McpConnection:
        return McpConnection(config, cwd=self.cwd, env=self.env, connect_timeout_s=self.connect_timeout_s,
                             sdk_transport=self.sdk_transport)

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        """Start connecting to every server in the background. Needs a running loop; idempotent."""
        if self._started or self._closed:
            return
        _quiet_sdk_logging()
        self._started = True
        for connection in self.connections.values():
            connection.start()

    @property
    def started(self) -> bool:
        return self._started

    async def wait_for(self, servers: Iterable[str] | None = None, timeout_s: float = 30.0) -> None:
        """Wait, at most ``timeout_s``, until the named servers are no longer pending (all servers when None).

        Names match as Claude Code's ``requiredMcpServers`` do: a server whose
        name contains the given text, ignoring case. Starts the manager if needed.
        """
        self.start()
        wanted = self.matching(servers) if servers is not None else list(self.connections.values())
        pending = [c for c in wanted if not c.settled]
        if pending:
            waiters = {asyncio.ensure_future(c.wait_settled()) for c in pending}
            try:
                await asyncio.wait(waiters, timeout=max(timeout_s, 0))
            finally:
                for waiter in waiters:
                    waiter.cancel()
        self._report_failures()

    def on_ready(self, callback: Callable[[McpManager], None]) -> None:
        """Call ``callback(manager)`` once, when :meth:`ready` has waited (the main session adds its tools)."""
        self._ready_callbacks.append(callback)

    async def ready(self) -> None:
        """The first time: wait for all servers (at most ``ready_timeout_s``), then run the ``on_ready`` callbacks.

        Later calls return at once. The main session calls this before its
        first model request, so that its tool list is settled from the start.
        """
        if self._ready_done:
            return
        if self._ready_lock is None:
            self._ready_lock = asyncio.Lock()
        async with self._ready_lock:
            if self._ready_done:
                return
            await self.wait_for(None, self.ready_timeout_s)
            self._ready_done = True
            for callback in self._ready_callbacks:
                callback(self)

    def matching(self, patterns: Iterable[str]) -> list[McpConnection]:
        """The connections whose names contain any of ``patterns`` (ignoring case)."""
        lowered = [p.lower() for p in patterns]
        return [c for name, c in self.connections.items() if any(p in name.lower() for p in lowered)]

    async def add_server(self, config: McpServerConfig, *, timeout_s: float | None = None) -> McpConnection:
        """Connect one more server (an agent's inline server) and wait for it, bounded. Not in :attr:`connections`."""
        connection = self._new_connection(config)
        _quiet_sdk_logging()
        connection.start()
        try:
            await asyncio.wait_for(connection.wait_settled(), timeout=timeout_s or self.connect_timeout_s)
        except TimeoutError:
            pass
        return connection

    async def reconnect(self, name: str) -> McpConnection:
        """Disconnect server ``name`` and connect it again (bounded wait); it is enabled again."""
        old = self.connections[name]
        await old.aclose()
        self._tool_cache.pop(f"{id(old)}", None)
        self._reported.discard(name)
        self.disabled.discard(name)
        connection = self._new_connection(old.config)
        self.connections[name] = connection
        connection.start()
        try:
            await asyncio.wait_for(connection.wait_settled(), timeout=self.connect_timeout_s)
        except TimeoutError:
            pass
        self._report_failures()
        return connection

    async def set_servers(self, configs: Mapping[str, McpServerConfig], *,
                          wait: bool = True) -> tuple[list[str], list[str]]:
        """The SDKs' ``setMcpServers``: ``configs`` replace the :attr:`replaceable` servers. Returns the names
        added (new, changed, or taken over from the start's servers) and removed, each sorted.

        A removed server is closed; an added one connects (replacing a server of that name unless its
        connection is the same and up); an unchanged one stays connected. With ``wait`` the call waits,
        bounded, until the added servers are connected or failed.
        """
        self.start()
        removed = sorted(name for name in self.replaceable if name in self.connections and name not in configs)
        for name in removed:
            await self._drop(name)
        added: list[str] = []
        for name, config in configs.items():
            old = self.connections.get(name)
            if name in self.replaceable and old is not None and same_server(old.config, config):
                continue
            added.append(name)
            if old is not None and same_server(old.config, config) and old.status == "connected" \
                    and name not in self.disabled:
                continue  # a start server taken over as it is: it stays connected
            if old is not None:
                await self._drop(name)
            connection = self._new_connection(config)
            self.connections[name] = connection
            connection.start()
        self.replaceable = set(configs)
        started = [self.connections[name] for name in added if not self.connections[name].settled]
        if wait and started:
            waiters = {asyncio.ensure_future(c.wait_settled()) for c in started}
            try:
                await asyncio.wait(waiters, timeout=self.connect_timeout_s)
            finally:
                for waiter in waiters:
                    waiter.cancel()
        self._report_failures()
        return sorted(added), removed

    async def _drop(self, name: str) -> None:
        connection = self.connections.pop(name)
        self._tool_cache.pop(f"{id(connection)}", None)
        self._reported.discard(name)
        self.disabled.discard(name)
        await connection.aclose()

    async def disable(self, name: str) -> None:
        """Disconnect server ``name`` and keep it off (its tools leave the session) until re-enabled."""
        connection = self.connections[name]
        self.disabled.add(name)
        await connection.aclose()
        self._tool_cache.pop(f"{id(connection)}", None)

    async def aclose(self) -> None:
        """Disconnect every server and stop the stdio ones. Safe to call twice."""
        self._closed = True
        await asyncio.gather(*(c.aclose() for c in self.connections.values()), return_exceptions=True)

    # -- what the session sees ------------------------------------------------------------------

    def status(self) -> dict[str, dict[str, Any]]:
        """``{name: {"status": pending|connected|failed, "error": reason|None, "tools": n}}``."""
        return {
            name: {"status": c.status, "error": c.error, "tools": len(c.tools)} for name, c in self.connections.items()
        }

    def server_statuses(self) -> list[dict[str, str]]:
        """The ``mcp_servers`` list of stream-json's init message: ``[{"name", "status"}]``."""
        return [{"name": name, "status": c.status} for name, c in self.connections.items()]

    def instructions(self) -> dict[str, str]:
        """The ``instructions`` each connected server gave at initialisation (for the system prompt)."""
        out: dict[str, str] = {}
        for name, connection in self.connections.items():
            text = connection.instructions
            if connection.status == "connected" and text:
                out[name] = text
        return out

    def connected(self) -> list[str]:
        return [name for name, c in self.connections.items() if c.status == "connected" and name not in self.disabled]

    def tools(self, servers: Iterable[str] | None = None) -> list[McpTool]:
        """The catui tools of the connected servers (all, or those named exactly), in server order."""
        names = list(self.connections) if servers is None else [s for s in servers if s in self.connections]
        out: list[McpTool] = []
        for name in names:
            out.extend(self.tools_of(self.connections[name]))
        return out

    def tools_of(self, connection: McpConnection) -> list[McpTool]:
        """One connection's tools (built once); an empty list unless it is connected."""
        if connection.status != "connected" or connection.name in self.disabled:
            return []
        key = f"{id(connection)}"
        cached = self._tool_cache.get(key)
        if cached is None:
            cached = []
            seen: set[str] = set()
            for server_tool in connection.tools:
                tool = make_mcp_tool(connection, server_tool)
                if len(tool.name) > MAX_TOOL_NAME_CHARS:
                    self._warn(
                        f"MCP tool '{server_tool.name}' of server '{connection.name}' is left out: its name "
                        f"{tool.name} is longer than {MAX_TOOL_NAME_CHARS} characters; shorten the server's name"
                    )
                    continue
                if tool.name in seen:
                    continue
                seen.add(tool.name)
                cached.append(tool)
            self._tool_cache[key] = cached
        return cached

    def _report_failures(self) -> None:
        for name, connection in self.connections.items():
            if connection.status == "failed" and name not in self._reported:
                self._reported.add(name)
                self._warn(f"MCP server '{name}' failed to connect: {connection.error}")

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        if self.on_warning is not None:
            self.on_warning(message)
