"""The one interface every HTTP transport of the providers implements, and the errors they raise.

A transport sends a POST with a ready body and hands back the response as
soon as its status and headers arrived; the caller then reads the body as it
comes (an event stream) or whole (an error document)::

    async with transport.stream_post(url, headers=headers, body=payload) as response:
        if response.status_code >= 400:
            detail = await response.aread()
        async for data in response.aiter_bytes():
            ...

Two implementations exist: the lean asyncio-streams client
(:class:`catui.models.http_api.lean_http.LeanTransport`) and httpx2
(:class:`catui.models.http_api.httpx_transport.HttpxTransport`). Each raises only the
:class:`TransportError` subclasses below, so that :mod:`catui.models.http_api.post`
turns failures into provider errors in one place, whichever transport ran.
This module imports nothing heavy: ``catui --help`` may import it for free.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Timeouts:
    """Seconds allowed to connect, to wait for each read or write, and to wait for a free connection."""

    connect: float
    read: float
    write: float
    pool: float


class HttpResponse(Protocol):
    """A response whose status and headers arrived; its body is read once, streamed or whole.

    Header names are lower-case; repeated headers are joined with ``", "``.
    """

    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive, transfer framing removed."""
        ...

    async def aread(self) -> bytes:
        """The whole body."""
        ...


class HttpTransport(Protocol):
    """Streams POST requests over pooled keep-alive connections belonging to one event loop."""

    def stream_post(
        self, url: str, *, headers: Mapping[str, str], body: bytes
    ) -> AbstractAsyncContextManager[HttpResponse]:
        """POST ``body`` to ``url``; entering gives the response once its headers arrived.

        Leaving the block releases the connection: back to the pool when the
        body was read to its end, closed otherwise. Raises :class:`TransportError`.
        """
        ...

    async def aclose(self) -> None:
        """Close every connection; the transport is not used afterwards."""
        ...


class TransportError(Exception):
    """Any failure to carry a request or its response; the subclasses say which kind.

    The names follow httpx2's exceptions, which the httpx2 transport maps onto
    these one for one.
    """


class InvalidURL(TransportError):
    """The URL is not an ``http://`` or ``https://`` URL with a host and a valid port."""


class InvalidHeader(TransportError):
    """A request header has a name or value that HTTP/1.1 cannot carry (a line break, a colon in the name)."""


class ConnectError(TransportError):
    """The connection (or its TLS handshake, or the proxy) could not be established."""


class ConnectTimeout(TransportError):
    """Establishing the connection took longer than the connect timeout."""


class ReadTimeout(TransportError):
    """The server stayed silent for longer than the read timeout."""


class WriteTimeout(TransportError):
    """The request could not be sent within the write timeout."""


class PoolTimeout(TransportError):
    """No connection slot came free within the pool timeout."""


class RemoteProtocolError(TransportError):
    """The server closed the connection early or sent something that is not HTTP/1.1."""


class ReadError(TransportError):
    """Reading from the connection failed (reset, TLS error)."""


class WriteError(TransportError):
    """Sending the request failed (reset, broken pipe)."""


TIMEOUT_ERRORS: tuple[type[TransportError], ...] = (ReadTimeout, WriteTimeout, PoolTimeout)
"""Timeouts after the connection was made (a connect timeout counts as unreachable instead)."""
