"""What one agent's sandboxed command may write: its working folders, their git metadata, a private /tmp."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from catui.sandbox.own_branch import OwnBranches
from catui.sandbox.repo_guard import config_mounts, git_mounts, linked_names, nested_repo_mounts, stray_files
from catui.worktree.refs import find_git_root

PRIVATE_TMP = Path("/tmp")


@dataclass(frozen=True)
class Mount:
    """One bind mount at ``path`` inside the sandbox, writable or not, of ``source`` (default: ``path`` itself).

    ``placeholder``: a protected file that may not exist yet; the command's launch creates it empty (and
    removes it afterwards) so that there is something to mount over (see placeholders.py).
    """

    path: Path
    writable: bool
    source: Path | None = None
    placeholder: bool = False


@dataclass(frozen=True)
class SandboxLayout:
    """The mounts on top of a read-only root and a private /tmp, and whether the network is shared."""

    mounts: tuple[Mount, ...]
    share_network: bool
    writable: tuple[Path, ...] = field(default=())
    # Files that must not appear while a command runs (repo_guard.stray_files); removed after it if they do.
    strays: tuple[Path, ...] = field(default=())
    # Protected names that are symbolic links (repo_guard.linked_names); put back after a command if replaced.
    links: tuple[Path, ...] = field(default=())

    def describe_writable(self) -> str:
        """The writable folders, for messages to the model and ``catui sandbox check``."""
        return ", ".join(str(p) for p in self.writable) + f", and a private {PRIVATE_TMP}"


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _guarded(root: Path, own_branches: OwnBranches | None) -> list[Mount]:
    """The protections of one writable folder: its settings files, and its repository's config and refs."""
    mounts = [Mount(m.path, m.writable, m.source, m.placeholder) for m in config_mounts(root)]
    top = find_git_root(root)
    if top is not None:
        mounts.extend(Mount(m.path, m.writable, m.source, m.placeholder) for m in git_mounts(top, root, own_branches))
    return mounts


def build_layout(
    *,
    writable_roots: Iterable[Path],
    readable: Iterable[Path],
    extra_writable: Iterable[Path] = (),
    deny_write: Iterable[Path] = (),
    share_network: bool = False,
    nested_git: Iterable[Path] = (),
    own_branches: OwnBranches | None = None,
) -> SandboxLayout:
    """The mounts of one command.

    ``writable_roots`` are the agent's working folders (git metadata of linked worktrees is added for them);
    ``readable`` are folders that must stay visible if they live under /tmp, which the private /tmp hides
    (the main checkout, HOME, the current directory); ``extra_writable`` are ``allowWrite`` paths and the
    tool's own scratch folder; ``deny_write`` paths are read-only even inside writable folders; ``nested_git``
    are the ``.git`` entries of repositories inside the writable folders (nested_repos.py), guarded as the top's; ``own_branches`` remembers which branch each linked worktree may move (own_branch.py).
    Mounts are ordered by depth, so a deeper mount wins over the folder around it.
    """
    roots = [_real(p) for p in writable_roots if p.exists()]
    mounts: list[Mount] = [Mount(_real(p), False) for p in readable if p.exists()]
    strays: list[Path] = []
    links: list[Path] = []
    for root in roots:
        mounts.append(Mount(root, True))
        mounts.extend(_guarded(root, own_branches))
        links.extend(linked_names(root))
        top = find_git_root(root)
        if top is not None:
            strays.extend(p for p in stray_files(top) if p not in strays)
    extras = [_real(p) for p in extra_writable if p.exists()]
    mounts.extend(Mount(p, True) for p in extras)
    mounts.extend(Mount(_real(p), False) for p in deny_write if p.exists())
    denied = {_real(p) for p in deny_write if p.exists()}
    by_path = _merged(mounts, denied, {})
    anchors = [*roots, *extras]
    later: list[Mount] = []
    for path in denied:
        # A denyWrite path's folders are pinned too: renamed away (`mv sub sub2`), the path would not exist at
        # the next command, and its contents would be writable under the new name.
        later.extend(pin for pin in _pins(path.parent, anchors) if _writable_at(by_path, pin.path))
    for dot_git in nested_git:
        # Only a repository the command could write anyway is guarded (its pins are writable mounts: inside
        # `.claude/` or a denyWrite folder they would open what is closed).
        if _writable_at(by_path, _real(dot_git.parent)):
            later.extend(_nested_guard(dot_git, anchors))
            strays.extend(p for p in stray_files(dot_git.parent) if p not in strays)
    by_path = _merged(later, denied, by_path)
    ordered = sorted(by_path.values(), key=lambda m: (len(m.path.parts), str(m.path)))
    return SandboxLayout(
        mounts=tuple(ordered),
        share_network=share_network,
        writable=tuple(dict.fromkeys([*roots, *extras])),
        strays=tuple(strays),
        links=tuple(links),
    )


