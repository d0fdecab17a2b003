"""Message and content-block helpers.

catui has one message format everywhere: Anthropic Messages API dicts.
A message is ``{"role": "user" | "assistant", "content": [block, ...]}`` and a
block is a plain JSON-able dict (``text``, ``tool_use``, ``tool_result``,
``thinking``, ``redacted_thinking``, ``image``). The transcript is the request
payload; only the OpenAI provider converts, at its own edge.
"""

from __future__ import annotations

from typing import Any

Message = dict[str, Any]
Block = dict[str, Any]


def text_block(text: str) -> Block:
    return {"type": "text", "text": text}


def user_message(content: str | list[Block]) -> Message:
    """A user message; a plain string becomes one text block."""
    if isinstance(content, str):
        content = [text_block(content)]
    return {"role": "user", "content": content}


def assistant_message(content: list[Block]) -> Message:
    return {"role": "assistant", "content": content}


def tool_result_block(tool_use_id: str, content: str | list[Block], *, is_error: bool = False) -> Block:
    block: Block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def blocks_of(message: Message) -> list[Block]:
    """The content blocks of a message, normalising a plain-string content."""
    content = message.get("content", [])
    if isinstance(content, str):
        return [text_block(content)]
    return list(content)


def is_real_prompt(message: Message) -> bool:
    """A user message that starts a turn: one that is not a round of tool results."""
    if message.get("role") != "user":
        return False
    return not any(block.get("type") == "tool_result" for block in blocks_of(message))


def text_of(message: Message) -> str:
    """The concatenated text blocks of a message."""
    return "".join(b.get("text", "") for b in blocks_of(message) if b.get("type") == "text")


def tool_uses_of(message: Message) -> list[Block]:
    return [b for b in blocks_of(message) if b.get("type") == "tool_use"]


def result_text(content: str | list[Block]) -> str:
    """The text of a tool_result's content, whichever shape it has."""
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


def last_assistant_text(messages: list[Message]) -> str:
    """The text of the latest assistant message that has any ("" when none has)."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            text = "".join(str(b.get("text", "")) for b in blocks_of(message) if b.get("type") == "text")
            if text:
                return text
    return ""
