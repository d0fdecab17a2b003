"""A tiny forwarding HTTP proxy on 127.0.0.1, for tests that need a request to go through a proxy.

It accepts absolute-form POSTs (``POST http://host:port/path HTTP/1.1``, what a
client sends to a plain-http proxy), records each target URL in ``targets``,
forwards the request to that URL with ``http.client`` and streams the answer
back, chunk by chunk, so an event stream keeps flowing. Only plain-http
targets (no CONNECT tunnels), which is what loopback test servers are::

    with ForwardProxy() as proxy:
        env = {"HTTP_PROXY": proxy.url}
        ...
    assert proxy.targets == ["http://127.0.0.1:1234/v1/messages"]
"""

from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

# Hop-by-hop headers (RFC 9110 §7.6.1) are the proxy's own business, never forwarded.
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "content-length",
        "proxy-authorization",
    }
)


class ForwardProxy:
    """Start with ``with`` (or :meth:`start` / :meth:`stop`); ``url`` is what ``HTTP_PROXY`` takes."""

    def __init__(self) -> None:
        self.targets: list[str] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def start(self) -> ForwardProxy:
        server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        server.daemon_threads = True
        self._server = server
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ForwardProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "the proxy was never started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                return

            def do_POST(self) -> None:
                target = urlsplit(self.path)
                if target.scheme != "http" or not target.hostname:
                    self.send_error(400, "a proxy request needs an absolute http:// URL")
                    return
                with owner._lock:
                    owner.targets.append(self.path)
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
                upstream = http.client.HTTPConnection(target.hostname, target.port or 80, timeout=30)
                try:
                    path = target.path + (f"?{target.query}" if target.query else "")
                    upstream.request("POST", path, body=body, headers=headers)
                    answer = upstream.getresponse()
                    self.send_response(answer.status, answer.reason)
                    for name, value in answer.getheaders():
                        if name.lower() not in _HOP_BY_HOP:
                            self.send_header(name, value)
                    self.send_header("transfer-encoding", "chunked")
                    self.end_headers()
                    while data := answer.read1(65536):
                        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                finally:
                    upstream.close()

        return Handler
