"""Reusing an agent's sandbox layout between its commands, for as long as the folders it came from are unchanged.

Working out a layout walks the agent's folders (real paths, the git root, a worktree's ``.git`` file and common
dir, which protected folders exist): about 1.5 ms, on every Bash call. The result changes only when one of
those folders changes, so ``LayoutCache`` keeps it with a *fingerprint*: the inode of every writable root, the
modification time and inode of its ``.git``, ``.claude`` and ``.catui`` entries, and whether each ``allowWrite`` / ``denyWrite`` path and each
``denyWrite`` parent exists (and its parent's mtime). A command that creates ``.claude/`` or ``.catui/`` in a
root, adds ``.git/hooks``, rewrites a worktree's ``.git`` file, creates a branch (a linked worktree's layout mounts every other
branch read-only) or creates a ``denyWrite`` path changes the
fingerprint, so the next command gets a freshly built layout, never a stale, looser one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from catui.sandbox.layout import SandboxLayout
from catui.sandbox.repo_guard import PROTECTED_FOLDERS
from catui.worktree.refs import git_dirs

CacheKey = tuple[object, ...]
Fingerprint = tuple[object, ...]
MAX_ENTRIES = 64  # agents with distinct folders; more than that and the oldest are forgotten


def _stat_mark(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_ino


def _inode(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def fingerprint(roots: tuple[Path, ...], allow_write: tuple[Path, ...], deny_write: tuple[Path, ...]) -> Fingerprint:
    """What must stay the same for a cached layout of these folders to still be right."""
    marks: list[object] = []
    for root in roots:
        # Not the root's mtime: the per-command stand-in for a missing .mcp.json changes it on every command.
        # What the layout depends on in the root is the root itself and these entries.
        marks.append(_inode(root))
        for name in (".git", ".git/worktrees", *PROTECTED_FOLDERS):  # worktrees/: repo_guard mounts its entries
            marks.append(_stat_mark(root / name))
        marks.extend(_branch_marks(root))
    for path in allow_write:
        marks.append(os.path.exists(path))
    for path in deny_write:
        marks.append(os.path.exists(path))
        marks.append(_stat_mark(path.parent))
    return tuple(marks)


def _branch_marks(root: Path) -> list[object]:
    """For a linked worktree: its branch and the folders of the shared branches (whose refs the layout mounts)."""
    dot_git = root / ".git"
    if not dot_git.is_file():
        return []
    dirs = git_dirs(root)
    if dirs is None:
        return []
    marks: list[object] = [_stat_mark(dirs.git_dir / "HEAD"), _stat_mark(dirs.common_dir / "packed-refs")]
    for folder, _dirs, _files in os.walk(dirs.common_dir / "refs" / "heads"):
        marks.append((folder, _stat_mark(Path(folder))))
    return marks


class LayoutCache:
    """Layouts by key, each kept with the fingerprint it was built under."""

    def __init__(self) -> None:
        self._entries: dict[CacheKey, tuple[Fingerprint, SandboxLayout]] = {}

    def get(self, key: CacheKey, mark: Fingerprint, build: Callable[[], SandboxLayout]) -> SandboxLayout:
        """The cached layout for ``key`` if its fingerprint is still ``mark``; else ``build()``, kept."""
        entry = self._entries.get(key)
        if entry is not None and entry[0] == mark:
            return entry[1]
        layout = build()
        if len(self._entries) >= MAX_ENTRIES and key not in self._entries:
            self._entries.pop(next(iter(self._entries)))
        self._entries[key] = (mark, layout)
        return layout
