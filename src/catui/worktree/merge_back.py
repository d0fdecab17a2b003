"""Merge-back: show an isolated agent's work, and bring it into a checkout of the same repository.

The agent's work is everything its worktree holds beyond its starting commit: its commits, and its
uncommitted and untracked files (catui's symlinked folders left out). :func:`snapshot_commit` turns
that into one commit without touching the worktree (a temporary index; the agent's own commit when
nothing is uncommitted), so diff, apply and merge all work on the same thing:

- :func:`worktree_diff` — ``git diff --stat`` and the full diff from the starting commit;
- :func:`apply_worktree` — the work merged into the checkout's files and index, not committed;
- ``apply_worktree(..., commit=True)`` — the same, committed (a fast-forward when the checkout has not
  moved since the agent started, else a merge commit with the agent's work as second parent).

The merge is computed first with ``git merge-tree --write-tree``, which touches no file; on a
conflict nothing is changed and :class:`MergeConflict` names the files. Files are then updated by
``git read-tree -m -u``, which checks every path before writing any (local changes in the way
refuse the whole update), and only then does the branch move. The worktree is never removed here.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from catui.worktree.changes import is_catui_runtime_gitignore
from catui.worktree.gitcmd import GitResult, run_git
from catui.worktree.model import WorktreeError, WorktreeInfo

MergeKind = Literal["applied", "fast-forward", "merge-commit", "nothing"]


class MergeConflict(WorktreeError):
    """The agent's work and the checkout changed the same lines; nothing was changed. ``files`` names them."""

    def __init__(self, message: str, files: list[str]) -> None:
        super().__init__(message)
        self.files = files


@dataclass(frozen=True)
class WorktreeDiff:
    """An agent's work against the commit its worktree started from."""

    base: str
    stat: str
    patch: str
    files: list[str]


@dataclass(frozen=True)
class MergeResult:
    """What :func:`apply_worktree` did: ``applied`` (files and index, no commit), ``fast-forward`` or
    ``merge-commit`` (then ``commit`` is the new HEAD), or ``nothing`` (no change to bring)."""

    kind: MergeKind
    files: list[str]
    commit: str | None = None

    def describe(self, agent_id: str) -> str:
        """One or two lines for people and models: what happened, and what to do next."""
        count = f"{len(self.files)} file{'s' if len(self.files) != 1 else ''}"
        if self.kind == "nothing":
            return f"Agent {agent_id}'s worktree has no changes to bring in."
        if self.kind == "applied":
            return (f"Applied agent {agent_id}'s work to the checkout ({count}, staged, not committed): "
                    "review with `git diff --cached`, then commit.")
        how = "fast-forward" if self.kind == "fast-forward" else "merge commit"
        return f"Merged agent {agent_id}'s work ({count}) as {how} {(self.commit or '')[:12]}."


def _check_mergeable(info: WorktreeInfo) -> str:
    if info.hook_based or info.head_commit is None:
        raise WorktreeError(
            f"worktree of agent {info.agent_id} was made by a WorktreeCreate hook, not git: catui cannot diff "
            "or merge it; look at its folder yourself")
    if not info.path.is_dir():
        raise WorktreeError(
            f"worktree of agent {info.agent_id} is gone ({info.path}); its branch {info.branch or '(none)'} may "
            "still hold its commits: git log " + (info.branch or ""))
    return info.head_commit


async def _git(*args: str, cwd: Path, what: str, env: dict[str, str] | None = None) -> GitResult:
    result = await run_git(*args, cwd=cwd, env=env)
    if not result.ok:
        raise WorktreeError(f"{what}: git {args[0]} failed: {result.stderr_tail()}")
    return result


async def snapshot_commit(info: WorktreeInfo) -> str:
    """One commit holding all of the agent's work (its HEAD when nothing is uncommitted); the worktree is untouched."""
    _check_mergeable(info)
    where = f"worktree of agent {info.agent_id}"
    head = (await _git("rev-parse", "HEAD", cwd=info.path, what=where)).stdout.strip()
    excluded = [f":(exclude){name}" for name in info.symlinks]
    if is_catui_runtime_gitignore(info.path):
        excluded.append(":(exclude).catui/.gitignore")
    with tempfile.TemporaryDirectory(prefix="catui-merge-") as scratch:
        # A private index: the agent's own index and files stay exactly as they are.
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        await _git("read-tree", "HEAD", cwd=info.path, what=where, env=env)
        await _git("add", "-A", "--", ".", *excluded, cwd=info.path, what=where, env=env)
        tree = (await _git("write-tree", cwd=info.path, what=where, env=env)).stdout.strip()
    head_tree = (await _git("rev-parse", "HEAD^{tree}", cwd=info.path, what=where)).stdout.strip()
    if tree == head_tree:
        return head
    message = f"catui: uncommitted work of agent {info.agent_id}"
    made = await run_git("commit-tree", tree, "-p", head, "-m", message, cwd=info.path,
                         env=await agent_identity_env(info.path))
    if not made.ok:
        raise WorktreeError(f"cannot record the uncommitted work of agent {info.agent_id}: {made.stderr_tail()}")
    return made.stdout.strip()


AGENT_IDENTITY = {"GIT_AUTHOR_NAME": "catui agent", "GIT_AUTHOR_EMAIL": "agent@catui.invalid",
                  "GIT_COMMITTER_NAME": "catui agent", "GIT_COMMITTER_EMAIL": "agent@catui.invalid"}
"""Who records an agent's uncommitted work when git knows no user (the commit holds the agent's work, not yours)."""


