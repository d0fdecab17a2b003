"""ListMcpResourcesTool / ReadMcpResourceTool through the real CLI, a loopback Anthropic server and a real
MCP server (the `mcp` SDK's, as a stdio subprocess) that exposes a resource."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env

SERVERS = Path(__file__).parent / "support" / "mcp_servers"


def make_project(tmp_path: Path, servers: dict[str, Any]) -> Path:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    (project / ".claude" / "settings.local.json").write_text(
        json.dumps({"enableAllProjectMcpServers": True}), encoding="utf-8"
    )
    return project


def stdio_server(**env: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVERS / "tools_server.py")], "env": env}


def call(tool: str, tool_input: dict[str, Any], tool_id: str) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "id": tool_id, "name": tool, "input": tool_input}]}


def run(tmp_path: Path, project: Path, turns: list[dict[str, Any]]) -> tuple[AnthropicTestServer, dict[str, Any]]:
    """Run ``catui -p`` against a scripted loopback server; the server and the tool results by tool_use id."""
    script = {"turns": [*turns, {"content": [{"type": "text", "text": "Finished."}]}]}
    with AnthropicTestServer(script) as server:
        done = subprocess.run(
            [sys.executable, "-m", "catui", "-p", "look at the resources", "--output-format", "stream-json",
             "--verbose"],
            cwd=project, env=cli_env(tmp_path, server, CATUI_MCP_TIMEOUT_MS="30000"),
            capture_output=True, text=True, timeout=120,
        )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert events[-1]["result"] == "Finished."
    results: dict[str, Any] = {"init-tools": events[0]["tools"]}
    for event in events:
        if event["type"] == "user":
            for block in event["message"]["content"]:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
                    results[block["tool_use_id"]] = (bool(block.get("is_error")), text)
    return server, results


def test_list_and_read_resources_of_a_real_server(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"notes": stdio_server()})
    server, results = run(tmp_path, project, [
        call("ListMcpResourcesTool", {}, "all"),
        call("ListMcpResourcesTool", {"server": "notes"}, "one"),
        call("ReadMcpResourceTool", {"server": "notes", "uri": "notes://readme"}, "read"),
        call("ReadMcpResourceTool", {"server": "elsewhere", "uri": "notes://readme"}, "no-server"),
        call("ReadMcpResourceTool", {"server": "notes", "uri": "notes://missing"}, "no-resource"),
        call("ListMcpResourcesTool", {"server": "elsewhere"}, "list-no-server"),
        call("ReadMcpResourceTool", {"server": "notes"}, "no-uri"),
    ])
    listed = [{"uri": "notes://readme", "name": "readme", "mimeType": "text/plain",
               "description": "The project notes.", "server": "notes"}]
    assert results["all"] == (False, json.dumps(listed))
    assert results["one"] == (False, json.dumps(listed))
    assert json.loads(results["read"][1]) == {
        "contents": [{"uri": "notes://readme", "mimeType": "text/plain", "text": "Remember the milk."}]
    }
    assert results["no-server"] == (
        True, 'ReadMcpResourceTool: no MCP server named "elsewhere"; the servers are: notes'
    )
    error, text = results["no-resource"]
    assert error and "MCP server 'notes' failed to read resource notes://missing" in text
    assert results["list-no-server"][0] and 'no MCP server named "elsewhere"' in results["list-no-server"][1]
    assert results["no-uri"][0] and "uri" in results["no-uri"][1]
    assert {"ListMcpResourcesTool", "ReadMcpResourceTool", "mcp__notes__echo"} <= set(results["init-tools"])
    # Offered among the built-in tools, sorted by name, ahead of the server's own tools.
    names = [t["name"] for t in server.bodies()[0]["tools"]]
    builtin = [n for n in names if not n.startswith("mcp__")]
    assert builtin == sorted(builtin) and {"ListMcpResourcesTool", "ReadMcpResourceTool"} <= set(builtin)
    assert names[: len(builtin)] == builtin and "mcp__notes__echo" in names[len(builtin):]
    schemas = {t["name"]: t["input_schema"] for t in server.bodies()[0]["tools"]}
    assert schemas["ReadMcpResourceTool"]["required"] == ["server", "uri"]
    assert "required" not in schemas["ListMcpResourcesTool"]
    assert schemas["ListMcpResourcesTool"]["additionalProperties"] is False


def test_servers_without_resources_list_nothing(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"plain": stdio_server(MCP_TEST_NO_RESOURCES="1")})
    _server, results = run(tmp_path, project, [call("ListMcpResourcesTool", {}, "all")])
    assert results["all"][0] is False and results["all"][1].startswith("No MCP resources found")


def test_no_resource_tools_without_mcp_servers(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    server, _results = run(tmp_path, project, [])
    names = [t["name"] for t in server.bodies()[0]["tools"]]
    assert "ListMcpResourcesTool" not in names and "ReadMcpResourceTool" not in names
    assert "EnterWorktree" in names and "ExitWorktree" in names
