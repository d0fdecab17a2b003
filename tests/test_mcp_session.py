"""MCP in a whole session: a .mcp.json project, the scripted model calling mcp__<server>__<tool>, rules,
and what the sub-agent runtime asks of MCP (required servers, an agent's own servers)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from catui.agents.definition import AgentDefinition
from catui.app import AgentApp, RunOptions, build_app, first_prompt_content
from catui.mcp.config import McpServerConfig
from catui.mcp.install import main_wait_seconds
from catui.mcp.manager import McpManager
from catui.mcp.subagents import check_required_servers, child_mcp_tools, required_servers_error
from catui.models.resolve import clear_provider_cache
from catui.session.events import Event, ResultEvent, ToolEndEvent

SERVERS = Path(__file__).parent / "support" / "mcp_servers"
GUARD_S = 30.0


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("CATUI_MCP_TIMEOUT_MS", str(int(GUARD_S * 1000)))
    yield
    clear_provider_cache()


def server_entry(**env: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVERS / "tools_server.py")], "env": env}


def make_project(tmp_path: Path, servers: dict[str, Any], settings: dict[str, Any]) -> Path:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.local.json").write_text(json.dumps(settings), encoding="utf-8")
    return project


def make_app(tmp_path: Path, project: Path, turns: list[dict[str, Any]]) -> AgentApp:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": turns}), encoding="utf-8")
    return build_app(RunOptions(cwd=project, model=f"scripted:{script}", write_transcript=False))


async def run(app: AgentApp, prompt: str) -> list[Event]:
    return [event async for event in app.session.run(first_prompt_content(app, prompt))]


async def test_the_model_calls_mcp_tools_under_the_permission_rules(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"tools": server_entry(MCP_TEST_MARK="project-mark")}, {
        "enabledMcpjsonServers": ["tools"],
        "permissions": {"allow": ["mcp__tools"], "deny": ["mcp__tools__add"]},
    })
    app = make_app(tmp_path, project, [
        # The deny rule names the whole tool, so `add` is not offered at all (Claude Code's behaviour).
        {"match": {"last_is_tool_result": False, "tools_include": ["mcp__tools__echo"],
                   "tools_exclude": ["mcp__tools__add"]},
         "content": [
             {"type": "tool_use", "id": "toolu_echo", "name": "mcp__tools__echo", "input": {"text": "hello mcp"}},
             {"type": "tool_use", "id": "toolu_add", "name": "mcp__tools__add", "input": {"a": 1, "b": 2}},
             {"type": "tool_use", "id": "toolu_env", "name": "mcp__tools__env_value", "input": {}},
         ]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "All done."}]},
    ])
    manager = app.services.mcp
    assert isinstance(manager, McpManager)
    assert app.services.subagents is not None and app.services.subagents.runtime.deps.mcp is manager
    try:
        events = await run(app, "Use the MCP tools")
        ends = {e.tool_use_id: e for e in events if isinstance(e, ToolEndEvent)}
        assert (ends["toolu_echo"].is_error, ends["toolu_echo"].content) == (False, "hello mcp")
        assert ends["toolu_env"].content == "project-mark"
        assert ends["toolu_add"].is_error and "No such tool available: mcp__tools__add" in str(ends["toolu_add"].content)
        result = events[-1]
        assert isinstance(result, ResultEvent) and not result.is_error and result.result == "All done."
        assert result.permission_denials == []
        # MCP tools follow the built-in tools, and the list stays as it was for the next run.
        names = [t.name for t in app.session.tools]
        first_mcp = min(i for i, n in enumerate(names) if n.startswith("mcp__"))
        assert all(n.startswith("mcp__") for n in names[first_mcp:]) and "Read" in names[:first_mcp]
        assert manager.server_statuses() == [{"name": "tools", "status": "connected"}]
    finally:
        await app.aclose()
        await manager.aclose()


async def test_a_failed_server_leaves_the_session_working(tmp_path: Path) -> None:
    project = make_project(tmp_path, {
        "broken": {"command": sys.executable, "args": [str(SERVERS / "broken_server.py")]},
        "bad entry": {"args": ["no command"]},
    }, {"enableAllProjectMcpServers": True})
    app = make_app(tmp_path, project, [{"content": [{"type": "text", "text": "Still here."}]}])
    warnings: list[str] = []
    manager = app.services.mcp
    assert manager is not None
    manager.on_warning = warnings.append
    try:
        assert any("'bad entry'" in w and ".mcp.json" in w for w in app.settings.warnings)
        events = await run(app, "hello")
        assert isinstance(events[-1], ResultEvent) and events[-1].result == "Still here."
        assert not any(t.name.startswith("mcp__") for t in app.session.tools)
        assert any("'broken' failed to connect" in w and "MCP_TEST_TOKEN" in w for w in warnings)
    finally:
        await app.aclose()
        await manager.aclose()


async def test_no_servers_means_no_manager(tmp_path: Path) -> None:
    project = tmp_path / "plain"
    project.mkdir()
    app = make_app(tmp_path, project, [{"content": [{"type": "text", "text": "ok"}]}])
    try:
        assert app.services.mcp is None
    finally:
        await app.aclose()


def test_main_session_wait_setting() -> None:
    assert main_wait_seconds({}) == 5.0
    assert main_wait_seconds({"CATUI_MCP_TIMEOUT_MS": "250"}) == 0.25
    assert main_wait_seconds({"CATUI_MCP_TIMEOUT_MS": "soon"}) == 5.0


def stdio(name: str, **env: str) -> McpServerConfig:
    return McpServerConfig(name, "stdio", command=sys.executable, args=(str(SERVERS / "tools_server.py"),), env=env)


async def test_required_servers_wait_and_name_the_missing_ones(tmp_path: Path) -> None:
    manager = McpManager({"github-enterprise": stdio("github-enterprise", MCP_TEST_START_DELAY="0.5"),
                          "broken": McpServerConfig("broken", "stdio", command=sys.executable,
                                                    args=(str(SERVERS / "broken_server.py"),))},
                         cwd=tmp_path)
    try:
        manager.start()
        # "GitHub" matches "github-enterprise" (contained, ignoring case) once it has connected.
        assert await check_required_servers(manager, ["GitHub"], timeout_s=GUARD_S) is None
        error = await check_required_servers(manager, ["github", "broken", "jira"], agent_type="needy",
                                             timeout_s=GUARD_S)
        assert error is not None
        assert "Agent type 'needy' requires MCP servers matching: broken, jira." in error
        assert "Connected MCP servers with tools: github-enterprise." in error
        assert "Server 'broken' failed" in error and "MCP_TEST_TOKEN" in error
        assert required_servers_error(None, ["jira"]) is not None
        assert required_servers_error(manager, []) is None
    finally:
        await manager.aclose()


async def test_an_agents_own_servers_named_and_inline(tmp_path: Path) -> None:
    manager = McpManager({"shared": stdio("shared")}, cwd=tmp_path)
    definition = AgentDefinition(
        agent_type="helper", description="d", prompt="p",
        mcp_servers=["shared", "unknown", {"private": {"command": sys.executable,
                                                       "args": [str(SERVERS / "tools_server.py")],
                                                       "env": {"MCP_TEST_MARK": "inline"}}}],
    )
    child = await child_mcp_tools(manager, definition, timeout_s=GUARD_S)
    try:
        names = {t.name for t in child.tools}
        assert {"mcp__shared__echo", "mcp__private__echo"} <= names
        assert any("'unknown'" in e and "not configured" in e for e in child.errors)
        private = next(t for t in child.tools if t.name == "mcp__private__env_value")
        from catui.tools.base import ToolContext

        result = await private.call(private.input_model.model_validate({}), ToolContext(cwd=tmp_path,
                                                                                          project_root=tmp_path))
        assert result.content == "inline"
        assert "private" not in manager.connections  # the child's server is its own
    finally:
        await child.aclose()
        await manager.aclose()
    assert child.owned == []
    nothing = await child_mcp_tools(manager, AgentDefinition(agent_type="plain", description="d", prompt="p"))
    assert nothing.tools == [] and nothing.errors == []


def agent_call(tool_id: str, prompt: str, agent_type: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "Agent",
            "input": {"description": f"Run {agent_type}", "prompt": prompt, "subagent_type": agent_type}}


async def test_sub_agents_get_required_and_own_mcp_servers(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"tools": server_entry()}, {
        "enableAllProjectMcpServers": True,
        "permissions": {"allow": ["mcp__tools", "mcp__scratch"]},
    })
    agents = {
        "needs-tools": {"description": "Uses the tools server.", "prompt": "You are needs-tools.",
                        "requiredMcpServers": ["TOOLS"], "tools": ["mcp__tools"]},
        "needs-jira": {"description": "Needs jira.", "prompt": "You are needs-jira.", "requiredMcpServers": ["jira"]},
        "own-server": {"description": "Brings its server.", "prompt": "You are own-server.", "tools": ["Read"],
                       "mcpServers": [{"scratch": {"command": sys.executable,
                                                   "args": [str(SERVERS / "tools_server.py")],
                                                   "env": {"MCP_TEST_MARK": "scratch-mark"}}}]},
    }
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": [
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [agent_call("toolu_1", "CHILD ONE", "needs-tools"), agent_call("toolu_2", "CHILD TWO", "needs-jira"),
                     agent_call("toolu_3", "CHILD THREE", "own-server")]},
        {"match": {"first_user_contains": "CHILD ONE", "last_is_tool_result": False,
                   "tools_include": ["mcp__tools__add"], "tools_exclude": ["Read"]},
         "content": [{"type": "tool_use", "name": "mcp__tools__add", "input": {"a": 5, "b": 6}}]},
        {"match": {"first_user_contains": "CHILD ONE", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "child one got its sum"}]},
        {"match": {"first_user_contains": "CHILD THREE", "last_is_tool_result": False,
                   "tools_include": ["Read", "mcp__scratch__env_value"], "tools_exclude": ["mcp__tools__add"]},
         "content": [{"type": "tool_use", "name": "mcp__scratch__env_value", "input": {}},
                     {"type": "tool_use", "name": "mcp__scratch__pid", "input": {}}]},
        {"match": {"first_user_contains": "CHILD THREE", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "child three read its mark"}]},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "parent done"}]},
    ]}), encoding="utf-8")
    app = build_app(RunOptions(cwd=project, model=f"scripted:{script}", write_transcript=False, flag_agents=agents))
    manager = app.services.mcp
    assert manager is not None
    try:
        events = await run(app, "PARENT")
        ends = {e.tool_use_id: e for e in events if isinstance(e, ToolEndEvent)}
        child_results = [e for e in ends.values() if e.agent_id is not None]
        assert any(e.name == "mcp__tools__add" and e.content == "11" for e in child_results)
        assert any(e.name == "mcp__scratch__env_value" and e.content == "scratch-mark" for e in child_results)
        assert "child one got its sum" in str(ends["toolu_1"].content) and not ends["toolu_1"].is_error
        assert ends["toolu_2"].is_error and "requires MCP servers matching: jira" in str(ends["toolu_2"].content)
        assert "child three read its mark" in str(ends["toolu_3"].content)
        # The child's own server was its alone and stopped with it.
        assert "scratch" not in manager.connections
        scratch_pid = int(next(str(e.content) for e in child_results if e.name == "mcp__scratch__pid"))
        with pytest.raises(ProcessLookupError):
            os.kill(scratch_pid, 0)
        assert not any(t.name.startswith("mcp__scratch") for t in app.session.tools)
        assert isinstance(events[-1], ResultEvent) and events[-1].result == "parent done"
    finally:
        await app.aclose()
        await manager.aclose()
