"""The httpx2 transport: used when a proxy applies to the URL, or when ``CATUI_HTTP_CLIENT=httpx``.

httpx2 knows how to speak to HTTP and SOCKS proxies, which the lean client
does not. Its clients are created on first use (``import httpx2`` costs tens
of milliseconds, so this module imports it only inside functions) and kept
per event loop, since pooled connections belong to the loop that opened them.

Everything comes from the provider's :class:`TransportSettings`, never from
``os.environ``: the client is built with ``trust_env=False`` and is handed
its proxy, timeouts and CA certificates explicitly. httpx2's exceptions are
translated into the :class:`~catui.models.http_api.transport.TransportError`
subclasses of the same names, so callers see one set of errors whichever
transport ran.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from catui.models.http_api import transport as errors
from catui.models.http_api.transport_settings import TransportSettings

if TYPE_CHECKING:
    import ssl

    import httpx2

# Per loop, the clients by what they were built with: (TLS verification, proxy, timeouts, CA certificates).
_ClientKey = tuple[bool, str | None, Any, str | None, str | None]
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[_ClientKey, httpx2.AsyncClient]] = (
    weakref.WeakKeyDictionary()
)


def _needs_tls(url: str | None, settings: TransportSettings) -> bool:
    # Any proxy may itself speak TLS, whatever the target's scheme: keep verification then.
    return url is None or not url.lower().startswith("http://") or settings.has_proxy


def http_client(url: str | None = None, settings: TransportSettings | None = None) -> httpx2.AsyncClient:
    """The running loop's shared keep-alive client for ``url`` under ``settings`` (created on first call).

    ``settings`` None means those of the process environment. Given a plain
    ``http://`` ``url`` (a local or loopback server) and no proxy, the client
    skips loading the system's CA certificates, which costs tens of
    milliseconds at start-up and is never used on such a connection.
    """
    import httpx2

    settings = TransportSettings.from_env() if settings is None else settings
    tls = _needs_tls(url, settings)
    proxy = settings.proxy_for(url) if url is not None else None
    key: _ClientKey = (tls, proxy, settings.timeouts, settings.ca_file, settings.ca_dir)
    per_loop = _clients.setdefault(asyncio.get_running_loop(), {})
    client = per_loop.get(key)
    if client is None or client.is_closed:
        timeouts = settings.timeouts
        client = httpx2.AsyncClient(
            timeout=httpx2.Timeout(
                connect=timeouts.connect, read=timeouts.read, write=timeouts.write, pool=timeouts.pool
            ),
            limits=httpx2.Limits(max_connections=256, max_keepalive_connections=64, keepalive_expiry=60.0),
            follow_redirects=False,
            verify=_verify(tls, settings),
            proxy=proxy,
            # The proxy and CA certificates above come from the provider's environment; os.environ
            # must not add others. The providers pass their own auth headers (no .netrc either).
            trust_env=False,
        )
        per_loop[key] = client
    return client


def _verify(tls: bool, settings: TransportSettings) -> bool | ssl.SSLContext:
    import ssl

    if not tls:
        # A bare context that trusts nothing: any https URL sent through the plain client fails
        # verification instead of going unchecked.
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if settings.ca_file or settings.ca_dir:
        return ssl.create_default_context(cafile=settings.ca_file, capath=settings.ca_dir)
    return True  # httpx2's default: the system's certificates


async def aclose_clients() -> None:
    """Close the running loop's httpx2 clients, if any were created."""
    for client in _clients.pop(asyncio.get_running_loop(), {}).values():
        if not client.is_closed:
            await client.aclose()


def translate(err: Exception) -> errors.TransportError:
    """The catui transport error for an httpx2 exception (the same names, one for one)."""
    import httpx2

    kinds: list[tuple[type[Exception], type[errors.TransportError]]] = [
        (httpx2.UnsupportedProtocol, errors.InvalidURL),
        (httpx2.InvalidURL, errors.InvalidURL),
        (httpx2.ConnectTimeout, errors.ConnectTimeout),
        (httpx2.ReadTimeout, errors.ReadTimeout),
        (httpx2.WriteTimeout, errors.WriteTimeout),
        (httpx2.PoolTimeout, errors.PoolTimeout),
        (httpx2.ConnectError, errors.ConnectError),
        (httpx2.ProxyError, errors.ConnectError),
        (httpx2.LocalProtocolError, errors.InvalidHeader),
        (httpx2.RemoteProtocolError, errors.RemoteProtocolError),
        (httpx2.ReadError, errors.ReadError),
        (httpx2.WriteError, errors.WriteError),
    ]
    for httpx_kind, kind in kinds:
        if isinstance(err, httpx_kind):
            return kind(str(err))
    return errors.TransportError(f"{type(err).__name__}: {err}")


def _is_httpx_failure(err: Exception) -> bool:
    import httpx2

    return isinstance(err, (httpx2.TransportError, httpx2.InvalidURL))


class HttpxTransport:
    """:class:`~catui.models.http_api.transport.HttpTransport` over the running loop's httpx2 client for a URL."""

    def __init__(self, settings: TransportSettings) -> None:
        self.settings = settings

    def stream_post(self, url: str, *, headers: Mapping[str, str], body: bytes) -> _PostContext:
        """POST ``body``; ``async with`` gives the response once its headers arrived."""
        return _PostContext(http_client(url, self.settings), url, headers, body)

    async def aclose(self) -> None:
        """Close the running loop's httpx2 clients."""
        await aclose_clients()


class _Response:
    """An httpx2 response seen through the transport interface, its errors translated."""

    __slots__ = ("_response",)

    def __init__(self, response: httpx2.Response) -> None:
        self._response = response

    @property
    def status_code(self) -> int:
        return self._response.status_code

    @property
    def headers(self) -> Mapping[str, str]:
        return self._response.headers

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        try:
            async for data in self._response.aiter_bytes():
                yield data
        except Exception as err:
            if _is_httpx_failure(err):
                raise translate(err) from err
            raise

    async def aread(self) -> bytes:
        return b"".join([data async for data in self.aiter_bytes()])


class _PostContext:
    __slots__ = ("_body", "_client", "_headers", "_stream", "_url")

    def __init__(self, client: httpx2.AsyncClient, url: str, headers: Mapping[str, str], body: bytes) -> None:
        self._client, self._url, self._headers, self._body = client, url, headers, body
        self._stream: Any = None

    async def __aenter__(self) -> _Response:
        try:
            self._stream = self._client.stream(
                "POST", self._url, headers=dict(self._headers), content=self._body
            )
            return _Response(await self._stream.__aenter__())
        except Exception as err:
            self._stream = None
            if _is_httpx_failure(err):
                raise translate(err) from err
            raise

    async def __aexit__(self, *exc: Any) -> None:
        if self._stream is not None:
            try:
                await self._stream.__aexit__(*exc)
            except Exception as err:
                if _is_httpx_failure(err):
                    raise translate(err) from err
                raise
