"""A small HTTP/1.1 client on asyncio streams, for the model providers' streamed POSTs.

It does exactly what the providers need and nothing more: send one POST with
a ready body, read the status line and headers, then hand the body over as it
arrives, whether it is framed by Content-Length, chunked, or ended by the
server closing the connection. No redirects, no compression, no proxies (the
caller falls back to httpx2 when a proxy applies), no HTTP/2.

Why not httpx2: with a hundred sub-agents streaming at once, httpx2's layers
(httpcore, h11, anyio) cost several times the CPU of the bytes they move, and
importing it costs tens of milliseconds at start-up.

Connections are pooled per event loop and per (scheme, host, port). A
connection goes back to the pool only once its response was read to the end;
any error, a cut, or a response the caller stops reading early discards it.
https uses one ``ssl.create_default_context()``, built the first time an
https URL is used (honouring ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``).

Failures are raised as :class:`LeanHTTPError` subclasses named like their
httpx2 counterparts (``ConnectError``, ``ReadTimeout``, ...), so that
:mod:`catui.models.http` maps both transports to the same provider errors.
"""

from __future__ import annotations

import asyncio
import re
import socket
import time
import weakref
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import ssl

MAX_CONNECTIONS = 256
"""Connections one event loop may have open at once; more requests wait for a free one."""
MAX_IDLE_PER_ORIGIN = 128
"""Idle keep-alive connections kept per (scheme, host, port); a connection beyond this is closed.

Generous, so that a fan-out of a hundred sub-agents keeps its connections (and
their TLS sessions) for the next turn."""
KEEPALIVE_EXPIRY_S = 60.0
"""An idle connection older than this is closed instead of reused (servers drop them around then)."""
HAPPY_EYEBALLS_DELAY_S = 0.25
READ_SIZE = 65536
MAX_HEADER_LINES = 256
MAX_LINE_BYTES = 65536
_BAD_HEADER_NAME = re.compile(r"[\x00-\x20:\x7f]|^$")
_BAD_HEADER_VALUE = re.compile(r"[\r\n\x00]")


class LeanHTTPError(Exception):
    """Any failure of a lean request; the subclasses say which kind."""


class InvalidURL(LeanHTTPError):
    """The URL is not an ``http://`` or ``https://`` URL with a host and a valid port."""


class InvalidHeader(LeanHTTPError):
    """A request header has a name or value that HTTP/1.1 cannot carry (a line break, a colon in the name)."""


class ConnectError(LeanHTTPError):
    """The connection (or its TLS handshake) could not be established."""


class ConnectTimeout(LeanHTTPError):
    """Establishing the connection took longer than the connect timeout."""


class ReadTimeout(LeanHTTPError):
    """The server stayed silent for longer than the read timeout."""


class WriteTimeout(LeanHTTPError):
    """The request could not be sent within the write timeout."""


class PoolTimeout(LeanHTTPError):
    """No connection slot came free within the pool timeout."""


class RemoteProtocolError(LeanHTTPError):
    """The server closed the connection early or sent something that is not HTTP/1.1."""


class ReadError(LeanHTTPError):
    """Reading from the connection failed (reset, TLS error)."""


class WriteError(LeanHTTPError):
    """Sending the request failed (reset, broken pipe)."""


TIMEOUT_ERRORS: tuple[type[LeanHTTPError], ...] = (ReadTimeout, WriteTimeout, PoolTimeout)


@dataclass(frozen=True)
class Timeouts:
    """Seconds allowed to connect, to wait for each read or write, and to wait for a free connection."""

    connect: float
    read: float
    write: float
    pool: float


@dataclass(frozen=True)
class _Target:
    scheme: str
    host: str
    port: int
    host_header: str
    target: str  # path and query, as sent on the request line

    @property
    def origin(self) -> tuple[str, str, int]:
        return (self.scheme, self.host, self.port)


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


