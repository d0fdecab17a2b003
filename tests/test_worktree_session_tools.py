"""EnterWorktree / ExitWorktree through the real CLI (scripted provider) against real git repositories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.git_repos import GIT_ENV, branches, git, isolate_git, make_repo, worktree_paths


def clean_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_", "GIT_"))}
    env.update(HOME=str(tmp_path / "home"), CATUI_HOME=str(tmp_path / "home" / ".catui"),
               GIT_CONFIG_GLOBAL=str(tmp_path / "home" / "gitconfig"), **GIT_ENV)
    return env


def call(tool: str, tool_input: dict[str, Any], tool_id: str) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "id": tool_id, "name": tool, "input": tool_input}]}


def run_script(tmp_path: Path, cwd: Path, turns: list[dict[str, Any]],
               mode: str = "bypassPermissions") -> dict[str, tuple[bool, str]]:
    """Run ``catui -p`` with these model turns (then a closing text); the tool results by tool_use id."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [*turns, {"content": [{"type": "text", "text": "Finished."}]}]}))
    done = subprocess.run(
        [sys.executable, "-m", "catui", "-p", "work in a worktree", "--model", f"scripted:{script}",
         "--output-format", "stream-json", "--permission-mode", mode],
        cwd=cwd, env=clean_env(tmp_path), capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["result"] == "Finished."
    results: dict[str, tuple[bool, str]] = {}
    for event in events:
        if event["type"] != "user":
            continue
        for block in event["message"]["content"]:
            if block.get("type") == "tool_result":
                content = block["content"]
                text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
                results[block["tool_use_id"]] = (bool(block.get("is_error")), text)
    return results


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_git(monkeypatch, tmp_path / "home")
    return make_repo(tmp_path / "proj", {"README.md": "hello\n", "src/app.py": "x = 1\n"})


def test_enter_work_refuse_dirty_remove_then_discard(tmp_path: Path, repo: Path) -> None:
    worktree = repo / ".catui" / "worktrees" / "feature-x"
    results = run_script(tmp_path, repo / "src", [
        call("EnterWorktree", {"name": "feature-x"}, "enter"),
        call("Bash", {"command": "pwd && echo made > made.txt"}, "inside"),
        call("EnterWorktree", {}, "again"),
        call("ExitWorktree", {"action": "remove"}, "refused"),
        call("ExitWorktree", {"action": "remove", "discard_changes": True}, "removed"),
        call("Bash", {"command": "pwd"}, "back"),
        call("ExitWorktree", {"action": "keep"}, "nothing"),
    ])
    assert results["enter"] == (
        False,
        f"Created worktree at {worktree} on branch worktree-feature-x. The session now works in the worktree; "
        "use ExitWorktree to leave it (keeping or removing it).",
    )
    # The session moved into the same sub-folder of the worktree, and its files land there.
    assert results["inside"][1].splitlines()[0] == str(worktree / "src")
    error, text = results["again"]
    assert error and "already in the worktree" in text and "ExitWorktree first" in text
    error, text = results["refused"]
    assert error and "1 uncommitted file(s)" in text and "discard_changes: true" in text
    assert results["removed"] == (
        False,
        f"Exited and removed the worktree {worktree} and its branch worktree-feature-x. "
        f"The session is back in {repo / 'src'}.",
    )
    assert results["back"][1].strip() == str(repo / "src")
    error, text = results["nothing"]
    assert error and "not in a worktree" in text
    assert not worktree.exists() and branches(repo) == ["main"]
    assert not (repo / "src" / "made.txt").exists()


def test_keep_leaves_worktree_and_commits_count_as_work(tmp_path: Path, repo: Path) -> None:
    worktree = repo / ".catui" / "worktrees" / "team+fix"
    results = run_script(tmp_path, repo, [
        call("EnterWorktree", {"name": "team/fix"}, "enter"),
        call("Bash", {"command": "echo more >> README.md && git commit -qam 'more' && git status --porcelain"},
             "commit"),
        call("ExitWorktree", {"action": "remove"}, "refused"),
        call("ExitWorktree", {"action": "keep"}, "kept"),
        call("Write", {"file_path": str(repo / "after.txt"), "content": "main again\n"}, "write"),
    ])
    assert results["enter"][0] is False and str(worktree) in results["enter"][1]
    assert results["commit"] == (False, "(no output)")  # committed: nothing left in git status
    error, text = results["refused"]
    assert error and "1 commit(s) made in it" in text and "uncommitted" not in text
    assert results["kept"] == (
        False,
        f"Exited the worktree. It is kept at {worktree} on branch worktree-team+fix. The session is back in {repo}.",
    )
    assert results["write"][0] is False and (repo / "after.txt").read_text() == "main again\n"
    assert worktree.is_dir() and (worktree / "README.md").read_text() == "hello\nmore\n"
    assert "worktree-team+fix" in branches(repo) and str(worktree) in worktree_paths(repo)
    assert git(repo, "status", "--porcelain", "--untracked-files=all").strip() == "?? after.txt"


def test_refusals_outside_git_and_for_bad_names(tmp_path: Path, repo: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    results = run_script(tmp_path, plain, [
        call("EnterWorktree", {"name": "x"}, "no-git"),
        call("ExitWorktree", {"action": "throw"}, "bad-action"),
    ])
    error, text = results["no-git"]
    assert error and text.startswith(f"EnterWorktree: {plain} is not inside a git repository")
    assert results["bad-action"][0] is True and "action" in results["bad-action"][1]

    results = run_script(tmp_path, repo, [
        call("EnterWorktree", {"name": "../escape"}, "dots"),
        call("EnterWorktree", {"name": "x" * 65}, "long"),
    ])
    assert results["dots"][0] and "may hold only letters, digits" in results["dots"][1]
    assert results["long"][0] and "use at most 64" in results["long"][1]
    assert branches(repo) == ["main"] and not (repo / ".catui" / "worktrees").exists()


def test_a_sub_agent_moves_only_itself(tmp_path: Path, repo: Path) -> None:
    worktree = repo / ".catui" / "worktrees" / "child"

    def child(turn: dict[str, Any]) -> dict[str, Any]:
        return {"match": {"first_user_contains": "CHILD-JOB"}, **turn}

    def parent(turn: dict[str, Any]) -> dict[str, Any]:
        return {"match": {"first_user_contains": "work in a worktree"}, **turn}

    results = run_script(tmp_path, repo, [
        parent(call("Agent", {"description": "try a worktree", "prompt": "CHILD-JOB",
                              "subagent_type": "general-purpose"}, "agent")),
        child(call("EnterWorktree", {"name": "child"}, "child-enter")),
        child(call("Bash", {"command": "pwd"}, "child-pwd")),
        child(call("ExitWorktree", {"action": "keep"}, "child-exit")),
        child({"content": [{"type": "text", "text": "child done"}]}),
        parent(call("Bash", {"command": "pwd"}, "parent-pwd")),
    ])
    assert results["agent"][0] is False and "child done" in results["agent"][1]
    assert results["parent-pwd"] == (False, str(repo))
    # The child's own results (stream-json carries them): it worked in the worktree, and kept it.
    assert results["child-pwd"] == (False, str(worktree))
    assert results["child-exit"][0] is False
    assert worktree.is_dir() and "worktree-child" in branches(repo)
