"""An agent file written during a session is offered to the model at the next turn (issue 4: cache).

The real CLI runs in print mode against the loopback Anthropic server; turn 1 writes a new agent
file with the Write tool, and the request of turn 2 must list that agent in the Agent tool's
description, without any Agent call having happened in between.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.anthropic_server import AnthropicTestServer

NEW_AGENT = "---\nname: late-reviewer\ndescription: Reviews code written mid-session.\n---\nReview it.\n"


def _agent_description(body: dict[str, Any]) -> str:
    return next(tool["description"] for tool in body["tools"] if tool["name"] == "Agent")


def test_agent_file_written_mid_session_appears_in_the_next_turns_agent_list(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    agent_file = project / ".catui" / "agents" / "late.md"
    script = {
        "turns": [
            {
                "match": {"last_is_tool_result": False},
                "content": [
                    {"type": "tool_use", "name": "Write", "input": {"file_path": str(agent_file), "content": NEW_AGENT}}
                ],
            },
            {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "Written."}]},
        ]
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_"))}
    env.update(HOME=str(tmp_path / "home"), CATUI_HOME=str(tmp_path / "home" / ".catui"))
    server = AnthropicTestServer(script)
    with server:
        env.update(server.env())
        out = subprocess.run(
            [sys.executable, "-m", "catui", "-p", "add an agent", "--permission-mode", "acceptEdits"],
            cwd=project, env=env, capture_output=True, text=True, timeout=60,
        )
        bodies = server.bodies()
    assert out.returncode == 0, out.stderr
    assert agent_file.is_file()
    assert len(bodies) == 2
    assert "late-reviewer" not in _agent_description(bodies[0])
    assert "- late-reviewer: Reviews code written mid-session." in _agent_description(bodies[1])
