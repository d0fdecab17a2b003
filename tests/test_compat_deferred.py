"""Point 9: deferred tools and ToolSearch, through the real CLI against the loopback Anthropic server.

The current profile sends the short list and names the rest in ToolSearch's description; ToolSearch loads
them (``select:`` and words) with ``tool_reference`` results, and a loaded tool is sent from the next request.
The 2.1.92 profile defers MCP tools only when they would take more than a tenth of the context window.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, git_repo
from tests.support.compat_cli import (
    CURRENT,
    result_text,
    stream_run,
    text,
    tool_names,
    tool_results,
    tool_schema,
)

MCP_SERVER = Path(__file__).parent / "support" / "mcp_servers" / "tools_server.py"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path)


def tool_use(tool_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": args}


def run_calls(tmp_path: Path, repo: Path, calls: list[dict[str, Any]], *args: str,
              **extra: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The main agent makes ``calls`` one per turn, then answers; the stream-json lines and the requests."""
    # Turns are used once each, in order: one call per turn, then the answer.
    turns = [{"match": {"last_is_tool_result": i > 0}, "content": [call]} for i, call in enumerate(calls)]
    script = {"turns": [*turns, {"match": {"last_is_tool_result": True}, "content": text("done"), "repeat": True}]}
    with AnthropicTestServer(script) as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **extra), "Go",
                                 "--permission-mode", "bypassPermissions", *args)
        assert done.returncode == 0, done.stderr
        return lines, server.bodies()


def test_current_profile_sends_the_short_list(tmp_path: Path, repo: Path) -> None:
    _, bodies = run_calls(tmp_path, repo, [tool_use("toolu_1", "Read", file_path=str(repo / "main.py"))], **CURRENT)
    first = bodies[0]
    # Skill (the built-in workflow-authoring skill) and Workflow join in the observed order (catui.workflows).
    assert tool_names(first) == ["Agent", "Bash", "Edit", "ListAgents", "Read", "Skill", "ToolSearch", "Workflow",
                                 "DeferredToolPlaceholder", "Write"]
    placeholder = tool_schema(first, "DeferredToolPlaceholder")
    assert placeholder["defer_loading"] is True and placeholder["input_schema"]["properties"] == {}
    search = tool_schema(first, "ToolSearch")
    assert search["input_schema"]["required"] == ["query"]
    assert search["input_schema"]["properties"]["max_results"] == {
        "default": 5, "description": search["input_schema"]["properties"]["max_results"]["description"],
        "type": "number"}
    deferred = search["description"].split("Deferred tools:\n", 1)[1].split("\n")
    assert {"CronCreate", "CronDelete", "CronList", "EnterWorktree", "ExitWorktree", "NotebookEdit", "SendMessage",
            "TaskStop", "WebFetch"} <= set(deferred)


def test_select_loads_tools_into_the_next_request(tmp_path: Path, repo: Path) -> None:
    calls = [tool_use("toolu_1", "ToolSearch", query="select:SendMessage,TaskStop")]
    lines, bodies = run_calls(tmp_path, repo, calls, **CURRENT)
    (block, _), = tool_results(lines)
    assert block["content"] == [{"type": "tool_reference", "tool_name": "SendMessage"},
                                {"type": "tool_reference", "tool_name": "TaskStop"},
                                {"type": "text", "text": "Tool loaded."}]
    after = bodies[1]
    assert after["messages"][-1]["content"][0]["content"] == block["content"]
    assert tool_names(after) == ["Agent", "Bash", "Edit", "ListAgents", "Read", "SendMessage", "Skill", "TaskStop",
                                 "ToolSearch", "Workflow", "DeferredToolPlaceholder", "Write"]
    schema = tool_schema(after, "SendMessage")["input_schema"]
    assert list(schema["properties"]) == ["to", "summary", "message", "notify_when_idle"]
    assert schema["required"] == ["to", "message"] and schema["properties"]["to"]["maxLength"] == 300
    assert "SendMessage" not in tool_schema(after, "ToolSearch")["description"].split("Deferred tools:")[1]


def test_keyword_search_and_an_unloaded_call(tmp_path: Path, repo: Path) -> None:
    calls = [tool_use("toolu_1", "ToolSearch", query="cron", max_results=2),
             tool_use("toolu_2", "TaskStop", task_id="nope")]
    lines, bodies = run_calls(tmp_path, repo, calls, **CURRENT)
    search, stop = tool_results(lines)
    assert [b.get("tool_name") for b in search[0]["content"]] == ["CronCreate", "CronDelete", None]
    assert {"CronCreate", "CronDelete"} <= set(tool_names(bodies[1])) and "CronList" not in tool_names(bodies[1])
    # A deferred tool called before it was loaded still runs.
    assert "No such tool" not in result_text(stop[0]) and "nope" in result_text(stop[0])


def mcp_settings(repo: Path) -> str:
    (repo / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"tools": {"command": sys.executable, "args": [str(MCP_SERVER)]}}}), encoding="utf-8")
    return json.dumps({"enableAllProjectMcpServers": True, "permissions": {"allow": ["mcp__tools"]}})


def test_old_profile_defers_mcp_tools_only_over_the_threshold(tmp_path: Path, repo: Path) -> None:
    settings = mcp_settings(repo)
    calls = [tool_use("toolu_1", "Read", file_path=str(repo / "main.py"))]
    _, bodies = run_calls(tmp_path, repo, calls, "--settings", settings, CATUI_MCP_TIMEOUT_MS="60000")
    roomy = tool_names(bodies[-1])
    assert "mcp__tools__echo" in roomy and "ToolSearch" not in roomy and "DeferredToolPlaceholder" not in roomy
    _, bodies = run_calls(tmp_path, repo, calls, "--settings", settings, CATUI_CONTEXT_WINDOW="40000",
                          ENABLE_TOOL_SEARCH="auto:1", CATUI_MCP_TIMEOUT_MS="60000")
    tight = tool_names(bodies[-1])
    assert not [n for n in tight if n.startswith("mcp__")]
    assert "ToolSearch" in tight and "DeferredToolPlaceholder" in tight
    assert "mcp__tools__echo" in tool_schema(bodies[-1], "ToolSearch")["description"]
    # Without MCP servers the request is as it always was.
    plain = AnthropicTestServer({"turns": [{"content": text("hi"), "repeat": True}]})
    with plain:
        done, _ = stream_run(repo.parent / "repo", cli_env(tmp_path, plain), "Hello", "--strict-mcp-config")
        assert done.returncode == 0, done.stderr
        assert "ToolSearch" not in tool_names(plain.bodies()[0])
