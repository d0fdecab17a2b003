"""How a sandboxed command with a domain allow-list reaches the proxy: the bridge in front of it, its env.

The command runs in its own network namespace (bwrap's ``--unshare-net``), where only its own loopback
exists. ``ProxyRoute.wrap`` puts ``bridge.py`` in front of the command (a loopback port bridged to the proxy's
unix socket, which is mounted into the sandbox), and ``ProxyRoute.env`` points the usual proxy variables at
that port, so curl, pip, git, npm, Python's urllib and requests go through the proxy without configuration.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from catui.sandbox import bridge
from catui.sandbox.domains import no_proxy_value

# The port inside the sandbox's own network namespace: nothing else listens there, so a fixed one is safe.
BRIDGE_PORT = 3128
BRIDGE_SCRIPT = Path(bridge.__file__).resolve()
HIDDEN_ROOT = Path("/tmp")
"""The sandbox's /tmp is private: whatever the bridge needs from the host's /tmp must be mounted back."""


def _interpreter() -> str:
    # The real interpreter, not a venv's link to it: the bridge needs only the standard library (-I -S), and a
    # venv may live where the sandbox cannot see it (a checkout in /tmp).
    return os.path.realpath(sys.executable)


@dataclass(frozen=True)
class ProxyRoute:
    """The proxy's unix socket (outside) and the allow-list, as one command sees them."""

    socket_path: Path
    allowed_domains: tuple[str, ...]
    port: int = BRIDGE_PORT
    python: str = field(default_factory=_interpreter)

    @property
    def socket_folder(self) -> Path:
        """The folder bind-mounted (read-only) into the sandbox so the bridge can connect to the socket."""
        return self.socket_path.parent

    def mounts_needed(self) -> tuple[Path, ...]:
        """What the bridge needs that the private /tmp would hide: the socket's folder, and the script,
        interpreter and standard library when they live in the host's /tmp."""
        wanted = [BRIDGE_SCRIPT, Path(self.python), Path(sys.base_prefix).resolve()]
        hidden = [p for p in wanted if p == HIDDEN_ROOT or HIDDEN_ROOT in p.parents]
        return tuple(dict.fromkeys([self.socket_folder, *hidden]))

    def wrap(self, command: list[str], seccomp: bytes | None = None) -> list[str]:
        """``command`` behind the bridge: the port listens before the command's first line runs; the bridge loads
        the ``seccomp`` program (seccomp.py) into the command's process, since bwrap's would bar the bridge too."""
        # -I -S: isolated and without site-packages, so the bridge starts fast and sees nothing of the venv.
        program = seccomp.hex() if seccomp else "-"
        return [self.python, "-I", "-S", str(BRIDGE_SCRIPT), str(self.socket_path), str(self.port), program, *command]

    def env(self) -> dict[str, str]:
        """The proxy variables (both spellings: tools read one or the other)."""
        http = f"http://127.0.0.1:{self.port}"
        socks = f"socks5h://127.0.0.1:{self.port}"
        no_proxy = no_proxy_value(self.allowed_domains)
        values = {"HTTP_PROXY": http, "HTTPS_PROXY": http, "ALL_PROXY": socks, "NO_PROXY": no_proxy}
        return {**values, **{name.lower(): value for name, value in values.items()}}
