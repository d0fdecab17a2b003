"""An isolated sub-agent's worktree in the current profile, through the real CLI against the loopback server: as
Claude Code 2.1.332 did (observed-cc-now.md §2), its folder is ``agent-<the whole agent id>`` on the branch
``worktree-agent-<the whole agent id>`` (catui keeps its worktrees under ``.catui/worktrees``); the 2.1.92
profile names both after the id's first 8 characters."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_env import cli_env, git_repo
from tests.support.compat_cli import (
    CURRENT,
    DynamicServer,
    agent_call,
    first_user_text,
    result_text,
    stream_run,
    text,
    tool_results,
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = git_repo(tmp_path)
    subprocess.run(["git", "-C", str(folder), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"],
                   check=True)
    return folder


class IsolatedChild(DynamicServer):
    """The main agent spawns one foreground child in a worktree; the child prints where it is and on which
    branch, and leaves a new file (so the worktree is kept)."""

    def __init__(self) -> None:
        super().__init__({"turns": []})

    def decide(self, body: dict[str, Any]) -> list[dict[str, Any]] | None:
        step = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if "Child one" in first_user_text(body):
            if step == 0:
                return [{"type": "tool_use", "id": "toolu_where", "name": "Bash", "input": {
                    "command": "pwd; git branch --show-current; echo x > new.txt", "description": "Where am I"}}]
            return text("child done")
        if step == 0:
            return [agent_call("toolu_a", "Child one", subagent_type="general-purpose", isolation="worktree",
                               run_in_background=False)]
        return text("parent done")


def run(tmp_path: Path, repo: Path, **extra: str) -> tuple[str, list[str], str]:
    """The child's agent id, the lines its Bash call printed, and its hand-back."""
    with IsolatedChild() as server:
        done, lines = stream_run(repo, cli_env(tmp_path, server, **extra), "Go",
                                 "--permission-mode", "bypassPermissions")
        child = [b for b in server.bodies() if "Child one" in first_user_text(b)][-1]
    assert done.returncode == 0, done.stderr
    agent_id = next(line["task_id"] for line in lines if line.get("subtype") == "task_started")
    printed = next(result_text(block) for message in child["messages"] if message["role"] == "user"
                   for block in message["content"] if isinstance(block, dict)
                   and block.get("tool_use_id") == "toolu_where").splitlines()
    (block, _), = tool_results(lines)
    return agent_id, printed, result_text(block)


def test_the_current_profile_names_the_worktree_after_the_whole_agent_id(tmp_path: Path, repo: Path) -> None:
    agent_id, printed, hand_back = run(tmp_path, repo, **CURRENT)
    assert len(agent_id) > 8
    folder = repo.resolve() / ".catui" / "worktrees" / f"agent-{agent_id}"
    assert printed[:2] == [str(folder), f"worktree-agent-{agent_id}"]
    assert f"worktreePath: {folder}" in hand_back and f"worktreeBranch: worktree-agent-{agent_id}" in hand_back
    branches = subprocess.run(["git", "-C", str(repo), "branch", "--list", "--format=%(refname:short)",
                               "worktree-agent-*"], check=True, capture_output=True, text=True).stdout.split()
    assert branches == [f"worktree-agent-{agent_id}"]
    assert (folder / "new.txt").is_file()


def test_the_old_profile_names_it_after_the_first_8_characters(tmp_path: Path, repo: Path) -> None:
    agent_id, printed, hand_back = run(tmp_path, repo)
    folder = repo.resolve() / ".catui" / "worktrees" / f"agent-{agent_id[:8]}"
    assert printed[:2] == [str(folder), f"worktree-agent-{agent_id[:8]}"]
    assert f"worktree-agent-{agent_id[:8]}" in json.dumps(hand_back) and f"agent-{agent_id}" not in hand_back
