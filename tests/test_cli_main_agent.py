"""``--agent NAME`` through the real CLI: the main session's requests are the agent's (loopback server)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env
from tests.support.mcp_wait import MCP_WAIT_ENV

HAIKU = "claude-haiku-4-5-20251001"
DONE = {"turns": [{"content": [{"type": "text", "text": "done"}], "repeat": True}]}
REVIEWER = """---
name: reviewer
description: Reviews code.
tools: Read, Grep
model: haiku
permissionMode: plan
effort: medium
initialPrompt: Start by reading README.md.
---
You are the reviewer. Be terse.
"""
HELPER = """---
name: helper
description: Adds to catui's own prompt.
appendSystemPrompt: true
disallowedTools: Bash
hooks:
  UserPromptSubmit:
    - hooks:
        - type: command
          command: echo from-the-agent-hook > hook-ran.txt
---
You also know the project's build system.
"""


def project(tmp_path: Path) -> Path:
    repo = tmp_path / "proj"
    agents = repo / ".claude" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "reviewer.md").write_text(REVIEWER)
    (agents / "helper.md").write_text(HELPER)
    return repo


def run(tmp_path: Path, server: Any, *args: str, prompt: str = "check the diff") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catui", "-p", prompt, *args],
        cwd=project(tmp_path), env=cli_env(tmp_path, server), capture_output=True, text=True, timeout=60,
    )


def user_texts(body: dict[str, Any]) -> list[str]:
    """The first user message's text blocks, reminders left out."""
    blocks = body["messages"][0]["content"]
    return [b["text"] for b in blocks if b["type"] == "text" and not b["text"].startswith("<system-reminder>")]


def test_the_main_session_runs_as_the_agent(tmp_path: Path) -> None:
    with AnthropicTestServer(DONE) as server:
        done = run(tmp_path, server, "--agent", "reviewer", "--output-format", "stream-json", "--verbose")
        (body,) = server.bodies()
    assert done.returncode == 0, done.stderr
    # the body is the whole system prompt: no environment block, no git status
    assert [b["text"] for b in body["system"]] == ["You are the reviewer. Be terse."]
    assert user_texts(body)[-1] == "Start by reading README.md.\n\ncheck the diff"
    assert body["model"] == HAIKU
    assert sorted(t["name"] for t in body["tools"]) == ["Grep", "Read"]
    assert body["output_config"] == {"effort": "medium"}
    init = json.loads(done.stdout.splitlines()[0])
    assert (init["subtype"], init["permissionMode"], init["model"]) == ("init", "plan", HAIKU)
    assert sorted(init["tools"]) == ["Grep", "Read"]


def test_command_line_options_win_over_the_agents(tmp_path: Path) -> None:
    with AnthropicTestServer(DONE) as server:
        done = run(tmp_path, server, "--agent", "reviewer", "--model", "opus", "--effort", "low",
                   "--permission-mode", "acceptEdits", "--append-system-prompt", "Extra rule.",
                   "--output-format", "stream-json", "--verbose")
        (body,) = server.bodies()
    assert done.returncode == 0, done.stderr
    assert body["model"] == "claude-opus-4-6"
    assert body["output_config"] == {"effort": "low"}
    assert [b["text"] for b in body["system"]] == ["You are the reviewer. Be terse.", "Extra rule."]
    assert json.loads(done.stdout.splitlines()[0])["permissionMode"] == "acceptEdits"


def test_append_system_prompt_keeps_catuis_prompt_and_the_agents_hooks_run(tmp_path: Path) -> None:
    with AnthropicTestServer(DONE) as server:
        plain = run(tmp_path, server)
        done = run(tmp_path, server, "--agent", "helper")
        default_body, body = server.bodies()
    assert plain.returncode == 0 and done.returncode == 0, done.stderr
    texts = [b["text"] for b in body["system"]]
    assert texts[:-1] == [b["text"] for b in default_body["system"]]
    assert texts[-1] == "You also know the project's build system."
    names = {t["name"] for t in body["tools"]}
    assert "Bash" not in names and {"Read", "Agent"} <= names
    assert user_texts(body)[-1] == "check the diff"  # no initialPrompt
    assert (tmp_path / "proj" / "hook-ran.txt").read_text().strip() == "from-the-agent-hook"


def test_an_unknown_agent_is_a_one_line_error_listing_the_known_ones(tmp_path: Path) -> None:
    with AnthropicTestServer(DONE) as server:
        done = run(tmp_path, server, "--agent", "reveiwer")
        assert server.bodies() == []
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("catui: --agent: no agent named 'reveiwer'; available agents: ")
    assert "reviewer" in line and "helper" in line and "general-purpose" in line


