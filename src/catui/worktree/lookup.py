"""Finding a recorded worktree by what a person types: the agent id, a prefix of it, ``agent-XXXXXXXX``,
the branch ``worktree-agent-XXXXXXXX``, or its path."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from catui.state.db import DB_FILENAME, StateDB
from catui.worktree.model import WorktreeError, WorktreeInfo

MIN_PREFIX = 4


def match_worktree(records: Sequence[Mapping[str, Any]], ident: str) -> Mapping[str, Any]:
    """The one state.db worktree row ``ident`` names; WorktreeError says why none or several match."""
    ident = ident.strip()
    key = ident.removeprefix("worktree-").removeprefix("agent-")
    exact = [r for r in records if r["agent_id"] == ident or r["path"] == ident]
    candidates = exact or [r for r in records if len(key) >= MIN_PREFIX and str(r["agent_id"]).startswith(key)]
    if not candidates and any(str(r["agent_id"]).startswith(key) for r in records if key):
        raise WorktreeError(f"{ident!r} is too short: give at least {MIN_PREFIX} characters of the agent id")
    if not candidates:
        known = ", ".join(str(r["agent_id"]) for r in records) or "none"
        raise WorktreeError(f"no worktree matches {ident!r}; known agent ids: {known}")
    if len(candidates) > 1:
        raise WorktreeError(
            f"{ident!r} matches several worktrees ({', '.join(str(r['agent_id']) for r in candidates)}); "
            "give more of the agent id"
        )
    return candidates[0]


def recorded_worktree(project_root: Path, ident: str) -> WorktreeInfo:
    """The worktree ``ident`` names among those catui recorded for ``project_root`` (not removed ones).

    Looking creates nothing: a project without catui state is an error saying so.
    """
    if not (project_root / ".catui" / DB_FILENAME).is_file():
        raise WorktreeError(f"no worktree matches {ident!r}: {project_root} has no catui state")
    state = StateDB(project_root)
    try:
        rows = [r for r in state.list_worktrees() if r["status"] != "removed"]
    finally:
        state.close()
    return WorktreeInfo.from_row(dict(match_worktree(rows, ident)))
