"""The records the worktree package hands out, and its error type."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from catui.errors import ConfigurationError

WORKTREES_DIRNAME = "worktrees"


class WorktreeError(ConfigurationError):
    """A worktree could not be created or removed; the message says why and how to fix it."""


@dataclass(frozen=True)
class HookCommand:
    """One configured ``{"type": "command"}`` WorktreeCreate/WorktreeRemove hook."""

    command: str
    timeout: float
    where: str  # e.g. "hooks.WorktreeCreate[0].hooks[0]", for error messages


@dataclass(frozen=True)
class WorktreeInfo:
    """An agent's isolated working copy.

    ``branch``/``head_commit``/``git_root`` are ``None`` for a hook-made
    worktree outside git. ``head_commit`` is the commit the worktree started
    from: change detection compares against it. ``symlinks`` are the folders
    catui linked in from the main checkout (not the agent's changes).
    """

    agent_id: str
    path: Path
    branch: str | None
    head_commit: str | None
    git_root: Path | None
    hook_based: bool = False
    symlinks: tuple[str, ...] = field(default=())
    # Hook-made worktrees remember their WorktreeRemove hooks, so a later sweep needs no settings.
    remove_hooks: tuple[HookCommand, ...] = field(default=())
    session_id: str = ""
    # The project the worktree was made for (the hooks' cwd); git_root covers it for git worktrees.
    project_root: Path | None = None

    def meta(self) -> dict[str, Any]:
        """The extra fields stored in the ``meta`` JSON of the state.db row."""
        return {
            "symlinks": list(self.symlinks),
            "remove_hooks": [
                {"command": h.command, "timeout": h.timeout, "where": h.where} for h in self.remove_hooks
            ],
            "session_id": self.session_id,
            "project_root": str(self.project_root) if self.project_root else None,
        }

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> WorktreeInfo:
        """Rebuild from a ``StateDB.get_worktree`` row."""
        meta = row.get("meta") or {}
        return cls(
            agent_id=str(row["agent_id"]),
            path=Path(row["path"]),
            branch=row.get("branch"),
            head_commit=row.get("head_commit"),
            git_root=Path(row["git_root"]) if row.get("git_root") else None,
            hook_based=bool(row.get("hook_based")),
            symlinks=tuple(meta.get("symlinks") or ()),
            remove_hooks=tuple(
                HookCommand(
                    command=str(h["command"]),
                    timeout=float(h.get("timeout", 60)),
                    where=str(h.get("where", "")),
                )
                for h in meta.get("remove_hooks") or ()
                if isinstance(h, dict) and h.get("command")
            ),
            session_id=str(meta.get("session_id") or ""),
            project_root=Path(meta["project_root"]) if meta.get("project_root") else None,
        )


@dataclass(frozen=True)
class WorktreeOutcome:
    """What happened to a worktree when its agent finished.

    ``kept`` worktrees are reported to the parent (``worktreePath:`` /
    ``worktreeBranch:`` lines of the Agent tool's trailer).
    """

    kept: bool
    path: Path
    branch: str | None
    error: str | None = None  # why removal failed, when a worktree was kept only because of that

    def trailer_lines(self) -> list[str]:
        """The lines the Agent tool's result trailer carries for a kept worktree (none when removed)."""
        if not self.kept:
            return []
        lines = [f"worktreePath: {self.path}"]
        if self.branch:
            lines.append(f"worktreeBranch: {self.branch}")
        return lines


class ChangeSummary(NamedTuple):
    """A worktree's changes against its starting commit (committed, staged, unstaged and untracked)."""

    files_changed: int
    insertions: int
    deletions: int
