"""Prompts as claude-agent-sdk accepts them: a string, or an async iterable of user-message dicts.

Each dict of a stream is one prompt, run in turn::

    {"type": "user", "message": {"role": "user", "content": "Find the TODOs"}}

``content`` is a string or a list of Anthropic content blocks (text, image,
document). Other keys (``parent_tool_use_id``, ``session_id``, ``uuid``) are
accepted and not needed. Anything else is refused with a one-line error naming
the message and the field.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterable, Mapping
from dataclasses import dataclass
from typing import Any

from catui.errors import ConfigurationError, UnsupportedEventLoopError
from catui.prompt_blocks import PromptBlockError, check_prompt_blocks

PromptContent = str | list[dict[str, Any]]
"""One prompt as the session takes it: text, or content blocks."""


@dataclass(frozen=True)
class QueuedPrompt:
    """One prompt waiting its turn, with the ``origin`` its message was stamped with (None for strings)."""

    content: PromptContent
    origin: dict[str, Any] | None = None


def is_prompt_stream(prompt: Any) -> bool:
    """True for an async iterable of messages (claude-agent-sdk's streamed prompt)."""
    return isinstance(prompt, AsyncIterable)


def check_text_prompt(prompt: Any, where: str) -> str:
    """A string prompt, or a ConfigurationError that says what to pass instead."""
    if not isinstance(prompt, str) or not prompt.strip():
        raise ConfigurationError(
            f"{where} needs a non-empty prompt string or an async iterable of user messages "
            '({"type": "user", "message": {"role": "user", "content": "..."}}), not '
            f"{type(prompt).__name__ if not isinstance(prompt, str) else 'an empty string'}"
        )
    return prompt


def prompt_from_message(message: Any, index: int) -> QueuedPrompt:
    """The ``index``-th streamed message as a prompt; ConfigurationError when it is not a user message.

    An ``"origin": {"kind": "human"}`` stamp is kept (and echoed on the turn's ResultMessage); as in
    Claude Code, no other origin kind is taken from the caller.
    """
    where = f"streamed prompt message {index}"
    if not isinstance(message, Mapping):
        raise ConfigurationError(f"{where} is a {type(message).__name__}; send dicts like "
                                 '{"type": "user", "message": {"role": "user", "content": "..."}}')
    if message.get("type") != "user":
        raise ConfigurationError(f"{where} has type {message.get('type')!r}; only \"user\" messages can be sent")
    inner = message.get("message")
    if not isinstance(inner, Mapping) or inner.get("role", "user") != "user":
        raise ConfigurationError(f"{where} needs \"message\": {{\"role\": \"user\", \"content\": ...}}")
    origin = message.get("origin")
    stamp = {"kind": "human"} if isinstance(origin, Mapping) and origin.get("kind") == "human" else None
    content = inner.get("content")
    if isinstance(content, str) and content.strip():
        return QueuedPrompt(content, stamp)
    if isinstance(content, list) and content:
        try:
            check_prompt_blocks(content)
        except PromptBlockError as exc:
            raise ConfigurationError(f"{where}: {exc}") from None
        return QueuedPrompt([dict(block) for block in content], stamp)
    raise ConfigurationError(
        f"{where}: message.content must be a non-empty string or a list of content blocks ({{\"type\": ...}})"
    )


def require_asyncio(api: str) -> None:
    """Refuse to run outside asyncio (trio, curio) with a CatuiError that says what to do."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        library = _running_library()
        raise UnsupportedEventLoopError(
            f"{api} runs on asyncio, and this code runs under {library}: start it with asyncio.run(...) or "
            "anyio.run(..., backend=\"asyncio\") (catui's agent, its tools and MCP connections need asyncio)"
        ) from None


def _running_library() -> str:
    """The async library running now, when it can be told without importing anything new."""
    sniffio = sys.modules.get("sniffio")
    if sniffio is not None:
        try:
            return str(sniffio.current_async_library())
        except Exception:  # sniffio raises its own error outside any known library
            pass
    return "no asyncio event loop"
