"""Worktree isolation: each ``isolation: "worktree"`` agent works in its own checkout.

Public API (all coroutines unless noted):

- :func:`create_worktree` ``(agent_id, *, repo_root, settings, state, session_id="") -> WorktreeInfo``
- :func:`finish_worktree` ``(info, state) -> WorktreeOutcome``: the Agent tool's end-of-run decision
- :func:`cleanup_worktree` ``(info, state) -> bool`` (removed?), :func:`remove_worktree` (unconditional)
- :func:`worktree_has_changes` ``(info) -> bool``, :func:`change_summary` ``(info) -> ChangeSummary``
- :func:`sweep_stale_worktrees` ``(repo_root, state)``, :func:`sweep_at_startup` ``(project_root)``
  (the CLI's start-up call), :func:`prune_worktrees`
- sync helpers: :func:`ensure_inside`, :func:`validate_agent_cwd`, :func:`worktree_settings`
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from catui.lazy import lazy_exports

if TYPE_CHECKING:
    from catui.worktree.changes import change_summary, commits_ahead, worktree_has_changes
    from catui.worktree.cleanup import (
        SweepResult,
        cleanup_worktree,
        finish_worktree,
        prune_worktrees,
        remove_worktree,
        sweep_at_startup,
        sweep_stale_worktrees,
    )
    from catui.worktree.create import create_worktree, worktree_settings
    from catui.worktree.guard import (
        ensure_inside,
        validate_agent_cwd,
        worktree_branch,
        worktree_slug,
        worktrees_root,
    )
    from catui.worktree.model import ChangeSummary, HookCommand, WorktreeError, WorktreeInfo, WorktreeOutcome

# lazy (catui.lazy): importing one submodule must not import its siblings
__getattr__ = lazy_exports(__name__, {
    "change_summary": "catui.worktree.changes",
    "commits_ahead": "catui.worktree.changes",
    "worktree_has_changes": "catui.worktree.changes",
    "SweepResult": "catui.worktree.cleanup",
    "cleanup_worktree": "catui.worktree.cleanup",
    "finish_worktree": "catui.worktree.cleanup",
    "prune_worktrees": "catui.worktree.cleanup",
    "remove_worktree": "catui.worktree.cleanup",
    "sweep_at_startup": "catui.worktree.cleanup",
    "sweep_stale_worktrees": "catui.worktree.cleanup",
    "create_worktree": "catui.worktree.create",
    "worktree_settings": "catui.worktree.create",
    "ensure_inside": "catui.worktree.guard",
    "validate_agent_cwd": "catui.worktree.guard",
    "worktree_branch": "catui.worktree.guard",
    "worktree_slug": "catui.worktree.guard",
    "worktrees_root": "catui.worktree.guard",
    "ChangeSummary": "catui.worktree.model",
    "HookCommand": "catui.worktree.model",
    "WorktreeError": "catui.worktree.model",
    "WorktreeInfo": "catui.worktree.model",
    "WorktreeOutcome": "catui.worktree.model",
})

__all__ = [
    "ChangeSummary",
    "HookCommand",
    "SweepResult",
    "WorktreeError",
    "WorktreeInfo",
    "WorktreeOutcome",
    "change_summary",
    "cleanup_worktree",
    "commits_ahead",
    "create_worktree",
    "ensure_inside",
    "finish_worktree",
    "prune_worktrees",
    "remove_worktree",
    "sweep_at_startup",
    "sweep_stale_worktrees",
    "validate_agent_cwd",
    "worktree_branch",
    "worktree_has_changes",
    "worktree_settings",
    "worktree_slug",
    "worktrees_root",
]
