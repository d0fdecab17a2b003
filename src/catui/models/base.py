"""The provider interface every model backend implements."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from catui.messages import Block, Message

StreamEvent = dict[str, Any]
"""One Anthropic streaming event, e.g. ``{"type": "content_block_delta", "index": 0, "delta": {...}}``."""

STREAM_RETRY = "catui_stream_retry"
"""The type of catui's own stream event that withdraws everything the stream yielded so far.

A provider yields it when a stream failed after some events were handed over
and the request is being repeated: the consumer drops its partial message and
starts again from the next ``message_start``. Its other keys are ``error``
(one line), ``attempt``, ``max_retries`` and ``retry_delay_ms``.
"""


@dataclass
class ModelRequest:
    """One model turn to be streamed.

    ``model`` is the concrete model id the provider sends (aliases are resolved
    before a request is built). ``tools`` are ``{"name", "description",
    "input_schema"}`` dicts. ``metadata`` is for catui's own bookkeeping (agent
    id, query source) and is never sent to the provider.
    """

    model: str
    messages: list[Message]
    system: list[Block] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    max_tokens: int = 32000
    temperature: float | None = None
    thinking: dict[str, Any] | None = None
    effort: str | None = None
    """A level name of ``catui.models.reasoning.EFFORT_NAMES``; None sends no effort at all."""
    tool_choice: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


class ModelProvider(Protocol):
    """A model backend. ``stream`` yields Anthropic stream events for one turn.

    Errors are raised as :class:`catui.errors.ProviderError` after the
    provider's own retries; an error event inside a stream is raised too.
    A stream that failed part-way and is being repeated yields a
    :data:`STREAM_RETRY` event first.
    """

    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]: ...

    async def aclose(self) -> None: ...
