"""A resumed session can still reach the sub-agents of its earlier run: SendMessage to an old agent id
continues that agent from its transcript on disk (real CLI, loopback Anthropic server)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env

FIRST_RUN: dict[str, Any] = {"turns": [
    {"match": {"first_user_contains": "HELPER-JOB"}, "repeat": True, "content": [{"type": "text", "text": "Helper done."}]},
    {"match": {"last_is_tool_result": False}, "content": [
        {"type": "tool_use", "id": "toolu_helper", "name": "Agent",
         "input": {"description": "help out", "prompt": "HELPER-JOB: list files", "subagent_type": "Explore"}}]},
    {"repeat": True, "content": [{"type": "text", "text": "Delegated."}]},
]}


def second_run(agent_id: str) -> dict[str, Any]:
    return {"turns": [
        {"match": {"first_user_contains": "HELPER-JOB"}, "repeat": True,
         "content": [{"type": "text", "text": "Helper again."}]},
        {"match": {"last_user_contains": "PING"}, "content": [
            {"type": "tool_use", "id": "toolu_send", "name": "SendMessage",
             "input": {"to": agent_id, "message": "HELPER-AGAIN: one more look", "summary": "one more look"}}]},
        {"repeat": True, "content": [{"type": "text", "text": "Noted."}]},
    ]}


def run(tmp_path: Path, server: AnthropicTestServer, *args: str) -> dict[str, Any]:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "catui", *args, "--output-format", "json"], cwd=project,
        env=cli_env(tmp_path, server, CATUI_AGENT_TEAMS="1"), capture_output=True, text=True, timeout=90,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_send_message_after_continue_resumes_an_agent_of_the_earlier_run(tmp_path: Path) -> None:
    with AnthropicTestServer(FIRST_RUN) as server:
        first = run(tmp_path, server, "-p", "DELEGATE now")
    folders = list((tmp_path / "catui-home" / "projects").glob(f"*/{first['session_id']}/subagents"))
    assert len(folders) == 1
    (transcript,) = folders[0].glob("agent-*.jsonl")
    agent_id = transcript.name[len("agent-"):-len(".jsonl")]

    with AnthropicTestServer(second_run(agent_id)) as server:
        second = run(tmp_path, server, "-c", "-p", "PING the helper")
        bodies = server.bodies()
    assert second["session_id"] == first["session_id"]
    main_first = bodies[0]["messages"]
    assert "DELEGATE now" in json.dumps(main_first[0]) and "PING the helper" in json.dumps(main_first[-1])
    child = [b["messages"] for b in bodies if "HELPER-JOB" in json.dumps(b["messages"][0])]
    assert child, "the old agent was not resumed"
    # The resumed child starts from its old conversation, then gets the new message.
    history = json.dumps(child[0])
    assert "Helper done." in history and "HELPER-AGAIN: one more look" in json.dumps(child[0][-1])
    assert "Helper again." in transcript.read_text()
