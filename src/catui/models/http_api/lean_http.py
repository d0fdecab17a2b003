"""The lean transport: HTTP/1.1 on asyncio streams, for the model providers' streamed POSTs.

It does exactly what the providers need and nothing more: send one POST with
a ready body, then hand the response over as soon as its head arrived and its
body as it arrives. The HTTP/1.1 framing (status line, headers, chunked or
Content-Length or read-until-close bodies, interim answers, whether a
connection may be reused) is h11's; this module owns the sockets, the
timeouts and the pool. No redirects, no compression, no proxies (a proxy
sends requests through httpx2, see :mod:`catui.models.http_api.post`), no HTTP/2.

Why not httpx2 everywhere: with a hundred sub-agents streaming at once,
httpx2's layers above h11 (httpcore2, anyio) cost several times the CPU of
the bytes they move, and importing it costs tens of milliseconds at start-up
(see docs/decisions.md, "The lean HTTP transport").

Connections are pooled per event loop and per (scheme, host, port, CA
certificates). A connection goes back to the pool only once its response was
read to the end and h11 says the exchange left it reusable; any error, a cut,
or a response the caller stops reading early discards it. https uses one
``ssl.create_default_context()`` per CA setting, built the first time an
https URL needs it.

Failures are raised as the :class:`~catui.models.http_api.transport.TransportError`
subclasses every transport shares.

The parts: the request side (:mod:`catui.models.http_api.lean_wire`), one connection and
its response (:mod:`catui.models.http_api.lean_connection`); this module owns the pool,
the TLS contexts and the transport.
"""

from __future__ import annotations

import asyncio
import socket
import time
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING

import h11

from catui.models.http_api.connection_limits import (
    DEFAULT_MAX_CONNECTIONS_PER_HOST,
    OriginLimits,
    connect_attempts,
    within_attempt,
)
from catui.models.http_api.lean_connection import (
    KEEPALIVE_EXPIRY_S,
    MAX_HEAD_BYTES,
    READ_SIZE,
    LeanConnection,
    LeanResponse,
)
from catui.models.http_api.lean_wire import (
    Origin,
    RequestTarget,
    encode_request,
    is_ip_literal,
    parse_url,
    request_head,
)
from catui.models.http_api.transport import (
    ConnectError,
    ConnectTimeout,
    PoolTimeout,
    RemoteProtocolError,
    Timeouts,
)

if TYPE_CHECKING:
    import ssl

    from catui.models.http_api.transport_settings import TransportSettings

__all__ = [
    "KEEPALIVE_EXPIRY_S",
    "MAX_HEAD_BYTES",
    "READ_SIZE",
    "LeanConnection",
    "LeanPool",
    "LeanResponse",
    "LeanTransport",
    "RemoteProtocolError",
    "Timeouts",
    "aclose_pool",
    "pool",
    "ssl_context",
]

MAX_CONNECTIONS = 256
"""Connections one event loop may have open at once; more requests wait for a free one."""
MAX_IDLE_PER_ORIGIN = 128
"""Idle keep-alive connections kept per origin; a connection beyond this is closed.

Generous, so that a fan-out of a hundred sub-agents keeps its connections (and
their TLS sessions) for the next turn."""
HAPPY_EYEBALLS_DELAY_S = 0.25


_ssl_contexts: dict[tuple[str | None, str | None], ssl.SSLContext] = {}


def ssl_context(ca_file: str | None = None, ca_dir: str | None = None) -> ssl.SSLContext:
    """The verifying TLS context for https URLs, created on first use per CA setting and then shared.

    ``ca_file`` or ``ca_dir`` (``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` of the
    provider's environment) replace the system's CA certificates, as they do
    for httpx2.
    """
    import ssl

    key = (ca_file, None if ca_file else ca_dir)
    context = _ssl_contexts.get(key)
    if context is None:
        context = ssl.create_default_context(cafile=key[0], capath=key[1])
        context.set_alpn_protocols(["http/1.1"])
        _ssl_contexts[key] = context
    return context


class _AttemptTimedOut(Exception):
    """One TCP connect try was not accepted within its share of the connect schedule."""


