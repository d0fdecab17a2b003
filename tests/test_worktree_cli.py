"""``catui worktrees``: list, rm and prune against real repositories."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from catui.cli.commands.worktrees import command
from catui.state import StateDB
from catui.worktree import WorktreeInfo, create_worktree, finish_worktree
from tests.support.git_repos import branches, git, isolate_git, make_repo, worktree_paths


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_git(monkeypatch, tmp_path / "home")
    return make_repo(tmp_path / "proj", {"README.md": "one\ntwo\n", "src/app.py": "x = 1\n"})


def _make(repo: Path, agent_id: str, *, change: bool) -> WorktreeInfo:
    async def run() -> WorktreeInfo:
        state = StateDB(repo)
        info = await create_worktree(agent_id, repo_root=repo, settings={}, state=state)
        if change:
            (info.path / "README.md").write_text("one\nTWO\nthree\n")
            (info.path / "new.py").write_text("print(1)\n")
        await finish_worktree(info, state)
        state.close()
        return info

    return asyncio.run(run())


def test_list_shows_kept_worktrees_with_change_summary(repo: Path) -> None:
    kept = _make(repo, "a1111111aaaaaaaa", change=True)
    _make(repo, "a2222222bbbbbbbb", change=False)

    result = CliRunner().invoke(command, ["-C", str(repo)])

    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["AGENT", "STATUS", "BRANCH", "FILES", "+", "-", "AGE", "PATH"]
    assert len(lines) == 2
    cells = lines[1].split()
    assert cells[:6] == ["a1111111aaaaaaaa", "kept", "worktree-agent-a1111111", "2", "3", "1"]
    assert cells[-1] == str(kept.path)


def test_list_when_nothing_is_kept(repo: Path) -> None:
    result = CliRunner().invoke(command, ["-C", str(repo)])
    assert result.exit_code == 0
    assert result.output.strip() == "No kept worktrees."
    # Looking must not create catui's state in a project that has none.
    assert not (repo / ".catui").exists()
    assert CliRunner().invoke(command, ["-C", str(repo), "prune"]).exit_code == 0
    missing = CliRunner().invoke(command, ["-C", str(repo), "rm", "a1234567"])
    assert missing.exit_code == 1 and "has no catui state" in missing.output
    assert not (repo / ".catui").exists()


def test_rm_removes_a_kept_worktree_by_prefix(repo: Path) -> None:
    kept = _make(repo, "a1111111aaaaaaaa", change=True)
    result = CliRunner().invoke(command, ["-C", str(repo), "rm", "agent-a1111111"])
    assert result.exit_code == 0, result.output
    assert "Removed worktree" in result.output
    assert not kept.path.exists()
    assert branches(repo) == ["main"]
    state = StateDB(repo)
    assert state.get_worktree(kept.agent_id)["status"] == "removed"
    state.close()


def test_rm_unknown_and_ambiguous_ids(repo: Path) -> None:
    _make(repo, "a1111111aaaaaaaa", change=True)
    _make(repo, "a1111112bbbbbbbb", change=True)
    unknown = CliRunner().invoke(command, ["-C", str(repo), "rm", "zzzz"])
    assert unknown.exit_code == 1
    assert "no worktree matches 'zzzz'" in unknown.output
    ambiguous = CliRunner().invoke(command, ["-C", str(repo), "rm", "a111111"])
    assert ambiguous.exit_code == 1 and "matches several worktrees" in ambiguous.output
    short = CliRunner().invoke(command, ["-C", str(repo), "rm", "a1"])
    assert short.exit_code == 1 and "give at least 4 characters" in short.output
    assert "Traceback" not in ambiguous.output


def test_prune_removes_clean_and_vanished_keeps_changed(repo: Path) -> None:
    changed = _make(repo, "a1111111aaaaaaaa", change=True)
    cleaned_later = _make(repo, "a3333333cccccccc", change=True)
    vanished = _make(repo, "a4444444dddddddd", change=True)
    # The user undid the changes in one, and deleted another's folder by hand.
    git(cleaned_later.path, "checkout", "--", "README.md")
    (cleaned_later.path / "new.py").unlink()
    shutil.rmtree(vanished.path)

    result = CliRunner().invoke(command, ["-C", str(repo), "prune"])

    assert result.exit_code == 0, result.output
    assert "2 removed, 1 kept, 0 failed." in result.output
    assert changed.path.is_dir()
    assert not cleaned_later.path.exists()
    assert worktree_paths(repo) == [str(repo), str(changed.path)]
    assert cleaned_later.branch not in branches(repo)
    assert vanished.branch not in branches(repo)  # it had no commits: nothing to keep


def test_main_entry_point_runs_the_subcommand(repo: Path) -> None:
    _make(repo, "a1111111aaaaaaaa", change=True)
    env = {**os.environ}
    done = subprocess.run(
        [sys.executable, "-m", "catui", "worktrees"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "a1111111aaaaaaaa" in done.stdout
