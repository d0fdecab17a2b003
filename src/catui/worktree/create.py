"""``create_worktree``: give an agent its own working copy.

With git: ``<git root>/.catui/worktrees/agent-<8>`` on a new branch
``worktree-agent-<8>`` (the current contract: the whole agent id) from the commit HEAD points at (a dirty main checkout
is fine; the worktree starts from HEAD, not from the uncommitted files). One
``git worktree add`` does the work; the checks around it read git's files
directly so creation costs about what the bare git command costs.

With ``worktree.sparsePaths`` the worktree is added without a checkout, the
cone is set, then only those paths are checked out. ``worktree.symlinkDirectories``
are linked from the main checkout when present there and missing in the worktree.

With WorktreeCreate hooks configured, the hook makes the folder instead of git.

The worktree is recorded in state.db with status ``creating`` *before* ``git worktree add`` runs (its folder,
branch and start commit are known by then), and becomes ``active`` when it is ready: a catui killed at any
moment of the creation leaves a row naming what may exist, and the next start (or ``catui worktrees prune``)
removes it, locked half-made worktree and branch included. Any failure on the way rolls back what was made
(folder, branch, git's admin entry) and then forgets the row.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from catui.paths import project_runtime_dir
from catui.worktree.gitcmd import GitResult, git_executable, is_lock_contention, run_git
from catui.worktree.guard import worktree_branch, worktree_slug, worktrees_root
from catui.worktree.hooks import CREATE_EVENT, REMOVE_EVENT, configured_hooks, printed_path, run_hook
from catui.worktree.model import WorktreeError, WorktreeInfo
from catui.worktree.refs import GitDirs, branch_exists, find_git_root, git_dirs, read_ref

if TYPE_CHECKING:
    from catui.state.db import StateDB

ADD_ATTEMPTS = 6


def worktree_settings(settings: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(symlinkDirectories, sparsePaths)`` from settings' ``worktree`` object, validated."""
    section = settings.get("worktree") or {}
    if not isinstance(section, Mapping):
        raise WorktreeError(
            "settings: `worktree` must be an object with `symlinkDirectories` and/or `sparsePaths`"
        )
    return _relative_paths(section, "symlinkDirectories"), _relative_paths(section, "sparsePaths")


