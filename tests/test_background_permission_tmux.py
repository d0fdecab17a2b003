"""A background agent asks for permission while the prompt line waits: the screen as tmux renders it.

The menu must start on a row of its own (the idle prompt and the status line under it are taken down
first) and the prompt must come back once the question is answered.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)")

STATUS = "scripted (script.yaml) · "
"""How the status line under the prompt starts (the model's name)."""
WAIT_S = 30  # a broken terminal stops the test here instead of hanging the suite (not a timing assertion)
SCRIPT = {"turns": [
    {"match": {"last_user_contains": "<task-notification>"}, "repeat": True,
     "content": [{"type": "text", "text": "Noted."}]},
    # the child asks only once the parent's turn is over and the prompt line waits (the delay puts it there)
    {"match": {"first_user_contains": "BG JOB", "last_is_tool_result": False}, "delay_ms": 1500,
     "content": [{"type": "tool_use", "id": "toolu_bash", "name": "Bash", "input": {"command": "touch made.txt"}}]},
    {"match": {"first_user_contains": "BG JOB", "last_is_tool_result": True},
     "content": [{"type": "text", "text": "bg done"}]},
    {"match": {"last_user_contains": "start the job", "last_is_tool_result": False},
     "content": [{"type": "tool_use", "id": "toolu_bg", "name": "Agent",
                  "input": {"description": "bg job", "prompt": "BG JOB: touch", "subagent_type": "general-purpose",
                            "run_in_background": True}}]},
    {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "Job started."}]},
]}


class Tmux:
    """One tmux session on a private socket, running a command in a 200×30 window."""

    def __init__(self, command: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.socket = f"catui-test-{uuid.uuid4().hex[:8]}"
        self.env = env
        self._tmux("new-session", "-d", "-s", "t", "-x", "200", "-y", "30", "-c", str(cwd),
                   " ".join(_quote(part) for part in command))

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, env=self.env,
                              timeout=WAIT_S)
        return done.stdout

    def screen(self) -> list[str]:
        return self._tmux("capture-pane", "-p", "-t", "t").splitlines()

    def send(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "t", *keys)

    def wait_for(self, text: str, *, at_start: bool = False) -> list[str]:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            lines = self.screen()
            if any(line.startswith(text) if at_start else text in line for line in lines):
                return lines
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; the screen:\n" + "\n".join(self.screen()))

    def close(self) -> None:
        self._tmux("kill-server")


def _quote(part: str) -> str:
    return "'" + part.replace("'", "'\\''") + "'"


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[tuple[Tmux, Path]]:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump(SCRIPT, sort_keys=False))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_"))}
    env.update(HOME=str(home), CATUI_HOME=str(home / ".catui"), TERM="xterm-256color")
    session = Tmux([sys.executable, "-m", "catui", "--model", f"scripted:{script}"], project, env)
    yield session, project
    session.close()


def test_a_background_permission_prompt_does_not_draw_over_the_idle_prompt(terminal: tuple[Tmux, Path]) -> None:
    tmux, project = terminal
    tmux.wait_for(STATUS, at_start=True)  # the status line under the idle prompt
    tmux.send("please start the job", "Enter")
    tmux.wait_for("Job started.")
    lines = tmux.wait_for("1/2/3 or")
    top = next(i for i, line in enumerate(lines) if "Permission needed" in line)
    assert lines[top].startswith("╭─ Permission needed"), lines  # not after the prompt's "› "
    menu = lines[top:next(i for i, line in enumerate(lines) if "1/2/3 or" in line) + 1]
    assert lines[top + 1].rstrip() == "│ Bash(touch made.txt)", menu  # no status line text over it
    assert not any(STATUS in line for line in menu), menu
    tmux.send("1")
    tmux.wait_for("Noted.")
    lines = tmux.wait_for(STATUS, at_start=True)  # the prompt is back, its status line under it
    status = next(i for i, line in enumerate(lines) if line.startswith(STATUS))
    assert lines[status - 1].startswith("›"), lines
    assert (project / "made.txt").exists()