def ssl_context() -> ssl.SSLContext:
    """The verifying TLS context for https URLs, created on first use and then shared.

    ``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` replace the system's CA certificates,
    as they do for httpx2.
    """
    import os
    import ssl

    cafile = os.environ.get("SSL_CERT_FILE") or None
    capath = None if cafile else (os.environ.get("SSL_CERT_DIR") or None)
    key = (cafile, capath)
    context = _ssl_contexts.get(key)
    if context is None:
        context = ssl.create_default_context(cafile=cafile, capath=capath)
        context.set_alpn_protocols(["http/1.1"])
        _ssl_contexts[key] = context
    return context


def _encode_head(target: _Target, headers: Mapping[str, str], body_length: int) -> bytes:
    lines = [f"POST {target.target} HTTP/1.1", f"host: {target.host_header}"]
    sent = {"host", "content-length", "accept-encoding", "transfer-encoding", "connection"}
    for name, value in headers.items():
        lowered = name.lower()
        if lowered in sent:
            continue
        if _BAD_HEADER_NAME.search(name) or _BAD_HEADER_VALUE.search(value):
            raise InvalidHeader(
                f"the request header {name!r} has a name or value HTTP cannot carry "
                "(a line break, a NUL, or a space or colon in the name)"
            )
        lines.append(f"{name}: {value}")
    lines.append(f"content-length: {body_length}")
    # Compression buys nothing for small, latency-bound event streams and costs CPU to undo.
    lines.append("accept-encoding: identity")
    lines.append("\r\n")
    head = "\r\n".join(lines)
    try:
        return head.encode("latin-1")
    except UnicodeEncodeError:
        return head.encode("utf-8")


def _is_ip_literal(host: str) -> bool:
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
            return True
        except OSError:
            continue
    return False


