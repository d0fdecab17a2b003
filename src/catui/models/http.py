"""The HTTP transport every provider shares: :func:`post_sse` and the clients under it.

Two transports carry the providers' streamed POSTs. By default it is the lean
asyncio-streams client of :mod:`catui.models.lean_http` (cheap to import, and
several times cheaper in CPU when many sub-agents stream at once); when a
proxy from the environment applies to the URL (``HTTP_PROXY``,
``HTTPS_PROXY``, ``ALL_PROXY``, minus ``NO_PROXY``), it is an httpx2 client,
which knows how to speak to proxies. ``CATUI_HTTP_CLIENT=httpx`` or ``=lean``
forces one. Both map failures to the same :class:`ProviderError`\\ s.

Clients are created on first use (so ``import catui`` never pays for them)
and kept per event loop: pooled connections belong to the loop that opened
them, and a program may run several loops in turn (``asyncio.run`` twice, or
one loop per test).
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from catui.errors import ProviderError
from catui.models.sse import ServerSentEvent, SSEDecoder

if TYPE_CHECKING:
    import ssl

    import httpx2

    from catui.models.lean_http import Timeouts

# Per loop, one client for TLS endpoints and one for plain-http ones (see ``http_client``).
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[bool, httpx2.AsyncClient]] = (
    weakref.WeakKeyDictionary()
)

DEFAULT_READ_TIMEOUT_S = 600.0
"""How long a stream may stay silent; the server sends pings well within it."""


def _read_timeout_s() -> float:
    raw = os.environ.get("CATUI_API_TIMEOUT_MS") or os.environ.get("API_TIMEOUT_MS")
    if raw:
        try:
            return max(float(raw) / 1000.0, 0.001)
        except ValueError:
            pass
    return DEFAULT_READ_TIMEOUT_S


def _timeout() -> httpx2.Timeout:
    import httpx2

    read = _read_timeout_s()
    return httpx2.Timeout(connect=min(30.0, read), read=read, write=read, pool=read)


def _lean_timeouts() -> Timeouts:
    from catui.models.lean_http import Timeouts

    read = _read_timeout_s()
    return Timeouts(connect=min(30.0, read), read=read, write=read, pool=read)


def _proxy_in_environment() -> bool:
    """Whether a ``*_proxy`` variable may route requests through a proxy (which may itself speak TLS)."""
    return any(
        name.lower().endswith("_proxy") and name.lower() != "no_proxy" and value
        for name, value in os.environ.items()
    )


def _needs_tls(url: str | None) -> bool:
    return url is None or not url.lower().startswith("http://") or _proxy_in_environment()


def http_client(url: str | None = None) -> httpx2.AsyncClient:
    """The shared keep-alive client of the running event loop (created on first call).

    Given a plain ``http://`` ``url`` (a local or loopback server) and no proxy
    in the environment, the client skips loading the system's CA
    certificates, which costs tens of milliseconds at start-up and is never
    used on such a connection.
    """
    import httpx2

    tls = _needs_tls(url)
    loop = asyncio.get_running_loop()
    per_loop = _clients.setdefault(loop, {})
    client = per_loop.get(tls)
    if client is None or client.is_closed:
        # A bare context that trusts nothing: any https URL sent through the plain client fails
        # verification instead of going unchecked.
        verify: bool | ssl.SSLContext = True if tls else _bare_ssl_context()
        client = httpx2.AsyncClient(
            timeout=_timeout(),
            limits=httpx2.Limits(max_connections=256, max_keepalive_connections=64, keepalive_expiry=60.0),
            follow_redirects=False,
            verify=verify,
            # Proxies from the environment still apply; the providers pass their own auth headers.
            trust_env=True,
        )
        per_loop[tls] = client
    return client


def _bare_ssl_context() -> ssl.SSLContext:
    import ssl

    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


async def aclose_http_client() -> None:
    """Close the running loop's shared clients of both transports, if any were created."""
    import sys

    loop = asyncio.get_running_loop()
    for client in _clients.pop(loop, {}).values():
        if not client.is_closed:
            await client.aclose()
    lean = sys.modules.get("catui.models.lean_http")
    if lean is not None:  # never imported means no pool to close
        await lean.aclose_pool()


def _error_detail(raw: bytes) -> tuple[str | None, str]:
    """The (type, message) of an error body in the Anthropic or OpenAI shape, else its text."""
    import json

    text = raw.decode("utf-8", "replace").strip()
    try:
        payload = json.loads(text)
    except ValueError:
        return None, text[:300]
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict):
        kind = error.get("type") or error.get("code")
        return (str(kind) if kind else None), str(error.get("message") or text[:300])
    if isinstance(error, str):
        return None, error
    return None, text[:300]