def _relative_paths(section: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = section.get(key)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise WorktreeError(
            f'settings: `worktree.{key}` must be a list of folder paths, e.g. ["node_modules"]'
        )
    cleaned: list[str] = []
    for item in value:
        posix = PurePosixPath(item.strip().replace("\\", "/"))
        if posix.is_absolute() or ".." in posix.parts:
            raise WorktreeError(
                f"settings: `worktree.{key}` entry {item!r} must be relative to the repository and stay inside it"
            )
        text = str(posix).strip("/")
        if text and text != "." and text not in cleaned:
            cleaned.append(text)
    return tuple(cleaned)


async def create_worktree(
    agent_id: str,
    *,
    repo_root: Path,
    settings: Mapping[str, Any] | None = None,
    state: StateDB | None = None,
    session_id: str = "",
    slug: str | None = None,
) -> WorktreeInfo:
    """Create the isolated worktree of ``agent_id`` and record it in ``state`` (status ``active``).

    ``slug`` names the folder (and the branch, ``worktree-<slug>``; WorktreeCreate hooks get it as ``name``)
    instead of ``agent-<first 8 of id>``: EnterWorktree's ``name``, a sub-agent's ``agent-<id>`` in the current
    contract.

    Raises :class:`~catui.worktree.model.WorktreeError` with a one-line reason
    (not a git repository and no hooks, git missing, path or branch taken, a
    failing hook, a file-system error), leaving nothing half-made behind.
    """
    settings = settings or {}
    repo_root = Path(repo_root).resolve()
    symlink_dirs, sparse_paths = worktree_settings(settings)
    create_hooks = configured_hooks(settings, CREATE_EVENT)
    if create_hooks:
        info = await _create_with_hooks(agent_id, repo_root, settings, session_id, slug)
    else:
        info = await _create_with_git(
            agent_id, repo_root, symlink_dirs, sparse_paths, session_id, slug, state=state
        )
    if state is not None:
        try:
            state.record_worktree(
                agent_id,
                path=info.path,
                branch=info.branch,
                head_commit=info.head_commit,
                git_root=info.git_root,
                hook_based=info.hook_based,
                status="active",
                meta=info.meta(),
            )
        except BaseException:
            await _rollback_info(info)
            raise
    return info


# ---- git ---------------------------------------------------------------------------------------


async def _create_with_git(
    agent_id: str,
    repo_root: Path,
    symlink_dirs: tuple[str, ...],
    sparse_paths: tuple[str, ...],
    session_id: str,
    slug: str | None = None,
    *,
    state: StateDB | None = None,
) -> WorktreeInfo:
    git_root = find_git_root(repo_root)
    if git_root is None:
        raise WorktreeError(
            f'isolation "worktree" needs a git repository, and {repo_root} is not inside one; run `git init` '
            "and commit, or configure WorktreeCreate/WorktreeRemove hooks in settings"
        )
    git_executable()  # a missing git is reported before anything is touched
    dirs = git_dirs(git_root)
    branch = f"worktree-{slug}" if slug else worktree_branch(agent_id)
    slug = slug or worktree_slug(agent_id)
    path = worktrees_root(git_root) / slug
    if os.path.lexists(path):
        raise WorktreeError(
            f"worktree folder {path} already exists (left over from an earlier run?); "
            f"remove it with `catui worktrees rm {agent_id}` or delete the folder"
        )
    if dirs is not None and branch_exists(dirs, branch):
        raise WorktreeError(_branch_taken(branch, git_root))
    head = await _head_commit(git_root, dirs)
    project_runtime_dir(git_root)  # writes .catui/.gitignore so worktrees never show up in the main checkout

    add_args = ["worktree", "add", "--quiet"]
    if sparse_paths:
        add_args.append("--no-checkout")
    add_args += ["-b", branch, str(path), head]
    info = WorktreeInfo(agent_id=agent_id, path=path, branch=branch, head_commit=head, git_root=git_root,
                        session_id=session_id)  # fmt: skip
    if state is not None:
        # Before anything exists: a kill from here on leaves this row for the next start to clean up.
        state.record_worktree(agent_id, path=path, branch=branch, head_commit=head, git_root=git_root,
                              hook_based=False, status="creating", meta=info.meta())  # fmt: skip
    try:
        for attempt in range(1, ADD_ATTEMPTS + 1):
            result = await run_git(*add_args, cwd=git_root)
            if result.ok:
                break
            if "already exists" in result.stderr and f"named '{branch}'" in result.stderr:
                # Someone else's branch (made since the check above): not ours to roll back.
                raise _BranchTaken(_branch_taken(branch, git_root))
            if not is_lock_contention(result) or attempt == ADD_ATTEMPTS:
                raise WorktreeError(f"git worktree add failed in {git_root}: {result.stderr_tail()}")
            # git removes its own half-made folder, but `-b` made the branch first: take it back, retry.
            await _remove_git_worktree(info)
            await asyncio.sleep(random.uniform(0.01, 0.05) * attempt)
        if sparse_paths:
            await _check(run_git("sparse-checkout", "set", "--cone", *sparse_paths, cwd=path, retry_on_lock=True),
                         "git sparse-checkout set")  # fmt: skip
            await _check(
                run_git("reset", "--quiet", "--hard", head, cwd=path), "git checkout of the sparse paths"
            )
        linked = _link_directories(git_root, path, symlink_dirs)
    except _BranchTaken as taken:
        _forget(state, agent_id)
        raise WorktreeError(str(taken)) from None
    except OSError as exc:
        await _remove_git_worktree(info)
        _forget(state, agent_id)
        raise WorktreeError(f"could not create worktree {path}: {exc.strerror or exc}") from exc
    except BaseException:  # includes cancellation: nothing half-made stays behind
        await _remove_git_worktree(info)
        _forget(state, agent_id)
        raise
    return WorktreeInfo(agent_id=agent_id, path=path, branch=branch, head_commit=head, git_root=git_root,
                        symlinks=linked, session_id=session_id)  # fmt: skip


def _forget(state: StateDB | None, agent_id: str) -> None:
    """Drop the ``creating`` row once the rollback is done (nothing of the worktree is left)."""
    if state is not None:
        with contextlib.suppress(Exception):
            state.delete_worktree(agent_id)


async def remove_unfinished_worktree(info: WorktreeInfo) -> None:
    """Remove what a creation that never finished (its process was killed) may have left: a locked
    half-made worktree, git's entry for it, its branch. The agent never ran in it, so nothing is kept.

    A ``git worktree add`` killed half-way can leave its admin folder (``.git/worktrees/<name>``) locked
    "initializing" and with a ``gitdir`` or ``commondir`` not yet written, which makes ``git worktree
    remove`` and ``prune`` skip or refuse it (and ``git branch -D`` believe the branch checked out); so the
    folder and that admin entry are removed directly first, then git prunes and deletes the branch.
    """
    assert info.git_root is not None
    admins = _admin_entries(info)
    if os.path.lexists(info.path):
        shutil.rmtree(info.path, ignore_errors=True)
    for admin in admins:
        shutil.rmtree(admin, ignore_errors=True)
    await _remove_git_worktree(info)


def _admin_entries(info: WorktreeInfo) -> list[Path]:
    """git's admin folders for ``info.path``: named after the folder (git may add a number), pointing at it
    or not yet pointing anywhere."""
    assert info.git_root is not None
    dirs = git_dirs(info.git_root)
    if dirs is None or not (dirs.common_dir / "worktrees").is_dir():
        return []
    own = os.path.realpath(info.path / ".git")
    found = []
    for admin in (dirs.common_dir / "worktrees").iterdir():
        if not admin.name.startswith(info.path.name):
            continue
        try:
            pointer = (admin / "gitdir").read_text(encoding="utf-8").strip()
        except OSError:
            pointer = ""
        if not pointer or os.path.realpath(pointer) == own:
            found.append(admin)
    return found


class _BranchTaken(Exception):
    """git refused `-b` because the branch exists: nothing was made, so nothing is rolled back."""


def _branch_taken(branch: str, git_root: Path) -> str:
    return (
        f"branch {branch} already exists in {git_root}; delete it (`git branch -D {branch}`, "
        "or `catui worktrees prune`) or merge it, then retry"
    )


async def _check(pending: Any, what: str) -> GitResult:
    result: GitResult = await pending
    if not result.ok:
        raise WorktreeError(f"{what} failed: {result.stderr_tail()}")
    return result


async def _head_commit(git_root: Path, dirs: GitDirs | None) -> str:
    head = read_ref(dirs, "HEAD") if dirs is not None else None
    if head:
        return head
    result = await run_git("rev-parse", "--verify", "--quiet", "HEAD^{commit}", cwd=git_root)
    if not result.ok or not result.stdout.strip():
        raise WorktreeError(
            f"the repository {git_root} has no commits yet, so there is nothing to start a worktree from; "
            "make a first commit"
        )
    return result.stdout.strip()


def _link_directories(main_root: Path, worktree: Path, names: tuple[str, ...]) -> tuple[str, ...]:
    """Symlink each folder present in the main checkout and missing in the worktree; returns those linked."""
    linked: list[str] = []
    for name in names:
        source = main_root / name
        target = worktree / name
        if not source.exists() or os.path.lexists(target):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(source, target, target_is_directory=source.is_dir())
        linked.append(name)
    return tuple(linked)


def unlink_directories(info: WorktreeInfo) -> None:
    """Remove the symlinks catui made (never what they point at)."""
    for name in info.symlinks:
        target = info.path / name
        if target.is_symlink():
            target.unlink()


def relink_directories(info: WorktreeInfo) -> None:
    """Put back the symlinks of a worktree that is being kept after all."""
    if info.git_root is None:
        return
    for name in info.symlinks:
        source, target = info.git_root / name, info.path / name
        if source.exists() and not os.path.lexists(target) and target.parent.is_dir():
            os.symlink(source, target, target_is_directory=source.is_dir())


async def _remove_git_worktree(info: WorktreeInfo) -> None:
    """Best-effort removal of everything a (possibly partial) git worktree creation made."""
    assert info.git_root is not None
    try:
        unlink_directories(info)
    except OSError:
        pass
    if info.path.exists():
        # Twice --force: a `worktree add` killed half-way (it outlasted the cancel grace) leaves its
        # entry locked "initializing", and the lock is ours to override.
        await run_git("worktree", "remove", "--force", "--force", str(info.path), cwd=info.git_root,
                      retry_on_lock=True)  # fmt: skip
    if os.path.lexists(info.path):
        shutil.rmtree(info.path, ignore_errors=True)
    await run_git("worktree", "prune", cwd=info.git_root, retry_on_lock=True)
    if info.branch:
        await run_git("branch", "-D", info.branch, cwd=info.git_root, retry_on_lock=True)


# ---- hooks -------------------------------------------------------------------------------------


async def _create_with_hooks(
    agent_id: str, repo_root: Path, settings: Mapping[str, Any], session_id: str, slug: str | None = None
) -> WorktreeInfo:
    slug = slug or worktree_slug(agent_id)
    remove_hooks = tuple(configured_hooks(settings, REMOVE_EVENT))
    payload = {
        "session_id": session_id,
        "transcript_path": "",
        "cwd": str(repo_root),
        "hook_event_name": CREATE_EVENT,
        "name": slug,
        "worktree_name": slug,
        "agent_id": agent_id,
    }
    path_text: str | None = None
    try:
        for hook in configured_hooks(settings, CREATE_EVENT):
            path_text = (
                printed_path(await run_hook(hook, payload, cwd=repo_root, event=CREATE_EVENT)) or path_text
            )
    except WorktreeError:
        # An earlier hook may already have made a folder: undo it, so nothing half-made is left behind.
        if path_text and remove_hooks:
            made = Path(path_text).expanduser()
            provisional = WorktreeInfo(
                agent_id=agent_id, path=made if made.is_absolute() else repo_root / made, branch=None,
                head_commit=None, git_root=find_git_root(repo_root), hook_based=True,
                remove_hooks=remove_hooks, session_id=session_id, project_root=repo_root,
            )
            with contextlib.suppress(Exception):
                await run_remove_hooks(provisional)
        raise
    if not path_text:
        raise WorktreeError(
            "WorktreeCreate hook printed no path; it must print the absolute path of the folder it created on stdout"
        )
    path = Path(path_text).expanduser()
    if not path.is_absolute():
        path = repo_root / path
    info = WorktreeInfo(
        agent_id=agent_id,
        path=path.resolve(),
        branch=None,
        head_commit=None,
        git_root=find_git_root(repo_root),
        hook_based=True,
        remove_hooks=remove_hooks,
        session_id=session_id,
        project_root=repo_root,
    )
    if not info.path.is_dir():
        raise WorktreeError(f"WorktreeCreate hook printed {path_text!r}, which is not an existing folder")
    return info


async def run_remove_hooks(info: WorktreeInfo) -> None:
    """Run the WorktreeRemove hooks recorded for a hook-made worktree."""
    payload = {
        "session_id": info.session_id,
        "transcript_path": "",
        "cwd": str(info.project_root or info.git_root or info.path.parent),
        "hook_event_name": REMOVE_EVENT,
        "worktree_path": str(info.path),
        "name": worktree_slug(info.agent_id),
        "agent_id": info.agent_id,
    }
    candidates = [info.project_root, info.git_root]
    cwd = next((c for c in candidates if c is not None and c.is_dir()), Path.cwd())
    for hook in info.remove_hooks:
        await run_hook(hook, payload, cwd=cwd, event=REMOVE_EVENT)


async def _rollback_info(info: WorktreeInfo) -> None:
    if info.hook_based:
        if info.remove_hooks:
            try:
                await run_remove_hooks(info)
            except WorktreeError:
                pass
    else:
        await _remove_git_worktree(info)
