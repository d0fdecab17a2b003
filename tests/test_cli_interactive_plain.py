"""The interactive session without a terminal: lines from a pipe, plain text out, the same conversation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml


def test_piped_session_asks_permission_keeps_the_conversation_and_exits_at_eof(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    target = project / "notes.txt"
    script = {
        "turns": [
            {"match": {"last_user_contains": "write notes", "last_is_tool_result": False},
             "content": [{"type": "tool_use", "name": "Write",
                          "input": {"file_path": str(target), "content": "remember\n"}}]},
            {"match": {"last_is_tool_result": True, "last_user_contains": "notes.txt"},
             "content": [{"type": "text", "text": "Notes written."}]},
            {"match": {"last_user_contains": "what did you do"},
             "content": [{"type": "text", "text": "I wrote notes.txt earlier in this conversation."}]},
        ]
    }
    script_path = tmp_path / "script.yaml"
    script_path.write_text(yaml.safe_dump(script), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_"))}
    env.update(HOME=str(tmp_path), CATUI_HOME=str(tmp_path / ".catui"))
    done = subprocess.run(
        [sys.executable, "-m", "catui", "--model", f"scripted:{script_path}"],
        input="please write notes\ny\nwhat did you do?\n",
        cwd=project, env=env, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "\x1b" not in out
    assert "Write(notes.txt)" in out and "Allow?" in out
    assert out.index("Notes written.") < out.index("I wrote notes.txt earlier")
    assert target.read_text() == "remember\n"
    transcript = Path(out.split("Transcript: ")[1].strip())
    users = [json.loads(line) for line in transcript.read_text().splitlines()]
    prompts = [line for line in users if line.get("type") == "user" or line.get("message", {}).get("role") == "user"]
    assert len(prompts) >= 3  # two prompts and one tool result, in one session
