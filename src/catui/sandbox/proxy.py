"""The allow-list proxy: the only way out of a sandboxed command's network namespace.

``DomainProxy`` runs outside the sandbox, in a thread of its own with its own event loop, listening on a unix
socket that is bind-mounted into every sandbox that needs it (``bridge.py`` connects a loopback port inside
the sandbox to it). On that socket it speaks, by the first byte of each connection:

- SOCKS5 (``0x05``): no authentication, CONNECT to a host name or address (``ALL_PROXY=socks5h://…``);
- HTTP: ``CONNECT host:port`` tunnels (``HTTPS_PROXY``), and plain ``GET http://host/…`` requests in absolute
  form (``HTTP_PROXY``), forwarded one request per connection.

A host that ``sandbox.network.allowedDomains`` does not match is refused: ``403`` with a one-line reason for
HTTP, reply ``0x02`` (not allowed by ruleset) for SOCKS5. Names are resolved here, outside the sandbox.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import shutil
import struct
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from catui.sandbox.domains import host_allowed

MAX_HEAD_BYTES = 64 * 1024
CONNECT_TIMEOUT_S = 30.0
SOCKS_VERSION = 5
PIPE_CHUNK = 64 * 1024


class ProxyRequestError(Exception):
    """A request the proxy cannot serve; ``status`` is the HTTP status sent back."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


def refusal_reason(host: str) -> str:
    """The one line a refused connection carries back to the command."""
    return (
        f"catui sandbox: connections to {host} are not allowed (not in sandbox.network.allowedDomains); "
        f"ask the user to add {host!r} to sandbox.network.allowedDomains if the command needs it"
    )


