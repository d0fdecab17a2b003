"""Which branch an isolated agent's commands may move: decided by catui, not by a file the agent can write.

A linked worktree's ``HEAD`` lives in its own git folder, which its commands must be able to write (checkout,
rebase, a detached commit). Reading "its own branch" from that ``HEAD`` at every command let one command
point it elsewhere (``git symbolic-ref HEAD refs/heads/main``) and the next one move ``main``. So
``OwnBranches`` fixes, at the first sandboxed command catui runs in a worktree, the branch it then has checked
out (unless another worktree or the main checkout has that branch checked out) and which branches exist. From
then on a command may move that branch, or a branch that did not exist then and that ``HEAD`` names now
(a branch the agent made and switched to) — never one that existed before and is not its own.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from catui.worktree.refs import GitDirs

_OBJECT_ID = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


def head_branch(git_dir: Path) -> str | None:
    """The branch a worktree has checked out (``refs/heads/…``), from its HEAD; ``None`` when detached."""
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return head[4:].strip() if head.startswith("ref:") else None


def packed_branches(common: Path) -> dict[str, str]:
    """``refs/heads/…`` names and object ids listed in ``packed-refs``."""
    try:
        text = (common / "packed-refs").read_text(encoding="utf-8")
    except OSError:
        return {}
    found: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith(("#", "^")):
            continue
        object_id, _, refname = line.partition(" ")
        if refname.startswith("refs/heads/") and _OBJECT_ID.match(object_id):
            found[refname] = object_id
    return found


def branches(common: Path) -> frozenset[str]:
    """Every branch of the repository (loose ``refs/heads/…`` files and ``packed-refs`` entries)."""
    found = set(packed_branches(common))
    heads = common / "refs" / "heads"
    for folder, _dirs, files in os.walk(heads):
        for name in files:
            if not name.endswith(".lock"):
                found.add((Path(folder) / name).relative_to(common).as_posix())
    return frozenset(found)


def checked_out_elsewhere(dirs: GitDirs) -> frozenset[str]:
    """Branches the main checkout or another linked worktree of the repository has checked out."""
    found = {head_branch(dirs.common_dir)}
    worktrees = dirs.common_dir / "worktrees"
    if worktrees.is_dir():
        own = os.path.realpath(dirs.git_dir)
        for entry in worktrees.iterdir():
            if os.path.realpath(entry) != own:
                found.add(head_branch(entry))
    return frozenset(b for b in found if b is not None)


@dataclass(frozen=True)
class _FirstSight:
    branch: str | None
    existing: frozenset[str]


class OwnBranches:
    """Per catui process: the branch each linked worktree may move (see the module's note)."""

    def __init__(self) -> None:
        self._first: dict[str, _FirstSight] = {}

    def of(self, dirs: GitDirs) -> str | None:
        """The branch a command in the worktree ``dirs`` may move now, or ``None`` (every branch read-only)."""
        key = os.path.realpath(dirs.git_dir)
        now = head_branch(dirs.git_dir)
        first = self._first.get(key)
        if first is None:
            taken = checked_out_elsewhere(dirs)
            first = _FirstSight(now if now not in taken else None, branches(dirs.common_dir))
            self._first[key] = first
        if now is not None and (now == first.branch or now not in first.existing):
            return None if now in checked_out_elsewhere(dirs) else now
        return None
