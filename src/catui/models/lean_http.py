"""The lean transport: HTTP/1.1 on asyncio streams, for the model providers' streamed POSTs.

It does exactly what the providers need and nothing more: send one POST with
a ready body, then hand the response over as soon as its head arrived and its
body as it arrives. The HTTP/1.1 framing (status line, headers, chunked or
Content-Length or read-until-close bodies, interim answers, whether a
connection may be reused) is h11's; this module owns the sockets, the
timeouts and the pool. No redirects, no compression, no proxies (a proxy
sends requests through httpx2, see :mod:`catui.models.http`), no HTTP/2.

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

Failures are raised as the :class:`~catui.models.transport.TransportError`
subclasses every transport shares.
"""

from __future__ import annotations

import asyncio
import socket
import time
import weakref
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import h11

from catui.models.connection_limits import DEFAULT_MAX_CONNECTIONS_PER_HOST, OriginLimits, connect_attempts
from catui.models.transport import (
    ConnectError,
    ConnectTimeout,
    InvalidHeader,
    InvalidURL,
    PoolTimeout,
    ReadError,
    ReadTimeout,
    RemoteProtocolError,
    Timeouts,
    TransportError,
    WriteError,
    WriteTimeout,
)

if TYPE_CHECKING:
    import ssl

    from catui.models.transport_settings import TransportSettings

