"""The parts of a repository a sandboxed command must not change, because something runs them later, outside.

A command in the sandbox may write its working folders, but some files there are *read back by programs that
run outside the sandbox*: git reads ``.git/config`` (``core.fsmonitor`` runs at the next ``git status``,
``core.hooksPath`` and ``.git/hooks`` at the next checkout or commit) and ``.git/commondir``; catui and
Claude Code read ``.claude/`` and ``.catui/`` (settings with hooks, agents, commands) and ``.mcp.json``
(servers they start). Writing any of these would plant code that runs unsandboxed later. Each is mounted
read-only, whether or not it exists yet:

- folders (``.claude``, ``.catui``, ``.git/hooks``) are created empty when missing, then mounted;
- files (``.mcp.json``) are mounted over an empty placeholder held for the command's lifetime
  (placeholders.py);
- ``.git`` of a checkout is mounted on itself, so it cannot be renamed away and replaced by a look-alike
  with its own config (a folder holding mount points can be renamed; a mount point cannot).

In a linked worktree (an isolated agent), the shared repository is read-only except ``objects``, ``logs`` and
``refs``, so commits work; the ref of every branch other than the worktree's own is mounted read-only, so
``git update-ref refs/heads/main …`` or ``git branch -f main`` fail (branches that exist only in
``packed-refs`` are first written out as loose refs, which git treats the same, so that there is a file to
mount). ``.git/commondir`` cannot be held by a placeholder (git refuses an empty one), so ``stray_files``
names it for removal once the command has ended.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from catui.sandbox.git_includes import included_files
from catui.sandbox.own_branch import OwnBranches, packed_branches
from catui.worktree.refs import GitDirs, git_dirs

# catui's and Claude Code's settings folders (settings, hooks, agents, commands, skills).
PROTECTED_FOLDERS = (".catui", ".claude")
# Files at a working folder's top that start programs when catui or Claude Code next starts there.
PROTECTED_FILES = (".mcp.json",)
# In a linked worktree's shared repository, what a commit or a branch of the worktree writes.
SHARED_GIT_WRITABLE = ("objects", "refs", "logs")


@dataclass(frozen=True)
class GuardMount:
    """One mount the guard asks for: ``path`` writable or not; ``placeholder``: may be missing (a file)."""

    path: Path
    writable: bool = False
    source: Path | None = None
    placeholder: bool = False


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _ensure_folder(path: Path) -> bool:
    """Create ``path`` (empty) when missing; whether it is a folder now."""
    try:
        path.mkdir(exist_ok=True)
    except OSError:
        return False
    return path.is_dir() and not path.is_symlink()


def config_mounts(root: Path) -> list[GuardMount]:
    """``.claude``, ``.catui`` and ``.mcp.json`` at the top of the writable folder ``root``, read-only (a
    symbolic link's target, when the name is a link: the link itself is watched, see ``linked_names``)."""
    mounts = []
    for name in PROTECTED_FOLDERS:
        path = root / name
        if path.is_symlink():
            if path.is_dir():
                mounts.append(GuardMount(_real(path)))
        elif _ensure_folder(path):
            mounts.append(GuardMount(path))
    mounts.extend(GuardMount(root / name, placeholder=True) for name in PROTECTED_FILES)
    return mounts


def linked_names(root: Path) -> list[Path]:
    """Protected names in the writable folder ``root`` that are symbolic links. A link cannot be mounted over
    (a mount lands on its target, which is protected), so the command could replace the link itself with a
    folder or file of its own: ``LaunchPlan.finish`` puts the link back afterwards."""
    names = [root / name for name in (*PROTECTED_FOLDERS, *PROTECTED_FILES)]
    dot_git = root / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        names.extend(dot_git / name for name in ("config", "config.worktree", "hooks"))
    return [path for path in names if path.is_symlink()]


def git_mounts(top: Path, root: Path, own_branches: OwnBranches | None = None) -> list[GuardMount]:
    """The git protections of the work tree rooted at ``top`` (a plain checkout or a linked worktree), for the
    writable folder ``root`` inside it. ``own_branches`` decides which branch a linked worktree may move (a
    fresh one — this layout alone — when not given)."""
    dot_git = top / ".git"
    if dot_git.is_symlink():
        return []
    if dot_git.is_dir():
        # Only a root that holds `.git` makes it writable; from a sub-folder, `.git` stays read-only as it is.
        return _checkout_mounts(dot_git) if _real(top) == _real(root) else []
    dirs = git_dirs(top)
    if dirs is None:
        return []
    return _linked_worktree_mounts(dirs, (own_branches or OwnBranches()).of(dirs))


def nested_repo_mounts(dot_git: Path) -> list[GuardMount]:
    """The protections of a repository nested in a writable folder (nested_repos.py): a ``.git`` folder as a
    checkout's; a ``.git`` file (a submodule's or a linked worktree's pointer) read-only, so it cannot be
    pointed at a planted repository."""
    if dot_git.is_symlink():
        return []
    if dot_git.is_dir():
        return _checkout_mounts(dot_git)
    return [GuardMount(_real(dot_git))] if dot_git.is_file() else []


def _checkout_mounts(dot_git: Path) -> list[GuardMount]:
    """A plain checkout: ``.git`` stays writable (git needs it) but is pinned in place; config and hooks are not."""
    mounts = [GuardMount(_real(dot_git), writable=True), GuardMount(_real(dot_git / "config"))]
    # config.worktree is read when extensions.worktreeConfig is on (`git sparse-checkout` turns it on): held by
    # an empty stand-in when missing, since git accepts an empty config.
    mounts.append(GuardMount(_real(dot_git) / "config.worktree", placeholder=not (dot_git / "config.worktree").exists()))
    mounts.extend(_linked_entries_mounts(dot_git / "worktrees"))
    mounts.extend(_include_mounts(dot_git))
    hooks = dot_git / "hooks"
    if hooks.is_dir() if hooks.is_symlink() else _ensure_folder(hooks):
        mounts.append(GuardMount(_real(hooks)))
    modules = dot_git / "modules"
    if modules.is_dir():  # submodules' own config and hooks (git runs them from the parent's commands too)
        for entry in modules.iterdir():
            for name in ("config", "hooks"):
                if (entry / name).exists() and not (entry / name).is_symlink():
                    mounts.append(GuardMount(_real(entry / name)))
    return mounts


def _include_mounts(dot_git: Path) -> list[GuardMount]:
    """Files the checkout's config includes (git_includes.py), read-only; a missing one inside the checkout
    held by an empty stand-in, as git skips a missing include and a command could create it."""
    home = Path(os.environ.get("HOME") or Path.home())
    top = _real(dot_git.parent)
    mounts = []
    for target in included_files(dot_git / "config", home):
        if target.is_file():
            mounts.append(GuardMount(_real(target)))
        elif not os.path.lexists(target) and target.parent.is_dir() and _inside(_real(target.parent), top):
            mounts.append(GuardMount(_real(target.parent) / target.name, placeholder=True))
    return mounts


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _linked_entries_mounts(worktrees: Path) -> list[GuardMount]:
    """The main checkout's records of its linked worktrees (``.git/worktrees/<name>/``): their ``commondir``,
    ``gitdir`` and ``config.worktree`` read-only, the folders pinned. A rewritten ``commondir`` would make git,
    run later in that worktree (catui does, outside the sandbox, for an isolated agent's), read a planted
    repository's config; a rewritten ``gitdir`` would let ``git worktree prune`` forget a worktree."""
    if not worktrees.is_dir() or worktrees.is_symlink():
        return []
    mounts = [GuardMount(_real(worktrees), writable=True)]
    for entry in sorted(worktrees.iterdir()):
        if not entry.is_dir() or entry.is_symlink():
            continue
        mounts.append(GuardMount(_real(entry), writable=True))
        for name in ("commondir", "gitdir"):
            if (entry / name).is_file() and not (entry / name).is_symlink():
                mounts.append(GuardMount(_real(entry / name)))
        config = entry / "config.worktree"
        if not config.is_symlink():
            mounts.append(GuardMount(_real(entry) / "config.worktree", placeholder=not config.exists()))
    return mounts


def _linked_worktree_mounts(dirs: GitDirs, own_branch: str | None) -> list[GuardMount]:
    """An isolated agent's worktree: its own git folder, and commits to ``own_branch`` (not to other branches)
    in the shared one."""
    common, own = dirs.common_dir, dirs.git_dir
    mounts = [GuardMount(_real(common)), GuardMount(_real(own), writable=True)]
    # Its pointers: `.git` in the worktree, `commondir` and `gitdir` in its git folder, and its own config.
    for path in (dirs.work_tree / ".git", own / "commondir", own / "gitdir"):
        if path.is_file() and not path.is_symlink():
            mounts.append(GuardMount(_real(path)))
    if not (own / "config.worktree").is_symlink():  # read under extensions.worktreeConfig: held even when missing
        mounts.append(GuardMount(_real(own) / "config.worktree", placeholder=not (own / "config.worktree").exists()))
    head = common / "HEAD"
    if head.is_file():
        # An empty HEAD makes the shared repository unusable as a repository of its own (`git -C <main
        # checkout> checkout -b evil` fails before writing anything), while the worktree, whose HEAD lives in
        # its own git folder, works as before.
        mounts.append(GuardMount(_real(head), source=Path(os.devnull)))
    if common.name == ".git":
        # The main checkout stays visible, read-only: under /tmp the private /tmp would otherwise hide it,
        # and a write there would seem to succeed (into the throwaway /tmp) instead of being refused.
        mounts.append(GuardMount(_real(common.parent)))
    for name in SHARED_GIT_WRITABLE:
        part = common / name
        if part.is_dir():
            mounts.append(GuardMount(_real(part), writable=True))
    if dirs.files_backend:
        mounts.extend(_other_branch_mounts(common, own_branch))
    return mounts


def _other_branch_mounts(common: Path, own: str | None) -> list[GuardMount]:
    """Every branch except ``own`` read-only, and the folders holding them pinned (a renamed folder would free them)."""
    heads = common / "refs" / "heads"
    if not heads.is_dir():
        return []
    write_out_packed_branches(common, skip=own)
    mounts: list[GuardMount] = []
    pinned: set[Path] = set()
    for folder, _dirs, files in os.walk(heads):
        for name in files:
            ref = Path(folder) / name
            refname = ref.relative_to(common).as_posix()
            if refname == own or name.endswith(".lock"):
                continue
            mounts.append(GuardMount(_real(ref)))
            for parent in (Path(folder), *Path(folder).parents):
                if parent == common / "refs" or parent in pinned:
                    break
                pinned.add(parent)
                mounts.append(GuardMount(_real(parent), writable=True))
    return mounts


def write_out_packed_branches(common: Path, *, skip: str | None) -> None:
    """Give each branch that lives only in ``packed-refs`` a loose ref file with the same object id.

    git reads a loose ref before the packed one, so nothing changes for git; it takes git's own lock
    (``<ref>.lock``, created exclusively) and checks again under it, so a concurrent git update or deletion
    is never overwritten or undone.
    """
    for refname, object_id in packed_branches(common).items():
        if refname == skip:
            continue
        ref = common / refname
        if ref.exists():
            continue
        lock = ref.with_name(ref.name + ".lock")
        try:
            ref.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        except OSError:
            continue  # git is changing it right now: its new value will be a loose file anyway
        try:
            with os.fdopen(fd, "w", encoding="ascii") as out:
                out.write(object_id + "\n")
            if not ref.exists() and packed_branches(common).get(refname) == object_id:
                os.replace(lock, ref)
        except OSError:
            pass
        finally:
            if lock.exists():
                lock.unlink(missing_ok=True)


def stray_files(top: Path) -> list[Path]:
    """Files whose mere existence redirects git, and which must be removed once a command has ended.

    A checkout's ``.git/commondir`` makes git take its config (and hooks) from the folder it names; git never
    writes one in a checkout's own ``.git``, and no placeholder can hold the name (git refuses an empty one).
    """
    dot_git = top / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        return [dot_git / "commondir"]
    return []