def test_agents_json_definitions_can_be_the_main_agent(tmp_path: Path) -> None:
    agents = {"scribe": {"description": "Writes.", "prompt": "You write docs.", "tools": ["Write"],
                         "initialPrompt": "Docs first."}}
    with AnthropicTestServer(DONE) as server:
        done = run(tmp_path, server, "--agents", json.dumps(agents), "--agent", "scribe")
        (body,) = server.bodies()
    assert done.returncode == 0, done.stderr
    assert [b["text"] for b in body["system"]] == ["You write docs."]
    assert [t["name"] for t in body["tools"]] == ["Write"]
    assert user_texts(body)[-1] == "Docs first.\n\ncheck the diff"


def test_the_agents_inline_mcp_server_joins_and_its_tools_list_selects_them(tmp_path: Path) -> None:
    server_script = Path(__file__).parent / "support" / "mcp_servers" / "tools_server.py"
    agents = {"echoer": {
        "description": "Echoes.", "prompt": "You echo.", "tools": ["Read", "mcp__tools"],
        "mcpServers": [{"tools": {"command": sys.executable, "args": [str(server_script)]}}],
    }}
    script = {"turns": [
        {"match": {"last_is_tool_result": False, "tools_include": ["mcp__tools__echo"]},
         "content": [{"type": "tool_use", "name": "mcp__tools__echo", "input": {"text": "over mcp"}}]},
        {"match": {"last_user_contains": "over mcp"}, "content": [{"type": "text", "text": "echoed"}]},
    ]}
    repo = project(tmp_path)
    with AnthropicTestServer(script) as server:
        env = {**cli_env(tmp_path, server, **MCP_WAIT_ENV),
               "PYTHONPATH": f"{cli_env(tmp_path, server)['PYTHONPATH']}:{Path(__file__).resolve().parents[1]}"}
        done = subprocess.run(
            [sys.executable, "-m", "catui", "-p", "echo it", "--agents", json.dumps(agents), "--agent", "echoer",
             "--allowedTools", "mcp__tools"],
            cwd=repo, env=env, capture_output=True, text=True, timeout=60,
        )
        first, _second = server.bodies()
    assert done.returncode == 0, done.stderr
    names = [t["name"] for t in first["tools"]]
    assert "Read" in names and "mcp__tools__echo" in names
    assert all(name == "Read" or name.startswith("mcp__tools__") for name in names)
    assert done.stdout.strip() == "echoed"


KEEPER = """---
name: keeper
description: Remembers things.
tools: Grep
memory: project
maxTurns: 2
---
You keep notes.
"""


def test_agent_memory_and_max_turns_apply_to_the_main_session(tmp_path: Path) -> None:
    repo = project(tmp_path)
    (repo / ".claude" / "agents" / "keeper.md").write_text(KEEPER)
    memory = repo / ".catui" / "agent-memory" / "keeper"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("REMEMBER-42: the build uses make.\n")
    note = memory / "note.txt"
    outside = repo / "outside.txt"
    loop = {"turns": [
        {"match": {"last_is_tool_result": False}, "content": [
            {"type": "tool_use", "name": "Write", "input": {"file_path": str(note), "content": "kept\n"}},
            {"type": "tool_use", "name": "Write", "input": {"file_path": str(outside), "content": "no\n"}}]},
        {"match": {"last_is_tool_result": True}, "content": [
            {"type": "tool_use", "name": "Grep", "input": {"pattern": "x"}}], "repeat": True},
    ]}
    with AnthropicTestServer(loop) as server:
        done = run(tmp_path, server, "--agent", "keeper", "--output-format", "json", "--permission-mode", "acceptEdits")
        bodies = server.bodies()
    result = json.loads(done.stdout)
    assert result["subtype"] == "error_max_turns" and result["num_turns"] == 2  # maxTurns: 2 from the definition
    assert len(bodies) == 2
    system = json.dumps(bodies[0]["system"])
    assert "REMEMBER-42" in system and "Persistent memory (project scope)" in system
    assert sorted(t["name"] for t in bodies[0]["tools"]) == ["Edit", "Grep", "Read", "Write"]
    assert note.read_text() == "kept\n"  # Write was granted for the memory folder ...
    assert not outside.exists()  # ... and only there
    with AnthropicTestServer(loop) as server:
        done = run(tmp_path, server, "--agent", "keeper", "--output-format", "json", "--max-turns", "1")
    assert json.loads(done.stdout)["num_turns"] == 1  # the command line wins
