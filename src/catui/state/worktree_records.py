"""The ``worktrees`` table: the git worktrees agents were given, and what became of them."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from catui.state.connection import StateConnection, StateError
from catui.state.rows import decode_row, decode_row_dict, encode_json, storable
from catui.state.schema import WORKTREE_STATUSES


class WorktreeRecords:
    """Worktree rows of :class:`~catui.state.db.StateDB` (a mixin; ``store`` is the database's connections)."""

    store: StateConnection

    def record_worktree(
        self,
        agent_id: str,
        *,
        path: str | Path,
        branch: str | None,
        head_commit: str | None,
        git_root: str | Path | None,
        hook_based: bool,
        pid: int | None = None,
        status: str = "active",
        created_at: float | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Insert or replace the worktree row of ``agent_id``; returns it. ``pid`` defaults to this process."""
        check_worktree_status(status)
        row = {
            "agent_id": agent_id,
            "path": str(path),
            "branch": branch,
            "head_commit": head_commit,
            "git_root": str(git_root) if git_root is not None else None,
            "hook_based": 1 if hook_based else 0,
            "created_at": time.time() if created_at is None else created_at,
            "status": status,
            "pid": os.getpid() if pid is None else pid,
            "meta": encode_json(dict(meta or {}), "meta"),
        }
        columns = ", ".join(row)
        placeholders = ", ".join("?" for _ in row)
        with self.store.transaction() as conn:
            conn.execute(
                f"INSERT OR REPLACE INTO worktrees ({columns}) VALUES ({placeholders})", storable(tuple(row.values()))
            )
        decoded = decode_row_dict(row)
        return decoded

    def update_worktree_status(self, agent_id: str, status: str) -> bool:
        """Set a worktree's status (``creating`` | ``active`` | ``kept`` | ``removed``); ``True`` if the row exists."""
        check_worktree_status(status)
        return self.store.write("UPDATE worktrees SET status = ? WHERE agent_id = ?", (status, agent_id)) > 0

    def get_worktree(self, agent_id: str) -> dict[str, Any] | None:
        """The worktree row of ``agent_id``, or ``None``."""
        rows = self.store.query("SELECT * FROM worktrees WHERE agent_id = ?", (agent_id,))
        return decode_row(rows[0]) if rows else None

    def list_worktrees(self, *, status: str | None = None) -> list[dict[str, Any]]:
        """Worktree rows, oldest first, optionally only those with ``status``."""
        if status is not None:
            check_worktree_status(status)
            rows = self.store.query(
                "SELECT * FROM worktrees WHERE status = ? ORDER BY created_at, agent_id", (status,)
            )
        else:
            rows = self.store.query("SELECT * FROM worktrees ORDER BY created_at, agent_id")
        return [row for row in (decode_row(r) for r in rows) if row is not None]

    def delete_worktree(self, agent_id: str) -> bool:
        """Forget a worktree row entirely; ``True`` if it existed."""
        return self.store.write("DELETE FROM worktrees WHERE agent_id = ?", (agent_id,)) > 0


def check_worktree_status(status: str) -> None:
    """Refuse a status the table does not know, naming the ones it does."""
    if status not in WORKTREE_STATUSES:
        raise StateError(
            f"worktree status must be one of {', '.join(sorted(WORKTREE_STATUSES))}, not {status!r}"
        )