class _Connection:
    """One HTTP/1.1 connection. Reads and writes time out through one cheap watchdog timer.

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
        origin: tuple[str, str, int],
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

    async def readline(self, limit: float) -> bytes:
        self._arm(limit)
        try:
            line = await self.reader.readline()
        except ValueError as err:  # the line exceeded the stream's limit
            raise RemoteProtocolError("the server sent a header line that is too long") from err
        except OSError as err:
            raise self._read_failure(err) from err
        finally:
            self._disarm()
        if self.timed_out:
            raise ReadTimeout("the server sent nothing within the read timeout")
        return line

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

    def _read_failure(self, err: OSError) -> LeanHTTPError:
        if self.timed_out:
            return ReadTimeout("the server sent nothing within the read timeout")
        return ReadError(f"{type(err).__name__}: {err}")

    # -- life cycle --------------------------------------------------------
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
        self,
        pool: LeanPool,
        connection: _Connection,
        status: int,
        reason: str,
        headers: dict[str, str],
        *,
        keep_alive: bool,
        read_timeout: float,
    ) -> None:
        self.status_code = status
        self.reason = reason
        self.headers = headers
        self._pool = pool
        self._connection: _Connection | None = connection
        self._keep_alive = keep_alive
        self._read_timeout = read_timeout
        self._consumed = False

    async def __aenter__(self) -> LeanResponse:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def _body_kind(self) -> tuple[str, int]:
        if self.status_code in (204, 304):
            return "empty", 0
        encoding = self.headers.get("transfer-encoding", "").lower()
        if encoding:
            if encoding.rsplit(",", 1)[-1].strip() != "chunked":
                raise RemoteProtocolError(f"unsupported transfer-encoding {encoding!r}")
            return "chunked", 0
        raw_length = self.headers.get("content-length")
        if raw_length is not None:
            try:
                length = int(raw_length.split(",")[0].strip())
            except ValueError as err:
                raise RemoteProtocolError(f"invalid content-length {raw_length!r}") from err
            if length < 0:
                raise RemoteProtocolError(f"invalid content-length {raw_length!r}")
            return "length", length
        return "close", 0

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive (chunk framing removed), once; any failure discards the connection."""
        if self._consumed:
            raise RuntimeError("the response body was already read")
        self._consumed = True
        connection = self._connection
        if connection is None:
            return
        kind, length = self._body_kind()
        if kind == "empty":
            self._finish(reusable=self._keep_alive)
            return
        if kind == "length":
            body = self._iter_length(connection, length)
        elif kind == "chunked":
            body = self._iter_chunked(connection)
        else:
            body = self._iter_until_close(connection)
        async for data in body:
            yield data

    async def _iter_length(self, connection: _Connection, length: int) -> AsyncIterator[bytes]:
        remaining = length
        while remaining:
            data = await connection.read(min(remaining, READ_SIZE), self._read_timeout)
            if not data:
                raise RemoteProtocolError(
                    f"the server closed the connection {remaining} bytes before the end of the body"
                )
            remaining -= len(data)
            yield data
        self._finish(reusable=self._keep_alive)

    async def _iter_until_close(self, connection: _Connection) -> AsyncIterator[bytes]:
        while True:
            data = await connection.read(READ_SIZE, self._read_timeout)
            if not data:
                break
            yield data
        self._finish(reusable=False)

    async def _iter_chunked(self, connection: _Connection) -> AsyncIterator[bytes]:
        # Parses the chunk framing out of whole network reads, yielding once per read: an event
        # stream sends many small chunks, and reading them line by line would cost an await each.
        timeout = self._read_timeout
        buffer = b""
        position = 0
        pending: list[bytes] = []
        remaining = -1  # data bytes left in the current chunk; -1 while a size line is expected
        while True:
            if remaining > 0:
                available = len(buffer) - position
                if available:
                    take = min(available, remaining)
                    pending.append(buffer[position : position + take])
                    position += take
                    remaining -= take
                    if remaining:
                        continue
                    remaining = -2  # the CRLF after the data comes next
                    continue
            else:
                end = buffer.find(b"\n", position)
                if end >= 0:
                    line = buffer[position:end]
                    position = end + 1
                    if remaining == -2:
                        if line not in (b"", b"\r"):
                            raise RemoteProtocolError("a chunk of the body was longer than its declared size")
                        remaining = -1
                        continue
                    if remaining == -3:  # trailer lines until a blank one
                        if line in (b"", b"\r"):
                            if pending:
                                yield b"".join(pending)
                            self._finish(reusable=self._keep_alive and position == len(buffer))
                            return
                        continue
                    size_field = line.split(b";", 1)[0].strip()
                    try:
                        size = int(size_field, 16)
                    except ValueError as err:
                        raise RemoteProtocolError(f"invalid chunk size line {line[:40]!r}") from err
                    if size < 0:
                        raise RemoteProtocolError(f"invalid chunk size line {line[:40]!r}")
                    remaining = size if size else -3
                    continue
                if len(buffer) - position > MAX_LINE_BYTES:
                    raise RemoteProtocolError("a chunk size line of the body is too long")
            # The buffer is used up: hand over what was decoded, then read more.
            if pending:
                yield b"".join(pending)
                pending = []
            data = await connection.read(READ_SIZE, timeout)
            if not data:
                raise RemoteProtocolError(
                    "peer closed connection without sending complete message body: incomplete chunked read"
                )
            buffer = buffer[position:] + data if position < len(buffer) else data
            position = 0

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


