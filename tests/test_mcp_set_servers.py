"""McpManager.set_servers (the SDKs' setMcpServers) against real stdio MCP servers: which servers a call
replaces, which connections it keeps, and what it reports as added and removed (Claude Code 2.1.332's rules,
docs/decisions.md)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from catui.mcp.config import McpServerConfig
from catui.mcp.manager import McpManager
from catui.tools.base import ToolContext

SERVERS = Path(__file__).parent / "support" / "mcp_servers"

pytestmark = pytest.mark.asyncio


def stdio(name: str, **env: str) -> McpServerConfig:
    return McpServerConfig(name, "stdio", command=sys.executable, args=(str(SERVERS / "tools_server.py"),), env=env,
                           scope="dynamic", origin="setMcpServers")


async def server_pid(manager: McpManager, server: str, cwd: Path) -> int:
    """The process id of ``server``, asked of it through its ``pid`` tool."""
    (tool,) = [t for t in manager.tools([server]) if t.name.endswith("__pid")]
    result = await tool.call(tool.input_model.model_validate({}), ToolContext(cwd=cwd, project_root=cwd))
    return int(str(result.content))


def running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_a_start_server_is_taken_over_then_removed_and_a_changed_one_replaced(tmp_path: Path) -> None:
    start = McpServerConfig("opt", "stdio", command=sys.executable, args=(str(SERVERS / "tools_server.py"),),
                            origin="MCP options")
    manager = McpManager({"opt": start}, cwd=tmp_path)
    try:
        await manager.wait_for(None, 30)
        first = manager.connections["opt"]
        assert first.status == "connected"
        # a call that leaves the start's server out does not remove it
        assert await manager.set_servers({"one": stdio("one")}) == (["one"], [])
        assert manager.connections["opt"] is first and manager.connections["one"].status == "connected"
        # naming it takes it over: listed as added, its connection kept
        one = manager.connections["one"]
        one_pid = await server_pid(manager, "one", tmp_path)
        assert await manager.set_servers({"opt": stdio("opt"), "one": stdio("one")}) == (["opt"], [])
        assert manager.connections["opt"] is first and manager.connections["one"] is one
        # a changed config is added (not removed) and connects anew
        assert await manager.set_servers({"opt": stdio("opt"), "one": stdio("one", MCP_TEST_MARK="x")}) == (
            ["one"], [])
        assert manager.connections["one"] is not one and manager.connections["one"].status == "connected"
        assert not running(one_pid)  # the old server process was stopped
        assert await server_pid(manager, "one", tmp_path) != one_pid
        opt_pid = await server_pid(manager, "opt", tmp_path)
        # now that a call named it, leaving it out removes it
        assert await manager.set_servers({}) == ([], ["one", "opt"])
        assert manager.connections == {} and manager.tools() == [] and not running(opt_pid)
    finally:
        await manager.aclose()


async def test_a_server_that_cannot_start_is_added_and_failed(tmp_path: Path) -> None:
    manager = McpManager({}, cwd=tmp_path)
    try:
        broken = McpServerConfig("broken", "stdio", command=str(tmp_path / "no-such-server"), scope="dynamic")
        assert await manager.set_servers({"broken": broken}) == (["broken"], [])
        assert manager.connections["broken"].status == "failed"
        assert any("broken" in warning for warning in manager.warnings)
    finally:
        await manager.aclose()
