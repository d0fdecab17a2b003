"""The Anthropic Messages API, spoken directly over HTTP with SSE streaming.

catui does not import the official SDK at run time (it costs about two
seconds of start-up); the tests check this module against it instead.
Configuration comes from the constructor or, when not given, the environment:
``ANTHROPIC_BASE_URL`` (default https://api.anthropic.com),
``ANTHROPIC_API_KEY`` (sent as ``x-api-key``) or ``ANTHROPIC_AUTH_TOKEN``
(sent as ``Authorization: Bearer``), ``ANTHROPIC_BETAS`` (comma-separated
``anthropic-beta`` values) and ``ANTHROPIC_CUSTOM_HEADERS`` (``Name: value``
lines). Prompt caching can be switched off with ``DISABLE_PROMPT_CACHING=1``.

catui speaks API version 2023-06-01, as Claude Code 2.1.92 does (the 2.x SDKs
default to 2026-10-21; ``CATUI_ANTHROPIC_VERSION`` overrides). ``temperature``
is sent only where it is accepted: not from API version 2026-10-21 on, and not
to models that reject sampling parameters (Opus 4.7 and later, generation 5),
nor, other than 1, with extended thinking on. An effort goes out as ``output_config.effort``
and only when one is set (``catui.models.reasoning``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from catui.errors import ProviderError
from catui.messages import Block, Message
from catui.models.base import ModelRequest, StreamEvent
from catui.models.http_api.post import post_json, post_sse
from catui.models.http_api.retry import RetryableFailure, RetryPolicy, stream_with_retries
from catui.models.http_api.transport_settings import TransportSettings
from catui.models.reasoning import thinking_for_request, thinking_is_on

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
RETRYABLE_STREAM_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})
SAMPLING_REMOVED_IN = "2026-10-21"
_MODEL_VERSION = re.compile(r"claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?!\d)")
# Blocks the API refuses a cache_control on.
_UNCACHEABLE_BLOCKS = frozenset({"thinking", "redacted_thinking"})


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def accepts_temperature(model_id: str, api_version: str = API_VERSION) -> bool:
    """Whether a request to ``model_id`` may carry ``temperature`` without a 400."""
    if api_version >= SAMPLING_REMOVED_IN:
        return False
    match = _MODEL_VERSION.search(model_id.lower())
    if match is None:
        return True
    major, minor = int(match.group(1)), int(match.group(2) or 0)
    return (major, minor) < (4, 7)


def _custom_headers(raw: str | None) -> dict[str, str]:
    headers: dict[str, str] = {}
    for line in (raw or "").splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip():
            headers[name.strip()] = value.strip()
    return headers


def _with_breakpoint(blocks: Sequence[Block]) -> list[Block]:
    """A copy of ``blocks`` whose last cacheable block carries an ephemeral cache_control."""
    copied = list(blocks)
    for index in range(len(copied) - 1, -1, -1):
        block = copied[index]
        if block.get("type") in _UNCACHEABLE_BLOCKS or (
            block.get("type") == "text" and not block.get("text")
        ):
            continue
        if "cache_control" not in block:
            copied[index] = {**block, "cache_control": dict(EPHEMERAL)}
        break
    return copied


def add_cache_breakpoints(
    system: Sequence[Block], messages: Sequence[Message]
) -> tuple[list[Block], list[Message]]:
    """Copies of ``system`` and ``messages`` with prompt-cache breakpoints on the last system block and
    on the last block of the newest message. The caller's lists and dicts are never changed."""
    new_messages = list(messages)
    if new_messages:
        newest = new_messages[-1]
        content = newest.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}] if content else []
        new_messages[-1] = {**newest, "content": _with_breakpoint(content or [])}
    return _with_breakpoint(system), new_messages