class LeanPool:
    """The keep-alive connections of one event loop, per (scheme, host, port)."""

    def __init__(self) -> None:
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._slots: asyncio.Semaphore | None = None
        self._active: set[_Connection] = set()
        self.closed = False
        self.connections_opened = 0
        """How many connections this pool has opened (the tests read it to see reuse)."""

    async def post(
        self, url: str, *, headers: Mapping[str, str], body: bytes, timeouts: Timeouts
    ) -> LeanResponse:
        """Send ``body`` to ``url`` and return the response once its headers arrived."""
        if self.closed:
            raise RuntimeError("the lean HTTP pool was closed")
        target = _parse_url(url)
        head = _encode_head(target, headers, len(body))
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
            connection = self._take_idle(target.origin) or await self._connect(target, timeouts.connect)
            self._active.add(connection)
            await connection.send(head + body, timeouts.write)
            return await self._read_head(connection, timeouts.read)
        except BaseException:
            if connection is not None:
                self.release(connection, reusable=False)
            else:
                slots.release()
            raise

    def _take_idle(self, origin: tuple[str, str, int]) -> _Connection | None:
        idle = self._idle.get(origin)
        if not idle:
            return None
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            if connection.reusable(now):
                return connection
            connection.close()
        return None

    async def _connect(self, target: _Target, timeout: float) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            tls = ssl_context() if target.scheme == "https" else None
        except OSError as err:  # SSL_CERT_FILE or SSL_CERT_DIR names a missing or broken file
            raise ConnectError(f"cannot load the CA certificates for https ({err})") from err
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    target.host,
                    target.port,
                    ssl=tls,
                    server_hostname=target.host if tls is not None else None,
                    limit=MAX_LINE_BYTES,
                    # A name may resolve to an unreachable IPv6 address first: race the addresses
                    # (RFC 8305) as httpx2 does, rather than wait out the connect timeout on it.
                    happy_eyeballs_delay=None if _is_ip_literal(target.host) else HAPPY_EYEBALLS_DELAY_S,
                )
        except TimeoutError as err:
            raise ConnectTimeout(
                f"no connection to {target.host}:{target.port} within {timeout:g} s"
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
        return _Connection(reader, writer, target.origin, loop)

    async def _read_head(self, connection: _Connection, read_timeout: float) -> LeanResponse:
        while True:
            line = await connection.readline(read_timeout)
            if not line:
                raise RemoteProtocolError("Server disconnected without sending a response.")
            version, _, rest = line.decode("latin-1").rstrip("\r\n").partition(" ")
            code, _, reason = rest.partition(" ")
            if not version.startswith("HTTP/1.") or len(code) != 3 or not code.isdigit():
                raise RemoteProtocolError(f"the server's answer is not HTTP/1.1: {line[:60]!r}")
            status = int(code)
            headers: dict[str, str] = {}
            for _ in range(MAX_HEADER_LINES):
                raw = await connection.readline(read_timeout)
                if raw in (b"\r\n", b"\n"):
                    break
                if not raw.endswith(b"\n"):
                    raise RemoteProtocolError("the server closed the connection in the middle of the headers")
                name, colon, value = raw.decode("latin-1").partition(":")
                if not colon:
                    raise RemoteProtocolError(f"malformed header line {raw[:60]!r}")
                name = name.strip().lower()
                value = value.strip()
                headers[name] = f"{headers[name]}, {value}" if name in headers else value
            else:
                raise RemoteProtocolError(f"the server sent more than {MAX_HEADER_LINES} header lines")
            if 100 <= status < 200:
                continue  # an interim answer (100 Continue, 103 Early Hints); the real one follows
            tokens = {t.strip().lower() for t in headers.get("connection", "").split(",")}
            keep_alive = version == "HTTP/1.1" and "close" not in tokens
            return LeanResponse(
                self, connection, status, reason, headers, keep_alive=keep_alive, read_timeout=read_timeout
            )

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
        else:
            connection.close()

    def idle_count(self) -> int:
        """How many idle keep-alive connections the pool holds."""
        return sum(len(idle) for idle in self._idle.values())

    async def aclose(self) -> None:
        """Close every connection; responses still being read fail from here on."""
        self.closed = True
        connections = [c for idle in self._idle.values() for c in idle] + list(self._active)
        self._idle.clear()
        self._active.clear()
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
