"""Wiring MCP into an application: read the configuration, start the manager, give the main session its tools.

``catui.app.build.build_app`` calls :func:`install_mcp` once the main session
exists. When no server is configured nothing happens (and ``mcp`` is never
imported). Otherwise the manager is returned (the application keeps it in
``AppServices.mcp`` and hands it on to the sub-agent runtime); connections start at once when an event
loop is running (else at the first turn), and before the main session's first
model request it waits for them, at most ``CATUI_MCP_TIMEOUT_MS`` (5 s by
default), and appends the connected servers' tools to its tool list. The list
does not change after that: a server that connects later serves sub-agents
only.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from catui.config.settings import Settings
from catui.mcp.config import (
    McpConfigError,
    McpConfigResult,
    SdkTransport,
    collect_server_configs,
    parse_server_config,
)

if TYPE_CHECKING:
    from catui.mcp.manager import McpManager
    from catui.tools.base import Tool

DEFAULT_MAIN_WAIT_S = 5.0


def main_wait_seconds(env: Mapping[str, str]) -> float:
    """``CATUI_MCP_TIMEOUT_MS`` in seconds (5 s when unset or not a number)."""
    raw = env.get("CATUI_MCP_TIMEOUT_MS", "").strip()
    try:
        return max(int(raw), 0) / 1000 if raw else DEFAULT_MAIN_WAIT_S
    except ValueError:
        return DEFAULT_MAIN_WAIT_S


class McpSession(Protocol):
    """The main session as MCP's wiring uses it (``catui.session.session.Session``)."""

    @property
    def tools(self) -> list[Tool]: ...

    def set_tools(self, tools: list[Tool]) -> None: ...

    def add_before_turn(self, step: Callable[[], Awaitable[None]]) -> None: ...


def install_mcp(
    session: McpSession,
    settings: Settings,
    *,
    cwd: Path,
    project_root: Path,
    env: Mapping[str, str],
    sources: Sequence[str] = ("user", "project", "local"),
    extra_servers: Mapping[str, Any] | None = None,
    strict: bool = False,
    sdk_transport: SdkTransport | None = None,
) -> McpManager | None:
    """Set up MCP for the main ``session``; returns the manager, or None without servers.

    The servers come from the setting ``sources`` and ``.mcp.json`` files seen from ``cwd`` up to
    ``project_root``. ``extra_servers`` are more ``{name: config}`` entries (``--mcp-config``, SDK
    options); they win over the files, and with ``strict`` (``--strict-mcp-config``)
    they are the only ones. ``sdk_transport`` reaches servers of type ``sdk``
    (the control protocol's). Configuration problems are appended to
    ``settings.warnings``, where the CLI reports them.
    """
    env = dict(env or os.environ)
    cwd = Path(cwd).resolve()
    found = McpConfigResult() if strict else collect_server_configs(
        settings, cwd, project_root=Path(project_root), sources=tuple(sources), env=env,
    )
    _add_extra(found, extra_servers, env)
    settings.warnings.extend(found.warnings)
    if not found.servers:
        return None
    # lazy: the manager with its tools and connections (~13 ms in `catui -p`) only when a server is configured
    from catui.mcp.manager import McpManager
    from catui.mcp.resources import resource_tools

    manager = McpManager(found.servers, cwd=cwd, env=env, warnings=found.warnings, sdk_transport=sdk_transport)
    manager.ready_timeout_s = main_wait_seconds(env)

    def add_tools(ready: McpManager) -> None:
        present = {t.name for t in session.tools}
        new = [t for t in ready.tools() if t.name not in present]
        # Claude Code offers the resource tools whenever MCP servers are configured, among its built-in tools.
        resource = [t for t in resource_tools(ready) if t.name not in present]
        if new or resource:
            # Claude Code's order: the built-in tools sorted by name, then the MCP tools (spec 9.3).
            builtin = sorted([*(t for t in session.tools if not t.name.startswith("mcp__")), *resource],
                             key=lambda t: t.name)  # fmt: skip
            server_tools = [t for t in session.tools if t.name.startswith("mcp__")]
            session.set_tools([*builtin, *server_tools, *new])

    manager.on_ready(add_tools)
    session.add_before_turn(manager.ready)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # no loop yet (a synchronous caller): the first turn starts the connections
    else:
        manager.start()
    return manager


def _add_extra(found: McpConfigResult, extra: Mapping[str, Any] | None, env: Mapping[str, str]) -> None:
    for name, raw in (extra or {}).items():
        try:
            config, warnings = parse_server_config(str(name), raw, origin="MCP options", scope="dynamic", env=env)
        except McpConfigError as exc:
            found.warnings.append(f"{exc}; this server is left out")
            continue
        found.warnings.extend(warnings)
        found.servers.pop(config.name, None)
        found.servers[config.name] = config
