"""One lock per background session, so that ``stop``, ``rm`` and ``respawn`` of the same session, run at the same
time from two terminals (or two programs), happen one after the other instead of interleaving (a respawned worker
whose folder ``rm`` deletes under it, two workers for one session).

The lock is ``fcntl.flock`` on ``<registry>/.locks/<id>.lock``, released when its holder ends, even by ``kill -9``.
An operation re-reads the session's entry once it holds the lock: the session may have been removed meanwhile.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator

from catui.bgsessions.registry import registry_dir


@contextlib.contextmanager
def session_lock(session_id8: str) -> Iterator[None]:
    folder = registry_dir() / ".locks"
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / f"{session_id8}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
