"""A loopback server that speaks OpenAI Chat Completions with streaming.

It answers ``POST /v1/chat/completions`` from a ScriptEngine script (the
scripted provider's format) and can imitate the variations real servers
have, set as attributes (or constructor options):

- ``content_style``: ``"null"`` (the first delta has ``content: null``) or ``"empty"`` (``""``);
- ``tool_call_style``: ``"split"`` (id and name first, arguments in fragments over
  several chunks, calls interleaved) or ``"whole"`` (each call in one chunk);
- ``usage_style``: ``"end"`` (a last chunk with no choices, when the request asks
  ``stream_options.include_usage``), ``"inline"`` (usage on the finishing chunk) or ``"absent"``;
- ``send_done``: whether ``data: [DONE]`` ends the stream.

Faults (:class:`Fault`) work as for the Anthropic server; an error event is
``data: {"error": {...}}``. Standalone: ``python -m tests.support.openai_server script.yaml``.
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
    started_servers,
)

__all__ = ["Fault", "OpenAITestServer", "openai_server", "request_view"]

TEST_API_KEY = "sk-openai-test-key"
FINISH = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "refusal": "content_filter",
}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, Mapping) and p.get("type") == "text"
        )
    return ""


def request_view(body: Mapping[str, Any]) -> RequestView:
    """The scripted-turn view of a Chat Completions request.

    The messages after the last assistant message (tool results and user text)
    count as the last user message, as they would in Anthropic's format.
    """
    messages: list[Mapping[str, Any]] = list(body.get("messages") or [])
    system = "\n".join(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
    conversation = [m for m in messages if m.get("role") not in ("system", "developer")]
    first_assistant = next(
        (i for i, m in enumerate(conversation) if m.get("role") == "assistant"), len(conversation)
    )
    last_assistant = max((i for i, m in enumerate(conversation) if m.get("role") == "assistant"), default=-1)
    first_user = "\n".join(
        _text(m.get("content")) for m in conversation[:first_assistant] if m.get("role") == "user"
    )
    tail = conversation[last_assistant + 1 :]
    return RequestView(
        model=str(body.get("model", "")),
        system_text=system,
        first_user_text=first_user,
        last_user_text="\n".join(t for t in (_text(m.get("content")) for m in tail) if t),
        last_is_tool_result=any(m.get("role") == "tool" for m in tail),
        tool_names=tuple(str((t.get("function") or {}).get("name", "")) for t in body.get("tools") or []),
        size_chars=len(json.dumps(messages)),
    )


class OpenAITestServer(LoopbackServer):
    """Chat Completions on 127.0.0.1; ``require_key`` makes other keys get a 401."""

    def __init__(
        self,
        script: ScriptEngine | Mapping[str, Any] | list[Any] | str | Path | None = None,
        *,
        require_key: str | None = None,
        content_style: str = "null",
        tool_call_style: str = "split",
        usage_style: str = "end",
        send_done: bool = True,
        port: int = 0,
    ) -> None:
        super().__init__(script, require_key=require_key, port=port)
        self.content_style = content_style
        self.tool_call_style = tool_call_style
        self.usage_style = usage_style
        self.send_done = send_done

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def env(self, api_key: str = TEST_API_KEY) -> dict[str, str]:
        return {"OPENAI_BASE_URL": self.base_url, "OPENAI_API_KEY": api_key}

    def handle_post(
        self, handler: BaseHTTPRequestHandler, request: RecordedRequest, fault: Fault | None
    ) -> None:
        if request.path.split("?")[0] != "/v1/chat/completions":
            self.send_json(
                handler, 404, {"error": {"message": f"no route {request.path}", "type": "not_found"}}
            )
            return
        if (
            self.require_key is not None
            and request.headers.get("authorization") != f"Bearer {self.require_key}"
        ):
            error: dict[str, str] = {
                "message": "Incorrect API key provided",
                "type": "invalid_request_error",
                "code": "invalid_api_key",
            }
            self.send_json(handler, 401, {"error": error})
            return
        if fault is not None and fault.status is not None:
            self.send_json(
                handler,
                fault.status,
                {"error": {"message": fault.message, "type": fault.error_type}},
                fault.headers,
            )
            return
        body = request.body if isinstance(request.body, dict) else {}
        writer = StreamWriter(handler, fault)
        if fault is not None and fault.raw_body is not None:
            writer.start()
            self._record(writer.raw)
            writer.write_raw(fault.raw_body)
            writer.end()
            return
        try:
            reply = self.engine.respond(request_view(body))
        except ScriptNoMatchError as err:
            self.send_json(handler, 400, {"error": {"message": str(err), "type": "invalid_request_error"}})
            return
        sleep_ms(reply.turn.delay_ms)
        if reply.error is not None:
            turn_error: Mapping[str, Any] = reply.turn.error or {}
            message = str(turn_error.get("message", ""))
            payload = {"error": {"message": message, "type": str(turn_error.get("type", "api_error"))}}
            self.send_json(handler, reply.error.status or 500, payload)
            return
        accumulator = MessageAccumulator()
        for event in reply.events:
            accumulator.feed(event)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        chunks = self.chunks_for(accumulator.message, str(body.get("model", "")), include_usage)
        error_frame = self._frame(
            {
                "error": {
                    "message": fault.message if fault else "",
                    "type": fault.error_type if fault else "server_error",
                }
            }
        )
        writer.start()
        # Recorded as it grows, before any byte leaves: a client may read the whole answer and look
        # at ``responses`` before this thread runs again.
        self._record(writer.raw)
        for chunk in chunks:
            writer.event(self._frame(chunk), error_event=error_frame)
        if self.send_done:
            writer.event(b"data: [DONE]\n\n", error_event=error_frame)
        writer.end()

    @staticmethod
    def _frame(payload: Any) -> bytes:
        return f"data: {json.dumps(payload)}\n\n".encode()

    def _record(self, raw: bytearray) -> None:
        with self._lock:
            self.responses.append(raw)

    def chunks_for(self, message: Mapping[str, Any], model: str, include_usage: bool) -> list[dict[str, Any]]:
        """The chunks that stream ``message`` (an Anthropic-shaped final message) in this server's style."""
        number = len(self.responses) + 1
        base = {
            "id": f"chatcmpl-test{number}",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": model,
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                **base,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
            }

        opening: dict[str, Any] = {
            "role": "assistant",
            "content": None if self.content_style == "null" else "",
        }
        chunks = [chunk(opening)]
        calls: list[dict[str, Any]] = []
        for block in message.get("content", []):
            if block["type"] == "thinking":
                chunks.append(chunk({"reasoning_content": block["thinking"]}))
            elif block["type"] == "text":
                text = block["text"]
                half = len(text) // 2
                chunks += [chunk({"content": part}) for part in (text[:half], text[half:]) if part]
            elif block["type"] == "tool_use":
                calls.append(block)
        if self.tool_call_style == "whole":
            for index, call in enumerate(calls):
                function = {"name": call["name"], "arguments": json.dumps(call["input"])}
                chunks.append(
                    chunk(
                        {
                            "tool_calls": [
                                {"index": index, "id": call["id"], "type": "function", "function": function}
                            ]
                        }
                    )
                )
        else:
            # Open every call first, then send the argument fragments round-robin: the calls interleave.
            for index, call in enumerate(calls):
                function = {"name": call["name"], "arguments": ""}
                chunks.append(
                    chunk(
                        {
                            "tool_calls": [
                                {"index": index, "id": call["id"], "type": "function", "function": function}
                            ]
                        }
                    )
                )
            fragments = [_thirds(json.dumps(call["input"])) for call in calls]
            for step in range(3):
                for index, parts in enumerate(fragments):
                    if parts[step]:
                        chunks.append(
                            chunk({"tool_calls": [{"index": index, "function": {"arguments": parts[step]}}]})
                        )
        usage_raw = message.get("usage", {})
        cached = int(usage_raw.get("cache_read_input_tokens") or 0)
        prompt = int(usage_raw.get("input_tokens") or 0) + cached
        completion = int(usage_raw.get("output_tokens") or 0)
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        }
        finishing = chunk({}, FINISH.get(str(message.get("stop_reason")), "stop"))
        if self.usage_style == "inline":
            finishing["usage"] = usage
        chunks.append(finishing)
        if self.usage_style == "end" and include_usage:
            chunks.append({**base, "choices": [], "usage": usage})
        return chunks


def _thirds(text: str) -> list[str]:
    size = max(1, -(-len(text) // 3))
    parts = [text[i : i + size] for i in range(0, len(text), size)]
    return [*parts, "", "", ""][:3]


@pytest.fixture
def openai_server() -> Iterator[Callable[..., OpenAITestServer]]:
    """A factory fixture: ``server = openai_server(script, **options)``; every server stops after the test."""
    yield from started_servers(OpenAITestServer)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve Chat Completions from a catui script on 127.0.0.1.")
    parser.add_argument("script")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    server = OpenAITestServer(args.script, port=args.port).start()
    print(json.dumps({"url": server.url, "base_url": f"{server.url}/v1"}), flush=True)
    serve_until_terminated(server)


if __name__ == "__main__":
    main()
