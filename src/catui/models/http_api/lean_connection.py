"""One HTTP/1.1 connection of the lean transport, and the response read from it.

A connection has one cheap watchdog timer for its read and write timeouts; a
response gives its connection back to the pool that lent it (its
``ConnectionHome``) once its body was read to the end.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Protocol

import h11

from catui.models.http_api.lean_wire import Origin
from catui.models.http_api.transport import (
    ReadError,
    ReadTimeout,
    RemoteProtocolError,
    TransportError,
    WriteError,
    WriteTimeout,
)

KEEPALIVE_EXPIRY_S = 60.0
"""An idle connection older than this is closed instead of reused (servers drop them around then)."""
READ_SIZE = 65536
"""Bytes asked of the socket per read: h11 then splits what came into events without further awaits."""
MAX_HEAD_BYTES = 65536
"""The largest response head (status line and headers) accepted; h11 refuses a longer one."""


class ConnectionHome(Protocol):
    """Where a response returns its connection (the pool that lent it)."""

    def release(self, connection: LeanConnection, *, reusable: bool) -> None:
        """Take the connection back: kept for reuse when ``reusable``, else closed."""


class LeanConnection:
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
        self, pool: ConnectionHome, connection: LeanConnection, head: h11.Response, *, read_timeout: float
    ) -> None:
        self.status_code = head.status_code
        self.reason = head.reason.decode("latin-1")
        headers: dict[str, str] = {}
        for raw_name, raw_value in head.headers:
            name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        self.headers = headers
        self._pool = pool
        self._connection: LeanConnection | None = connection
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