class LeanPool:
    """The keep-alive connections of one event loop, per origin (scheme, host, port, CA certificates)."""

    def __init__(self) -> None:
        self._idle: dict[Origin, list[LeanConnection]] = {}
        self._slots: asyncio.Semaphore | None = None
        self._active: set[LeanConnection] = set()
        self._limits: OriginLimits[LeanConnection] = OriginLimits()
        self.closed = False
        self.connections_opened = 0
        """How many connections this pool has opened (the tests read it to see reuse)."""

    async def post(
        self,
        url: str,
        *,
        headers: Mapping[str, str],
        body: bytes,
        timeouts: Timeouts,
        ca_file: str | None = None,
        ca_dir: str | None = None,
        max_per_host: int = DEFAULT_MAX_CONNECTIONS_PER_HOST,
    ) -> LeanResponse:
        """Send ``body`` to ``url`` and return the response once its head arrived.

        At most ``max_per_host`` connections to the URL's origin are open at once (in use or idle);
        beyond that the request waits for one of them, up to the pool timeout.
        """
        if self.closed:
            raise RuntimeError("the lean HTTP pool was closed")
        target = parse_url(url)
        # Checked before a connection is taken: a header HTTP cannot carry must not cost one.
        head = request_head(target, headers, len(body))
        origin: Origin = (target.scheme, target.host, target.port, (ca_file, ca_dir))
        if self._slots is None:
            self._slots = asyncio.Semaphore(MAX_CONNECTIONS)
        slots = self._slots
        if slots.locked():
            try:
                async with asyncio.timeout(timeouts.pool):
                    await slots.acquire()
            except TimeoutError as err:
                raise PoolTimeout("no connection came free in time") from err
        else:
            await slots.acquire()
        connection: LeanConnection | None = None
        try:
            connection = await self._claim(origin, max_per_host, timeouts.pool)
            attempts = connect_attempts(timeouts.connect)
            spent_s = 0.0
            while connection is None:
                attempt_s = next(attempts, None)
                try:
                    if attempt_s is None:
                        raise ConnectTimeout(
                            f"no connection to {target.host}:{target.port} within {timeouts.connect:g} s"
                        )
                    connection = await self._connect(target, origin, attempt_s, timeouts.connect - spent_s)
                except _AttemptTimedOut:
                    # Not accepted in time: the server's accept queue is full. Wait for a connection
                    # that comes free (or a place under the lowered ceiling) rather than retry at once.
                    spent_s += attempt_s or 0.0
                    self._limits.not_accepted(origin)
                    connection = await self._claim(origin, max_per_host, timeouts.pool)
                except BaseException:
                    self._limits.connect_failed(origin)  # the place claimed for it is free again
                    raise
                else:
                    self._limits.connected(origin, max_per_host)
            self._active.add(connection)
            await connection.send(encode_request(connection.h11, head, body), timeouts.write)
            return await self._read_head(connection, timeouts.read)
        except BaseException:
            if connection is not None:
                self.release(connection, reusable=False)
            else:
                slots.release()
            raise

    async def _claim(self, origin: Origin, max_per_host: int, pool_timeout: float) -> LeanConnection | None:
        """An idle connection to reuse, or None when a new one may be opened; waits while the origin is at its cap."""
        claim = self._limits.claim(origin, max_per_host, lambda: self._take_idle(origin))
        if not self._limits.would_wait(origin, max_per_host) or self._idle.get(origin):
            return await claim  # no wait: skip the timer
        try:
            async with asyncio.timeout(pool_timeout):
                return await claim
        except TimeoutError as err:
            raise PoolTimeout(
                f"no connection to {origin[1]}:{origin[2]} came free in time "
                f"({max_per_host} open at once; CATUI_MAX_CONNECTIONS_PER_HOST raises the cap)"
            ) from err

    def _take_idle(self, origin: Origin) -> LeanConnection | None:
        idle = self._idle.get(origin)
        if not idle:
            return None
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            if connection.reusable(now):
                return connection
            self._close(connection)
        return None

    def _close(self, connection: LeanConnection) -> None:
        connection.close()
        self._limits.closed(connection.origin)

    async def _connect(self, target: RequestTarget, origin: Origin, attempt_s: float, left_s: float) -> LeanConnection:
        """One TCP connect try of ``attempt_s`` (raises :class:`_AttemptTimedOut`), then TLS within ``left_s``."""
        loop = asyncio.get_running_loop()
        try:
            tls = ssl_context(*origin[3]) if target.scheme == "https" else None
        except OSError as err:  # SSL_CERT_FILE or SSL_CERT_DIR names a missing or broken file
            raise ConnectError(f"cannot load the CA certificates for https ({err})") from err
        deadline = loop.time() + left_s
        try:
            reader, writer = await self._open_tcp(target, attempt_s)
            if tls is not None:  # the handshake gets what is left of the connect timeout, in one piece
                async with asyncio.timeout_at(deadline):
                    await writer.start_tls(tls, server_hostname=target.host)
        except _AttemptTimedOut:
            raise
        except TimeoutError as err:
            raise ConnectTimeout(
                f"no connection to {target.host}:{target.port} within {left_s:g} s"
            ) from err
        except (OSError, UnicodeError) as err:
            raise ConnectError(str(err) or type(err).__name__) from err
        sock = writer.transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except (OSError, AttributeError):
                pass
        self.connections_opened += 1
        return LeanConnection(reader, writer, origin, loop)

    @staticmethod
    async def _open_tcp(target: RequestTarget, attempt_s: float) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """One TCP connect try of the pool's schedule (connection_limits.connect_attempts).

        A try the server does not accept in time raises :class:`_AttemptTimedOut`: the caller makes a
        fresh one (or reuses a connection that came free) rather than wait on the kernel's SYN back-off.
        """
        try:
            return await within_attempt(
                asyncio.open_connection(
                    target.host,
                    target.port,
                    limit=READ_SIZE,
                    # A name may resolve to an unreachable IPv6 address first: race the addresses
                    # (RFC 8305) as httpx2 does, rather than wait out the connect timeout on it.
                    happy_eyeballs_delay=None if is_ip_literal(target.host) else HAPPY_EYEBALLS_DELAY_S,
                ),
                attempt_s,
            )
        except TimeoutError as err:
            raise _AttemptTimedOut from err

    async def _read_head(self, connection: LeanConnection, read_timeout: float) -> LeanResponse:
        state = connection.h11
        received = False
        while True:
            try:
                event = state.next_event()
            except h11.RemoteProtocolError as err:
                if not received:  # a kept-alive connection the server had closed, or no answer at all
                    raise RemoteProtocolError("Server disconnected without sending a response.") from err
                raise RemoteProtocolError(str(err)) from err
            if event is h11.NEED_DATA:
                data = await connection.read(READ_SIZE, read_timeout)
                received = received or bool(data)
                state.receive_data(data)
            elif type(event) is h11.Response:
                return LeanResponse(self, connection, event, read_timeout=read_timeout)
            # An h11.InformationalResponse (100 Continue, 103 Early Hints): the real answer follows.

    def release(self, connection: LeanConnection, *, reusable: bool) -> None:
        """Return a connection after its response ended: back to the pool, or closed."""
        if connection not in self._active:
            return
        self._active.discard(connection)
        if self._slots is not None:
            self._slots.release()
        idle = self._idle.setdefault(connection.origin, [])
        if reusable and not self.closed and not connection.timed_out and len(idle) < MAX_IDLE_PER_ORIGIN:
            connection.idle_since = time.monotonic()
            idle.append(connection)
            self._limits.freed(connection.origin)
        else:
            self._close(connection)

    def idle_count(self) -> int:
        """How many idle keep-alive connections the pool holds."""
        return sum(len(idle) for idle in self._idle.values())

    async def aclose(self) -> None:
        """Close every connection; responses still being read fail from here on."""
        self.closed = True
        connections = [c for idle in self._idle.values() for c in idle] + list(self._active)
        self._idle.clear()
        self._active.clear()
        self._limits.reset()
        for connection in connections:
            connection.close()


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LeanPool] = weakref.WeakKeyDictionary()


