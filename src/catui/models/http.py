"""The one async HTTP client every provider shares.

It is created on first use (so ``import catui`` never pays for it) and kept
per event loop: an httpx2 client's pooled connections belong to the loop that
opened them, and a program may run several loops in turn (``asyncio.run``
twice, or one loop per test).
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

# Per loop, one client for TLS endpoints and one for plain-http ones (see ``http_client``).
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[bool, httpx2.AsyncClient]] = (
    weakref.WeakKeyDictionary()
)

DEFAULT_READ_TIMEOUT_S = 600.0
"""How long a stream may stay silent; the server sends pings well within it."""


def _timeout() -> httpx2.Timeout:
    import httpx2

    read = DEFAULT_READ_TIMEOUT_S
    raw = os.environ.get("CATUI_API_TIMEOUT_MS") or os.environ.get("API_TIMEOUT_MS")
    if raw:
        try:
            read = max(float(raw) / 1000.0, 0.001)
        except ValueError:
            pass
    return httpx2.Timeout(connect=min(30.0, read), read=read, write=read, pool=read)


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
    """Close the running loop's shared clients, if any were created."""
    loop = asyncio.get_running_loop()
    for client in _clients.pop(loop, {}).values():
        if not client.is_closed:
            await client.aclose()


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


async def post_sse(
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
    that sets the endpoint, named when it cannot be reached.
    """
    import httpx2

    from catui.models.retry import RetryableFailure

    client = http_client(url)
    try:
        async with client.stream("POST", url, headers=dict(headers), json=dict(body)) as response:
            if response.status_code >= 400:
                raw = await response.aread()
                raise status_error(
                    response.status_code,
                    response.headers,
                    raw,
                    service=service,
                    url=url,
                    credential_hint=credential_hint,
                )
            content_type = response.headers.get("content-type", "")
            if "json" in content_type and "event-stream" not in content_type:
                # A proxy or an incompatible server answered with a plain JSON document instead of a stream.
                raw = await response.aread()
                kind, message = _error_detail(raw)
                raise ProviderError(
                    f"{service} at {url} answered with JSON instead of an event stream: "
                    f"{kind or ''} {message}".strip()
                )
            async for sse in SSEDecoder().aiter_events(response.aiter_bytes()):
                yield sse
    except (httpx2.UnsupportedProtocol, httpx2.InvalidURL) as err:
        raise ProviderError(f"the URL of {service}, {url!r}, is invalid ({err}); check {base_var}") from err
    except (httpx2.ConnectError, httpx2.ConnectTimeout) as err:
        raise RetryableFailure(
            f"cannot reach {service} at {url} ({type(err).__name__}: {err or 'no detail'}); "
            f"check {base_var} and that the server is running",
            max_retries=2,
        ) from err
    except httpx2.TimeoutException as err:
        raise RetryableFailure(f"{service} at {url} timed out ({type(err).__name__})") from err
    except httpx2.TransportError as err:
        raise RetryableFailure(
            f"the connection to {service} at {url} dropped ({type(err).__name__}: {err or 'no detail'})"
        ) from err
