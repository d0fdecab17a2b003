"""Whether bubblewrap can run here: found on PATH and able to create the namespaces the sandbox uses."""

from __future__ import annotations

import functools
import shutil
import subprocess
from dataclasses import dataclass

PROBE_TIMEOUT_S = 10.0
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"


@dataclass(frozen=True)
class Availability:
    """``usable``: bwrap ran a command in fresh namespaces. ``reason`` says why not, and how to fix it."""

    usable: bool
    binary: str | None
    reason: str = ""


def probe_bwrap(binary: str = "bwrap") -> Availability:
    """Run ``bwrap`` once with every namespace the sandbox needs (the answer is cached per process)."""
    return _probe(binary)


@functools.cache
def _probe(binary: str) -> Availability:
    path = shutil.which(binary)
    if path is None:
        return Availability(False, None, f"bubblewrap ('{binary}') is not on PATH; {INSTALL_HINT}")
    argv = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            "--unshare-all", "--die-with-parent", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError) as exc:
        return Availability(False, path, f"{path} could not be started ({exc}); {INSTALL_HINT}")
    if done.returncode != 0:
        error = (done.stderr.strip().splitlines() or ["no error message"])[-1]
        return Availability(
            False, path,
            f"{path} cannot create namespaces here ({error}); allow unprivileged user namespaces "
            "(sysctl kernel.unprivileged_userns_clone=1), or run in a container that permits them",
        )
    return Availability(True, path)
