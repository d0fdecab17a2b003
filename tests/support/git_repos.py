"""Real git repositories in temp folders, for the worktree and state tests."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "catui test",
    "GIT_AUTHOR_EMAIL": "test@catui.invalid",
    "GIT_COMMITTER_NAME": "catui test",
    "GIT_COMMITTER_EMAIL": "test@catui.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def isolate_git(monkeypatch: object, home: Path) -> None:
    """Point HOME/CATUI_HOME at ``home`` and give git an identity (no user config read)."""
    setenv = monkeypatch.setenv  # type: ignore[attr-defined]
    setenv("HOME", str(home))
    setenv("CATUI_HOME", str(home / ".catui-home"))
    setenv("GIT_CONFIG_GLOBAL", str(home / "gitconfig"))
    for key, value in GIT_ENV.items():
        setenv(key, value)


def git(cwd: Path, *args: str) -> str:
    """Run git synchronously; fail the test loudly if it fails."""
    env = {**os.environ, "LC_ALL": "C"}
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def make_repo(root: Path, files: dict[str, str] | None = None, *, count: int = 0) -> Path:
    """A repository at ``root`` with ``files`` (path -> text) plus ``count`` numbered files, committed."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    for rel, text in (files or {"README.md": "hello\n"}).items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    for index in range(count):
        target = root / "gen" / f"d{index // 500}" / f"f{index}.txt"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"line {index}\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


def branches(root: Path) -> list[str]:
    return git(root, "branch", "--format=%(refname:short)").split()


def worktree_paths(root: Path) -> list[str]:
    return [
        line.split(" ", 1)[1]
        for line in git(root, "worktree", "list", "--porcelain").splitlines()
        if line.startswith("worktree ")
    ]
