"""A SearXNG-compatible JSON search endpoint on 127.0.0.1 for WebSearch tests.

``GET /search?q=…&format=json`` answers ``{"query", "results": [{"title", "url", "content"}]}`` from the
``results`` given to the constructor; ``status`` makes every answer that HTTP status instead. Each query
string is recorded in ``queries``.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse


class SearxngTestServer:
    def __init__(self, results: list[dict[str, Any]], *, status: int = 200) -> None:
        self.results = results
        self.status = status
        self.queries: list[dict[str, list[str]]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                parsed = urlparse(self.path)
                server.queries.append(parse_qs(parsed.query))
                ok = server.status == 200 and parsed.path == "/search"
                body = json.dumps({"query": parse_qs(parsed.query).get("q", [""])[0], "results": server.results}
                                  if ok else {"error": "test failure"}).encode()
                self.send_response(server.status if parsed.path == "/search" else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/search"

    def __enter__(self) -> SearxngTestServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