class DomainProxy:
    """An HTTP/SOCKS5 proxy on a unix socket that lets through only hosts matching ``allowed_domains``.

    ``start()`` is idempotent and returns the socket path; ``close()`` stops the thread and removes the
    socket's folder. ``on_refusal`` hears every refused host (tests, logs).
    """

    def __init__(self, allowed_domains: tuple[str, ...], *, on_refusal: Callable[[str], None] | None = None) -> None:
        self.allowed_domains = allowed_domains
        self._on_refusal = on_refusal
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._folder: Path | None = None
        self._socket: Path | None = None

    @property
    def socket_path(self) -> Path | None:
        return self._socket

    def start(self) -> Path:
        """Start listening (once); the path of the unix socket."""
        with self._lock:
            if self._socket is not None:
                return self._socket
            folder = Path(tempfile.mkdtemp(prefix="catui-netproxy-"))
            socket_path = folder / "proxy.sock"
            loop = asyncio.new_event_loop()
            ready = threading.Event()
            failure: list[BaseException] = []
            # Daemon: a run that ends without close() must not hang on this thread.
            thread = threading.Thread(
                target=self._run, args=(loop, socket_path, ready, failure), name="catui-netproxy", daemon=True
            )
            thread.start()
            ready.wait()
            if failure:
                shutil.rmtree(folder, ignore_errors=True)
                raise OSError(f"catui sandbox: the allow-list proxy could not listen on {socket_path}: {failure[0]}")
            self._loop, self._thread, self._folder, self._socket = loop, thread, folder, socket_path
            return socket_path

    def close(self) -> None:
        """Stop serving and remove the socket."""
        with self._lock:
            loop, thread, folder = self._loop, self._thread, self._folder
            self._loop = self._thread = self._folder = self._socket = None
        if loop is not None and thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    def _run(
        self, loop: asyncio.AbstractEventLoop, socket_path: Path, ready: threading.Event, failure: list[BaseException]
    ) -> None:
        asyncio.set_event_loop(loop)
        try:
            server = loop.run_until_complete(asyncio.start_unix_server(self._serve, path=str(socket_path)))
        except OSError as exc:
            failure.append(exc)
            ready.set()
            loop.close()
            return
        ready.set()
        try:
            loop.run_forever()
        finally:
            server.close()
            for task in asyncio.all_tasks(loop):
                task.cancel()
            with contextlib.suppress(Exception):
                loop.run_until_complete(asyncio.sleep(0))
            loop.close()

    # -- one connection ---------------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            first = await reader.readexactly(1)
            if first[0] == SOCKS_VERSION:
                await self._serve_socks(reader, writer)
            else:
                await self._serve_http(first, reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError, OSError, ValueError):
            pass  # a client that went away or spoke nonsense; its connection just closes
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _allowed(self, host: str) -> bool:
        if host_allowed(host, self.allowed_domains):
            return True
        if self._on_refusal is not None:
            self._on_refusal(host)
        return False

    async def _serve_http(self, first: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = first + await reader.readuntil(b"\r\n\r\n")
        except asyncio.LimitOverrunError:
            await _http_error(writer, 431, "request head too large")
            return
        try:
            method, target, lines = _parse_head(head)
            host, port = _target_of(method, target, lines)
        except ProxyRequestError as exc:
            await _http_error(writer, exc.status, str(exc))
            return
        if not self._allowed(host):
            await _http_error(writer, 403, refusal_reason(host))
            return
        try:
            up_reader, up_writer = await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            await _http_error(writer, 502, f"catui sandbox proxy: cannot connect to {host}:{port}: {exc}")
            return
        if method == "CONNECT":
            writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        else:
            up_writer.write(_origin_form(method, target, lines))
        await _pipe_both(reader, writer, up_reader, up_writer)

    async def _serve_socks(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        (count,) = await reader.readexactly(1)
        methods = await reader.readexactly(count)
        if 0 not in methods:
            writer.write(b"\x05\xff")  # only "no authentication" is offered
            return
        writer.write(b"\x05\x00")
        version, command, _reserved, address_type = await reader.readexactly(4)
        if address_type == 1:
            host = str(ipaddress.IPv4Address(await reader.readexactly(4)))
        elif address_type == 3:
            (length,) = await reader.readexactly(1)
            host = (await reader.readexactly(length)).decode("ascii", "replace")
        elif address_type == 4:
            host = str(ipaddress.IPv6Address(await reader.readexactly(16)))
        else:
            writer.write(_socks_reply(8))  # address type not supported
            return
        (port,) = struct.unpack("!H", await reader.readexactly(2))
        if version != SOCKS_VERSION or command != 1:
            writer.write(_socks_reply(7))  # only CONNECT
            return
        if not self._allowed(host):
            writer.write(_socks_reply(2))  # connection not allowed by ruleset
            return
        try:
            up_reader, up_writer = await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError):
            writer.write(_socks_reply(5))  # connection refused
            return
        writer.write(_socks_reply(0))
        await _pipe_both(reader, writer, up_reader, up_writer)


def _parse_head(head: bytes) -> tuple[str, str, list[str]]:
    text = head.decode("latin-1")
    request_line, *lines = text.split("\r\n")
    parts = request_line.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise ProxyRequestError(400, f"catui sandbox proxy: not an HTTP request line: {request_line[:80]!r}")
    return parts[0].upper(), parts[1], [line for line in lines if line]


def _split_host_port(authority: str, default_port: int) -> tuple[str, int]:
    if authority.startswith("["):  # [::1]:443
        host, _, rest = authority[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port_text = authority.rpartition(":") if authority.count(":") == 1 else (authority, "", "")
    try:
        port = int(port_text) if port_text else default_port
    except ValueError:
        raise ProxyRequestError(400, f"catui sandbox proxy: bad port in {authority!r}") from None
    if not host or not 0 < port < 65536:
        raise ProxyRequestError(400, f"catui sandbox proxy: bad host or port in {authority!r}")
    return host, port


def _target_of(method: str, target: str, lines: list[str]) -> tuple[str, int]:
    """Host and port a request asks for: CONNECT's authority, or an absolute ``http://`` URL's."""
    if method == "CONNECT":
        return _split_host_port(target, 443)
    if not target.lower().startswith("http://"):
        raise ProxyRequestError(
            400, "catui sandbox proxy: only CONNECT and absolute http:// requests are proxied; use HTTPS_PROXY for "
            "https URLs"
        )
    authority = target[len("http://"):].split("/", 1)[0].rsplit("@", 1)[-1]
    return _split_host_port(authority, 80)


def _origin_form(method: str, target: str, lines: list[str]) -> bytes:
    """The request as the origin server expects it: path-only target, no proxy headers, one request only."""
    rest = target[len("http://"):]
    path = "/" + rest.split("/", 1)[1] if "/" in rest else "/"
    kept = [
        line for line in lines
        if line.split(":", 1)[0].strip().lower() not in ("proxy-connection", "proxy-authorization", "connection")
    ]
    return "\r\n".join([f"{method} {path} HTTP/1.1", *kept, "Connection: close", "", ""]).encode("latin-1")


def _socks_reply(code: int) -> bytes:
    return bytes([SOCKS_VERSION, code, 0, 1, 0, 0, 0, 0, 0, 0])


async def _http_error(writer: asyncio.StreamWriter, status: int, reason: str) -> None:
    titles = {400: "Bad Request", 403: "Forbidden", 431: "Request Header Fields Too Large", 502: "Bad Gateway"}
    body = (reason + "\n").encode("utf-8")
    writer.write(
        f"HTTP/1.1 {status} {titles.get(status, 'Error')}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nX-Catui-Sandbox: {reason[:200]}\r\nConnection: close\r\n\r\n".encode(
            "latin-1", "replace"
        ) + body
    )
    with contextlib.suppress(ConnectionError, OSError):
        await writer.drain()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(PIPE_CHUNK):
            writer.write(chunk)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            if writer.can_write_eof():
                writer.write_eof()


async def _pipe_both(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader, up_writer: asyncio.StreamWriter,
) -> None:
    try:
        await writer.drain()
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
    finally:
        up_writer.close()
