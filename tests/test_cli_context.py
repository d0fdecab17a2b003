"""The main agent's context over the real wire (issue 2, point 4): project memory in the first message,
the environment block and a git status snapshot in the system prompt, run-time state kept out of git."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.anthropic_server import AnthropicTestServer


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def test_memory_environment_and_git_snapshot_reach_the_model(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "trunk")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "T")
    (repo / "CLAUDE.md").write_text("MEMORY-MARKER: run tests with make check.\n")
    git(repo, "add", "CLAUDE.md")
    git(repo, "commit", "-q", "-m", "COMMIT-MARKER first commit")
    (repo / "untracked.txt").write_text("x\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_"))}
    env.update(HOME=str(tmp_path / "home"), CATUI_HOME=str(tmp_path / "home" / ".catui"))
    script = {"turns": [{"content": [{"type": "text", "text": "ok"}]}]}
    with AnthropicTestServer(script) as server:
        done = subprocess.run([sys.executable, "-m", "catui", "-p", "PROMPT-MARKER"], cwd=repo,
                              env={**env, **server.env()}, capture_output=True, text=True, timeout=60)
        [body] = server.bodies()
    assert done.returncode == 0, done.stderr
    system = "\n".join(block["text"] for block in body["system"])
    assert f"Working directory: {repo.resolve()}" in system
    assert "Is directory a git repo: Yes" in system and "Platform: " in system and "Shell: " in system
    assert "OS Version: " in system and "Today's date: " in system
    assert "Current branch: trunk" in system and "?? untracked.txt" in system and "COMMIT-MARKER" in system
    first = json.dumps(body["messages"][0])
    assert "MEMORY-MARKER" in first
    assert body["messages"][0]["content"][-1]["text"] == "PROMPT-MARKER"
    # Whatever catui kept under .catui/ during the run, git sees nothing new beyond the user's own file.
    assert git(repo, "status", "--porcelain", "--untracked-files=all").splitlines() == ["?? untracked.txt"]
