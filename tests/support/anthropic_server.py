"""A loopback server that speaks the Anthropic Messages API with SSE streaming.

It answers ``POST /v1/messages`` from a ScriptEngine script (the scripted
provider's format), records every request in ``requests`` and the raw SSE
bytes of every answer in ``responses``, and applies queued :class:`Fault`\\ s.

In a test::

    from tests.support.anthropic_server import AnthropicTestServer, Fault

    with AnthropicTestServer({"turns": [...]}) as server:
        server.inject(Fault(status=529, headers={"retry-after": "0"}))
        env = server.env()          # ANTHROPIC_BASE_URL and a key, for a subprocess or a provider

or with the ``anthropic_server`` fixture factory (import it into a test module
or conftest). Standalone, for a CLI in another terminal::

    python -m tests.support.anthropic_server script.yaml [--port N]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from catui.models.http_api.accumulate import MessageAccumulator
from catui.models.replay.scripted import RequestView, ScriptEngine, ScriptNoMatchError
from tests.support.loopback import (
    Fault,
    LoopbackServer,
    RecordedRequest,
    StreamWriter,
    serve_until_terminated,
    sleep_ms,
    sse_lines,
    started_servers,
)

__all__ = ["AnthropicTestServer", "Fault", "RecordedRequest", "anthropic_server"]

TEST_API_KEY = "sk-ant-test-key"


def error_body(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}


class AnthropicTestServer(LoopbackServer):
    """Messages API on 127.0.0.1. ``require_key`` makes other keys get a 401 authentication_error.

    ``ping`` sends a ping event after message_start, as the real API does.
    """

    def __init__(
        self,
        script: ScriptEngine | Mapping[str, Any] | list[Any] | str | Path | None = None,
        *,
        require_key: str | None = None,
        ping: bool = True,
        port: int = 0,
    ) -> None:
        super().__init__(script, require_key=require_key, port=port)
        self.ping = ping

    def env(self, api_key: str = TEST_API_KEY) -> dict[str, str]:
        """Variables that point catui (or the SDK) at this server."""
        return {"ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": api_key}

    def handle_post(
        self, handler: BaseHTTPRequestHandler, request: RecordedRequest, fault: Fault | None
    ) -> None:
        if request.path.split("?")[0] != "/v1/messages":
            self.send_json(handler, 404, error_body("not_found_error", f"no route {request.path}"))
            return
        if self.require_key is not None:
            sent = request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix(
                "Bearer "
            )
            if sent != self.require_key:
                self.send_json(handler, 401, error_body("authentication_error", "invalid x-api-key"))
                return
        if fault is not None and fault.status is not None:
            self.send_json(handler, fault.status, error_body(fault.error_type, fault.message), fault.headers)
            return
        body = request.body if isinstance(request.body, dict) else {}
        if fault is not None and fault.raw_body is not None:
            writer = StreamWriter(handler, fault)
            writer.start()
            self._record(writer.raw)
            writer.write_raw(fault.raw_body)
            writer.end()
            return
        try:
            reply = self.engine.respond(RequestView.from_anthropic(body))
        except ScriptNoMatchError as err:
            self.send_json(handler, 400, error_body("invalid_request_error", str(err)))
            return
        sleep_ms(reply.turn.delay_ms)
        if reply.error is not None:
            status = reply.error.status or 500
            error = reply.turn.error or {}
            self.send_json(
                handler,
                status,
                error_body(str(error.get("type", "api_error")), str(error.get("message", ""))),
            )
            return
        if not body.get("stream"):
            accumulator = MessageAccumulator()
            for event in reply.events:
                accumulator.feed(event)
            self.send_json(handler, 200, accumulator.message)
            return
        pairs: list[tuple[str | None, Any]] = []
        for event in reply.events:
            pairs.append((event["type"], event))
            if self.ping and event["type"] == "message_start":
                pairs.append(("ping", {"type": "ping"}))
        writer = StreamWriter(handler, fault)
        writer.start(headers={"request-id": f"req_test_{len(self.requests)}"})
        error_frame = next(
            sse_lines(
                [
                    (
                        "error",
                        error_body(
                            fault.error_type if fault else "overloaded_error", fault.message if fault else ""
                        ),
                    )
                ]
            )
        )
        # Recorded as it grows, before any byte leaves: a client may read the whole answer and look
        # at ``responses`` before this thread runs again.
        self._record(writer.raw)
        for frame in sse_lines(pairs):
            writer.event(frame, error_event=error_frame)
        writer.end()

    def _record(self, raw: bytearray) -> None:
        with self._lock:
            self.responses.append(raw)


@pytest.fixture
def anthropic_server() -> Iterator[Callable[..., AnthropicTestServer]]:
    """A factory fixture: ``anthropic_server(script, **options)`` starts a server; all stop after the test."""
    yield from started_servers(AnthropicTestServer)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Serve the Anthropic Messages API from a catui script on 127.0.0.1."
    )
    parser.add_argument("script", help="YAML or JSON script (the scripted provider's format)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--require-key", default=None)
    args = parser.parse_args(argv)
    server = AnthropicTestServer(args.script, port=args.port, require_key=args.require_key).start()
    print(json.dumps({"url": server.url}), flush=True)
    serve_until_terminated(server)


if __name__ == "__main__":
    main()