class AnthropicProvider:
    """Streams turns from the Anthropic Messages API (or any server that speaks it).

    ``stream(request)`` yields the API's stream events as dicts, ``ping``
    keep-alives excepted; an ``error`` event raises :class:`ProviderError`.
    """

    name = "anthropic"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        auth_token: str | None = None,
        base_url: str | None = None,
        betas: Sequence[str] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        retry: RetryPolicy | None = None,
        prompt_caching: bool | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        env = os.environ if env is None else env
        self.api_key = api_key if api_key is not None else (env.get("ANTHROPIC_API_KEY") or None)
        self.auth_token = auth_token if auth_token is not None else (env.get("ANTHROPIC_AUTH_TOKEN") or None)
        self.base_url = (base_url or env.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        if betas is None:
            betas = [b.strip() for b in (env.get("ANTHROPIC_BETAS") or "").split(",") if b.strip()]
        self.betas = list(betas)
        self.extra_headers = (
            dict(extra_headers)
            if extra_headers is not None
            else _custom_headers(env.get("ANTHROPIC_CUSTOM_HEADERS"))
        )
        self.retry = retry or RetryPolicy.from_env(env)
        # The transport, its timeouts and proxy come from this env too, never from os.environ behind it.
        self.transport_settings = TransportSettings.from_env(env)
        self.api_version = env.get("CATUI_ANTHROPIC_VERSION") or API_VERSION
        if prompt_caching is None:
            prompt_caching = not (
                _truthy(env.get("DISABLE_PROMPT_CACHING")) or _truthy(env.get("CATUI_DISABLE_PROMPT_CACHING"))
            )
        self.prompt_caching = prompt_caching

    @property
    def url(self) -> str:
        return f"{self.base_url}/v1/messages"

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body sent for ``request`` (``metadata`` is catui's own and is never sent)."""
        system: list[Block] = list(request.system)
        messages: list[Message] = list(request.messages)
        if self.prompt_caching:
            system, messages = add_cache_breakpoints(system, messages)
        body: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "messages": messages,
        }
        if system:
            body["system"] = system
        if request.tools:
            body["tools"] = list(request.tools)
        if request.tool_choice is not None:
            body["tool_choice"] = request.tool_choice
        thinking = thinking_for_request(request.thinking, request.max_tokens)
        # With thinking on the API takes no temperature other than 1, so another value is not sent.
        if (
            request.temperature is not None
            and (request.temperature == 1 or not thinking_is_on(thinking))
            and accepts_temperature(request.model, self.api_version)
        ):
            body["temperature"] = request.temperature
        if thinking is not None:
            body["thinking"] = thinking
        if request.effort is not None:
            body["output_config"] = {"effort": request.effort}
        body["stream"] = True
        return body

    def build_headers(self) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "accept": "application/json",
            "anthropic-version": self.api_version,
            "user-agent": "catui",
        }
        if self.api_key:
            headers["x-api-key"] = self.api_key
        elif self.auth_token:
            headers["authorization"] = f"Bearer {self.auth_token}"
        if self.betas:
            headers["anthropic-beta"] = ",".join(self.betas)
        headers.update(self.extra_headers)
        return headers

    def _credential_hint(self) -> str:
        if self.api_key:
            return "Fix ANTHROPIC_API_KEY (it was sent as x-api-key)."
        if self.auth_token:
            return "Fix ANTHROPIC_AUTH_TOKEN (it was sent as a Bearer token)."
        return "No key was sent: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)."

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one turn, retrying transient failures (a stream that fails part-way too).

        After an overloaded / api error event in the middle of a stream, the
        next attempt asks for the whole message without streaming, as Claude
        Code does (observed §11); later attempts stream again.
        """
        body = self.build_body(request)
        headers = self.build_headers()
        after_error_event: list[bool] = [False]

        def attempt() -> AsyncIterator[StreamEvent]:
            if after_error_event[0]:
                after_error_event[0] = False
                return self._attempt_whole(body, headers)
            return self._attempt(body, headers, after_error_event)

        return stream_with_retries(attempt, self.retry)

    async def _attempt_whole(self, body: dict[str, Any], headers: dict[str, str]) -> AsyncIterator[StreamEvent]:
        """One request without streaming; its message is replayed as the events a stream would have sent."""
        whole = await post_json(
            self.url,
            headers=headers,
            body={**body, "stream": False},
            service="the Anthropic API",
            credential_hint=self._credential_hint(),
            base_var="ANTHROPIC_BASE_URL",
            settings=self.transport_settings,
        )
        if not isinstance(whole, dict) or whole.get("type") != "message":
            raise ProviderError(
                f"the Anthropic API at {self.url} answered a request without streaming with something that is "
                f"not a message: {json.dumps(whole)[:200]}"
            )
        for event in message_events(whole):
            yield event

    async def _attempt(
        self, body: dict[str, Any], headers: dict[str, str], after_error_event: list[bool]
    ) -> AsyncIterator[StreamEvent]:
        finished = False
        started = False
        async for sse in post_sse(
            self.url,
            headers=headers,
            body=body,
            service="the Anthropic API",
            credential_hint=self._credential_hint(),
            base_var="ANTHROPIC_BASE_URL",
            settings=self.transport_settings,
        ):
            if sse.event == "ping" or not sse.data:
                continue
            try:
                event = sse.json()
            except (json.JSONDecodeError, RecursionError) as err:
                # A garbled event (a proxy's page, corrupted bytes) is a stream fault: withdrawn and retried.
                raise RetryableFailure(
                    f"the Anthropic API at {self.url} sent an event that is not JSON: {sse.data[:200]!r}"
                ) from err
            kind = event.get("type") if isinstance(event, dict) else None
            if kind is None:
                continue
            if kind == "ping":
                continue
            if kind == "error":
                error = event.get("error") or {}
                message = (
                    f"the Anthropic API at {self.url} sent an error mid-stream: "
                    f"{error.get('type', 'error')}: {error.get('message', '')}"
                )
                if error.get("type") in RETRYABLE_STREAM_ERRORS:
                    # Mid-message, the retry asks for the whole message at once (see stream()).
                    after_error_event[0] = started
                    raise RetryableFailure(message)
                raise ProviderError(message)
            started = True
            yield event
            if kind == "message_stop":
                finished = True
        if not finished:
            raise RetryableFailure(
                f"the stream from the Anthropic API at {self.url} ended before message_stop (cut mid-message)"
            )

    async def aclose(self) -> None:
        """Nothing to release: the HTTP client is shared (see :mod:`catui.models.http_api.post`)."""


def message_events(message: dict[str, Any]) -> list[StreamEvent]:
    """The stream events that build ``message`` (a non-streaming answer), in the API's order and shapes."""
    usage = dict(message.get("usage") or {})
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
    events: list[StreamEvent] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(message.get("content") or []):
        kind = block.get("type")
        if kind == "text":
            events.append({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "text_delta", "text": block.get("text", "")}})
        elif kind in ("tool_use", "server_tool_use"):
            events.append({"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}})
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "input_json_delta", "partial_json": json.dumps(block.get("input") or {})}})
        elif kind == "thinking":
            events.append({"type": "content_block_start", "index": index,
                           "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "thinking_delta", "thinking": block.get("thinking", "")}})
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "signature_delta", "signature": block.get("signature", "")}})
        else:
            events.append({"type": "content_block_start", "index": index, "content_block": dict(block)})
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta",
                   "delta": {"stop_reason": message.get("stop_reason"), "stop_sequence": message.get("stop_sequence")},
                   "usage": usage})
    events.append({"type": "message_stop"})
    return events