async def agent_identity_env(cwd: Path) -> dict[str, str]:
    """The user's identity when git has one (nothing to add), else :data:`AGENT_IDENTITY`.

    Recording the agent's work must not fail on a machine where ``user.name`` / ``user.email`` were never set.
    """
    known = await run_git("var", "GIT_COMMITTER_IDENT", cwd=cwd)
    return {} if known.ok else dict(AGENT_IDENTITY)


async def worktree_diff(info: WorktreeInfo) -> WorktreeDiff:
    """``git diff --stat`` and the full diff of the agent's work against its starting commit."""
    base = _check_mergeable(info)
    work = await snapshot_commit(info)
    where = f"diff of agent {info.agent_id}"
    stat = (await _git("diff", "--stat", base, work, cwd=info.path, what=where)).stdout
    patch = (await _git("diff", base, work, cwd=info.path, what=where)).stdout
    names = (await _git("diff", "--name-only", "-z", base, work, cwd=info.path, what=where)).stdout
    return WorktreeDiff(base=base, stat=stat, patch=patch, files=[n for n in names.split("\0") if n])


async def apply_worktree(
    info: WorktreeInfo, checkout: Path, *, commit: bool = False, message: str | None = None
) -> MergeResult:
    """Bring the agent's work into ``checkout`` (a checkout of the same repository): staged, or committed.

    Raises :class:`MergeConflict` (nothing changed) when both sides changed the same lines, and
    :class:`WorktreeError` when local changes are in the way or the folders are not one repository.
    """
    base = _check_mergeable(info)
    await _same_repository(info, checkout)
    work = await snapshot_commit(info)
    where = f"the checkout {checkout}"
    head = await run_git("rev-parse", "--verify", "HEAD", cwd=checkout)
    if not head.ok:
        raise WorktreeError(f"{where} has no commit yet: there is nothing to merge into")
    ours = head.stdout.strip()
    files = [n for n in (await _git("diff", "--name-only", "-z", base, work, cwd=checkout, what=where)).stdout
             .split("\0") if n]
    if not files:
        return MergeResult("nothing", [])
    merged = await run_git("merge-tree", "--write-tree", "--name-only", "--no-messages", ours, work, cwd=checkout)
    lines = merged.stdout.splitlines()
    if merged.returncode == 1:
        conflicted = sorted({line for line in lines[1:] if line.strip()})
        raise MergeConflict(
            f"agent {info.agent_id}'s work conflicts with {where} in {', '.join(conflicted)}; nothing was changed "
            f"and the worktree is kept ({info.path}): resolve by hand there, or merge its branch "
            f"{info.branch} with git", conflicted)
    if not merged.ok or not lines:
        raise WorktreeError(f"cannot merge agent {info.agent_id}'s work: git merge-tree failed: "
                            f"{merged.stderr_tail()} (catui needs git 2.38 or later)")
    tree = lines[0].strip()
    fast_forward = (await run_git("merge-base", "--is-ancestor", ours, work, cwd=checkout)).ok
    new_head: str | None = None
    if commit:
        # The commit is made before any file changes, so a failure here leaves the checkout untouched.
        new_head = work if fast_forward else await _merge_commit(tree, ours, work, info, checkout, message)
    await run_git("update-index", "-q", "--refresh", cwd=checkout)  # stale stat data must not look like edits
    updated = await run_git("read-tree", "-m", "-u", ours, tree, cwd=checkout)
    if not updated.ok:
        raise WorktreeError(
            f"{where} has local changes in files agent {info.agent_id} also changed ({_blocked(updated)}); "
            "nothing was changed: commit or stash them, then try again")
    if new_head is None:
        return MergeResult("applied", files)
    reason = f"catui worktrees merge: agent {info.agent_id}"
    moved = await run_git("update-ref", "-m", reason, "HEAD", new_head, ours, cwd=checkout)
    if not moved.ok:  # HEAD moved under us: put the files back as they were
        await run_git("read-tree", "-m", "-u", tree, ours, cwd=checkout)
        raise WorktreeError(f"{where}: HEAD changed during the merge ({moved.stderr_tail()}); nothing was changed")
    return MergeResult("fast-forward" if fast_forward else "merge-commit", files, new_head)


async def _merge_commit(tree: str, ours: str, work: str, info: WorktreeInfo, checkout: Path,
                        message: str | None) -> str:
    text = message or f"Merge the work of agent {info.agent_id}" + (f" ({info.branch})" if info.branch else "")
    made = await run_git("commit-tree", tree, "-p", ours, "-p", work, "-m", text, cwd=checkout)
    if not made.ok:
        raise WorktreeError(
            f"cannot make the merge commit: {made.stderr_tail()}; nothing was changed (git needs a name and email: "
            "git config --global user.name 'You'; git config --global user.email you@example.com)")
    return made.stdout.strip()


async def _same_repository(info: WorktreeInfo, checkout: Path) -> None:
    theirs = await _git("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=info.path,
                        what=f"worktree of agent {info.agent_id}")
    ours = await run_git("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=checkout)
    if not ours.ok:
        raise WorktreeError(f"{checkout} is not a git checkout: run this inside the repository the agent worked on")
    if Path(theirs.stdout.strip()).resolve() != Path(ours.stdout.strip()).resolve():
        raise WorktreeError(
            f"{checkout} is not a checkout of the repository agent {info.agent_id} worked on "
            f"({info.git_root}); run it there, or with -C {info.git_root}")


def _blocked(result: GitResult) -> str:
    """The paths git named as in the way (``Entry 'x' not uptodate``, ``'x' would be overwritten``)."""
    names: list[str] = []
    for line in result.stderr.splitlines():
        if "'" in line:
            parts = line.split("'")
            if len(parts) >= 3 and parts[1] not in names:
                names.append(parts[1])
        elif line.startswith(("\t", "    ")) and line.strip() not in names:
            names.append(line.strip())
    return ", ".join(names) or result.stderr_tail()
