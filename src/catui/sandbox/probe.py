"""Whether bubblewrap can run here: found on PATH and able to create the namespaces the sandbox uses.

bwrap is the sandbox's root of trust, so it is never taken from a PATH folder that sandboxed commands can
write (an activated ``.venv/bin`` in the project, ``node_modules/.bin``, a relative entry): a command could
plant a ``bwrap`` there that runs everything unsandboxed from catui's next start on.
"""

from __future__ import annotations

import functools
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

PROBE_TIMEOUT_S = 10.0
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"


@dataclass(frozen=True)
class Availability:
    """``usable``: bwrap ran a command in fresh namespaces. ``reason`` says why not, and how to fix it."""

    usable: bool
    binary: str | None
    reason: str = ""


def probe_bwrap(binary: str = "bwrap", avoid: tuple[Path, ...] = ()) -> Availability:
    """Run ``bwrap`` once with every namespace the sandbox needs (the answer is cached per process).

    ``avoid``: folders sandboxed commands can write; a ``bwrap`` on PATH inside one of them is passed over.
    """
    return _probe(binary, tuple(Path(os.path.realpath(p)) for p in avoid))


def find_binary(binary: str, avoid: tuple[Path, ...]) -> tuple[str | None, list[str]]:
    """The first executable ``binary`` on PATH outside ``avoid`` (absolute folders only), and those passed over."""
    passed_over: list[str] = []
    for entry in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(entry, binary)
        if not (os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
            continue
        real = Path(os.path.realpath(candidate))
        if not os.path.isabs(entry) or any(real == root or root in real.parents for root in avoid):
            passed_over.append(candidate)
            continue
        return candidate, passed_over
    return None, passed_over


@functools.cache
def _probe(binary: str, avoid: tuple[Path, ...]) -> Availability:
    path, passed_over = find_binary(binary, avoid)
    if path is None and passed_over:
        return Availability(
            False, None,
            f"bubblewrap was found only at {', '.join(passed_over)}, in a folder that sandboxed commands can write "
            f"(or a relative PATH entry), so it is not trusted; {INSTALL_HINT}",
        )
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