def pool() -> LeanPool:
    """The running event loop's pool (connections belong to the loop that opened them)."""
    loop = asyncio.get_running_loop()
    current = _pools.get(loop)
    if current is None or current.closed:
        current = _pools[loop] = LeanPool()
    return current


async def aclose_pool() -> None:
    """Close the running loop's pool, if it has one."""
    current = _pools.pop(asyncio.get_running_loop(), None)
    if current is not None:
        await current.aclose()


class LeanTransport:
    """:class:`~catui.models.http_api.transport.HttpTransport` over the running loop's :class:`LeanPool`.

    It carries one provider's settings (timeouts, CA certificates); the pool
    under it is the loop's, shared by every provider, so connections to one
    server are reused whichever provider opened them.
    """

    def __init__(self, settings: TransportSettings) -> None:
        self.settings = settings

    def stream_post(self, url: str, *, headers: Mapping[str, str], body: bytes) -> _PostContext:
        """POST ``body``; ``async with`` gives the :class:`LeanResponse` once its head arrived."""
        return _PostContext(self.settings, url, headers, body)

    async def aclose(self) -> None:
        """Close the running loop's pool (shared: every lean transport of the loop loses its connections)."""
        await aclose_pool()


class _PostContext:
    __slots__ = ("_body", "_headers", "_response", "_settings", "_url")

    def __init__(
        self, settings: TransportSettings, url: str, headers: Mapping[str, str], body: bytes
    ) -> None:
        self._settings, self._url, self._headers, self._body = settings, url, headers, body
        self._response: LeanResponse | None = None

    async def __aenter__(self) -> LeanResponse:
        settings = self._settings
        self._response = await pool().post(
            self._url,
            headers=self._headers,
            body=self._body,
            timeouts=settings.timeouts,
            ca_file=settings.ca_file,
            ca_dir=settings.ca_dir,
            max_per_host=settings.max_connections_per_host,
        )
        return self._response

    async def __aexit__(self, *exc: object) -> None:
        if self._response is not None:
            self._response.close()