__all__ = [
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
KEEPALIVE_EXPIRY_S = 60.0
"""An idle connection older than this is closed instead of reused (servers drop them around then)."""
HAPPY_EYEBALLS_DELAY_S = 0.25
READ_SIZE = 65536
"""Bytes asked of the socket per read: h11 then splits what came into events without further awaits."""
MAX_HEAD_BYTES = 65536
"""The largest response head (status line and headers) accepted; h11 refuses a longer one."""

Origin = tuple[str, str, int, tuple[str | None, str | None]]
"""(scheme, host, port, CA file and directory): connections are shared only within one."""


@dataclass(frozen=True)
class _Target:
    scheme: str
    host: str
    port: int
    host_header: str
    target: str  # path and query, as sent on the request line


def _parse_url(url: str) -> _Target:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as err:
        raise InvalidURL(f"{err}") from err
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise InvalidURL("the URL must start with http:// or https://")
    host = parts.hostname
    if not host:
        raise InvalidURL("the URL has no host")
    default_port = 443 if scheme == "https" else 80
    port = port or default_port
    try:
        header_host = host.encode("ascii").decode()
    except UnicodeEncodeError:
        try:
            header_host = host.encode("idna").decode("ascii")
        except UnicodeError as err:
            raise InvalidURL(f"the host {host!r} cannot be encoded ({err})") from err
    if ":" in header_host:  # an IPv6 literal
        header_host = f"[{header_host}]"
    if port != default_port:
        header_host = f"{header_host}:{port}"
    target = parts.path or "/"
    if parts.query:
        target = f"{target}?{parts.query}"
    return _Target(scheme, host, port, header_host, target)


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


# Headers this client always sets itself; a caller's copy is dropped.
_OWN_HEADERS = frozenset({"host", "content-length", "accept-encoding", "transfer-encoding", "connection"})


def _header_bytes(value: str) -> bytes:
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        return value.encode("utf-8")


def _encode_request(
    connection: h11.Connection, target: _Target, headers: Mapping[str, str], body: bytes
) -> bytes:
    """The request's bytes, as h11 frames them; a header HTTP cannot carry is refused before sending."""
    fields = [(b"host", target.host_header.encode("ascii"))]
    fields += [
        (_header_bytes(name), _header_bytes(value))
        for name, value in headers.items()
        if name.lower() not in _OWN_HEADERS
    ]
    fields.append((b"content-length", str(len(body)).encode("ascii")))
    # Compression buys nothing for small, latency-bound event streams and costs CPU to undo.
    fields.append((b"accept-encoding", b"identity"))
    try:
        request = h11.Request(method=b"POST", target=_header_bytes(target.target), headers=fields)
    except h11.LocalProtocolError as err:
        raise _refused_header(headers, err) from err
    return (
        connection.send(request) + connection.send(h11.Data(data=body)) + connection.send(h11.EndOfMessage())
    )


def _refused_header(headers: Mapping[str, str], err: h11.LocalProtocolError) -> TransportError:
    """Which header h11 refused (checked one by one, only on this failure path), or the target."""
    for name, value in headers.items():
        try:
            h11.Request(
                method=b"POST",
                target=b"/",
                headers=[(b"host", b"h"), (_header_bytes(name), _header_bytes(value))],
            )
        except h11.LocalProtocolError:
            return InvalidHeader(
                f"the request header {name!r} has a name or value HTTP cannot carry "
                "(a line break, a NUL, or a space or colon in the name)"
            )
    return InvalidURL(f"the URL's path cannot be sent ({err})")


def _is_ip_literal(host: str) -> bool:
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
            return True
        except OSError:
            continue
    return False


class _Connection:
    """One HTTP/1.1 connection: the socket's streams, h11's state of it, and one cheap watchdog timer.

    Arming ``asyncio.timeout`` around every read would schedule and cancel a
    timer per read; instead each wait only records when it began, and a
    single timer, re-armed lazily, aborts the transport once a wait has lasted
    too long.
    """

    __slots__ = (
        "_limit",
        "_loop",
        "_timer",
        "_waiting_since",
        "h11",
        "idle_since",
        "origin",
        "reader",
        "timed_out",
        "writer",
    )

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        origin: Origin,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.origin = origin
        self._loop = loop
        self._timer: asyncio.TimerHandle | None = None
        self._waiting_since: float | None = None
        self._limit = 0.0
        self.timed_out = False
        self.idle_since = 0.0
        self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)

    # -- the watchdog ----------------------------------------------------
    def _arm(self, limit: float) -> None:
        now = self._loop.time()
        self._waiting_since = now
        self._limit = limit
        if self._timer is None:
            self._timer = self._loop.call_at(now + limit, self._check)

    def _disarm(self) -> None:
        self._waiting_since = None

    def _check(self) -> None:
        self._timer = None
        since = self._waiting_since
        if since is None:
            return  # nothing is waiting; the next wait schedules a new timer
        deadline = since + self._limit
        if self._loop.time() >= deadline:
            self.timed_out = True
            self.writer.transport.abort()  # wakes the waiting read with EOF
        else:
            self._timer = self._loop.call_at(deadline, self._check)

    # -- I/O ---------------------------------------------------------------
    async def send(self, data: bytes, limit: float) -> None:
        try:
            self.writer.write(data)
            if self.writer.transport.get_write_buffer_size():
                self._arm(limit)
                try:
                    await self.writer.drain()
                finally:
                    self._disarm()
        except OSError as err:
            if self.timed_out:
                raise WriteTimeout("the request could not be sent in time") from err
            raise WriteError(f"{type(err).__name__}: {err}") from err
        if self.timed_out:
            raise WriteTimeout("the request could not be sent in time")

    async def read(self, size: int, limit: float) -> bytes:
        self._arm(limit)
        try:
            data = await self.reader.read(size)
        except OSError as err:
            raise self._read_failure(err) from err
        finally:
            self._disarm()
        if self.timed_out:
            raise ReadTimeout("the server sent nothing within the read timeout")
        return data

    def _read_failure(self, err: OSError) -> TransportError:
        if self.timed_out:
            return ReadTimeout("the server sent nothing within the read timeout")
        return ReadError(f"{type(err).__name__}: {err}")

    # -- life cycle --------------------------------------------------------
    def finished_cleanly(self) -> bool:
        """After a response's end: whether h11 allows another request on this connection.

        Both sides must be done with a keep-alive exchange (no ``connection:
        close``, not HTTP/1.0) and nothing may follow the response's end.
        """
        state = self.h11
        if state.our_state is not h11.DONE or state.their_state is not h11.DONE or state.trailing_data[0]:
            return False
        state.start_next_cycle()
        return True

    def reusable(self, now: float) -> bool:
        """Whether this idle connection can carry another request (open, quiet, not expired)."""
        if self.writer.transport.is_closing() or self.reader.at_eof():
            return False
        if getattr(self.reader, "_buffer", None):
            return False  # the server sent bytes nobody asked for
        return now - self.idle_since < KEEPALIVE_EXPIRY_S

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self.writer.transport.is_closing():
            self.writer.transport.abort()