def _merged(mounts: Iterable[Mount], denied: set[Path], by_path: dict[Path, Mount]) -> dict[Path, Mount]:
    """Each path once: a writable mount of a path wins over a read-only one of the same path, except denyWrite."""
    by_path = dict(by_path)
    for mount in mounts:
        seen = by_path.get(mount.path)
        writable = (mount.writable or (seen is not None and seen.writable)) and mount.path not in denied
        source = mount.source or (seen.source if seen is not None else None)
        placeholder = mount.placeholder or (seen is not None and seen.placeholder)
        by_path[mount.path] = Mount(mount.path, writable and source is None and not placeholder, source, placeholder)
    return by_path


def _writable_at(by_path: dict[Path, Mount], path: Path) -> bool:
    """Whether ``path`` is writable under these mounts (the deepest mount at or above it decides)."""
    for candidate in (path, *path.parents):
        mount = by_path.get(candidate)
        if mount is not None:
            return mount.writable
    return False


def _pins(folder: Path, roots: list[Path]) -> list[Mount]:
    """``folder`` and those above it, up to the writable root holding it, each mounted on itself (writable): a
    mount point cannot be renamed, so neither can they, nor what they hold be moved away under another name."""
    pins = []
    for candidate in (folder, *folder.parents):
        if candidate in roots or not any(root in candidate.parents for root in roots):
            break
        pins.append(Mount(candidate, True))
    return pins


def _nested_guard(dot_git: Path, roots: list[Path]) -> list[Mount]:
    """A nested repository's protections, and its folder and those above it up to the writable root pinned:
    renamed away, the repository could be replaced by a look-alike with its own config."""
    guard = [Mount(m.path, m.writable, m.source, m.placeholder) for m in nested_repo_mounts(dot_git)]
    if not guard:
        return []
    return [*_pins(_real(dot_git.parent), roots), *guard]


def with_scratch(layout: SandboxLayout, scratch: Iterable[Path]) -> SandboxLayout:
    """``layout`` plus per-command scratch folders (fresh, unique temporary folders: writable, mounted last)."""
    extras = [_real(p) for p in scratch if p.exists()]
    if not extras:
        return layout
    return SandboxLayout(
        mounts=(*layout.mounts, *(Mount(p, True) for p in extras)),
        share_network=layout.share_network,
        writable=(*layout.writable, *extras),
        strays=layout.strays,
        links=layout.links,
    )


def bwrap_argv(
    binary: str, layout: SandboxLayout, cwd: Path, command: list[str], *, seccomp_fd: int | None = None
) -> list[str]:
    """The bwrap command line that runs ``command`` in ``cwd`` inside ``layout``.

    Everything is read-only (``--ro-bind / /``) and /tmp is a fresh tmpfs; then the layout's mounts, outer
    before inner. Every namespace is new (pid, ipc, uts, net unless shared, user where needed); bwrap drops
    all capabilities, so even root inside cannot remount. ``--die-with-parent`` ends the command when catui's
    process for it is killed (timeouts, TaskStop). ``seccomp_fd``: bwrap loads a seccomp program from it and
    applies it to the command (seccomp.py: no unix sockets).
    """
    argv = [binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", str(PRIVATE_TMP)]
    for mount in layout.mounts:
        argv += ["--bind" if mount.writable else "--ro-bind", str(mount.source or mount.path), str(mount.path)]
    argv += ["--unshare-all"]
    if layout.share_network:
        argv += ["--share-net"]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv += ["--die-with-parent", "--chdir", str(cwd), "--", *command]
    return argv
