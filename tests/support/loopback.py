"""The threaded HTTP/1.1 server under the provider test servers.

Responses stream with chunked transfer encoding over keep-alive connections,
with TCP_NODELAY on every accepted socket so that each SSE event leaves at
once. :class:`Fault` objects queued with ``inject`` shape the next answers.

Two attributes, set before :meth:`LoopbackServer.start`, vary the transport:
``framing`` (``"chunked"``, the default; ``"length"``: the whole stream sent
at the end with a Content-Length; ``"close"``: no framing, the server closes
the connection to end the body) and ``tls_context`` (a server-side
``ssl.SSLContext``: the server speaks https and ``url`` says so). Two more
shape how connections are accepted: ``listen_backlog`` (the listen queue's
length; None keeps socketserver's 5, or whatever a caller set on ``_Server``)
and ``accept_delay_s`` (a pause before each accept: a server that accepts
slowly). ``open_connections`` and ``max_open_connections`` count the
connections open at once, as the server sees them. :meth:`LoopbackServer.hold`
keeps the next request that matches waiting until the test releases it, so a
test can order what happens around a request in flight without sleeping.
"""

from __future__ import annotations

import collections
import json
import signal
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

from catui.models.replay.scripted import ScriptEngine


@dataclass
class Fault:
    """How to spoil one answer. Queued faults apply to the next requests in order.

    ``status``: answer with this HTTP status and an error body (``error_type``,
    ``message``, extra ``headers`` such as retry-after). ``cut_after_events``:
    send that many events, then drop the connection. ``error_event_after``:
    send that many events, then an ``error`` event (``error_type``,
    ``message``). ``raw_body``: send exactly these bytes as the event stream.
    ``drop_connection``: close the socket without answering at all.
    """

    status: int | None = None
    error_type: str = "api_error"
    message: str = "injected fault"
    headers: Mapping[str, str] = field(default_factory=dict)
    cut_after_events: int | None = None
    error_event_after: int | None = None
    raw_body: bytes | bytearray | None = None
    drop_connection: bool = False


@dataclass
class HeldRequest:
    """The next request matching ``matches`` waits, unanswered, until :meth:`release` (see ``LoopbackServer.hold``).

    ``arrived`` is set once it waits; a test on an event loop awaits :meth:`wait_arrived`.
    """

    matches: Callable[[RecordedRequest], bool]
    arrived: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)

    def release(self) -> None:
        self.released.set()

    async def wait_arrived(self, timeout_s: float) -> None:
        """Wait (off the event loop) until the held request has arrived; AssertionError after ``timeout_s``."""
        import asyncio

        assert await asyncio.to_thread(self.arrived.wait, timeout_s), "the held request never arrived"


@dataclass
class RecordedRequest:
    """One request as the server saw it (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


def make_engine(script: ScriptEngine | Mapping[str, Any] | list[Any] | str | Path | None) -> ScriptEngine:
    if isinstance(script, ScriptEngine):
        return script
    if script is None:
        return ScriptEngine({"turns": [{"content": [{"type": "text", "text": "ok"}], "repeat": True}]})
    if isinstance(script, (str, Path)):
        return ScriptEngine.from_file(script)
    return ScriptEngine(script)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: LoopbackServer

    def get_request(self) -> tuple[socket.socket, Any]:
        if self.owner.accept_delay_s > 0:
            time.sleep(self.owner.accept_delay_s)
        conn, addr = super().get_request()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.owner.connections.append(addr)
        self.owner.connection_opened()
        return conn, addr

    def shutdown_request(self, request: Any) -> None:
        self.owner.connection_closed()
        super().shutdown_request(request)


class ConnectionCut(Exception):
    """Raised inside a handler to drop the connection mid-answer."""


class StreamWriter:
    """Writes a chunked SSE body and applies a fault's cut or error event."""

    def __init__(self, handler: BaseHTTPRequestHandler, fault: Fault | None) -> None:
        self.handler = handler
        self.fault = fault
        self.sent_events = 0
        self.raw = bytearray()
        owner = getattr(handler.server, "owner", None)
        self.framing: str = getattr(owner, "framing", "chunked")

    def start(self, status: int = 200, headers: Mapping[str, str] | None = None) -> None:
        self.handler.send_response(status)
        self.handler.send_header("content-type", "text/event-stream; charset=utf-8")
        self.handler.send_header("cache-control", "no-cache")
        if self.framing == "chunked":
            self.handler.send_header("transfer-encoding", "chunked")
        elif self.framing == "close":
            self.handler.send_header("connection", "close")
            self.handler.close_connection = True
        for name, value in (headers or {}).items():
            self.handler.send_header(name, value)
        if self.framing != "length":  # a Content-Length must wait until the whole body is known
            self.handler.end_headers()

    def write_raw(self, data: bytes | bytearray) -> None:
        if not data:
            return
        self.raw += data
        if self.framing == "chunked":
            self.handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        elif self.framing == "close":
            self.handler.wfile.write(data)
        else:
            return  # sent by end()
        self.handler.wfile.flush()

    def event(self, data: bytes, *, error_event: bytes | None = None) -> None:
        """Send one event; before it, cut or inject an error as the fault says."""
        fault = self.fault
        if (
            fault is not None
            and fault.cut_after_events is not None
            and self.sent_events >= fault.cut_after_events
        ):
            raise ConnectionCut
        if (
            fault is not None
            and fault.error_event_after is not None
            and self.sent_events >= fault.error_event_after
        ):
            if error_event is not None:
                self.write_raw(error_event)
            self.end()
            raise StopStream
        self.write_raw(data)
        self.sent_events += 1

    def end(self) -> None:
        if self.framing == "chunked":
            self.handler.wfile.write(b"0\r\n\r\n")
        elif self.framing == "length":
            self.handler.send_header("content-length", str(len(self.raw)))
            self.handler.end_headers()
            self.handler.wfile.write(bytes(self.raw))
        self.handler.wfile.flush()


