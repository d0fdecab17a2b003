"""The process groups Bash commands started, ended when catui ends.

Every command runs in a session of its own (so a timeout can kill all it
started). A command that forks something into the background (``sleep 60 &``,
a dev server) leaves that process in its group after the shell returns; as in a
terminal whose shell exits, it must not outlive catui. With the sandbox on,
bubblewrap's PID namespace already ends it; without it, this module does:
each group is recorded when its command starts and sent SIGKILL at interpreter
exit (normal end, ``sys.exit``, SIGINT, and SIGTERM, which catui turns into a
normal end). A ``kill -9`` of catui itself cannot be caught; then they stay.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal

_groups: set[int] = set()
_registered = False


def remember(pgid: int) -> None:
    """Record the process group ``pgid`` (a command's session leader's pid) for the end of catui.

    Groups that have emptied are forgotten first: Linux does not hand out a pid while a live group still
    uses it as its id, but once the group is empty the number may go to an unrelated process.
    """
    global _registered
    for known in list(_groups):
        if not _has_members(known):
            _groups.discard(known)
    _groups.add(pgid)
    if not _registered:
        atexit.register(end_all)
        _registered = True


def end_all() -> None:
    """SIGKILL every recorded group that still has members."""
    while _groups:
        pgid = _groups.pop()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


def _has_members(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
