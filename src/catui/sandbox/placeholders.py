"""Empty read-only stand-ins for protected files that do not exist yet (``.mcp.json``).

bubblewrap can mount only over something that exists, and a file that is missing when a command starts could
be created by it (a new ``.mcp.json`` runs its servers at the next start). So before such a command starts,
catui creates the missing file empty and mounts it read-only: inside the sandbox the name is taken by a
read-only mount point, which can be neither written, replaced, renamed nor removed.

The empty file must not outlive the commands that need it (it would show up in ``git status``), and must not
be removed while another command still has it mounted: unlinking a mount point in another mount namespace
silently detaches that mount, which would reopen the hole for the other command. Each user of a placeholder
holds a shared ``flock`` on it for as long as its command runs; releasing upgrades to an exclusive lock
without waiting and removes the file only when that succeeds (nobody else holds it) and the file is still
the same empty file. This works across catui processes in the same repository. A placeholder left behind by
a crash is an empty file; the next command that uses it removes it when it ends.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

# How long to wait for another process that is removing a placeholder (microseconds of work) before
# assuming the exclusive lock is held by something else (a command inside a sandbox that locked the
# mounted file): then nobody is removing it, and it is used as an existing file.
_WAIT_FOR_REMOVER_S = 1.0


@dataclass
class PlaceholderLease:
    """A shared lock on an empty placeholder file, held while a command that mounts it runs."""

    path: Path
    fd: int
    inode: tuple[int, int]

    def release(self) -> None:
        """Drop the lock; remove the file if it is still this empty placeholder and nobody else uses it."""
        if self.fd < 0:
            return
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pass  # still used by another command (or locked from inside a sandbox): it stays
        else:
            try:
                st = os.lstat(self.path)
                if (st.st_dev, st.st_ino) == self.inode and stat.S_ISREG(st.st_mode) and st.st_size == 0:
                    os.unlink(self.path)
            except OSError:
                pass
        finally:
            os.close(self.fd)
            self.fd = -1


def lease_placeholder(path: Path) -> PlaceholderLease | None:
    """Make sure ``path`` exists for the sandbox to mount over; a lease when it is (or was made) an empty file.

    ``None`` means the path already exists as a real file (or a link, or a folder): it is mounted as it is and
    nothing is removed afterwards. Raises ``OSError`` when the file can neither be found nor created.
    """
    deadline = time.monotonic() + _WAIT_FOR_REMOVER_S
    while True:
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        try:
            fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            try:
                fd = os.open(path, flags)
            except FileNotFoundError:
                continue  # removed in between: create it
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    return None  # a symbolic link: mounted as it is
                raise
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > 0:
            os.close(fd)
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            if time.monotonic() < deadline:
                time.sleep(0.005)  # another process is deciding whether to remove it
                continue
            return None  # locked from inside a sandbox: nobody removes it, so it can be used as it is
        try:
            current = os.lstat(path)
        except FileNotFoundError:
            os.close(fd)
            continue
        if (current.st_dev, current.st_ino) != (st.st_dev, st.st_ino):
            os.close(fd)
            continue  # removed and created again in between: start over with the new one
        return PlaceholderLease(path, fd, (st.st_dev, st.st_ino))
