"""Did the agent change its worktree? (and by how much, for ``catui worktrees``)

A worktree has changes when ``git status`` is not empty (modified, staged or
untracked files, ignoring the folders catui symlinked in) or when HEAD has
commits the starting commit does not (``git rev-list <start>..HEAD --count``).
"""

from __future__ import annotations

from pathlib import Path

from catui.paths import RUNTIME_GITIGNORE
from catui.worktree.gitcmd import run_git
from catui.worktree.model import ChangeSummary, WorktreeError, WorktreeInfo
from catui.worktree.refs import git_dirs, read_ref

RUNTIME_GITIGNORE_ENTRY = "? .catui/.gitignore"


async def commits_ahead(info: WorktreeInfo, current_head: str | None = None) -> int:
    """How many commits the worktree's HEAD has that its starting commit lacks."""
    if info.head_commit is None:
        return 0
    if current_head is None:
        dirs = git_dirs(info.path)
        current_head = read_ref(dirs, "HEAD") if dirs is not None else None
    if current_head == info.head_commit:
        return 0  # the common case, answered without starting git
    result = await run_git("rev-list", "--count", f"{info.head_commit}..HEAD", cwd=info.path)
    if not result.ok:
        raise WorktreeError(f"cannot compare worktree {info.path} with its start: {result.stderr_tail()}")
    try:
        return int(result.stdout.strip() or "0")
    except ValueError:
        return 0


async def dirty_entries(info: WorktreeInfo) -> tuple[list[str], str | None]:
    """``git status`` entries of the worktree (catui's symlinks left out) and the HEAD commit it reports."""
    # -uall lists untracked files one by one, so catui's own `.catui/.gitignore` can be told apart
    # from files an agent added under `.catui/` (ignored files are never listed, whatever their number).
    result = await run_git(
        "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all", cwd=info.path
    )
    if not result.ok:
        raise WorktreeError(f"cannot read the status of worktree {info.path}: {result.stderr_tail()}")
    own_links = {f"? {name}" for name in info.symlinks}
    head: str | None = None
    entries: list[str] = []
    for token in result.stdout.split("\0"):
        if not token:
            continue
        if token.startswith("# "):
            if token.startswith("# branch.oid "):
                oid = token[len("# branch.oid ") :].strip()
                head = oid if oid != "(initial)" else None
            continue
        if token in own_links or (token == RUNTIME_GITIGNORE_ENTRY and is_catui_runtime_gitignore(info.path)):
            continue
        entries.append(token)
    return entries, head


def is_catui_runtime_gitignore(worktree: Path) -> bool:
    """Whether ``<worktree>/.catui/.gitignore`` is the file catui writes for its run-time folders.

    A catui session running inside the worktree writes it (and its ignored
    tasks/state files); that is not the agent's work.
    """
    try:
        return (worktree / ".catui" / ".gitignore").read_text(encoding="utf-8") == RUNTIME_GITIGNORE
    except OSError:
        return False


async def worktree_has_changes(info: WorktreeInfo) -> bool:
    """Whether the agent left anything in its worktree: uncommitted files or new commits.

    A hook-made worktree outside git cannot be inspected and counts as changed
    (so nothing is thrown away unseen).
    """
    if info.hook_based and info.head_commit is None:
        return True
    if not info.path.is_dir():
        return False
    entries, head = await dirty_entries(info)
    if entries:
        return True
    return await commits_ahead(info, head) > 0


async def change_summary(info: WorktreeInfo) -> ChangeSummary:
    """``(files_changed, insertions, deletions)`` of the worktree against its starting commit.

    Counts committed and uncommitted changes to tracked files (``git diff
    --numstat <start>``) plus untracked files (each line an insertion).
    """
    if info.head_commit is None or not info.path.is_dir():
        return ChangeSummary(0, 0, 0)
    diff = await run_git("diff", "--numstat", "-z", info.head_commit, cwd=info.path)
    if not diff.ok:
        raise WorktreeError(f"cannot diff worktree {info.path}: {diff.stderr_tail()}")
    files = insertions = deletions = 0
    tokens = diff.stdout.split("\0")
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if not token:
            continue
        parts = token.split("\t")
        if len(parts) < 3:
            continue
        added, removed = parts[0], parts[1]
        if parts[2] == "":
            index += 2  # a rename: the next two tokens are the old and new path
        files += 1
        insertions += int(added) if added.isdigit() else 0  # "-" for binary files
        deletions += int(removed) if removed.isdigit() else 0
    untracked = await run_git("ls-files", "--others", "--exclude-standard", "-z", cwd=info.path)
    own = set(info.symlinks)
    for name in untracked.stdout.split("\0") if untracked.ok else []:
        if not name or name.rstrip("/") in own:
            continue
        files += 1
        insertions += _line_count(info.path / name)
    return ChangeSummary(files, insertions, deletions)


def _line_count(path: Path) -> int:
    try:
        data = path.read_bytes()
    except OSError:
        return 0
    if b"\0" in data[:8000]:
        return 0  # binary, as git diff would count it
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
