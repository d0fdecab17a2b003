"""The tools server over streamable HTTP on 127.0.0.1, in a background thread (uvicorn on a pre-bound socket)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

from tests.support.mcp_servers.tools_server import build_server


class HttpMcpServer:
    """``with HttpMcpServer() as server: server.url`` — the tools server at ``http://127.0.0.1:<port>/mcp``.

    ``required_header`` makes every request without ``Authorization: Bearer <value>`` fail with 401.
    """

    def __init__(self, required_header: str | None = None) -> None:
        self.required_header = required_header
        self.seen_authorization: list[str] = []
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> HttpMcpServer:
        import uvicorn

        app = build_server("web").streamable_http_app()
        outer = self

        async def guarded(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
                outer.seen_authorization.append(headers.get("authorization", ""))
                if outer.required_header and headers.get("authorization") != f"Bearer {outer.required_header}":
                    await send({"type": "http.response.start", "status": 401, "headers": []})
                    await send({"type": "http.response.body", "body": b"unauthorized"})
                    return
            await app(scope, receive, send)

        config = uvicorn.Config(guarded, log_level="error", lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._server.serve(sockets=[self._sock])), daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._sock.close()