class LeanResponse:
    """The status, headers and body of one answer. Read the body with :meth:`aiter_bytes` or :meth:`aread`.

    Header names are lower-cased; repeated headers are joined with ``", "``.
    Call :meth:`close` when done (``async with`` does it): a fully read
    response returns its connection to the pool, any other is discarded.
    """

    def __init__(
        self, pool: LeanPool, connection: _Connection, head: h11.Response, *, read_timeout: float
    ) -> None:
        self.status_code = head.status_code
        self.reason = head.reason.decode("latin-1")
        headers: dict[str, str] = {}
        for raw_name, raw_value in head.headers:
            name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        self.headers = headers
        self._pool = pool
        self._connection: _Connection | None = connection
        self._read_timeout = read_timeout
        self._consumed = False

    async def __aenter__(self) -> LeanResponse:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive (framing removed), once; any failure discards the connection.

        One piece per network read: an event stream sends many small chunks,
        and handing each over on its own would cost an await apiece.
        """
        if self._consumed:
            raise RuntimeError("the response body was already read")
        self._consumed = True
        connection = self._connection
        if connection is None:
            return
        state = connection.h11
        pending: list[bytes | bytearray] = []
        while True:
            try:
                event = state.next_event()
            except h11.RemoteProtocolError as err:
                raise RemoteProtocolError(str(err)) from err
            if type(event) is h11.Data:
                pending.append(event.data)
            elif event is h11.NEED_DATA:
                if pending:
                    yield b"".join(pending)
                    pending = []
                # b"" (the server closed) ends a read-until-close body or makes h11 report a cut one.
                state.receive_data(await connection.read(READ_SIZE, self._read_timeout))
            elif type(event) is h11.EndOfMessage:
                if pending:
                    yield b"".join(pending)
                self._finish(reusable=connection.finished_cleanly())
                return
            else:  # ConnectionClosed after a read-until-close body
                if pending:
                    yield b"".join(pending)
                self._finish(reusable=False)
                return

    async def aread(self) -> bytes:
        """The whole body."""
        return b"".join([data async for data in self.aiter_bytes()])

    def _finish(self, *, reusable: bool) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            self._pool.release(connection, reusable=reusable)

    def close(self) -> None:
        """Give the connection back: to the pool if the body was read to its end, else closed."""
        self._finish(reusable=False)


class _AttemptTimedOut(Exception):
    """One TCP connect try was not accepted within its share of the connect schedule."""


class LeanPool:
    """The keep-alive connections of one event loop, per origin (scheme, host, port, CA certificates)."""

    def __init__(self) -> None:
        self._idle: dict[Origin, list[_Connection]] = {}
        self._slots: asyncio.Semaphore | None = None
        self._active: set[_Connection] = set()
        self._limits: OriginLimits[_Connection] = OriginLimits()
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
        target = _parse_url(url)
        # Checked before a connection is taken: a header HTTP cannot carry must not cost one.
        _encode_request(h11.Connection(h11.CLIENT), target, headers, body)
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
        connection: _Connection | None = None
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
            await connection.send(_encode_request(connection.h11, target, headers, body), timeouts.write)
            return await self._read_head(connection, timeouts.read)
        except BaseException:
            if connection is not None:
                self.release(connection, reusable=False)
            else:
                slots.release()
            raise

    async def _claim(self, origin: Origin, max_per_host: int, pool_timeout: float) -> _Connection | None:
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

    def _take_idle(self, origin: Origin) -> _Connection | None:
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

    def _close(self, connection: _Connection) -> None:
        connection.close()
        self._limits.closed(connection.origin)

    async def _connect(self, target: _Target, origin: Origin, attempt_s: float, left_s: float) -> _Connection:
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
        return _Connection(reader, writer, origin, loop)

    @staticmethod
    async def _open_tcp(target: _Target, attempt_s: float) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """One TCP connect try of the pool's schedule (connection_limits.connect_attempts).

        A try the server does not accept in time raises :class:`_AttemptTimedOut`: the caller makes a
        fresh one (or reuses a connection that came free) rather than wait on the kernel's SYN back-off.
        """
        try:
            async with asyncio.timeout(attempt_s):
                return await asyncio.open_connection(
                    target.host,
                    target.port,
                    limit=READ_SIZE,
                    # A name may resolve to an unreachable IPv6 address first: race the addresses
                    # (RFC 8305) as httpx2 does, rather than wait out the connect timeout on it.
                    happy_eyeballs_delay=None if _is_ip_literal(target.host) else HAPPY_EYEBALLS_DELAY_S,
                )
        except TimeoutError as err:
            raise _AttemptTimedOut from err

    async def _read_head(self, connection: _Connection, read_timeout: float) -> LeanResponse:
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

    def release(self, connection: _Connection, *, reusable: bool) -> None:
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
    """:class:`~catui.models.transport.HttpTransport` over the running loop's :class:`LeanPool`.

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
