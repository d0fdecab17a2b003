"""What the environment says about the providers' HTTP: which client, timeouts, proxies, CA certificates.

Read from the environment a provider was built with, which for a run is the
app's merged environment (process, then the settings' ``env`` block, then the
SDK's ``env=`` option), never from ``os.environ`` behind its back:

- ``CATUI_HTTP_CLIENT``: ``lean`` or ``httpx`` forces a transport; unset or
  ``auto`` uses the lean one unless a proxy applies to the URL;
- ``CATUI_API_TIMEOUT_MS`` (or ``API_TIMEOUT_MS``): how long a stream may stay
  silent (default 600 s); connecting gets at most 30 s of it;
- ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY`` (either
  case, the lower-case spelling winning): read as the standard library's
  ``urllib.request.getproxies_environment`` reads them, and matched with its
  ``proxy_bypass_environment``;
- ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``: CA certificates for https;
- ``CATUI_MAX_CONNECTIONS_PER_HOST``: connections the lean pool keeps open to
  one origin at once (default 32; see :mod:`catui.models.http_api.connection_limits`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from catui.errors import ConfigurationError, ProviderError
from catui.models.http_api.connection_limits import DEFAULT_MAX_CONNECTIONS_PER_HOST
from catui.models.http_api.transport import Timeouts

HTTP_CLIENT_VARIABLE = "CATUI_HTTP_CLIENT"
MAX_CONNECTIONS_VARIABLE = "CATUI_MAX_CONNECTIONS_PER_HOST"
DEFAULT_READ_TIMEOUT_S = 600.0
"""How long a stream may stay silent; the server sends pings well within it."""
MAX_CONNECT_TIMEOUT_S = 30.0
DEFAULT_TIMEOUTS = Timeouts(
    connect=MAX_CONNECT_TIMEOUT_S,
    read=DEFAULT_READ_TIMEOUT_S,
    write=DEFAULT_READ_TIMEOUT_S,
    pool=DEFAULT_READ_TIMEOUT_S,
)


def proxies_from_env(env: Mapping[str, str]) -> dict[str, str]:
    """Scheme → proxy URL (and ``no`` → the NO_PROXY list), as ``getproxies_environment`` reads ``os.environ``.

    The same two passes as the standard library, over ``env`` instead: any
    ``*_proxy`` variable first, then the lower-case ones again so that they
    win (an empty lower-case one removes the entry); an upper-case
    ``HTTP_PROXY`` is ignored under CGI (``REQUEST_METHOD`` set), where a
    client could set it through a ``Proxy:`` header (CVE-2016-1000110).
    """
    proxies: dict[str, str] = {}
    for name, value in env.items():
        lowered = name.lower()
        if value and lowered.endswith("_proxy"):
            proxies[lowered[:-6]] = value
    if "REQUEST_METHOD" in env:
        proxies.pop("http", None)
    for name, value in env.items():
        if name.endswith("_proxy"):
            if value:
                proxies[name[:-6]] = value
            else:
                proxies.pop(name[:-6], None)
    return proxies


def _read_timeout_s(env: Mapping[str, str]) -> float:
    raw = env.get("CATUI_API_TIMEOUT_MS") or env.get("API_TIMEOUT_MS")
    if raw:
        try:
            return max(float(raw) / 1000.0, 0.001)
        except ValueError:
            pass
    return DEFAULT_READ_TIMEOUT_S


def _max_connections_per_host(env: Mapping[str, str]) -> int:
    raw = (env.get(MAX_CONNECTIONS_VARIABLE) or "").strip()
    if not raw:
        return DEFAULT_MAX_CONNECTIONS_PER_HOST
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigurationError(
            f"{MAX_CONNECTIONS_VARIABLE}={raw!r} is not a positive whole number; set it to e.g. "
            f"{DEFAULT_MAX_CONNECTIONS_PER_HOST} (connections open at once to one API host), or unset it"
        )
    return value


@dataclass(frozen=True)
class TransportSettings:
    """The HTTP settings of one provider (hashable: providers are shared per configuration)."""

    client: str = ""
    """``CATUI_HTTP_CLIENT`` as given (checked when a request is sent, see :meth:`uses_lean`)."""
    timeouts: Timeouts = DEFAULT_TIMEOUTS
    proxies: tuple[tuple[str, str], ...] = ()
    """``proxies_from_env`` as sorted pairs, ``("no", NO_PROXY)`` included."""
    ca_file: str | None = None
    ca_dir: str | None = None
    max_connections_per_host: int = DEFAULT_MAX_CONNECTIONS_PER_HOST
    """``CATUI_MAX_CONNECTIONS_PER_HOST``: connections the lean pool opens to one origin at once."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> TransportSettings:
        """From ``env``; None means the process environment (for providers built without one)."""
        env = os.environ if env is None else env
        read = _read_timeout_s(env)
        ca_file = env.get("SSL_CERT_FILE") or None
        return cls(
            client=env.get(HTTP_CLIENT_VARIABLE) or "",
            timeouts=Timeouts(connect=min(MAX_CONNECT_TIMEOUT_S, read), read=read, write=read, pool=read),
            proxies=tuple(sorted(proxies_from_env(env).items())),
            ca_file=ca_file,
            # As in httpx2 and OpenSSL: a CA file, when given, wins over a CA directory.
            ca_dir=None if ca_file else (env.get("SSL_CERT_DIR") or None),
            max_connections_per_host=_max_connections_per_host(env),
        )

    @property
    def has_proxy(self) -> bool:
        """Whether any proxy is configured (NO_PROXY alone is none)."""
        return any(scheme != "no" for scheme, _ in self.proxies)

    def proxy_for(self, url: str) -> str | None:
        """The proxy ``url`` goes through (the one for its scheme, else ``all``), or None when there is
        none or ``NO_PROXY`` exempts its host, as ``urllib.request.proxy_bypass_environment`` decides."""
        if not self.has_proxy:
            return None
        try:
            parts = urlsplit(url)
            scheme = parts.scheme.lower()
            netloc = parts.netloc.rpartition("@")[2]  # urllib matches host[:port], never credentials
        except ValueError:
            return None
        if scheme not in ("http", "https") or not netloc:
            return None
        proxies = dict(self.proxies)
        proxy = proxies.get(scheme) or proxies.get("all")
        if not proxy:
            return None
        # Imported here: urllib.request costs ~10 ms at start-up and only runs with a proxy configured.
        import urllib.request

        # Public in urllib.request (and what its ProxyHandler uses on POSIX), though typeshed omits it.
        if urllib.request.proxy_bypass_environment(netloc, proxies):  # type: ignore[attr-defined]
            return None
        return proxy

    def uses_lean(self, url: str) -> bool:
        """Whether ``url`` goes through the lean client rather than httpx2.

        ``CATUI_HTTP_CLIENT`` decides when set (``lean`` or ``httpx``);
        otherwise the lean client is used unless a proxy applies to ``url``.
        """
        choice = self.client.strip().lower()
        if choice in ("httpx", "httpx2"):
            return False
        if choice == "lean":
            return True
        if choice not in ("", "auto"):
            raise ProviderError(
                f"{HTTP_CLIENT_VARIABLE} is {self.client!r}; set it to 'lean' or 'httpx', "
                "or unset it to choose by proxy settings"
            )
        return self.proxy_for(url) is None
