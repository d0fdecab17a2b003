"""What happens to a worktree when its agent is done, and the sweeps that find forgotten ones.

No changes: the worktree and its branch are removed. Changes (even
uncommitted ones): both are kept and reported, so the parent can inspect,
merge or discard them. A hook-made worktree is handed to the WorktreeRemove
hooks (and kept when there are none).

Removal is one ``git worktree remove`` (which itself refuses a worktree with
modified or untracked files, so the dirty check costs no extra process) and
one ``git branch -D``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from catui.state.db import DB_FILENAME, StateDB, pid_is_alive
from catui.worktree.changes import commits_ahead, is_catui_runtime_gitignore, worktree_has_changes
from catui.worktree.create import (
    relink_directories,
    remove_unfinished_worktree,
    run_remove_hooks,
    unlink_directories,
)
from catui.worktree.gitcmd import run_git
from catui.worktree.model import WorktreeError, WorktreeInfo, WorktreeOutcome
from catui.worktree.refs import find_git_root, git_dirs, read_ref

# git's refusal when a worktree has modified or untracked files (C locale is forced).
_DIRTY_REFUSAL = "contains modified or untracked files"


def _set_status(state: StateDB | None, info: WorktreeInfo, status: str) -> None:
    if state is not None:
        state.update_worktree_status(info.agent_id, status)


async def remove_worktree(info: WorktreeInfo, state: StateDB | None = None) -> None:
    """Remove the worktree and its branch whatever they contain (hook-made: run the WorktreeRemove hooks)."""
    if info.hook_based:
        if not info.remove_hooks:
            raise WorktreeError(
                f"worktree {info.path} was made by a WorktreeCreate hook and no WorktreeRemove hook is configured; "
                "delete the folder yourself"
            )
        await run_remove_hooks(info)
        _set_status(state, info, "removed")
        return
    git_root = _git_root(info)
    try:
        unlink_directories(info)
    except OSError:
        pass
    if info.path.exists():
        result = await run_git(
            "worktree", "remove", "--force", str(info.path), cwd=git_root, retry_on_lock=True
        )
        if not result.ok and info.path.exists():
            raise WorktreeError(f"cannot remove worktree {info.path}: {result.stderr_tail()}")
    else:
        await run_git("worktree", "prune", cwd=git_root, retry_on_lock=True)
    await _delete_branch(info, git_root)
    _set_status(state, info, "removed")


async def cleanup_worktree(info: WorktreeInfo, state: StateDB | None = None) -> bool:
    """Remove the worktree if the agent changed nothing; ``True`` if removed, ``False`` if kept.

    The state.db row becomes ``removed`` or ``kept``.
    """
    if info.hook_based:
        if not info.remove_hooks:
            _set_status(state, info, "kept")
            return False
        await remove_worktree(info, state)
        return True
    git_root = _git_root(info)
    if not info.path.is_dir():
        # The folder is gone: drop git's record of it; the branch goes only if it holds no new commits.
        await run_git("worktree", "prune", cwd=git_root, retry_on_lock=True)
        if not await _branch_has_commits(info, git_root):
            await _delete_branch(info, git_root)
        _set_status(state, info, "removed")
        return True
    if await commits_ahead(info) > 0:
        _set_status(state, info, "kept")
        return False
    unlink_directories(info)  # our own links would otherwise count as untracked files
    result = await run_git("worktree", "remove", str(info.path), cwd=git_root, retry_on_lock=True)
    if not result.ok and _DIRTY_REFUSAL not in result.stderr and info.path.exists():
        # Refused for another reason (locked, submodules, …): decide with a full check instead.
        relink_directories(info)
        if await worktree_has_changes(info):
            _set_status(state, info, "kept")
            return False
        await remove_worktree(info, state)
        return True
    if not result.ok and info.path.exists():
        relink_directories(info)
        if is_catui_runtime_gitignore(info.path) and not await worktree_has_changes(info):
            # Only catui's own run-time files were in the way (a session ran inside the worktree).
            await remove_worktree(info, state)
            return True
        _set_status(state, info, "kept")
        return False
    await _delete_branch(info, git_root)
    _set_status(state, info, "removed")
    return True


async def finish_worktree(info: WorktreeInfo, state: StateDB | None = None) -> WorktreeOutcome:
    """The Agent tool's end-of-run step: clean up or keep, and say which.

    A kept worktree's ``path`` and ``branch`` go into the result trailer as
    ``worktreePath:`` / ``worktreeBranch:``. If removal itself fails the
    worktree is reported as kept, with ``error`` saying why, rather than
    failing the agent's result.
    """
    try:
        removed = await cleanup_worktree(info, state)
    except WorktreeError as exc:
        try:
            _set_status(state, info, "kept")
        except Exception:
            pass
        return WorktreeOutcome(kept=True, path=info.path, branch=info.branch, error=str(exc))
    return WorktreeOutcome(kept=not removed, path=info.path, branch=info.branch)


@dataclass(frozen=True)
class SweepResult:
    """What a sweep or prune did, by agent id."""

    removed: tuple[str, ...]
    kept: tuple[str, ...]
    failed: tuple[tuple[str, str], ...]  # (agent id, reason)


async def sweep_stale_worktrees(
    repo_root: Path, state: StateDB, *, pid_alive: Callable[[int], bool] | None = None
) -> SweepResult:
    """Start-up sweep: ``active`` worktrees whose owning process is gone are cleaned up.

    ``creating`` rows whose process is gone (killed during creation) are removed whatever git left.

    Those without changes are removed; those with changes become ``kept``
    (listed by ``catui worktrees``). ``repo_root`` limits the sweep to that
    repository's worktrees.
    """
    alive = pid_alive or pid_is_alive
    rows = [
        row
        for row in [*state.list_worktrees(status="creating"), *state.list_worktrees(status="active")]
        if row.get("pid") is None or not alive(int(row["pid"]))
    ]
    return await _clean_rows(repo_root, state, rows)


async def sweep_at_startup(project_root: Path) -> SweepResult | None:
    """The CLI's start-up call: sweep stale worktrees if this project has a state.db at all.

    Creates nothing (a project that never used catui's run-time state stays
    untouched) and starts no git process when no worktree is recorded active.
    """
    db_path = Path(project_root) / ".catui" / DB_FILENAME
    if not db_path.is_file():
        return None
    state = StateDB(Path(project_root), path=db_path)
    try:
        if not state.list_worktrees(status="active") and not state.list_worktrees(status="creating"):
            return SweepResult((), (), ())
        return await sweep_stale_worktrees(Path(project_root), state)
    finally:
        state.close()


async def prune_worktrees(
    repo_root: Path, state: StateDB, *, pid_alive: Callable[[int], bool] | None = None
) -> SweepResult:
    """``catui worktrees prune``: remove kept (and orphaned active) worktrees without changes or whose folder is gone."""
    alive = pid_alive or pid_is_alive
    rows = [
        row
        for row in state.list_worktrees()
        if row["status"] == "kept"
        or (row["status"] in ("active", "creating") and (row.get("pid") is None or not alive(int(row["pid"]))))
    ]
    return await _clean_rows(repo_root, state, rows)


async def _clean_rows(repo_root: Path, state: StateDB, rows: list[dict[str, object]]) -> SweepResult:
    root = find_git_root(Path(repo_root)) or Path(repo_root).resolve()
    removed: list[str] = []
    kept: list[str] = []
    failed: list[tuple[str, str]] = []
    for row in rows:
        info = WorktreeInfo.from_row(dict(row))
        if info.git_root is not None and info.git_root.resolve() != root.resolve():
            continue
        try:
            if row["status"] == "creating":
                # Its creation was killed half-way: the agent never ran there, so it goes, locked or not.
                await remove_unfinished_worktree(info)
                _set_status(state, info, "removed")
                removed.append(info.agent_id)
            elif info.hook_based and info.path.is_dir() and not info.remove_hooks:
                kept.append(info.agent_id)
                _set_status(state, info, "kept")
            elif await cleanup_worktree(info, state):
                removed.append(info.agent_id)
            else:
                kept.append(info.agent_id)
        except WorktreeError as exc:
            failed.append((info.agent_id, str(exc)))
    return SweepResult(tuple(removed), tuple(kept), tuple(failed))


def _git_root(info: WorktreeInfo) -> Path:
    if info.git_root is None:
        raise WorktreeError(f"worktree {info.path} has no recorded git repository")
    if not info.git_root.is_dir():
        raise WorktreeError(f"repository {info.git_root} of worktree {info.path} no longer exists")
    return info.git_root


async def _branch_has_commits(info: WorktreeInfo, git_root: Path) -> bool:
    if not info.branch or not info.head_commit:
        return False
    dirs = git_dirs(git_root)
    tip = read_ref(dirs, f"refs/heads/{info.branch}") if dirs is not None else None
    if tip == info.head_commit:
        return False
    result = await run_git(
        "rev-list", "--count", f"{info.head_commit}..refs/heads/{info.branch}", cwd=git_root
    )
    if not result.ok:
        return False  # the branch is gone (or unreadable): nothing to keep
    return result.stdout.strip() not in ("", "0")


async def _delete_branch(info: WorktreeInfo, git_root: Path) -> None:
    if not info.branch:
        return
    result = await run_git("branch", "-D", info.branch, cwd=git_root, retry_on_lock=True)
    if not result.ok and "not found" not in result.stderr:
        raise WorktreeError(
            f"removed worktree {info.path} but not its branch {info.branch}: {result.stderr_tail()}"
        )