class StopStream(Exception):
    """Raised after an injected error event ended the stream early."""


class LoopbackServer:
    """A background-thread HTTP server on 127.0.0.1 with a random port.

    Subclasses implement :meth:`handle_post`. Use as a context manager, or
    call :meth:`start` and :meth:`stop`.
    """

    def __init__(
        self,
        script: ScriptEngine | Mapping[str, Any] | list[Any] | str | Path | None = None,
        *,
        require_key: str | None = None,
        port: int = 0,
    ) -> None:
        self.engine = make_engine(script)
        self.requests: list[RecordedRequest] = []
        self.responses: list[bytearray] = []  # each grows as its answer is sent
        self.connections: list[Any] = []
        self.faults: collections.deque[Fault] = collections.deque()
        self.holds: list[HeldRequest] = []
        self.require_key = require_key
        self.framing = "chunked"
        self.tls_context: ssl.SSLContext | None = None
        self.listen_backlog: int | None = None
        self.accept_delay_s = 0.0
        self.open_connections = 0
        self.max_open_connections = 0
        self._lock = threading.Lock()
        self._port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------
    def start(self) -> LoopbackServer:
        server_class = _Server
        if self.listen_backlog is not None:
            server_class = type("_BacklogServer", (_Server,), {"request_queue_size": self.listen_backlog})
        server = server_class(("127.0.0.1", self._port), self._handler_class())
        server.owner = self
        if self.tls_context is not None:
            server.socket = self.tls_context.wrap_socket(server.socket, server_side=True)
        self._server = server
        self._port = int(server.server_address[1])
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        for held in list(self.holds):
            held.release()  # a handler thread still waiting must not outlive the server
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._port, "the server was never started"
        return self._port

    @property
    def url(self) -> str:
        scheme = "https" if self.tls_context is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    # -- connections -----------------------------------------------------
    def connection_opened(self) -> None:
        with self._lock:
            self.open_connections += 1
            self.max_open_connections = max(self.max_open_connections, self.open_connections)

    def connection_closed(self) -> None:
        with self._lock:
            self.open_connections -= 1

    # -- faults and records ---------------------------------------------
    def inject(self, *faults: Fault) -> None:
        with self._lock:
            self.faults.extend(faults)

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self.faults.popleft() if self.faults else None

    def hold(self, matches: Callable[[RecordedRequest], bool]) -> HeldRequest:
        """Keep the next request for which ``matches`` is true waiting until the returned hold is released."""
        held = HeldRequest(matches)
        with self._lock:
            self.holds.append(held)
        return held

    def _take_hold(self, request: RecordedRequest) -> HeldRequest | None:
        """The unused hold this request matches, now marked arrived (each hold takes one request)."""
        with self._lock:
            for held in self.holds:
                if not held.arrived.is_set() and held.matches(request):
                    held.arrived.set()
                    return held
        return None

    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    # -- handling --------------------------------------------------------
    def handle_post(
        self, handler: BaseHTTPRequestHandler, request: RecordedRequest, fault: Fault | None
    ) -> None:
        raise NotImplementedError

    def send_json(
        self,
        handler: BaseHTTPRequestHandler,
        status: int,
        payload: Any,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)
        handler.wfile.flush()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 30

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except json.JSONDecodeError:
                    body = raw.decode("utf-8", "replace")
                request = RecordedRequest(
                    "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
                with owner._lock:
                    owner.requests.append(request)
                held = owner._take_hold(request)
                if held is not None:
                    held.released.wait()
                fault = owner._next_fault()
                if fault is not None and fault.drop_connection:
                    self._cut()
                    return
                try:
                    owner.handle_post(self, request, fault)
                except ConnectionCut:
                    self._cut()
                except StopStream:
                    pass
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            def _cut(self) -> None:
                self.close_connection = True
                try:
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        return Handler


def sse_lines(pairs: Iterable[tuple[str | None, Any]]) -> Iterator[bytes]:
    """Encode (event name, JSON payload or raw string) pairs as SSE frames."""
    for name, payload in pairs:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        prefix = f"event: {name}\n" if name else ""
        yield f"{prefix}data: {data}\n\n".encode()


def sleep_ms(ms: int) -> None:
    if ms > 0:
        time.sleep(ms / 1000.0)


ServerT = TypeVar("ServerT", bound=LoopbackServer)


def started_servers(make: Callable[..., ServerT]) -> Iterator[Callable[..., ServerT]]:
    """The body of a factory fixture: yields ``factory(script, **options)``, which makes a server with
    ``make``, starts it and returns it; every server it started is stopped when the fixture ends."""
    started: list[ServerT] = []

    def factory(script: Any = None, **options: Any) -> ServerT:
        server = make(script, **options)
        server.start()
        started.append(server)
        return server

    yield factory
    for server in started:
        server.stop()


def serve_until_terminated(server: LoopbackServer) -> None:
    """Keep a started server running until SIGTERM or Ctrl-C, then stop it (the servers' command lines)."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
