"""Moving a repository to a remote agent and its changes back, as git bundles (no shared filesystem).

Caller side: :func:`snapshot_repository` makes one commit object of the
working state (HEAD plus uncommitted and untracked, not ignored, files) without
touching the caller's index or branches, names it ``refs/catui/remote/<agent id>``
and bundles it. Worker side: :func:`open_checkout` makes a checkout of that
bundle on branch ``catui-agent``; :func:`bundle_changes` commits what the agent
changed and bundles only the new commits (or returns None when nothing changed).
Caller side again: :func:`apply_changes` puts those commits on a freshly created
agent worktree (``.catui/worktrees/agent-<8>``), which is then settled (kept)
exactly like an ``isolation: "worktree"`` agent's.

Git runs synchronously here; callers on an event loop use ``asyncio.to_thread``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from catui.errors import CatuiError
from catui.worktree.refs import find_git_root

AGENT_BRANCH = "catui-agent"
"""The branch the agent works on in its checkout on the worker."""
SNAPSHOT_MESSAGE = "catui: uncommitted changes of the caller"
IDENTITY = ("-c", "user.name=catui agent", "-c", "user.email=agent@catui.invalid", "-c", "commit.gpgsign=false")


class RepoBundleError(CatuiError):
    """A git step of moving the repository failed; the message names the step and git's error."""


@dataclass(frozen=True)
class RepoSnapshot:
    """The caller's working state, bundled: what the worker checks out."""

    git_root: Path
    ref: str
    commit: str
    bundle: bytes


def git(*args: str, cwd: Path, env: dict[str, str] | None = None, step: str = "") -> str:
    """Run git; its stdout (stripped). Raises RepoBundleError naming ``step`` and git's last error line."""
    full_env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", **(env or {})}
    done = subprocess.run(["git", *args], cwd=cwd, env=full_env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise RepoBundleError(f"git {step or args[0]} failed in {cwd}: {tail}")
    return done.stdout.strip()


def snapshot_repository(project_root: Path, agent_id: str) -> RepoSnapshot | None:
    """Bundle HEAD plus the working tree's changes of the repository holding ``project_root``.

    None outside git (the agent then starts in an empty folder and brings nothing back).
    """
    git_root = find_git_root(project_root)
    if git_root is None:
        return None
    try:
        head = git("rev-parse", "--verify", "HEAD^{commit}", cwd=git_root, step="rev-parse HEAD")
    except RepoBundleError:
        raise RepoBundleError(
            f"the repository at {git_root} has no commit yet; commit once so a remote agent can get a copy"
        ) from None
    with tempfile.TemporaryDirectory(prefix="catui-bundle-") as scratch:
        # A private copy of the index: the caller's own index and branches are never touched, and the copied
        # stat data spares re-hashing every unchanged file of a big repository.
        private = Path(scratch) / "index"
        index_env = {"GIT_INDEX_FILE": str(private)}
        real_index = Path(git("rev-parse", "--path-format=absolute", "--git-path", "index", cwd=git_root))
        try:
            shutil.copyfile(real_index, private)
        except OSError:
            git("read-tree", "HEAD", cwd=git_root, env=index_env, step="read-tree")
        git("add", "-A", cwd=git_root, env=index_env, step="add (snapshot of uncommitted changes)")
        tree = git("write-tree", cwd=git_root, env=index_env, step="write-tree")
        commit = head
        if tree != git("rev-parse", "HEAD^{tree}", cwd=git_root):
            commit = git(*IDENTITY, "commit-tree", tree, "-p", head, "-m", SNAPSHOT_MESSAGE, cwd=git_root,
                         step="commit-tree")
        ref = f"refs/catui/remote/{agent_id}"
        git("update-ref", ref, commit, cwd=git_root, step="update-ref")
        path = Path(scratch) / "repo.bundle"
        git("bundle", "create", "-q", str(path), ref, cwd=git_root, step="bundle create")
        return RepoSnapshot(git_root=git_root, ref=ref, commit=commit, bundle=path.read_bytes())


def drop_snapshot_ref(snapshot: RepoSnapshot) -> None:
    """Forget the snapshot's ref once the agent's changes are back (or it ended)."""
    try:
        git("update-ref", "-d", snapshot.ref, cwd=snapshot.git_root, step="update-ref -d")
    except RepoBundleError:
        pass  # a ref left behind is harmless: `git for-each-ref refs/catui` shows it


def open_checkout(bundle: bytes, ref: str, folder: Path) -> Path:
    """Worker side: a checkout of ``ref`` from ``bundle`` in ``folder``, on branch ``catui-agent``."""
    folder.mkdir(parents=True, exist_ok=True)
    bundle_path = folder.parent / f"{folder.name}.bundle"
    bundle_path.write_bytes(bundle)
    git("init", "-q", cwd=folder, step="init")
    git("fetch", "-q", str(bundle_path), f"{ref}:refs/heads/{AGENT_BRANCH}", cwd=folder, step="fetch (bundle)")
    git("checkout", "-q", AGENT_BRANCH, cwd=folder, step="checkout")
    bundle_path.unlink(missing_ok=True)
    return folder


def bundle_changes(checkout: Path, base: str, message: str) -> bytes | None:
    """Worker side: commit what the agent changed; the new commits as a bundle, or None when nothing changed."""
    # Most agents change nothing: one status call settles it (a workflow's thousand agents each end here).
    status = git("status", "--porcelain=v2", "--branch", cwd=checkout, step="status").splitlines()
    if f"# branch.oid {base}" in status and all(line.startswith("#") for line in status):
        return None
    git("add", "-A", cwd=checkout, step="add")
    staged = subprocess.run(["git", "diff", "--cached", "--quiet"], cwd=checkout, check=False)
    if staged.returncode != 0:
        git(*IDENTITY, "commit", "-q", "--no-verify", "-m", message, cwd=checkout, step="commit")
    if git("rev-parse", "HEAD", cwd=checkout) == base:
        return None
    path = checkout.parent / f"{checkout.name}-changes.bundle"
    git("bundle", "create", "-q", str(path), AGENT_BRANCH, f"^{base}", cwd=checkout, step="bundle create")
    try:
        return path.read_bytes()
    finally:
        path.unlink(missing_ok=True)


def apply_changes(worktree: Path, bundle: bytes) -> None:
    """Caller side: move the agent worktree's branch to the commits in ``bundle``."""
    with tempfile.TemporaryDirectory(prefix="catui-changes-") as scratch:
        path = Path(scratch) / "changes.bundle"
        path.write_bytes(bundle)
        git("fetch", "-q", str(path), f"refs/heads/{AGENT_BRANCH}", cwd=worktree, step="fetch (agent changes)")
        git("reset", "-q", "--hard", "FETCH_HEAD", cwd=worktree, step="reset to the agent's commits")
