"""What one agent's sandboxed command may write: its working folders, their git metadata, a private /tmp."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from catui.worktree.refs import find_git_root, git_dirs

PRIVATE_TMP = Path("/tmp")
# In a linked worktree's shared repository, what a commit or a branch of the worktree writes.
SHARED_GIT_WRITABLE = ("objects", "refs", "logs")
# catui's and Claude Code's settings folders stay read-only inside writable folders: a command must not be
# able to switch the sandbox off (or add allow rules) for the next one.
PROTECTED_FOLDERS = (".catui", ".claude")


@dataclass(frozen=True)
class Mount:
    """One bind mount at ``path`` inside the sandbox, writable or not, of ``source`` (default: ``path`` itself)."""

    path: Path
    writable: bool
    source: Path | None = None


@dataclass(frozen=True)
class SandboxLayout:
    """The mounts on top of a read-only root and a private /tmp, and whether the network is shared."""

    mounts: tuple[Mount, ...]
    share_network: bool
    writable: tuple[Path, ...] = field(default=())

    def describe_writable(self) -> str:
        """The writable folders, for messages to the model and ``catui sandbox check``."""
        return ", ".join(str(p) for p in self.writable) + f", and a private {PRIVATE_TMP}"


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _git_metadata(root: Path) -> list[Mount]:
    """A linked worktree's own git folder, and the parts of the shared repository a commit writes.

    The shared repository's HEAD, index and config stay read-only, so the main checkout cannot be switched
    to another branch or have its index changed from inside.
    """
    top = find_git_root(root)
    if top is None:
        return []
    if (top / ".git").is_dir():
        # A plain checkout: its .git folder is writable with it, except hooks, which git runs later outside
        # the sandbox (a planted hook would be a way out); git itself never writes there.
        # A missing hooks folder is created (empty, as `git init` would), so that a command cannot create it
        # and plant a hook in one go.
        hooks = top / ".git" / "hooks"
        try:
            hooks.mkdir(exist_ok=True)
        except OSError:
            return []
        return [Mount(_real(hooks), False)] if hooks.is_dir() else []
    dirs = git_dirs(top)
    if dirs is None:
        return []
    mounts = [Mount(_real(dirs.common_dir), False), Mount(_real(dirs.git_dir), True)]
    head = dirs.common_dir / "HEAD"
    if head.is_file():
        # An empty HEAD makes the shared repository unusable as a repository of its own (`git -C <main
        # checkout> checkout -b evil` fails before writing anything), while the worktree, whose HEAD lives in
        # its own git folder, works as before.
        mounts.append(Mount(_real(head), False, source=Path(os.devnull)))
    if dirs.common_dir.name == ".git":
        # The main checkout stays visible, read-only: under /tmp the private /tmp would otherwise hide it,
        # and a write there would seem to succeed (into the throwaway /tmp) instead of being refused.
        mounts.append(Mount(_real(dirs.common_dir.parent), False))
    for name in SHARED_GIT_WRITABLE:
        part = dirs.common_dir / name
        if part.is_dir():
            mounts.append(Mount(_real(part), True))
    return mounts


def build_layout(
    *,
    writable_roots: Iterable[Path],
    readable: Iterable[Path],
    extra_writable: Iterable[Path] = (),
    deny_write: Iterable[Path] = (),
    share_network: bool = False,
) -> SandboxLayout:
    """The mounts of one command.

    ``writable_roots`` are the agent's working folders (git metadata of linked worktrees is added for them);
    ``readable`` are folders that must stay visible if they live under /tmp, which the private /tmp hides
    (the main checkout, HOME, the current directory); ``extra_writable`` are ``allowWrite`` paths and the
    tool's own scratch folder; ``deny_write`` paths are read-only even inside writable folders.
    Mounts are ordered by depth, so a deeper mount wins over the folder around it.
    """
    roots = [_real(p) for p in writable_roots if p.exists()]
    mounts: list[Mount] = [Mount(_real(p), False) for p in readable if p.exists()]
    for root in roots:
        mounts.append(Mount(root, True))
        mounts.extend(_git_metadata(root))
        mounts.extend(Mount(root / name, False) for name in PROTECTED_FOLDERS if (root / name).is_dir())
    extras = [_real(p) for p in extra_writable if p.exists()]
    mounts.extend(Mount(p, True) for p in extras)
    mounts.extend(Mount(_real(p), False) for p in deny_write if p.exists())
    # Each path once: a writable mount of a path wins over a read-only one of the same path, except denyWrite.
    denied = {_real(p) for p in deny_write if p.exists()}
    by_path: dict[Path, Mount] = {}
    for mount in mounts:
        seen = by_path.get(mount.path)
        writable = (mount.writable or (seen is not None and seen.writable)) and mount.path not in denied
        source = mount.source or (seen.source if seen is not None else None)
        by_path[mount.path] = Mount(mount.path, writable and source is None, source)
    ordered = sorted(by_path.values(), key=lambda m: (len(m.path.parts), str(m.path)))
    return SandboxLayout(
        mounts=tuple(ordered),
        share_network=share_network,
        writable=tuple(dict.fromkeys([*roots, *extras])),
    )


def with_scratch(layout: SandboxLayout, scratch: Iterable[Path]) -> SandboxLayout:
    """``layout`` plus per-command scratch folders (fresh, unique temporary folders: writable, mounted last)."""
    extras = [_real(p) for p in scratch if p.exists()]
    if not extras:
        return layout
    return SandboxLayout(
        mounts=(*layout.mounts, *(Mount(p, True) for p in extras)),
        share_network=layout.share_network,
        writable=(*layout.writable, *extras),
    )


def bwrap_argv(binary: str, layout: SandboxLayout, cwd: Path, command: list[str]) -> list[str]:
    """The bwrap command line that runs ``command`` in ``cwd`` inside ``layout``.

    Everything is read-only (``--ro-bind / /``) and /tmp is a fresh tmpfs; then the layout's mounts, outer
    before inner. Every namespace is new (pid, ipc, uts, net unless shared, user where needed); bwrap drops
    all capabilities, so even root inside cannot remount. ``--die-with-parent`` ends the command when catui's
    process for it is killed (timeouts, TaskStop).
    """
    argv = [binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", str(PRIVATE_TMP)]
    for mount in layout.mounts:
        argv += ["--bind" if mount.writable else "--ro-bind", str(mount.source or mount.path), str(mount.path)]
    argv += ["--unshare-all"]
    if layout.share_network:
        argv += ["--share-net"]
    argv += ["--die-with-parent", "--chdir", str(cwd), "--", *command]
    return argv
