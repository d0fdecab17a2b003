"""Checking the content blocks a driver sends as a prompt (stream-json stdin, the SDK's streamed messages).

A block the Messages API refuses (``{"type": "text", "text": 5}``, an image
without a source, a tool_result for a tool call nobody made) would be stored
in the conversation and make every later request, and every resume, fail with
the same 400. So they are refused at the boundary, before the session sees
them, with a message naming the block (its index and type) and what it needs.

The rules are the Messages API's for user content.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

IMAGE_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
USER_BLOCK_TYPES = ("text", "image", "document", "tool_result", "search_result")
_ASSISTANT_ONLY = ("tool_use", "server_tool_use", "thinking", "redacted_thinking")


class PromptBlockError(ValueError):
    """A prompt block the API would refuse; the text names the block and what it needs."""


def check_prompt_blocks(blocks: Sequence[Any]) -> None:
    """Raise PromptBlockError for the first block of a user prompt that the API would refuse."""
    if not blocks:
        raise PromptBlockError("the content list is empty; send at least one block")
    for index, block in enumerate(blocks):
        problem = block_problem(block)
        if problem is not None:
            kind = block.get("type") if isinstance(block, Mapping) else None
            name = f"block {index} ({kind!r})" if isinstance(kind, str) else f"block {index}"
            raise PromptBlockError(f"content {name}: {problem}")


def block_problem(block: Any, *, nested: bool = False) -> str | None:
    """What is wrong with one user content block, or None when the API takes it."""
    if not isinstance(block, Mapping):
        return f"must be an object with a 'type', not {_kind(block)}"
    kind = block.get("type")
    if not isinstance(kind, str):
        return "needs a 'type' string"
    cache_control = block.get("cache_control")
    if cache_control is not None and not isinstance(cache_control, Mapping):
        return "'cache_control' must be an object such as {\"type\": \"ephemeral\"}"
    if kind == "text":
        return _text_problem(block.get("text"))
    if kind == "image":
        return _image_problem(block.get("source"))
    if kind == "document" and not nested:
        return _document_problem(block.get("source"))
    if kind == "tool_result" and not nested:
        return _tool_result_problem(block)
    if kind == "search_result":
        return _search_result_problem(block)
    if kind in _ASSISTANT_ONLY:
        return f"a user message cannot carry {kind!r} blocks (only the model's answers do)"
    allowed = ("text", "image", "search_result") if nested else USER_BLOCK_TYPES
    return f"unknown block type; a {'tool_result may hold' if nested else 'prompt may hold'} " + ", ".join(allowed)


def _text_problem(text: Any) -> str | None:
    if not isinstance(text, str):
        return f"'text' must be a string, not {_kind(text)}"
    if not text.strip():
        return "'text' is empty; send some text or leave the block out"
    return None


def _image_problem(source: Any) -> str | None:
    if not isinstance(source, Mapping):
        return ("needs a 'source' object: {\"type\": \"base64\", \"media_type\": \"image/png\", \"data\": ...} "
                "or {\"type\": \"url\", \"url\": ...}")
    kind = source.get("type")
    if kind == "base64":
        if source.get("media_type") not in IMAGE_MEDIA_TYPES:
            return f"source.media_type must be one of {', '.join(IMAGE_MEDIA_TYPES)}"
        return _string_field(source, "data", "source.data (the base64 bytes)")
    if kind == "url":
        return _string_field(source, "url", "source.url")
    if kind == "file":
        return _string_field(source, "file_id", "source.file_id")
    return "source.type must be 'base64', 'url' or 'file'"


def _document_problem(source: Any) -> str | None:
    if not isinstance(source, Mapping):
        return ("needs a 'source' object: {\"type\": \"base64\", \"media_type\": \"application/pdf\", "
                "\"data\": ...}, {\"type\": \"text\", ...}, {\"type\": \"url\", ...} or {\"type\": \"content\", ...}")
    kind = source.get("type")
    if kind == "base64":
        if source.get("media_type") != "application/pdf":
            return "source.media_type must be 'application/pdf' for base64 documents"
        return _string_field(source, "data", "source.data (the base64 bytes)")
    if kind == "text":
        return _string_field(source, "data", "source.data (the text)")
    if kind == "url":
        return _string_field(source, "url", "source.url")
    if kind == "file":
        return _string_field(source, "file_id", "source.file_id")
    if kind == "content":
        content = source.get("content")
        if isinstance(content, str):
            return None
        if isinstance(content, list):
            return _nested_problem(content, "source.content")
        return "source.content must be a string or a list of text and image blocks"
    return "source.type must be 'base64', 'text', 'url', 'file' or 'content'"


def _tool_result_problem(block: Mapping[str, Any]) -> str | None:
    if not isinstance(block.get("tool_use_id"), str) or not block["tool_use_id"]:
        return "needs the 'tool_use_id' of the tool call it answers"
    if block.get("is_error") is not None and not isinstance(block.get("is_error"), bool):
        return "'is_error' must be true or false"
    content = block.get("content")
    if content is None or isinstance(content, str):
        return None
    if isinstance(content, list):
        return _nested_problem(content, "content")
    return "'content' must be a string or a list of text and image blocks"


def _search_result_problem(block: Mapping[str, Any]) -> str | None:
    for name in ("source", "title"):
        if not isinstance(block.get(name), str):
            return f"'{name}' must be a string"
    content = block.get("content")
    if not isinstance(content, list) or not content:
        return "'content' must be a non-empty list of text blocks"
    for index, item in enumerate(content):
        if not isinstance(item, Mapping) or item.get("type") != "text":
            return f"content[{index}] must be a text block"
        problem = _text_problem(item.get("text"))
        if problem is not None:
            return f"content[{index}]: {problem}"
    return None


def _nested_problem(items: list[Any], where: str) -> str | None:
    for index, item in enumerate(items):
        problem = block_problem(item, nested=True)
        if problem is not None:
            return f"{where}[{index}]: {problem}"
    return None


def _string_field(mapping: Mapping[str, Any], key: str, label: str) -> str | None:
    value = mapping.get(key)
    if not isinstance(value, str) or not value:
        return f"{label} must be a non-empty string"
    return None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, Mapping) else type(value).__name__


def unanswered_tool_calls(messages: Sequence[Mapping[str, Any]]) -> set[str]:
    """The ids of the last assistant message's tool calls that no later message answers."""
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        if message.get("role") != "assistant":
            continue
        content = message.get("content")
        calls = {b.get("id") for b in content if isinstance(b, Mapping) and b.get("type") == "tool_use"} \
            if isinstance(content, list) else set()
        answered: set[Any] = set()
        for later in messages[position + 1:]:
            later_content = later.get("content")
            if isinstance(later_content, list):
                answered.update(b.get("tool_use_id") for b in later_content
                                if isinstance(b, Mapping) and b.get("type") == "tool_result")
        return {str(call) for call in calls - answered if isinstance(call, str)}
    return set()


def check_tool_results(blocks: Sequence[Any], messages: Sequence[Mapping[str, Any]]) -> None:
    """Raise PromptBlockError for a tool_result that answers no open tool call of the conversation."""
    open_calls = unanswered_tool_calls(messages)
    for index, block in enumerate(blocks):
        if isinstance(block, Mapping) and block.get("type") == "tool_result":
            tool_use_id = block.get("tool_use_id")
            if not isinstance(tool_use_id, str) or tool_use_id not in open_calls:
                raise PromptBlockError(
                    f"content block {index} ('tool_result'): tool_use_id {tool_use_id!r} answers no tool call "
                    "the model is waiting on"
                    + (f" (open: {', '.join(sorted(open_calls))})" if open_calls else " (none is open)")
                )