def status_error(
    status: int, headers: Mapping[str, str], raw: bytes, *, service: str, url: str, credential_hint: str
) -> ProviderError:
    """The error to raise for an HTTP error response: retryable or final, with a one-line message."""
    from catui.models.retry import RetryableFailure, parse_retry_after, should_retry_status

    kind, message = _error_detail(raw)
    what = f"{status} {kind}: {message}" if kind else f"{status}: {message}"
    if status in (401, 403):
        return ProviderError(
            f"{service} at {url} refused the credentials ({what}). {credential_hint}", status=status
        )
    if should_retry_status(status, headers):
        return RetryableFailure(
            f"{service} at {url} answered {what}", status=status, retry_after=parse_retry_after(headers)
        )
    return ProviderError(f"{service} at {url} answered {what}", status=status)


def _env_value(env: Mapping[str, str], name: str) -> str:
    # The lower-case spelling wins, as in curl and urllib.
    return (env.get(name.lower()) or env.get(name.upper()) or "").strip()


def _bypasses_proxy(host: str, port: int, no_proxy: str) -> bool:
    """Whether ``NO_PROXY`` exempts ``host``: ``*``, a host or domain (``.example.com`` or
    ``example.com`` cover subdomains), ``host:port``, an IP address or a CIDR network."""
    host = host.lower().strip("[]")
    for raw_entry in no_proxy.split(","):
        entry = raw_entry.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return True
        if "/" in entry:
            import ipaddress

            try:
                if ipaddress.ip_address(host) in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                pass
            continue
        entry_host, _, entry_port = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
        if entry_port and entry_port != str(port):
            continue
        entry_host = entry_host.strip("[]").lstrip("*").lstrip(".")
        if entry_host and (host == entry_host or host.endswith("." + entry_host)):
            return True
    return False


def proxy_for(url: str, env: Mapping[str, str] | None = None) -> str | None:
    """The proxy the environment routes ``url`` through (``HTTPS_PROXY``/``HTTP_PROXY`` for the URL's
    scheme, else ``ALL_PROXY``), or None when there is none or ``NO_PROXY`` exempts the host."""
    from urllib.parse import urlsplit

    env = os.environ if env is None else env
    try:
        parts = urlsplit(url)
        scheme, host = parts.scheme.lower(), parts.hostname or ""
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        return None
    if scheme not in ("http", "https"):
        return None
    proxy = _env_value(env, f"{scheme}_proxy") or _env_value(env, "all_proxy")
    if not proxy or _bypasses_proxy(host, port, _env_value(env, "no_proxy")):
        return None
    return proxy


HTTP_CLIENT_VARIABLE = "CATUI_HTTP_CLIENT"


