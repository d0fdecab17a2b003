"""OpenAI-compatible Chat Completions, converted at this edge to and from Anthropic shapes.

Nothing else in catui knows OpenAI's format: requests arrive as
:class:`ModelRequest` (Anthropic blocks) and leave as Anthropic stream events.
Configuration: ``OPENAI_BASE_URL`` (default https://api.openai.com/v1) and
``OPENAI_API_KEY``. The stream reader tolerates what real servers vary in:
``content`` null or empty, tool-call fragments split across chunks (keyed by
``index``; ids and names may come late), usage in a last chunk with no
choices or no usage at all, a missing ``[DONE]`` after a finish_reason, and
``reasoning_content`` (turned into a thinking block). An effort is sent as
``reasoning_effort``; an extended-thinking budget has no Chat Completions
equivalent and is not sent.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from catui.errors import ProviderError
from catui.messages import Block, Message
from catui.models.base import ModelRequest, StreamEvent
from catui.models.http_api.post import post_sse
from catui.models.http_api.retry import RetryableFailure, RetryPolicy, stream_with_retries
from catui.models.http_api.transport_settings import TransportSettings

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Error types in a mid-stream error chunk that a new attempt may cure: Anthropic's names (servers that
# mirror them) and the OpenAI-style server_error / rate_limit_exceeded.
RETRYABLE_STREAM_ERRORS = frozenset(
    {"overloaded_error", "api_error", "rate_limit_error", "timeout_error", "server_error", "rate_limit_exceeded"}
)
FINISH_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def _text_of_blocks(content: str | list[Block]) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content if b.get("type") == "text")


def _image_part(block: Block) -> dict[str, Any] | None:
    source = block.get("source") or {}
    if source.get("type") == "base64":
        url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
    elif source.get("type") == "url":
        url = str(source.get("url", ""))
    else:
        return None
    return {"type": "image_url", "image_url": {"url": url}}


def _user_parts(blocks: list[Block]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if block.get("type") == "text" and block.get("text"):
            parts.append({"type": "text", "text": block["text"]})
        elif block.get("type") == "image":
            image = _image_part(block)
            if image is not None:
                parts.append(image)
    return parts


def _user_message(parts: list[dict[str, Any]]) -> dict[str, Any]:
    if all(p["type"] == "text" for p in parts):
        return {"role": "user", "content": "\n".join(p["text"] for p in parts)}
    return {"role": "user", "content": parts}


def convert_messages(system: list[Block], messages: list[Message]) -> list[dict[str, Any]]:
    """Anthropic system blocks and messages → Chat Completions messages.

    tool_result blocks become ``tool`` messages placed right after the
    assistant message that called them (OpenAI requires that order); images
    inside tool results, which ``tool`` messages cannot carry, follow in a user
    message. Thinking blocks are dropped: no compatible server accepts them back.
    """
    converted: list[dict[str, Any]] = []
    system_text = "\n\n".join(
        str(b.get("text", "")) for b in system if b.get("type") == "text" and b.get("text")
    )
    if system_text:
        converted.append({"role": "system", "content": system_text})
    for message in messages:
        content = message.get("content", [])
        blocks: list[Block] = (
            [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        )
        if message.get("role") == "assistant":
            text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
            calls = [
                {
                    "id": str(b.get("id", "")),
                    "type": "function",
                    "function": {"name": str(b.get("name", "")), "arguments": json.dumps(b.get("input", {}))},
                }
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            # A message with tool calls may have null content; one without must have a string.
            assistant: dict[str, Any] = {"role": "assistant", "content": text or (None if calls else "")}
            if calls:
                assistant["tool_calls"] = calls
            converted.append(assistant)
            continue
        pending_images: list[dict[str, Any]] = []
        for block in blocks:
            if block.get("type") != "tool_result":
                continue
            result = block.get("content", "")
            text = _text_of_blocks(result)
            if block.get("is_error"):
                text = f"Error: {text}" if text else "Error"
            converted.append(
                {"role": "tool", "tool_call_id": str(block.get("tool_use_id", "")), "content": text}
            )
            if not isinstance(result, str):
                pending_images.extend(p for p in _user_parts(result) if p["type"] == "image_url")
        parts = pending_images + _user_parts([b for b in blocks if b.get("type") != "tool_result"])
        if parts:
            converted.append(_user_message(parts))
    return converted


def convert_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": tool.get("description", ""),
                "parameters": tool.get("input_schema") or {"type": "object", "properties": {}},
            },
        }
        for tool in tools
    ]


def convert_tool_choice(choice: Mapping[str, Any]) -> Any:
    kind = choice.get("type")
    if kind == "any":
        return "required"
    if kind == "tool":
        return {"type": "function", "function": {"name": choice.get("name", "")}}
    if kind == "none":
        return "none"
    return "auto"


def build_chat_body(request: ModelRequest) -> dict[str, Any]:
    """The Chat Completions request body for an Anthropic-shaped ``request``."""
    body: dict[str, Any] = {
        "model": request.model,
        "messages": convert_messages(list(request.system), list(request.messages)),
        "max_completion_tokens": request.max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        body["tools"] = convert_tools(list(request.tools))
        if request.tool_choice is not None:
            body["tool_choice"] = convert_tool_choice(request.tool_choice)
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.effort is not None:
        # Chat Completions' reasoning_effort takes the same level names (low … xhigh, max).
        body["reasoning_effort"] = request.effort
    return body


@dataclass
class _ToolCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass
class ChunkConverter:
    """Turns Chat Completions chunks into Anthropic stream events.

    Text and reasoning stream through as deltas. Tool calls are gathered by
    ``index`` and emitted when the stream finishes, because servers may send
    a call's id, name and argument fragments in any chunks, even interleaved
    with other calls.
    """

    model: str
    started: bool = False
    finish_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    _index: int = -1
    _open_kind: str | None = None
    _calls: dict[int, _ToolCall] = field(default_factory=dict)

    def feed(self, chunk: Mapping[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if not self.started:
            events.append(self._message_start(chunk))
        usage = chunk.get("usage")
        if isinstance(usage, Mapping):
            self._take_usage(usage)
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                events += self._text_delta("thinking", reasoning)
            text = delta.get("content")
            if isinstance(text, str) and text:
                events += self._text_delta("text", text)
            for call in delta.get("tool_calls") or []:
                slot = self._calls.setdefault(int(call.get("index", len(self._calls))), _ToolCall())
                slot.id = slot.id or str(call.get("id") or "")
                function = call.get("function") or {}
                slot.name = slot.name or str(function.get("name") or "")
                slot.arguments += str(function.get("arguments") or "")
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
        return events

    def finish(self) -> list[StreamEvent]:
        """The closing events: pending tool calls, message_delta with stop reason and usage, message_stop."""
        events: list[StreamEvent] = []
        if not self.started:
            events.append(self._message_start({}))
        events += self._close_open_block()
        for position in sorted(self._calls):
            call = self._calls[position]
            self._index += 1
            block = {
                "type": "tool_use",
                "id": call.id or f"call_{self._index}",
                "name": call.name,
                "input": {},
            }
            events.append({"type": "content_block_start", "index": self._index, "content_block": block})
            events.append(
                {
                    "type": "content_block_delta",
                    "index": self._index,
                    "delta": {"type": "input_json_delta", "partial_json": call.arguments},
                }
            )
            events.append({"type": "content_block_stop", "index": self._index})
        stop = FINISH_REASONS.get(self.finish_reason or "", "end_turn")
        if self._calls and stop == "end_turn":
            # Some servers say "stop" even when they called tools; the calls are what matters.
            stop = "tool_use"
        usage = {"output_tokens": self.usage.get("output_tokens", 0)}
        if "input_tokens" in self.usage:
            usage["input_tokens"] = self.usage["input_tokens"]
            usage["cache_read_input_tokens"] = self.usage.get("cache_read_input_tokens", 0)
        events.append(
            {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": usage}
        )
        events.append({"type": "message_stop"})
        return events

    def _message_start(self, chunk: Mapping[str, Any]) -> StreamEvent:
        self.started = True
        return {
            "type": "message_start",
            "message": {
                "id": str(chunk.get("id") or "chatcmpl"),
                "type": "message",
                "role": "assistant",
                "model": str(chunk.get("model") or self.model),
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 0, "output_tokens": 0},
            },
        }

    def _take_usage(self, usage: Mapping[str, Any]) -> None:
        prompt = int(usage.get("prompt_tokens") or 0)
        details = usage.get("prompt_tokens_details") or {}
        cached = int(details.get("cached_tokens") or 0) if isinstance(details, Mapping) else 0
        # Anthropic counts cache reads apart from input tokens; OpenAI includes them in prompt_tokens.
        self.usage = {
            "input_tokens": max(0, prompt - cached),
            "cache_read_input_tokens": cached,
            "output_tokens": int(usage.get("completion_tokens") or 0),
        }

    def _close_open_block(self) -> list[StreamEvent]:
        if self._open_kind is None:
            return []
        events: list[StreamEvent] = []
        if self._open_kind == "thinking":
            # Anthropic thinking blocks end with a signature; an OpenAI server has none to give.
            events.append(
                {
                    "type": "content_block_delta",
                    "index": self._index,
                    "delta": {"type": "signature_delta", "signature": ""},
                }
            )
        events.append({"type": "content_block_stop", "index": self._index})
        self._open_kind = None
        return events

    def _text_delta(self, kind: str, text: str) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if self._open_kind != kind:
            events += self._close_open_block()
            self._index += 1
            self._open_kind = kind
            opening: dict[str, Any] = (
                {"type": "text", "text": ""}
                if kind == "text"
                else {"type": "thinking", "thinking": "", "signature": ""}
            )
            events.append({"type": "content_block_start", "index": self._index, "content_block": opening})
        delta = (
            {"type": "text_delta", "text": text}
            if kind == "text"
            else {"type": "thinking_delta", "thinking": text}
        )
        events.append({"type": "content_block_delta", "index": self._index, "delta": delta})
        return events


class OpenAIProvider:
    """Streams turns from an OpenAI-compatible Chat Completions endpoint as Anthropic stream events."""

    name = "openai"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        retry: RetryPolicy | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        env = os.environ if env is None else env
        self.api_key = api_key if api_key is not None else (env.get("OPENAI_API_KEY") or None)
        self.base_url = (base_url or env.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.retry = retry or RetryPolicy.from_env(env)
        # The transport, its timeouts and proxy come from this env too, never from os.environ behind it.
        self.transport_settings = TransportSettings.from_env(env)

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def build_headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "application/json", "user-agent": "catui"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        return headers

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one turn, retrying transient failures that happen before the first event."""
        body = build_chat_body(request)
        headers = self.build_headers()
        return stream_with_retries(lambda: self._attempt(body, headers, request.model), self.retry)

    async def _attempt(
        self, body: dict[str, Any], headers: dict[str, str], model: str
    ) -> AsyncIterator[StreamEvent]:
        converter = ChunkConverter(model=model)
        done = False
        hint = "Fix OPENAI_API_KEY." if self.api_key else "No key was sent: set OPENAI_API_KEY."
        async for sse in post_sse(
            self.url,
            headers=headers,
            body=body,
            service="the OpenAI-compatible API",
            credential_hint=hint,
            base_var="OPENAI_BASE_URL",
            settings=self.transport_settings,
        ):
            data = sse.data.strip()
            if not data:
                continue
            if data == "[DONE]":
                done = True
                break
            try:
                chunk = json.loads(data)
            except (json.JSONDecodeError, RecursionError) as err:
                # A garbled chunk is a stream fault: withdrawn and retried, as a cut stream is.
                raise RetryableFailure(
                    f"the OpenAI-compatible API at {self.url} sent a chunk that is not JSON: {data[:200]!r}"
                ) from err
            if not isinstance(chunk, dict):
                continue
            if chunk.get("error"):
                error = (
                    chunk["error"] if isinstance(chunk["error"], dict) else {"message": str(chunk["error"])}
                )
                kind = str(error.get("type") or error.get("code") or "error")
                message = (
                    f"the OpenAI-compatible API at {self.url} sent an error mid-stream: "
                    f"{kind}: {error.get('message', '')}"
                )
                if kind in RETRYABLE_STREAM_ERRORS:
                    raise RetryableFailure(message)
                raise ProviderError(message)
            for event in converter.feed(chunk):
                yield event
        if not done and converter.finish_reason is None:
            raise RetryableFailure(
                f"the stream from the OpenAI-compatible API at {self.url} ended before it finished "
                "(cut mid-message)"
            )
        for event in converter.finish():
            yield event

    async def aclose(self) -> None:
        """Nothing to release: the HTTP client is shared (see :mod:`catui.models.http_api.post`)."""
