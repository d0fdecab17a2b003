"""Builds the final assistant message from Anthropic stream events.

It must produce the same message as the official SDK's stream accumulator from
the same events (the provider tests check this), so tool input arrives as
partial JSON and is parsed once the block stops.
"""

from __future__ import annotations

import json
from typing import Any

from catui.errors import ProviderError
from catui.models.base import STREAM_RETRY, StreamEvent


class MessageAccumulator:
    """Feed events in order with :meth:`feed`; read :attr:`message` once ``done``."""

    def __init__(self) -> None:
        self.message: dict[str, Any] = {}
        self._partial_json: dict[int, str] = {}
        self.done = False

    def feed(self, event: StreamEvent) -> None:
        kind = event.get("type")
        if kind == STREAM_RETRY:
            # The provider is repeating the request: what arrived so far is withdrawn.
            self.message = {}
            self._partial_json = {}
            self.done = False
        elif kind == "message_start":
            self.message = json.loads(json.dumps(event["message"]))
            self.message.setdefault("content", [])
        elif kind == "content_block_start":
            block = dict(event["content_block"])
            index = int(event["index"])
            content = self.message.setdefault("content", [])
            while len(content) <= index:
                content.append({})
            content[index] = block
            if block.get("type") in ("tool_use", "server_tool_use"):
                self._partial_json[index] = ""
        elif kind == "content_block_delta":
            self._apply_delta(int(event["index"]), event["delta"])
        elif kind == "content_block_stop":
            index = int(event["index"])
            if index in self._partial_json:
                raw = self._partial_json.pop(index)
                block = self.message["content"][index]
                try:
                    block["input"] = json.loads(raw) if raw.strip() else {}
                except json.JSONDecodeError:
                    # Keep the raw text so that the tool call fails with a clear validation error.
                    block["input"] = {"__invalid_json__": raw}
        elif kind == "message_delta":
            delta = event.get("delta", {})
            for key in ("stop_reason", "stop_sequence"):
                if key in delta:
                    self.message[key] = delta[key]
            usage = event.get("usage") or {}
            merged = self.message.setdefault("usage", {})
            for key, value in usage.items():
                if value is not None:
                    merged[key] = value
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            err = event.get("error", {})
            raise ProviderError(
                f"model stream error: {err.get('type', 'error')}: {err.get('message', '')}",
                retryable=err.get("type") in ("overloaded_error", "api_error"),
            )

    def _apply_delta(self, index: int, delta: dict[str, Any]) -> None:
        block = self.message["content"][index]
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + delta.get("text", "")
        elif kind == "input_json_delta":
            self._partial_json[index] = self._partial_json.get(index, "") + delta.get("partial_json", "")
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
        elif kind == "signature_delta":
            block["signature"] = block.get("signature", "") + delta.get("signature", "")
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(delta.get("citation"))