def uses_lean_transport(url: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether :func:`post_sse` sends ``url`` through the lean client rather than httpx2.

    ``CATUI_HTTP_CLIENT`` decides when set (``lean`` or ``httpx``); otherwise the
    lean client is used unless a proxy from the environment applies to ``url``.
    """
    env = os.environ if env is None else env
    choice = (env.get(HTTP_CLIENT_VARIABLE) or "").strip().lower()
    if choice in ("httpx", "httpx2"):
        return False
    if choice == "lean":
        return True
    if choice not in ("", "auto"):
        raise ProviderError(
            f"{HTTP_CLIENT_VARIABLE} is {env.get(HTTP_CLIENT_VARIABLE)!r}; set it to 'lean' or 'httpx', "
            "or unset it to choose by proxy settings"
        )
    return proxy_for(url, env) is None


def post_sse(
    url: str,
    *,
    headers: Mapping[str, str],
    body: Mapping[str, Any],
    service: str,
    credential_hint: str,
    base_var: str,
) -> AsyncIterator[ServerSentEvent]:
    """POST ``body`` as JSON and yield the server-sent events of the answer.

    HTTP errors, unreachable hosts and dropped connections are raised as
    :class:`ProviderError` (a :class:`RetryableFailure` where a retry could
    help), each naming ``service`` and ``url``; ``base_var`` is the variable
    that sets the endpoint, named when it cannot be reached. The transport is
    chosen by :func:`uses_lean_transport`.
    """
    described = _Described(url, service, credential_hint, base_var)
    if uses_lean_transport(url):
        return _lean_post_sse(described, headers, body)
    return _httpx_post_sse(described, headers, body)


class _Described:
    """What error messages name: the URL, the service, how to fix credentials, the endpoint's variable."""

    __slots__ = ("base_var", "credential_hint", "service", "url")

    def __init__(self, url: str, service: str, credential_hint: str, base_var: str) -> None:
        self.url, self.service, self.credential_hint, self.base_var = url, service, credential_hint, base_var

    def status_error(self, status: int, headers: Mapping[str, str], raw: bytes) -> ProviderError:
        return status_error(
            status, headers, raw, service=self.service, url=self.url, credential_hint=self.credential_hint
        )

    def json_instead_of_stream(self, raw: bytes) -> ProviderError:
        # A proxy or an incompatible server answered with a plain JSON document instead of a stream.
        kind, message = _error_detail(raw)
        return ProviderError(
            f"{self.service} at {self.url} answered with JSON instead of an event stream: "
            f"{kind or ''} {message}".strip()
        )

    def invalid_url(self, err: Exception) -> ProviderError:
        return ProviderError(
            f"the URL of {self.service}, {self.url!r}, is invalid ({err}); check {self.base_var}"
        )

    def unreachable(self, err: Exception) -> ProviderError:
        from catui.models.retry import RetryableFailure

        return RetryableFailure(
            f"cannot reach {self.service} at {self.url} ({type(err).__name__}: {err or 'no detail'}); "
            f"check {self.base_var} and that the server is running",
            max_retries=2,
        )

    def timed_out(self, err: Exception) -> ProviderError:
        from catui.models.retry import RetryableFailure

        return RetryableFailure(f"{self.service} at {self.url} timed out ({type(err).__name__})")

    def dropped(self, err: Exception) -> ProviderError:
        from catui.models.retry import RetryableFailure

        return RetryableFailure(
            f"the connection to {self.service} at {self.url} dropped "
            f"({type(err).__name__}: {err or 'no detail'})"
        )


def _is_json_document(content_type: str) -> bool:
    return "json" in content_type and "event-stream" not in content_type


async def _lean_post_sse(
    described: _Described, headers: Mapping[str, str], body: Mapping[str, Any]
) -> AsyncIterator[ServerSentEvent]:
    import json

    from catui.models import lean_http

    # The same bytes httpx2's ``json=`` sends.
    payload = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    sent_headers = dict(headers)
    if not any(name.lower() == "content-type" for name in sent_headers):
        sent_headers["content-type"] = "application/json"
    try:
        response = await lean_http.pool().post(
            described.url, headers=sent_headers, body=payload, timeouts=_lean_timeouts()
        )
        try:
            if response.status_code >= 400:
                raise described.status_error(response.status_code, response.headers, await response.aread())
            if _is_json_document(response.headers.get("content-type", "")):
                raise described.json_instead_of_stream(await response.aread())
            async for sse in SSEDecoder().aiter_events(response.aiter_bytes()):
                yield sse
        finally:
            response.close()
    except lean_http.InvalidURL as err:
        raise described.invalid_url(err) from err
    except lean_http.InvalidHeader as err:
        raise ProviderError(
            f"cannot send the request to {described.service} at {described.url}: {err}"
        ) from err
    except (lean_http.ConnectError, lean_http.ConnectTimeout) as err:
        raise described.unreachable(err) from err
    except lean_http.TIMEOUT_ERRORS as err:
        raise described.timed_out(err) from err
    except lean_http.LeanHTTPError as err:
        raise described.dropped(err) from err


async def _httpx_post_sse(
    described: _Described, headers: Mapping[str, str], body: Mapping[str, Any]
) -> AsyncIterator[ServerSentEvent]:
    import httpx2

    client = http_client(described.url)
    try:
        async with client.stream("POST", described.url, headers=dict(headers), json=dict(body)) as response:
            if response.status_code >= 400:
                raise described.status_error(response.status_code, response.headers, await response.aread())
            if _is_json_document(response.headers.get("content-type", "")):
                raise described.json_instead_of_stream(await response.aread())
            async for sse in SSEDecoder().aiter_events(response.aiter_bytes()):
                yield sse
    except (httpx2.UnsupportedProtocol, httpx2.InvalidURL) as err:
        raise described.invalid_url(err) from err
    except (httpx2.ConnectError, httpx2.ConnectTimeout) as err:
        raise described.unreachable(err) from err
    except httpx2.TimeoutException as err:
        raise described.timed_out(err) from err
    except httpx2.TransportError as err:
        raise described.dropped(err) from err
