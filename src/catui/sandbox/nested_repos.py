"""Repositories nested inside a writable folder (a clone in ``vendor/``, an old-style submodule, a folder of
projects): their ``.git/config`` and hooks run later outside the sandbox as much as the top repository's do —
whenever git runs in that folder, which a shell prompt showing git status does on every ``cd``.

Finding them means walking the folder, which is the one costly step of a layout (about 25 µs a folder), so
``NestedRepos`` walks each writable folder once per catui process, at its first sandboxed command, and at most
``MAX_FOLDERS`` folders of it (breadth first, so shallow repositories are found first); docs/sandbox.md says
what that leaves out. A repository that a command itself creates later is its own to write anyway.
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path

MAX_FOLDERS = 20_000


def find_nested_git(root: Path, max_folders: int = MAX_FOLDERS) -> tuple[Path, ...]:
    """Every ``.git`` (folder or file) strictly below ``root``, breadth first, without following symbolic links
    or entering a ``.git``; at most ``max_folders`` folders are read."""
    found: list[Path] = []
    queue = deque([root])
    read = 0
    while queue and read < max_folders:
        folder = queue.popleft()
        read += 1
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.name == ".git":
                        if folder != root and not entry.is_symlink():
                            found.append(Path(entry.path))
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        queue.append(Path(entry.path))
        except OSError:
            continue
    return tuple(sorted(found))


class NestedRepos:
    """The nested repositories of each writable folder, found once per process (see the module's note)."""

    def __init__(self, max_folders: int = MAX_FOLDERS) -> None:
        self._max_folders = max_folders
        self._found: dict[Path, tuple[Path, ...]] = {}

    def under(self, roots: tuple[Path, ...]) -> tuple[Path, ...]:
        """The ``.git`` entries nested in any of ``roots`` (real paths)."""
        found: list[Path] = []
        for root in roots:
            real = Path(os.path.realpath(root))
            if real not in self._found:
                self._found[real] = find_nested_git(real, self._max_folders)
            found.extend(self._found[real])
        return tuple(dict.fromkeys(found))
