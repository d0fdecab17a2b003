"""The CLI on the openai provider end to end: Chat Completions over HTTP on 127.0.0.1, tools included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.openai_server import OpenAITestServer


def test_print_mode_runs_a_tool_over_chat_completions(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "notes.txt").write_text("the answer is 42\n")
    script = {"turns": [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "name": "Read", "input": {"file_path": str(project / "notes.txt")}}]},
        {"match": {"last_user_contains": "the answer is 42"}, "content": [{"type": "text", "text": "It is 42."}]},
    ]}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_"))}
    env.update(HOME=str(tmp_path / "home"), CATUI_HOME=str(tmp_path / "home" / ".catui"))
    with OpenAITestServer(script) as server:
        done = subprocess.run(
            [sys.executable, "-m", "catui", "-p", "What is the answer?", "--model", "openai:gpt-4.1",
             "--output-format", "json"],
            cwd=project, env={**env, **server.env()}, capture_output=True, text=True, timeout=60,
        )
        bodies = server.bodies()
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == "It is 42." and result["num_turns"] == 2
    assert set(result["modelUsage"]) == {"gpt-4.1"}
    first, second = bodies
    assert first["model"] == "gpt-4.1" and first["stream"] is True
    assert first["messages"][0]["role"] == "system"
    assert any(tool["function"]["name"] == "Read" for tool in first["tools"])
    tool_messages = [m for m in second["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 1 and "the answer is 42" in json.dumps(tool_messages[0])
