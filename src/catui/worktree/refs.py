"""Reading git metadata from disk without starting git.

Every git process costs milliseconds, and worktree creation is measured
against a bare ``git worktree add``. The few facts catui needs before and after
(where the repository is, what HEAD points at, whether a branch exists) are
plain files in the files ref backend, so they are read directly. Anything
unusual (reftable, a symbolic loop, an unreadable file) returns ``None`` and
the caller asks git instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_OBJECT_ID = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


@dataclass(frozen=True)
class GitDirs:
    """``git_dir`` holds HEAD and the index of one worktree; ``common_dir`` the shared refs and objects."""

    work_tree: Path
    git_dir: Path
    common_dir: Path

    @property
    def files_backend(self) -> bool:
        """Whether refs live as plain files (and so can be read here)."""
        return (self.common_dir / "refs").is_dir() and not (self.common_dir / "reftable").exists()


def find_git_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding a ``.git`` (folder or file), or ``None``."""
    current = start.resolve()
    for candidate in (current, *current.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def git_dirs(work_tree: Path) -> GitDirs | None:
    """The git folders of the work tree rooted at ``work_tree`` (``None`` if unreadable)."""
    dot_git = work_tree / ".git"
    try:
        if dot_git.is_dir():
            return GitDirs(work_tree, dot_git, dot_git)
        text = dot_git.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    git_dir = Path(text[len("gitdir:") :].strip())
    if not git_dir.is_absolute():
        git_dir = (work_tree / git_dir).resolve()
    common_dir = git_dir
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
        common_dir = Path(common) if Path(common).is_absolute() else (git_dir / common).resolve()
    except OSError:
        pass
    return GitDirs(work_tree, git_dir, common_dir)


def _packed_ref(common_dir: Path, refname: str) -> str | None:
    try:
        text = (common_dir / "packed-refs").read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    suffix = " " + refname
    for line in text.splitlines():
        if line.endswith(suffix) and not line.startswith(("#", "^")):
            object_id = line[: -len(suffix)]
            return object_id if _OBJECT_ID.match(object_id) else None
    return None


def read_ref(dirs: GitDirs, refname: str, *, _depth: int = 0) -> str | None:
    """The object id ``refname`` (``HEAD`` or ``refs/…``) points at, following symbolic refs; ``None`` if unknown."""
    if _depth > 5 or not dirs.files_backend:
        return None
    # HEAD and other per-worktree refs live in git_dir; branches in common_dir.
    base = (
        dirs.git_dir
        if "/" not in refname or refname.startswith(("refs/bisect/", "refs/worktree/"))
        else dirs.common_dir
    )
    try:
        content = (base / refname).read_text(encoding="utf-8").strip()
    except (FileNotFoundError, NotADirectoryError):
        return _packed_ref(dirs.common_dir, refname) if refname.startswith("refs/") else None
    except OSError:
        return None
    if content.startswith("ref:"):
        return read_ref(dirs, content[4:].strip(), _depth=_depth + 1)
    return content if _OBJECT_ID.match(content) else None


def branch_exists(dirs: GitDirs, branch: str) -> bool | None:
    """Whether ``refs/heads/<branch>`` exists; ``None`` when this cannot be read from disk."""
    if not dirs.files_backend:
        return None
    refname = f"refs/heads/{branch}"
    if (dirs.common_dir / refname).is_file():
        return True
    return _packed_ref(dirs.common_dir, refname) is not None
