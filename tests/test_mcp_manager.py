"""McpManager against real MCP servers (the official SDK's MCPServer) over stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from catui.mcp.config import McpServerConfig
from catui.mcp.manager import McpManager
from catui.mcp.tools import McpTool
from catui.permissions.context import PermissionContext, PermissionRule
from catui.permissions.rules import parse_rule
from catui.tools.base import ToolContext, ToolResult
from tests.support.mcp_servers.http_server import HttpMcpServer

SERVERS = Path(__file__).parent / "support" / "mcp_servers"
GUARD_S = 30.0  # a broken scenario fails here instead of hanging (not a timing assertion)

# One event loop for the module, so that the tests that only read share one server.
pytestmark = pytest.mark.asyncio(loop_scope="module")


def stdio(name: str, script: str = "tools_server.py", **env: str) -> McpServerConfig:
    return McpServerConfig(name, "stdio", command=sys.executable, args=(str(SERVERS / script),), env=env)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, project_root=tmp_path)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def tools_manager(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpManager]:
    folder = tmp_path_factory.mktemp("shared")
    manager = McpManager({"my server": stdio("my server", MCP_TEST_MARK="from-config")}, cwd=folder)
    await manager.wait_for(None, GUARD_S)
    yield manager
    await manager.aclose()


async def call(tool: McpTool, ctx: ToolContext, **arguments: Any) -> ToolResult:
    return await tool.call(tool.input_model.model_validate(arguments), ctx)


def by_name(manager: McpManager) -> dict[str, McpTool]:
    return {t.name: t for t in manager.tools()}


async def test_tools_are_listed_with_normalised_names_and_the_server_schema(tools_manager: McpManager) -> None:
    assert tools_manager.status()["my server"]["status"] == "connected"
    tools = by_name(tools_manager)
    assert set(tools) == {f"mcp__my_server__{n}" for n in ("echo", "add", "fail_hard", "picture", "env_value",
                                                             "pid", "wait", "crash")}
    echo = tools["mcp__my_server__echo"]
    assert echo.description == "Return the text unchanged."
    api = echo.to_api()
    assert api["input_schema"]["properties"]["text"]["type"] == "string"
    assert api["input_schema"]["required"] == ["text"]
    assert echo.read_only and echo.is_concurrency_safe(echo.input_model.model_validate({"text": "x"}))
    assert not tools["mcp__my_server__add"].read_only
    # The original name goes to the server; the catui name to the model.
    assert tools["mcp__my_server__fail_hard"].tool_name == "fail.hard"
    assert tools_manager.instructions() == {"my server": "Use echo to repeat things back."}


async def test_calls_return_text_images_errors_and_see_the_configured_env(
    tools_manager: McpManager, ctx: ToolContext
) -> None:
    tools = by_name(tools_manager)
    result = await call(tools["mcp__my_server__add"], ctx, a=2, b=40)
    assert (result.content, result.is_error) == ("42", False)

    failed = await call(tools["mcp__my_server__fail_hard"], ctx, reason="no access")
    assert failed.is_error and "refused: no access" in str(failed.content)

    picture = await call(tools["mcp__my_server__picture"], ctx)
    assert isinstance(picture.content, list)
    assert picture.content[0] == {"type": "text", "text": "a pixel"}
    assert picture.content[1]["type"] == "image"
    assert picture.content[1]["source"]["media_type"] == "image/png"

    marked = await call(tools["mcp__my_server__env_value"], ctx)
    assert marked.content == "from-config"


async def test_required_arguments_are_checked_before_the_call(tools_manager: McpManager) -> None:
    from pydantic import ValidationError

    from catui.session.session import format_validation_error

    add = by_name(tools_manager)["mcp__my_server__add"]
    with pytest.raises(ValidationError) as caught:
        add.input_model.model_validate({"a": 1})
    assert "The required parameter `b` is missing" in format_validation_error(add.name, caught.value)
    # Extra properties pass through to the server, which has the last word.
    args = add.input_model.model_validate({"a": 1, "b": 2, "note": "x"})
    assert args.arguments() == {"a": 1, "b": 2, "note": "x"}  # type: ignore[attr-defined]


def rule(text: str, behavior: str) -> PermissionRule:
    return parse_rule(text, behavior, "userSettings")  # type: ignore[arg-type]


async def test_permission_rules_match_mcp_tools(tools_manager: McpManager) -> None:
    tools = by_name(tools_manager)
    echo, add = tools["mcp__my_server__echo"], tools["mcp__my_server__add"]
    ctx = ToolContext(cwd=Path("/"), project_root=Path("/"))

    def decide(tool: McpTool, *rules: PermissionRule, **args: Any) -> str:
        permissions = PermissionContext(rules=tuple(rules))
        return permissions.decide(tool.permission_request(tool.input_model.model_validate(args), ctx)).behavior

    # A server's readOnlyHint does not approve its calls by itself.
    assert decide(echo, text="x") == "ask"
    assert decide(echo, rule("mcp__my_server", "allow"), text="x") == "allow"
    assert decide(add, rule("mcp__my_server__*", "allow"), a=1, b=2) == "allow"
    assert decide(add, rule("mcp__my_server__echo", "allow"), a=1, b=2) == "ask"
    assert decide(add, rule("mcp__my_server__add", "deny"),
                  rule("mcp__my_server", "allow"), a=1, b=2) == "deny"
    assert decide(echo, rule("mcp__other", "deny"), text="x") == "ask"
    # In plan mode the hint lets read-only tools run; the others are refused.
    plan = ToolContext(cwd=Path("/"), project_root=Path("/"), permissions=PermissionContext(mode="plan"))
    assert plan.permissions.decide(echo.permission_request(echo.input_model.model_validate({"text": "x"}),
                                                           plan)).behavior == "allow"
    assert plan.permissions.decide(add.permission_request(add.input_model.model_validate({"a": 1, "b": 2}),
                                                          plan)).behavior != "allow"


async def test_an_abort_stops_a_running_call(tools_manager: McpManager, ctx: ToolContext) -> None:
    wait = by_name(tools_manager)["mcp__my_server__wait"]
    running = asyncio.ensure_future(call(wait, ctx, seconds=GUARD_S * 2))
    await asyncio.sleep(0.2)
    ctx.abort.set()
    result = await asyncio.wait_for(running, GUARD_S)
    assert result.is_error and "Interrupted" in str(result.content)
    # The connection is still usable afterwards.
    ctx.abort.clear()
    echo = by_name(tools_manager)["mcp__my_server__echo"]
    assert (await call(echo, ctx, text="still here")).content == "still here"


async def test_a_server_that_fails_to_start_reports_its_stderr(tmp_path: Path) -> None:
    manager = McpManager(
        {"broken": stdio("broken", "broken_server.py"),
         "absent": McpServerConfig("absent", "stdio", command=str(tmp_path / "no-such-program"))},
        cwd=tmp_path,
    )
    seen: list[str] = []
    manager.on_warning = seen.append
    try:
        await manager.wait_for(None, GUARD_S)
        status = manager.status()
        assert status["broken"]["status"] == "failed"
        assert "MCP_TEST_TOKEN is not set" in status["broken"]["error"]
        assert status["absent"]["status"] == "failed"
        assert "command not found" in status["absent"]["error"]
        assert manager.tools() == []
        assert any("'broken' failed to connect" in w for w in seen)
    finally:
        await manager.aclose()


async def test_a_server_that_crashes_mid_call_gives_an_error_result(tmp_path: Path, ctx: ToolContext) -> None:
    manager = McpManager({"fragile": stdio("fragile")}, cwd=tmp_path)
    try:
        await manager.wait_for(None, GUARD_S)
        tools = by_name(manager)
        result = await asyncio.wait_for(call(tools["mcp__fragile__crash"], ctx), GUARD_S)
        assert result.is_error
        assert "MCP server 'fragile' stopped while running tool 'crash'" in str(result.content)
        assert "about to crash on purpose" in str(result.content)
        assert manager.status()["fragile"]["status"] == "failed"
        again = await call(tools["mcp__fragile__echo"], ctx, text="hello")
        assert again.is_error and "is not connected" in str(again.content)
    finally:
        await manager.aclose()


async def test_wait_for_a_slow_server_and_a_missing_one(tmp_path: Path) -> None:
    manager = McpManager({"slow": stdio("slow", MCP_TEST_START_DELAY="0.5"), "quick": stdio("quick")},
                         cwd=tmp_path)
    try:
        await manager.wait_for(["ghost"], GUARD_S)  # matches no server: returns without waiting for the others
        assert manager.started
        await manager.wait_for(["quick"], GUARD_S)
        assert manager.status()["quick"]["status"] == "connected"
        await manager.wait_for(["SLOW"], 0)  # names match ignoring case; a zero wait leaves it pending
        assert manager.status()["slow"]["status"] in ("pending", "connected")
        await manager.wait_for(["slow"], GUARD_S)
        assert manager.status()["slow"]["status"] == "connected"
    finally:
        await manager.aclose()


async def test_a_server_slower_than_the_connect_timeout_fails(tmp_path: Path) -> None:
    # It sleeps 0.5 s before it even loads, more than twice the limit; then it sees its stdin closed and exits.
    manager = McpManager({"sleepy": stdio("sleepy", MCP_TEST_START_DELAY="0.5")}, cwd=tmp_path,
                         connect_timeout_s=0.2)
    try:
        await manager.wait_for(None, GUARD_S)
        status = manager.status()["sleepy"]
        assert status["status"] == "failed" and "did not connect within 0.2 s" in status["error"]
    finally:
        await manager.aclose()


async def test_streamable_http_server_with_headers(tmp_path: Path, ctx: ToolContext) -> None:
    with HttpMcpServer(required_header="t0ken") as server:
        good = McpServerConfig("web", "http", url=server.url, headers={"Authorization": "Bearer t0ken"})
        bad = McpServerConfig("locked", "http", url=server.url)
        manager = McpManager({"web": good, "locked": bad}, cwd=tmp_path)
        try:
            await manager.wait_for(None, GUARD_S)
            status = manager.status()
            assert status["web"]["status"] == "connected"
            assert status["locked"]["status"] == "failed"
            result = await call(by_name(manager)["mcp__web__add"], ctx, a=20, b=22)
            assert result.content == "42"
        finally:
            await manager.aclose()


async def test_clean_shutdown_stops_processes_and_tasks(tmp_path: Path, ctx: ToolContext) -> None:
    manager = McpManager({"a": stdio("a"), "b": stdio("b")}, cwd=tmp_path)
    await manager.wait_for(None, GUARD_S)
    pids = [int(str((await call(by_name(manager)[f"mcp__{n}__pid"], ctx)).content)) for n in ("a", "b")]
    await manager.aclose()
    await manager.aclose()  # twice is fine
    for pid in pids:
        assert not _process_exists(pid), f"server process {pid} is still there"
    leftovers = [t for t in asyncio.all_tasks() if t.get_name() in ("catui-mcp-a", "catui-mcp-b") and not t.done()]
    assert leftovers == []


async def test_closing_while_a_server_is_still_starting(tmp_path: Path) -> None:
    manager = McpManager({"late": stdio("late", MCP_TEST_START_DELAY="60")}, cwd=tmp_path, connect_timeout_s=120)
    manager.start()
    await asyncio.sleep(0.1)
    # Bounded well below the start delay and the connect timeout: closing does not wait for the start.
    await asyncio.wait_for(manager.aclose(), 10)
    status = manager.status()["late"]
    assert status["status"] == "failed" and "closed before it connected" in status["error"]


def _process_exists(pid: int) -> bool:
    """Alive or a zombie nobody reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
