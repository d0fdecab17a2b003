"""catui keeps its run-time folders under ``.catui/`` out of git by itself (issue 2, point 4)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from catui.paths import project_runtime_dir


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


def _repo(path: Path) -> Path:
    path.mkdir()
    _git(path, "init", "-q")
    return path


def test_run_time_state_leaves_git_status_clean(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    runtime = project_runtime_dir(repo)
    (runtime / "tasks").mkdir()
    (runtime / "tasks" / "b1.output").write_text("output\n")
    (runtime / "worktrees" / "agent-a1").mkdir(parents=True)
    (runtime / "state.db").write_bytes(b"db")
    (runtime / "state.db-wal").write_bytes(b"wal")
    (runtime / "settings.local.json").write_text("{}\n")
    assert _git(repo, "status", "--porcelain", "--untracked-files=all") == ""


def test_files_the_user_writes_under_dot_catui_stay_visible(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    runtime = project_runtime_dir(repo)
    (runtime / "settings.json").write_text("{}\n")
    (runtime / "agents").mkdir()
    (runtime / "agents" / "reviewer.md").write_text("---\nname: reviewer\ndescription: r\n---\nReview.\n")
    listed = _git(repo, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert sorted(listed) == ["?? .catui/agents/reviewer.md", "?? .catui/settings.json"]


def test_an_existing_gitignore_is_left_alone(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    (repo / ".catui").mkdir()
    (repo / ".catui" / ".gitignore").write_text("custom\n")
    project_runtime_dir(repo)
    assert (repo / ".catui" / ".gitignore").read_text() == "custom\n"
