"""Project memory, the environment block and the git snapshot, against real files and a real git repo."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from catui.config.context import (
    environment_block,
    git_status_snapshot,
    knowledge_cutoff,
    load_project_memory,
    memory_files,
    model_display_name,
)
from tests.support.user_home import home_fixture  # noqa: F401 - provides the home fixture


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True)
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "trunk")
    return repo


def test_memory_files_in_order_with_headers(home: Path, repo: Path) -> None:
    (home / ".claude").mkdir()
    (home / ".claude" / "CLAUDE.md").write_text("user claude rules")
    (home / ".catui").mkdir()
    (home / ".catui" / "CATUI.md").write_text("user catui rules")
    (repo / "CLAUDE.md").write_text("project claude rules\n@docs/extra.md\n```\n@not/imported.md\n```")
    (repo / "docs").mkdir()
    (repo / "docs" / "extra.md").write_text("imported rules")
    (repo / ".claude").mkdir()
    (repo / ".claude" / "CLAUDE.md").write_text("dot-claude rules")
    (repo / "CATUI.md").write_text("project catui rules")
    sub = repo / "pkg"
    sub.mkdir()
    (sub / "CLAUDE.md").write_text("package rules")
    (repo / "not").mkdir()
    (repo / "not" / "imported.md").write_text("fenced import")
    text = load_project_memory(sub, repo)
    assert text is not None
    order = ["user claude rules", "user catui rules", "project claude rules", "imported rules",
             "dot-claude rules", "project catui rules", "package rules"]
    positions = [text.index(piece) for piece in order]
    assert positions == sorted(positions)
    assert f"Contents of {repo / 'CATUI.md'}" in text
    assert f"Contents of {repo / 'docs' / 'extra.md'} (imported by {repo / 'CLAUDE.md'})" in text
    assert "fenced import" not in text  # an @path inside a code block is not an import
    # the package file is only read when working inside the package
    assert "package rules" not in (load_project_memory(repo, repo) or "")


def test_memory_none_and_duplicates(home: Path, repo: Path) -> None:
    assert load_project_memory(repo, repo) is None
    (repo / "CLAUDE.md").write_text("shared")
    (repo / "CATUI.md").symlink_to(repo / "CLAUDE.md")
    assert [p.name for p, _ in memory_files(repo, repo)] == ["CLAUDE.md"]
    (repo / "CLAUDE.md").write_text("   \n")
    assert load_project_memory(repo, repo) is None


def test_memory_home_parameter(tmp_path: Path, home: Path, repo: Path) -> None:
    other = tmp_path / "other"
    (other / ".catui").mkdir(parents=True)
    (other / ".catui" / "CATUI.md").write_text("from other home")
    assert "from other home" in (load_project_memory(repo, repo, home=other) or "")


def test_environment_block_in_git_repo(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELL", "/bin/zsh")
    extra = tmp_path / "extra"
    block = environment_block(repo, "claude-sonnet-4-6", additional_dirs=(extra,), today=date(2026, 3, 4))
    assert f"Working directory: {repo}" in block
    assert "Is directory a git repo: Yes" in block
    assert f"Additional working directories: {extra}" in block
    assert f"Platform: {sys.platform}" in block
    assert "Shell: zsh" in block
    assert "OS Version: " in block
    assert "Today's date: 2026-03-04" in block
    assert "Claude Sonnet 4.6" in block and "claude-sonnet-4-6" in block
    assert "August 2025" in block


def test_environment_block_outside_git(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    block = environment_block(plain, "gpt-4.1")
    assert "Is directory a git repo: No" in block
    assert "Additional working directories" not in block
    assert "gpt-4.1" in block and "training data" not in block
    assert f"Today's date: {date.today().isoformat()}" in block


@pytest.mark.parametrize(
    ("model_id", "name", "cutoff"),
    [
        ("claude-haiku-4-5-20251001", "Claude Haiku 4.5", "February 2025"),
        ("claude-opus-4-6", "Claude Opus 4.6", "May 2025"),
        ("claude-3-7-sonnet-20250219", "Claude Sonnet 3.7", "October 2024"),
        ("llama3", "llama3", None),
    ],
)
def test_model_names(model_id: str, name: str, cutoff: str | None) -> None:
    assert model_display_name(model_id) == name
    assert knowledge_cutoff(model_id) == cutoff


def test_git_snapshot_of_a_real_repo(repo: Path) -> None:
    assert "(no commits yet)" in (git_status_snapshot(repo) or "")
    for index in range(7):
        (repo / f"f{index}.txt").write_text(str(index))
        git(repo, "add", f"f{index}.txt")
        git(repo, "commit", "-q", "-m", f"commit number {index}")
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "f0.txt").write_text("changed")
    (repo / "new.txt").write_text("new")
    snapshot = git_status_snapshot(repo)
    assert snapshot is not None
    assert "Current branch: feature" in snapshot
    assert "Main branch (the usual target for pull requests): main" in snapshot  # no main/master/origin: fallback
    assert " M f0.txt" in snapshot and "?? new.txt" in snapshot
    assert "commit number 6" in snapshot and "commit number 2" in snapshot
    assert "commit number 1" not in snapshot  # only the last five


def test_git_snapshot_main_branch_and_cap(repo: Path) -> None:
    (repo / "a").write_text("a")
    git(repo, "add", "a")
    git(repo, "commit", "-q", "-m", "first")
    git(repo, "branch", "master")
    for index in range(300):
        (repo / f"untracked_file_with_long_name_{index:03}.txt").write_text("x")
    snapshot = git_status_snapshot(repo, max_status_chars=500)
    assert snapshot is not None
    assert "Main branch (the usual target for pull requests): master" in snapshot
    assert "status cut at 500 characters" in snapshot
    assert "untracked_file_with_long_name_299" not in snapshot
    head = git(repo, "rev-parse", "--short", "HEAD").strip()
    git(repo, "checkout", "-q", "--detach")
    assert f"Current branch: (detached HEAD at {head})" in (git_status_snapshot(repo) or "")


def test_git_snapshot_follows_origin_head(repo: Path, tmp_path: Path) -> None:
    (repo / "a").write_text("a")
    git(repo, "add", "a")
    git(repo, "commit", "-q", "-m", "first")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(clone, "checkout", "-q", "-b", "topic")
    snapshot = git_status_snapshot(clone)
    assert snapshot is not None
    assert "Main branch (the usual target for pull requests): trunk" in snapshot
    assert "Current branch: topic" in snapshot
    assert "Status:\n(clean)" in snapshot


def test_git_snapshot_outside_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert git_status_snapshot(plain) is None
