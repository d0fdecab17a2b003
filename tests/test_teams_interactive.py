"""The team in the interactive session (piped, no terminal): /team shows it, /msg writes to a teammate,
and a teammate's answer starts a lead turn between the user's lines."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import yaml

GUARD_S = 60  # a broken scenario fails here instead of hanging (not a timing assertion)


def tool(tool_name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": tool_name, "input": args}


def say(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]


class Reader:
    """Collects a child's stdout on a thread so the test can wait for a line without blocking forever."""

    def __init__(self, stream: Any) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: Any) -> None:
        for line in stream:
            self.lines.put(line)

    def wait_for(self, text: str) -> str:
        deadline = time.monotonic() + GUARD_S
        while time.monotonic() < deadline:
            if any(text in line for line in self.seen):
                return next(line for line in self.seen if text in line)
            try:
                self.seen.append(self.lines.get(timeout=0.1))
            except queue.Empty:
                continue
        raise AssertionError(f"never printed {text!r}; output so far:\n{''.join(self.seen)}")


def test_team_view_and_messaging_a_teammate_from_the_prompt(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    lead = "Lead the team"
    script = {"turns": [
        {"match": {"first_user_contains": lead, "last_user_contains": lead},
         "content": [tool("TeamCreate", team_name="alpha")]},
        {"match": {"first_user_contains": lead, "last_user_contains": "lead_agent_id"},
         "content": [tool("Agent", description="work", prompt="TASK-W", name="worker")]},
        {"match": {"first_user_contains": lead, "last_user_contains": "Spawned successfully"},
         "content": say("Started.")},
        {"match": {"first_user_contains": lead, "last_user_contains": "got: hello there"},
         "content": say("Lead saw the reply.")},
        {"match": {"first_user_contains": lead}, "content": say("Noted."), "repeat": True},
        {"match": {"first_user_contains": "TASK-W", "last_user_contains": "hello there"},
         "content": [tool("SendMessage", to="team-lead", message="got: hello there", summary="reply")]},
        {"match": {"first_user_contains": "TASK-W"}, "content": say("ready"), "repeat": True},
    ]}
    script_path = tmp_path / "script.yaml"
    script_path.write_text(yaml.safe_dump(script), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_"))}
    env.update(HOME=str(tmp_path), CATUI_HOME=str(tmp_path / ".catui"), CATUI_AGENT_TEAMS="1")
    proc = subprocess.Popen([sys.executable, "-m", "catui", "--model", f"scripted:{script_path}"], cwd=project,
                            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdin is not None and proc.stdout is not None
    out = Reader(proc.stdout)
    try:
        proc.stdin.write(f"{lead}\n")
        proc.stdin.flush()
        out.wait_for("Started.")
        proc.stdin.write("/team\n")
        proc.stdin.flush()
        line = out.wait_for("worker (worker@alpha)")
        assert line.strip().startswith("● worker (worker@alpha)")
        proc.stdin.write("/msg nobody hi\n/msg worker hello there\n")
        proc.stdin.flush()
        assert "No active teammate called 'nobody' (teammates: worker)." in out.wait_for("No active teammate")
        out.wait_for("Sent to worker.")
        out.wait_for("Lead saw the reply.")  # the teammate's answer started a lead turn by itself
        proc.stdin.close()
        assert proc.wait(timeout=GUARD_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    inbox = (tmp_path / ".catui" / "teams" / "alpha" / "inboxes" / "worker.json").read_text()
    assert '"from": "user"' in inbox and '"text": "hello there"' in inbox
