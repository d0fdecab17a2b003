"""Path rules around isolation: where a worktree goes, what a child may touch, the `cwd` option."""

from __future__ import annotations

import os
from pathlib import Path

from catui.worktree.model import WORKTREES_DIRNAME, WorktreeError

# Claude Code 2.1.92 names a worktree after the first 8 characters of the agent id (2.1.332: the whole id).
ID_PREFIX_LENGTH = 8


def worktree_slug(agent_id: str, *, full_id: bool = False) -> str:
    """``agent-<first 8 of id>`` (``full_id``: ``agent-<id>``, as Claude Code 2.1.332): the worktree folder's name."""
    short = agent_id if full_id else agent_id[:ID_PREFIX_LENGTH]
    if not short or not all(ch.isalnum() or ch in "-_" for ch in short):
        raise WorktreeError(f"agent id {agent_id!r} cannot name a worktree: use letters, digits, '-' or '_'")
    return f"agent-{short}"


def worktree_branch(agent_id: str) -> str:
    """``worktree-agent-<first 8 of id>``: the worktree's branch."""
    return f"worktree-{worktree_slug(agent_id)}"


def worktrees_root(repo_root: Path) -> Path:
    """``<repo>/.catui/worktrees``: where agents' worktrees live."""
    return repo_root / ".catui" / WORKTREES_DIRNAME


def ensure_inside(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    """Whether ``path`` (resolved: ``..`` and symlinks followed) lies inside ``root``.

    The permission layer uses this to keep a worktree's agent from writing
    through the main checkout by ``../..`` or an absolute path. A relative
    ``path`` is taken relative to ``root``. Paths that do not exist yet are
    resolved as far as they exist.
    """
    root_path = Path(root).resolve()
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = root_path / candidate
    resolved = candidate.resolve()
    return resolved == root_path or root_path in resolved.parents


def validate_agent_cwd(cwd: str, isolation: str | None) -> Path:
    """Check the Agent tool's internal ``cwd`` option and return it as a resolved folder.

    ``cwd`` must be an absolute path to an existing folder, and cannot be
    combined with ``isolation`` (a worktree decides the folder itself).
    """
    if isolation:
        raise WorktreeError(
            f"Agent: `cwd` and `isolation: {isolation!r}` cannot be used together; "
            "drop `cwd` to run in a fresh worktree, or drop `isolation` to run in that folder"
        )
    if not isinstance(cwd, str) or not cwd.strip():
        raise WorktreeError("Agent: `cwd` must be a non-empty absolute path")
    path = Path(cwd).expanduser()
    if not path.is_absolute():
        raise WorktreeError(
            f"Agent: `cwd` must be an absolute path, got {cwd!r}; prefix it with the project folder"
        )
    if not path.exists():
        raise WorktreeError(f"Agent: `cwd` folder {cwd} does not exist")
    if not path.is_dir():
        raise WorktreeError(f"Agent: `cwd` {cwd} is a file, not a folder")
    return path.resolve()
