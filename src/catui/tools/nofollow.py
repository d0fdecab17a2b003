"""Opening a file tool's path exactly where the permission check saw it, even while links change under it.

The file tools resolve a path once (``resolve_path``: links followed, ``..`` gone) and the permission layer
judges that real path. Opening it again *by name* would follow links a second time: a command that flips a
folder between a real folder and a link to somewhere else (the main checkout, from an isolated agent's
worktree) could send the write there after the check. So the resolved path is opened one component at a
time from ``/``, each folder with ``O_NOFOLLOW | O_DIRECTORY`` relative to the previous folder's descriptor
and the file itself with ``O_NOFOLLOW``: a component that has become a link makes the open fail
(``PathChangedError``) instead of leading elsewhere, and the file is then read or written through the
descriptor it got. Missing folders are created the same way (``mkdir`` relative to the parent's descriptor).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class PathChangedError(OSError):
    """A component of an already-resolved path is a symbolic link (or no longer a folder) now."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            errno.ELOOP,
            f"{path} changed while it was being opened: a part of it is now a symbolic link or no longer a "
            "folder (another program is changing it). Nothing was read or written there; check the folder and "
            "try again",
        )


def _open_parent(path: Path, *, make_parents: bool) -> int:
    """A descriptor of ``path``'s folder, reached without following any link."""
    fd = os.open("/", _DIR_FLAGS)
    try:
        for name in path.parts[1:-1]:
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not make_parents:
                    raise
                try:
                    os.mkdir(name, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise PathChangedError(path) from None
        raise
    return fd


def open_unfollowed(path: Path, flags: int, *, make_parents: bool = False, mode: int = 0o644) -> int:
    """Open the resolved absolute ``path`` with ``flags`` following no link, whatever kind of file it is.

    ``O_NONBLOCK`` is added (a FIFO must not hang the tool); the caller checks the kind and clears it.
    """
    if not path.is_absolute():
        raise ValueError(f"open_unfollowed needs an absolute path, got {path}")
    parent = _open_parent(path, make_parents=make_parents)
    try:
        return os.open(path.name, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, mode, dir_fd=parent)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PathChangedError(path) from None
        raise
    finally:
        os.close(parent)


def open_resolved(path: Path, flags: int, *, make_parents: bool = False, mode: int = 0o644) -> int:
    """Open the resolved absolute ``path`` with ``flags`` without following links; the file must be regular.

    ``O_NONBLOCK`` is added for the open (a FIFO must not hang the tool) and cleared afterwards.
    """
    fd = open_unfollowed(path, flags, make_parents=make_parents, mode=mode)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, f"{path} is not a regular file")
    os.set_blocking(fd, True)
    return fd


def read_resolved(path: Path) -> bytes:
    """The whole content of the resolved ``path``, read through a descriptor opened without following links."""
    fd = open_resolved(path, os.O_RDONLY)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def write_resolved(path: Path, data: bytes, *, make_parents: bool = False) -> None:
    """Replace the content of the resolved ``path`` (created when missing) with ``data``, following no link.

    The file is truncated only once it is known to be a regular file reached without links, and every byte
    is written (a short write is continued, not ignored).
    """
    fd = open_resolved(path, os.O_WRONLY | os.O_CREAT, make_parents=make_parents)
    try:
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)
