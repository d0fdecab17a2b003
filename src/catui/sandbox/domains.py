"""Which hosts ``sandbox.network.allowedDomains`` lets a sandboxed command reach (Claude Code's matching).

A pattern is an exact host name (``pypi.org``, ``localhost``, ``127.0.0.1``), matched case-insensitively, or
``*.example.com``, which matches every subdomain of ``example.com`` (``api.example.com``, ``a.b.example.com``)
but not ``example.com`` itself: list both to allow both.
"""

from __future__ import annotations

from collections.abc import Iterable

# Loopback names that commands commonly exempt from proxies; catui exempts those the allow-list does not name
# (inside the sandbox's own network namespace they reach the sandbox's loopback, not the host's).
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def _normal(host: str) -> str:
    host = host.strip().lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):  # an IPv6 literal as it appears in a URL
        host = host[1:-1]
    return host


def host_matches(host: str, pattern: str) -> bool:
    """Whether ``host`` matches one allowedDomains ``pattern``."""
    host, pattern = _normal(host), _normal(pattern)
    if pattern.startswith("*."):
        return host.endswith(pattern[1:]) and len(host) > len(pattern) - 1
    return host == pattern


def host_allowed(host: str, patterns: Iterable[str]) -> bool:
    """Whether any pattern of the allow-list matches ``host``."""
    return any(host_matches(host, p) for p in patterns)


def no_proxy_value(patterns: Iterable[str]) -> str:
    """``NO_PROXY`` for a sandboxed command: the loopback names the allow-list does not name.

    An allowed ``localhost`` must go through the proxy (the host's loopback is reachable only that way); the
    others stay direct, so a command can still talk to a server it started inside the sandbox.
    """
    allowed = list(patterns)
    return ",".join(name for name in LOOPBACK_NAMES if not host_allowed(name, allowed))
