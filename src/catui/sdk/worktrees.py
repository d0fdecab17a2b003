"""Merge-back from programs: an isolated agent's kept worktree, shown, applied or merged.

The same operations as ``catui worktrees diff|apply|merge`` (``worktree/merge_back.py`` does the git
work). ``agent_id`` is what the Agent result's ``agentId`` / ``worktreePath`` name (a prefix of at least
4 characters, ``agent-XXXXXXXX`` or the branch work too); ``cwd`` is a folder of the checkout the work
goes into (default: the current folder). Conflicts raise :class:`MergeConflict` (``.files``) with
nothing changed; other problems raise :class:`~catui.errors.ConfigurationError` subclasses.

    diff = await catui.worktree_diff(agent_id, cwd=repo)
    result = await catui.merge_worktree(agent_id, cwd=repo, commit=True)
"""

from __future__ import annotations

from pathlib import Path

from catui.paths import find_project_root
from catui.worktree.lookup import recorded_worktree
from catui.worktree.merge_back import MergeConflict, MergeResult, WorktreeDiff
from catui.worktree.merge_back import apply_worktree as apply_to_checkout
from catui.worktree.merge_back import worktree_diff as diff_of_worktree

__all__ = ["MergeConflict", "MergeResult", "WorktreeDiff", "apply_worktree", "merge_worktree", "worktree_diff"]


def _root(cwd: str | Path | None) -> Path:
    return find_project_root(Path(cwd).expanduser() if cwd is not None else Path.cwd())


async def worktree_diff(agent_id: str, *, cwd: str | Path | None = None) -> WorktreeDiff:
    """The agent's work against the commit its worktree started from: ``stat``, ``patch``, ``files``."""
    return await diff_of_worktree(recorded_worktree(_root(cwd), agent_id))


async def apply_worktree(agent_id: str, *, cwd: str | Path | None = None) -> MergeResult:
    """Bring the agent's work into the checkout, staged and not committed (``catui worktrees apply``)."""
    root = _root(cwd)
    return await apply_to_checkout(recorded_worktree(root, agent_id), root)


async def merge_worktree(
    agent_id: str, *, cwd: str | Path | None = None, commit: bool = True, message: str | None = None
) -> MergeResult:
    """Merge the agent's work into the checkout as a commit (a fast-forward when possible); ``commit=False`` stages it."""
    root = _root(cwd)
    return await apply_to_checkout(recorded_worktree(root, agent_id), root, commit=commit, message=message)
