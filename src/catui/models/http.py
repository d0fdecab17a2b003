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
    import httpx2

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx2.AsyncClient] = (
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


def http_client() -> httpx2.AsyncClient:
    """The shared keep-alive client of the running event loop (created on first call)."""
    import httpx2

    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = httpx2.AsyncClient(
            timeout=_timeout(),
            limits=httpx2.Limits(max_connections=256, max_keepalive_connections=64, keepalive_expiry=60.0),
            follow_redirects=False,
            # Proxies from the environment still apply; the providers pass their own auth headers.
            trust_env=True,
        )
        _clients[loop] = client
    return client


async def aclose_http_client() -> None:
    """Close the running loop's shared client, if one was created."""
    loop = asyncio.get_running_loop()
    client = _clients.pop(loop, None)
    if client is not None and not client.is_closed:
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

    client = http_client()
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
