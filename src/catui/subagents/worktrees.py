"""Worktrees lent to sub-agents (spec 7): created for a run, settled when it ends, found again on resume."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.errors import CatuiError
from catui.subagents.resolve import AgentSpawnError

if TYPE_CHECKING:
    from catui.state.db import StateDB
    from catui.worktree.model import WorktreeInfo

KeptWorktree = tuple[str | None, str | None]
"""``(path, branch)`` of a worktree kept because its agent changed something; ``(None, None)`` otherwise."""


class WorktreeLeases:
    """Creates, settles and re-opens the worktrees of one project's sub-agents (records in state.db)."""

    def __init__(self, project_root: Path, settings: Mapping[str, Any], state: StateDB | None = None, *,
                 full_ids: bool = False) -> None:
        self.project_root = project_root
        self.settings = settings
        self._state = state
        self.full_ids = full_ids
        """Name worktrees after the whole agent id (``agent-<id>``, branch ``worktree-agent-<id>``: the current
        contract) rather than its first 8 characters."""

    def state(self) -> StateDB:
        """The project's state database (worktree records), opened on first use."""
        if self._state is None:
            from catui.state.db import StateDB  # lazy (catui.lazy): SQLite, when a worktree is recorded

            self._state = StateDB(self.project_root)
        return self._state

    async def create(self, agent_id: str, session_id: str) -> WorktreeInfo:
        """A new worktree for ``agent_id``. Raises AgentSpawnError with the reason."""
        from catui.worktree.create import create_worktree  # lazy (catui.lazy): worktrees and git
        from catui.worktree.guard import worktree_slug

        try:
            slug = worktree_slug(agent_id, full_id=True) if self.full_ids else None
            return await create_worktree(
                agent_id, repo_root=self.project_root, settings=self.settings, state=self.state(),
                session_id=session_id, slug=slug,
            )
        except CatuiError as exc:
            raise AgentSpawnError(f"Agent could not create its worktree: {exc}") from None

    async def settle(self, worktree: WorktreeInfo | None) -> KeptWorktree:
        """Remove an unchanged worktree; report a changed one's path and branch."""
        if worktree is None:
            return None, None
        from catui.worktree.cleanup import finish_worktree  # lazy (catui.lazy)

        outcome = await finish_worktree(worktree, self.state())
        if not outcome.kept:
            return None, None
        return str(outcome.path), outcome.branch

    async def discard(self, worktree: WorktreeInfo | None) -> KeptWorktree:
        """Settle the worktree of a failed or abandoned run, never raising: kept only when it changed something."""
        if worktree is not None:
            with contextlib.suppress(Exception):
                return await self.settle(worktree)
        return None, None

    def reopen(self, agent_id: str, recorded: str) -> WorktreeInfo | None:
        """The worktree state.db knows at ``recorded`` for ``agent_id``, marked in use again; None if unknown.

        Marking it active keeps start-up sweeps (of this or another process) away from it.
        """
        row = None
        with contextlib.suppress(Exception):
            row = self.state().get_worktree(agent_id)
        if row is None or Path(str(row.get("path"))) != Path(recorded):
            return None
        from catui.worktree.model import WorktreeInfo  # lazy (catui.lazy)

        info = WorktreeInfo.from_row(row)
        with contextlib.suppress(Exception):
            self.state().record_worktree(
                agent_id, path=info.path, branch=info.branch, head_commit=info.head_commit,
                git_root=info.git_root, hook_based=info.hook_based, status="active",
                created_at=row.get("created_at"), meta=info.meta(),
            )
        return info

    def recorded_path(self, agent_id: str) -> str | None:
        """The worktree path state.db holds for ``agent_id``, if any."""
        row = None
        with contextlib.suppress(Exception):
            row = self.state().get_worktree(agent_id)
        path = (row or {}).get("path")
        return str(path) if path else None
